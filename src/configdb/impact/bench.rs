//! A measurement (`--ignored`): which nodes a root-level change reaches,
//! over 1,000 registered nodes of a Fuel-shaped environment (`hierad bench
//! generate`'s), as a dry-run and as a comparison of two snapshots, with a
//! plain effective read of one node's every resource as the baseline in
//! the same run. Prints figures and ratios; asserts only the answers.
//!
//! cargo test --lib configdb::impact::bench -- --ignored --nocapture

use super::*;
use crate::bench::generate::{Sources, generate};
use crate::configdb::model::{ResourceDefinition, StoredDocument};
use crate::configdb::{Component, Environment, SnapshotData};
use std::time::Instant;

const NODES: usize = 1000;

fn fuel(nodes: usize) -> (SnapshotData, Vec<String>) {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = Sources::read(&repo.join("tests/fixtures/fuel"), &repo.join("data")).unwrap();
    let generated = generate(&sources, nodes, 42).unwrap();
    let version = Version {
        number: 1,
        created_at: 0,
        size: 0,
        deleted: false,
        author: None,
    };
    let doc = |slot: Option<LevelValue>, resource: &str, content: &Hash| StoredDocument {
        env: 1,
        slot,
        resource: resource.to_owned(),
        kind: DocKind::Values,
        version: version.clone(),
        content: content.clone(),
    };
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut documents = Vec::new();
    for (resource, content) in &generated.root {
        names.insert(resource.clone());
        documents.push(doc(None, resource, content));
    }
    let mut fqdns = Vec::new();
    for node in &generated.nodes {
        let slot = LevelValue::new("nodes", &node.fqdn).unwrap();
        for (resource, content) in &node.docs {
            names.insert(resource.clone());
            documents.push(doc(Some(slot.clone()), resource, content));
        }
        fqdns.push(node.fqdn.clone());
    }
    let resource_definitions = names
        .iter()
        .enumerate()
        .map(|(i, name)| ResourceDefinition {
            id: i as i64 + 1,
            name: name.clone(),
            content: Default::default(),
        })
        .collect();
    let data = SnapshotData {
        components: vec![Component {
            id: 1,
            name: "fuel".into(),
            resource_definitions,
        }],
        environments: vec![Environment {
            hiera: Default::default(),
            id: 1,
            components: vec![1],
            hierarchy_levels: vec!["nodes".into()],
        }],
        documents,
        unreadable: Vec::new(),
        unparsed: Vec::new(),
        registers: vec![(1, "nodes".into(), fqdns.clone())],
    };
    (data, fqdns)
}

/// Seconds `f` takes, with its answer.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed().as_secs_f64(), out)
}

#[test]
#[ignore = "a measurement: prints figures"]
fn nodes_changed_and_dry_run_over_1000_nodes() {
    let (data, fqdns) = fuel(NODES);
    let globals = data
        .documents
        .iter()
        .find(|d| d.slot.is_none() && d.resource == "globals")
        .map(|d| d.content.clone())
        .expect("a root globals");
    let mut edited = globals.clone();
    edited.insert(Value::from("insight_probe"), Value::from(true));
    let root = DocChange {
        path: LevelPath::root(),
        resource: "globals".into(),
        kind: DocKind::Values,
        content: Some(edited),
    };
    let before = Snapshot::build(data.clone());
    let nodes = registered_nodes(&before, 1);
    assert_eq!(nodes.len(), NODES);
    // Baseline: one node's every effective document, on a fresh snapshot.
    let fresh = Snapshot::build(data.clone());
    let one = LevelPath::new(vec![LevelValue::new("nodes", &fqdns[0]).unwrap()]);
    let names: Vec<String> = fresh
        .resource_names(1)
        .unwrap()
        .map(str::to_owned)
        .collect();
    let (baseline, _) = timed(|| {
        for r in &names {
            std::hint::black_box(fresh.effective(1, &one, r));
        }
    });
    let all = Compare::default();
    let (dry, changed) = timed(|| dry_run(&before, 1, std::slice::from_ref(&root), &nodes, &all));
    let changed = changed.unwrap();
    assert_eq!(changed.len(), NODES, "every node gets the new key");
    let after = with_writes(&before, 1, std::slice::from_ref(&root)).unwrap();
    let before = Snapshot::build(data);
    let (compare, again) = timed(|| nodes_changed(&before, &after, 1, &nodes, &all));
    assert_eq!(again, changed);
    let keys = Compare {
        resource: Some("globals".into()),
        keys: vec![KeyPath::parse("insight_probe").unwrap()],
    };
    let before = Snapshot::build(fuel(NODES).0);
    let (by_key, answer) = timed(|| nodes_changed(&before, &after, 1, &nodes, &keys));
    assert_eq!(answer.len(), NODES);
    println!("{NODES} registered nodes, a root-level change of globals:");
    println!("  baseline: one node's effective read  {:>9.4} s", baseline);
    for (what, s) in [
        ("dry-run (every resource)", dry),
        ("nodes changed (every resource)", compare),
        ("nodes changed (one key)", by_key),
    ] {
        println!("  {what:<36} {s:>9.4} s  {:>8.1}x baseline", s / baseline);
    }
}
