//! Unit tests of `configdb/snapshot.rs`.

use super::*;
use crate::configdb::error::ErrorKind;
use crate::configdb::model::StoredDocument;
use crate::rhash;

fn version(n: u64) -> Version {
    Version {
        number: n,
        created_at: 0,
        size: 0,
        deleted: false,
        author: None,
    }
}

fn doc(slot: &str, resource: &str, kind: DocKind, content: Hash) -> StoredDocument {
    StoredDocument {
        env: 1,
        slot: LevelPath::parse_cli(slot).unwrap().slot().cloned(),
        resource: resource.into(),
        kind,
        version: version(1),
        content,
    }
}

fn path(text: &str) -> LevelPath {
    LevelPath::parse_cli(text).unwrap()
}

fn data(documents: Vec<StoredDocument>) -> SnapshotData {
    crate::configdb::fixture::environment(
        &["astute", "globals", "override/node"],
        &["role", "nodes"],
        documents,
    )
}

/// One key at a level path of environment 1, as a lookup reads it.
fn effective_key<'s>(
    snap: &'s Snapshot,
    p: &str,
    resource: &str,
    key: &Value,
) -> Option<EffectiveKey<'s>> {
    snap.at(1, &path(p))?
        .effective_key(resource, &crate::hiera::value::HashedKey::new(key))
}

fn sample() -> Snapshot {
    use DocKind::{Overrides, Values};
    let nova = |debug: bool| Value::Hash(rhash! {"debug" => debug, "workers" => 4});
    Snapshot::build(data(vec![
        doc(
            "",
            "astute",
            Values,
            rhash! {"k" => "root", "nova" => nova(false)},
        ),
        doc("", "astute", Overrides, rhash! {"o" => "root override"}),
        doc(
            "role=controller",
            "astute",
            Values,
            rhash! {"k" => "controller"},
        ),
        doc("nodes=n1", "astute", Values, rhash! {"k" => "n1"}),
        doc(
            "nodes=n1",
            "astute",
            Overrides,
            rhash! {"nova" => Value::Hash(rhash! {"debug" => true})},
        ),
        doc("nodes=n2", "globals", Values, rhash! {"g" => 2}),
        // Unreachable: undefined resource, unknown level, unknown env.
        doc("", "nope", Values, rhash! {"x" => 1}),
        doc("racks=r1", "astute", Values, rhash! {"x" => 1}),
        StoredDocument {
            env: 9,
            ..doc("", "astute", Values, rhash! {"x" => 1})
        },
    ]))
}

#[test]
fn effective_table() {
    let snap = sample();
    let nova = |debug: bool| Value::Hash(rhash! {"debug" => debug, "workers" => 4});
    let cases: Vec<(&str, &str, Option<Hash>)> = vec![
        (
            "",
            "astute",
            Some(rhash! {"k" => "root", "nova" => nova(false), "o" => "root override"}),
        ),
        (
            "nodes=n1",
            "astute",
            Some(rhash! {"k" => "n1", "nova" => nova(true), "o" => "root override"}),
        ),
        (
            "role=controller",
            "astute",
            Some(rhash! {"k" => "controller", "nova" => nova(false), "o" => "root override"}),
        ),
        (
            "role=controller,nodes=n1",
            "astute",
            Some(rhash! {"k" => "n1", "nova" => nova(true), "o" => "root override"}),
        ),
        (
            "role=compute,nodes=n3",
            "astute",
            Some(rhash! {"k" => "root", "nova" => nova(false), "o" => "root override"}),
        ),
        ("nodes=n2", "globals", Some(rhash! {"g" => 2})),
        ("nodes=n1", "globals", Some(Hash::default())),
        ("", "override/node", Some(Hash::default())),
        ("", "nope", None),
        ("racks=r1", "astute", None),
        ("nodes=n1,role=controller", "astute", None),
    ];
    for (p, resource, want) in cases {
        let got = snap.effective(1, &path(p), resource);
        assert_eq!(got.as_deref(), want.as_ref(), "{p} {resource}");
        assert_eq!(
            snap.try_effective(1, &path(p), resource).ok().as_deref(),
            want.as_ref()
        );
    }
    assert_eq!(snap.effective(9, &LevelPath::root(), "astute"), None);
}

#[test]
fn a_key_is_final_when_every_layer_it_folds_is() {
    use DocKind::Values;
    let h = |pairs: Hash| Value::Hash(pairs);
    let snap = Snapshot::build(data(vec![
        doc(
            "",
            "astute",
            Values,
            rhash! {
                "plain" => h(rhash! {"a" => 1}),
                "token" => "http://%{::fqdn}/",
                "symbol" => Value::Symbol("s".into()),
                "mixed" => h(rhash! {"a" => "x"}),
                "token_key" => h(rhash! {"%{k}" => 1}),
            },
        ),
        doc(
            "nodes=n",
            "astute",
            Values,
            rhash! {"plain" => h(rhash! {"b" => 2}), "mixed" => h(rhash! {"b" => "%{y}"})},
        ),
    ]));
    let cases = [
        ("", "plain", true),
        ("nodes=n", "plain", true),
        ("", "token", false),
        ("", "symbol", false),
        ("", "mixed", true),
        ("nodes=n", "mixed", false),
        ("", "token_key", false),
    ];
    for (p, key, want) in cases {
        let (_, is_final) = effective_key(&snap, p, "astute", &Value::str(key)).unwrap();
        assert_eq!(is_final, want, "{p} {key}");
    }
}

#[test]
fn effective_key_agrees_with_the_whole_fold() {
    use DocKind::{Overrides, Values};
    let h = |pairs: Hash| Value::Hash(pairs);
    // Layers chosen so every key exercises a different chain.
    let snap = Snapshot::build(data(vec![
        doc(
            "",
            "astute",
            Values,
            rhash! {
                "deep" => h(rhash! {"a" => 1, "n" => h(rhash! {"x" => 1, "y" => 1})}),
                "scalar_then_hash" => 1,
                "hash_then_scalar" => h(rhash! {"a" => 1}),
                "only_root" => "root",
                "nil_later" => 5,
            },
        ),
        doc(
            "",
            "astute",
            Overrides,
            rhash! {"deep" => h(rhash! {"b" => 2})},
        ),
        doc(
            "role=r",
            "astute",
            Values,
            rhash! {
                "deep" => h(rhash! {"n" => h(rhash! {"y" => 2})}),
                "scalar_then_hash" => h(rhash! {"s" => 1}),
                "hash_then_scalar" => "flat",
            },
        ),
        doc(
            "nodes=n",
            "astute",
            Values,
            rhash! {
                "scalar_then_hash" => h(rhash! {"t" => 2}),
                "nil_later" => Value::Nil,
                "only_node" => Value::Array(vec![1.into()]),
            },
        ),
        doc(
            "nodes=n",
            "astute",
            Overrides,
            rhash! {"deep" => h(rhash! {"c" => 3})},
        ),
    ]));
    let keys = [
        "deep",
        "scalar_then_hash",
        "hash_then_scalar",
        "only_root",
        "only_node",
        "nil_later",
        "absent",
    ];
    for p in ["", "role=r", "nodes=n", "role=r,nodes=n", "role=x,nodes=y"] {
        let whole = snap.effective(1, &path(p), "astute").unwrap();
        for key in keys {
            let key = Value::str(key);
            let got = effective_key(&snap, p, "astute", &key);
            assert_eq!(
                got.map(|(v, _)| v).as_deref(),
                whole.get(&key),
                "{p} {key:?}"
            );
        }
    }
    // One deciding layer: borrowed, not copied.
    let (got, _) = effective_key(&snap, "nodes=n", "astute", &Value::str("only_root")).unwrap();
    assert!(matches!(got, Cow::Borrowed(_)));
    assert_eq!(
        effective_key(&snap, "nodes=n", "nope", &Value::str("deep")),
        None
    );
}

#[test]
fn errors_say_why() {
    let snap = sample();
    let cases: &[(i64, &str, &str, ErrorKind, &str)] = &[
        (
            2,
            "",
            "astute",
            ErrorKind::NotFound,
            "environment 2 does not exist",
        ),
        (
            1,
            "",
            "nope",
            ErrorKind::NotFound,
            "resource \"nope\" is not defined in environment 1 (it defines 3 others; its components list their resource_definitions)",
        ),
        (
            1,
            "racks=r",
            "astute",
            ErrorKind::NotFound,
            "level \"racks\"",
        ),
        (
            1,
            "nodes=a,role=b",
            "astute",
            ErrorKind::Invalid,
            "must come before",
        ),
    ];
    for (env, p, resource, kind, msg) in cases {
        let err = snap.try_effective(*env, &path(p), resource).unwrap_err();
        assert_eq!(err.kind(), *kind, "{p}");
        assert!(err.to_string().contains(msg), "{err}");
        let err = snap
            .stored(*env, &path(p), resource, DocKind::Values)
            .unwrap_err();
        assert_eq!(err.kind(), *kind);
    }
}

#[test]
fn shares_instead_of_copying() {
    let snap = sample();
    let root = snap.effective(1, &LevelPath::root(), "astute").unwrap();
    // Nodes with nothing of their own share the root's Arc.
    for n in ["n2", "n3", "n999"] {
        let e = snap
            .effective(1, &path(&format!("nodes={n}")), "astute")
            .unwrap();
        assert!(Arc::ptr_eq(&e, &root), "{n}");
    }
    // A node whose only layer is its own values, over an empty root,
    // holds that very document.
    let stored = snap
        .stored(1, &path("nodes=n2"), "globals", DocKind::Values)
        .unwrap()
        .unwrap();
    let e = snap.effective(1, &path("nodes=n2"), "globals").unwrap();
    assert!(Arc::ptr_eq(&e, &stored.content));
    // A real merge is computed once and then shared.
    let a = snap.effective(1, &path("nodes=n1"), "astute").unwrap();
    let b = snap.effective(1, &path("nodes=n1"), "astute").unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    // Paths without data of their own add no cache entries.
    let entries = |s: &Snapshot| s.envs[&1].resources["astute"].cache.read().unwrap().len();
    assert_eq!(entries(&snap), 1);
}

#[test]
fn encoded_documents_are_made_once_per_document_and_write() {
    let snap = sample();
    let encoded = |s: &Snapshot, p: &str| s.try_encoded(1, &path(p), "astute").unwrap();
    let entries = |s: &Snapshot| s.envs[&1].resources["astute"].encoded.read().unwrap().len();
    let paths = ["", "nodes=n1", "role=controller,nodes=n1", "nodes=n7"];
    for p in paths {
        encoded(&snap, p);
    }
    // Only the bytes are kept, not the folded Hashes.
    let trees = |s: &Snapshot| s.envs[&1].resources["astute"].cache.read().unwrap().len();
    assert_eq!(trees(&snap), 0);
    // The bytes are the effective document's wire JSON, the tag theirs.
    for p in paths {
        let doc = snap.effective(1, &path(p), "astute").unwrap();
        let e = encoded(&snap, p);
        assert_eq!(
            e.body,
            crate::wire::to_string(&Value::Hash((*doc).clone())),
            "{p}"
        );
        assert_eq!(e.etag, Encoded::of(&doc).etag, "{p}");
        assert!(e.etag().starts_with('"') && e.etag().ends_with('"') && e.etag.len() == 18);
    }
    // Asked again: the same bytes, not a new encoding.
    assert!(Arc::ptr_eq(
        &encoded(&snap, "nodes=n1"),
        &encoded(&snap, "nodes=n1")
    ));
    // Nodes with nothing of their own share the root's encoding: a
    // thousand unknown node names add no entry.
    for n in 0..1000 {
        let e = encoded(&snap, &format!("nodes=x{n}"));
        assert!(Arc::ptr_eq(&e, &encoded(&snap, "")));
    }
    let before = entries(&snap);
    assert_eq!(before, 3, "root, n1, role=controller,nodes=n1");
    // Different documents, different tags.
    assert_ne!(encoded(&snap, "").etag, encoded(&snap, "nodes=n1").etag);
    // A write keeps the encodings it cannot affect and re-encodes the
    // rest on their next read.
    let n1 = encoded(&snap, "nodes=n1");
    let ctl = encoded(&snap, "role=controller,nodes=n1");
    let new_doc = StoredDoc::new(version(2), Arc::new(rhash! {"k" => "controller v2"}));
    let next = snap
        .with_document(
            1,
            &path("role=controller"),
            "astute",
            DocKind::Values,
            Some(new_doc),
        )
        .unwrap();
    assert_eq!(entries(&next), 2, "the root's and n1's encodings are kept");
    assert!(Arc::ptr_eq(&encoded(&next, "nodes=n1"), &n1));
    let ctl2 = encoded(&next, "role=controller,nodes=n1");
    assert!(!Arc::ptr_eq(&ctl2, &ctl));
    assert_eq!(
        ctl2.body, ctl.body,
        "node data masks the role's k either way"
    );
    let role = encoded(&next, "role=controller");
    assert!(
        std::str::from_utf8(&role.body)
            .unwrap()
            .contains("controller v2")
    );
    // The old snapshot still sends its own bytes.
    assert!(Arc::ptr_eq(
        &encoded(&snap, "role=controller,nodes=n1"),
        &ctl
    ));
    // Errors as for the effective document.
    assert_eq!(
        snap.try_encoded(1, &path("racks=1"), "astute")
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn with_document_replaces_one_and_shares_the_rest() {
    let snap = sample();
    let n1 = snap.effective(1, &path("nodes=n1"), "astute").unwrap();
    let ctl = snap
        .effective(1, &path("role=controller,nodes=n1"), "astute")
        .unwrap();
    let globals_before = snap.effective(1, &path("nodes=n2"), "globals").unwrap();
    let new_doc = StoredDoc::new(version(2), Arc::new(rhash! {"k" => "controller v2"}));
    let next = snap
        .with_document(
            1,
            &path("role=controller"),
            "astute",
            DocKind::Values,
            Some(new_doc),
        )
        .unwrap();
    // The old snapshot is untouched.
    let old = snap
        .effective(1, &path("role=controller"), "astute")
        .unwrap();
    assert_eq!(old[&Value::str("k")], "controller".into());
    let new = next
        .effective(1, &path("role=controller"), "astute")
        .unwrap();
    assert_eq!(new[&Value::str("k")], "controller v2".into());
    assert_eq!(
        next.stored(1, &path("role=controller"), "astute", DocKind::Values)
            .unwrap()
            .unwrap()
            .version
            .number,
        2
    );
    // Entries not through the changed slot are kept, others recomputed.
    assert!(Arc::ptr_eq(
        &next.effective(1, &path("nodes=n1"), "astute").unwrap(),
        &n1
    ));
    let ctl2 = next
        .effective(1, &path("role=controller,nodes=n1"), "astute")
        .unwrap();
    assert!(!Arc::ptr_eq(&ctl2, &ctl));
    assert_eq!(*ctl2, *ctl, "node data masks the role's k either way");
    // Other resources are shared whole.
    assert!(Arc::ptr_eq(
        &next.effective(1, &path("nodes=n2"), "globals").unwrap(),
        &globals_before
    ));
    // Removing a document.
    let gone = next
        .with_document(1, &path("nodes=n1"), "astute", DocKind::Overrides, None)
        .unwrap();
    let e = gone.effective(1, &path("nodes=n1"), "astute").unwrap();
    assert_eq!(
        e[&Value::str("nova")],
        Value::Hash(rhash! {"debug" => false, "workers" => 4})
    );
    // A root change reaches every node.
    let root_doc = StoredDoc::new(version(2), Arc::new(rhash! {"new" => 1}));
    let rooted = gone
        .with_document(
            1,
            &LevelPath::root(),
            "astute",
            DocKind::Overrides,
            Some(root_doc),
        )
        .unwrap();
    let e = rooted.effective(1, &path("nodes=n1"), "astute").unwrap();
    assert_eq!(e.get(&Value::str("new")), Some(&1.into()));
    assert_eq!(e.get(&Value::str("o")), None);
    // Errors.
    assert_eq!(
        snap.with_document(1, &path("racks=1"), "astute", DocKind::Values, None)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn listings() {
    let snap = sample();
    assert_eq!(
        snap.levels(1),
        Some(&["role".to_owned(), "nodes".to_owned()][..])
    );
    let names: Vec<&str> = snap.resource_names(1).unwrap().collect();
    assert_eq!(names, ["astute", "globals", "override/node"]);
    assert_eq!(snap.environments().map(|e| e.id).collect::<Vec<_>>(), [1]);
    assert_eq!(snap.components().len(), 1);
    assert!(snap.levels(2).is_none());
}

#[test]
fn is_send_and_sync_and_reads_concurrently() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Snapshot>();
    let snap = sample();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for i in 0..200 {
                    let p = path(if i % 2 == 0 {
                        "nodes=n1"
                    } else {
                        "role=controller,nodes=n1"
                    });
                    let e = snap.effective(1, &p, "astute").unwrap();
                    assert_eq!(e[&Value::str("k")], "n1".into());
                }
            });
        }
    });
}

#[test]
fn registers_are_checked_from_the_snapshot_and_a_change_keeps_the_documents() {
    let mut with_registers = data(Vec::new());
    with_registers.registers = vec![
        (1, "nodes".into(), vec!["n1".into()]),
        // A register of an environment the snapshot does not serve (deleted).
        (9, "nodes".into(), vec!["n7".into()]),
    ];
    let snap = Snapshot::build(with_registers);
    snap.check_registered(1, &path("role=any,nodes=n1"))
        .unwrap();
    snap.check_registered(1, &LevelPath::root()).unwrap();
    snap.check_registered(2, &path("nodes=n9")).unwrap();
    // Environment 9 is not live: it is not named.
    assert!(matches!(
        snap.check_registered(1, &path("nodes=n7")),
        Err(NotFound::Unregistered { .. })
    ));
    // A deleted environment's own register still refuses (as the store's
    // check does), naming the live environment that registers the value.
    assert!(matches!(
        snap.check_registered(9, &path("nodes=n1")),
        Err(NotFound::NotAssigned { elsewhere, .. }) if elsewhere == vec![1]
    ));
    let snap = sample();
    let before = snap.try_encoded(1, &path("nodes=n1"), "astute").unwrap();
    let changed = snap.with_register(1, "nodes", Some(vec!["n2".into()]));
    assert!(snap.check_registered(1, &path("nodes=n1")).is_ok());
    assert!(matches!(
        changed.check_registered(1, &path("nodes=n1")),
        Err(NotFound::Unregistered { .. })
    ));
    changed.check_registered(1, &path("nodes=n2")).unwrap();
    // The documents and their encodings are shared, not made again.
    let after = changed.try_encoded(1, &path("nodes=n1"), "astute").unwrap();
    assert!(Arc::ptr_eq(&before, &after));
    let removed = changed.with_register(1, "nodes", None);
    removed.check_registered(1, &path("nodes=n1")).unwrap();
}
