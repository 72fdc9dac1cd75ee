//! Which nodes changed, checked by brute force: every node's effective
//! documents read from a snapshot built before and one built after a
//! write, compared with `nodes_changed` and with the dry-run of the write.

use super::*;
use crate::configdb::SnapshotData;
use crate::configdb::model::StoredDocument;
use crate::rhash;
use proptest::prelude::*;

const RESOURCES: [&str; 2] = ["astute", "globals"];

fn data(documents: Vec<StoredDocument>, nodes: usize) -> SnapshotData {
    SnapshotData {
        registers: vec![(
            1,
            "nodes".into(),
            (0..nodes).map(|n| format!("n{n}")).collect(),
        )],
        ..crate::configdb::fixture::environment(&RESOURCES, &["rack", "nodes"], documents)
    }
}

fn stored(change: &DocChange, n: u64) -> StoredDocument {
    StoredDocument {
        env: 1,
        slot: change.path.slot().cloned(),
        resource: change.resource.clone(),
        kind: change.kind,
        version: Version {
            number: n,
            created_at: 0,
            size: 0,
            deleted: false,
            author: None,
        },
        content: change.content.clone().unwrap_or_default(),
    }
}

/// `docs` with `write` applied as the store would: the document replaced
/// or (no content) removed.
fn written(docs: &[DocChange], write: &DocChange) -> Vec<StoredDocument> {
    let same = |d: &DocChange| {
        d.path.slot() == write.path.slot() && d.resource == write.resource && d.kind == write.kind
    };
    let mut out: Vec<StoredDocument> = docs
        .iter()
        .filter(|d| !same(d))
        .map(|d| stored(d, 1))
        .collect();
    if write.content.is_some() {
        out.push(stored(write, 2));
    }
    out
}

/// Node i sits in rack i % 3: its path names both levels.
fn node_paths(nodes: usize) -> Vec<LevelPath> {
    (0..nodes)
        .map(|n| LevelPath::parse_cli(&format!("rack=r{},nodes=n{n}", n % 3)).unwrap())
        .collect()
}

/// Checks `nodes_changed` and the dry-run against brute force.
fn check(docs: &[DocChange], write: &DocChange, nodes: usize) -> Vec<NodeChange> {
    let before = Snapshot::build(data(docs.iter().map(|d| stored(d, 1)).collect(), nodes));
    let after = Snapshot::build(data(written(docs, write), nodes));
    let paths = node_paths(nodes);
    let all = Compare::default();
    let got = nodes_changed(&before, &after, 1, &paths, &all);
    let mut brute = Vec::new();
    for node in &paths {
        let differs = RESOURCES
            .iter()
            .any(|r| before.effective(1, node, r).unwrap() != after.effective(1, node, r).unwrap());
        if differs {
            brute.push(node.clone());
        }
    }
    let changed: Vec<LevelPath> = got.iter().map(|c| c.node.clone()).collect();
    assert_eq!(changed, brute);
    // Each node's paths are the whole documents' diff, resource by resource.
    for c in &got {
        let whole: Vec<(String, String)> = RESOURCES
            .iter()
            .flat_map(|r| {
                let (a, b) = (
                    before.effective(1, &c.node, r),
                    after.effective(1, &c.node, r),
                );
                let diff = crate::configdb::diff::hash_diff(&a.unwrap(), &b.unwrap());
                diff.all_paths().into_iter().map(|p| (r.to_string(), p))
            })
            .collect();
        let paths: Vec<(String, String)> = c
            .changes
            .iter()
            .map(|p| (p.resource.clone(), p.path.clone()))
            .collect();
        assert_eq!(paths, whole, "{}", c.node);
    }
    for c in &got {
        for p in &c.changes {
            assert_ne!(p.before, p.after, "{} {}", c.node, p.path);
            let read = |s: &Snapshot| {
                let doc = s.effective(1, &c.node, &p.resource).unwrap();
                if p.path.is_empty() {
                    return Some(Value::Hash((*doc).clone()));
                }
                let key = KeyPath::parse(&p.path).unwrap();
                get(&doc, &key).unwrap().cloned()
            };
            assert_eq!(
                (read(&before), read(&after)),
                (p.before.clone(), p.after.clone())
            );
        }
    }
    let dry = dry_run(&before, 1, std::slice::from_ref(write), &paths, &all).unwrap();
    assert_eq!(dry, got, "the dry-run answers what the write did");
    got
}

fn change(at: &str, resource: &str, kind: DocKind, content: Option<Hash>) -> DocChange {
    DocChange {
        path: LevelPath::parse_cli(at).unwrap(),
        resource: resource.into(),
        kind,
        content,
    }
}

#[test]
fn a_root_change_that_every_node_overrides_changes_no_node() {
    let nodes = 6;
    let mut docs = vec![change(
        "",
        "astute",
        DocKind::Values,
        Some(rhash! {"debug" => false}),
    )];
    for n in 0..nodes {
        let at = format!("nodes=n{n}");
        docs.push(change(
            &at,
            "astute",
            DocKind::Overrides,
            Some(rhash! {"debug" => true}),
        ));
    }
    let root = change(
        "",
        "astute",
        DocKind::Values,
        Some(rhash! {"debug" => "maybe"}),
    );
    assert!(check(&docs, &root, nodes).is_empty());
    // One node without its override: only that one changes.
    docs.pop();
    let got = check(&docs, &root, nodes);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].node.to_string(), "rack=r2,nodes=n5");
    let p = &got[0].changes[0];
    assert_eq!(
        (
            p.resource.as_str(),
            p.path.as_str(),
            p.before.clone(),
            p.after.clone()
        ),
        (
            "astute",
            "debug",
            Some(Value::Bool(false)),
            Some(Value::from("maybe"))
        )
    );
}

#[test]
fn keys_and_a_resource_narrow_the_comparison() {
    let docs = [change(
        "",
        "astute",
        DocKind::Values,
        Some(rhash! {"a" => 1, "b" => 1}),
    )];
    let write = change(
        "rack=r0",
        "astute",
        DocKind::Values,
        Some(rhash! {"b" => 2}),
    );
    let before = Snapshot::build(data(docs.iter().map(|d| stored(d, 1)).collect(), 3));
    let after = with_writes(&before, 1, std::slice::from_ref(&write)).unwrap();
    let paths = node_paths(3);
    let only = |keys: &[&str], resource: Option<&str>| Compare {
        resource: resource.map(str::to_owned),
        keys: keys.iter().map(|k| KeyPath::parse(k).unwrap()).collect(),
    };
    let a = nodes_changed(&before, &after, 1, &paths, &only(&["a"], None));
    assert!(a.is_empty(), "key a did not change");
    let b = nodes_changed(&before, &after, 1, &paths, &only(&["b"], None));
    assert_eq!(b.len(), 1, "only rack r0's node: {b:?}");
    let globals = nodes_changed(&before, &after, 1, &paths, &only(&[], Some("globals")));
    assert!(globals.is_empty());
    // The registered nodes: each value of the register, one level deep.
    let registered: Vec<String> = registered_nodes(&before, 1)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(registered, ["nodes=n0", "nodes=n1", "nodes=n2"]);
    assert!(
        with_writes(
            &before,
            1,
            &[change("zone=z", "astute", DocKind::Values, None)]
        )
        .is_err()
    );
}

fn content() -> impl Strategy<Value = Option<Hash>> {
    let value = prop_oneof![
        (0..3i64).prop_map(Value::Int),
        (0..3i64).prop_map(|n| Value::Hash(rhash! {"x" => n})),
        (0..2i64).prop_map(|n| Value::Hash(rhash! {"x" => n, "y" => Value::Nil})),
        Just(Value::Nil),
    ];
    // Mostly String keys; now and then an Integer one, which no key path
    // names (the whole documents are compared then).
    let key = prop_oneof![
        8 => prop_oneof![Just("a"), Just("b"), Just("c")].prop_map(Value::from),
        1 => Just(Value::Int(7)),
    ];
    prop::option::weighted(
        0.9,
        prop::collection::vec((key, value), 0..3).prop_map(|kv| kv.into_iter().collect()),
    )
}

fn doc_change() -> impl Strategy<Value = DocChange> {
    let at = prop_oneof![
        Just(String::new()),
        (0..3usize).prop_map(|r| format!("rack=r{r}")),
        (0..6usize).prop_map(|n| format!("nodes=n{n}")),
    ];
    let kind = prop_oneof![Just(DocKind::Values), Just(DocKind::Overrides)];
    (at, 0..2usize, kind, content())
        .prop_map(|(at, r, kind, content)| change(&at, RESOURCES[r], kind, content))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Over generated environments (a root, racks and nodes, values and
    /// overrides), every write's changed nodes are exactly those whose
    /// effective data differ, and the dry-run says the same.
    #[test]
    fn changed_nodes_are_exactly_those_whose_data_differ(
        docs in prop::collection::vec(doc_change(), 0..12),
        write in doc_change(),
    ) {
        // One document per slot, resource and kind, as the store keeps.
        let mut unique: Vec<DocChange> = Vec::new();
        for d in docs.into_iter().filter(|d| d.content.is_some()) {
            let clash = unique.iter().any(|u| {
                u.path.slot() == d.path.slot() && u.resource == d.resource && u.kind == d.kind
            });
            if !clash {
                unique.push(d);
            }
        }
        check(&unique, &write, 6);
    }
}
