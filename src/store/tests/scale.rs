//! Scale: a Fuel-sized database's snapshot (time and memory), and the
//! property test of values through the store.

use super::*;
use crate::configdb::Snapshot;
use crate::configdb::memo::heap_bytes;
use crate::hiera::Value;
use crate::hiera::value::HashedKey;
use crate::rhash;

/// Synthetic Fuel-sized data: an astute-like document of about 85 KB of
/// JSON (like the fixtures in shared/fixtures/fuel) and a globals of ~6 KB.
mod synthetic {
    use super::*;

    fn section(seed: i64, keys: usize, depth: usize) -> Value {
        let mut h = Hash::default();
        for k in 0..keys {
            let key = format!("key_{seed}_{k}");
            let v = match (k % 5, depth) {
                (0, d) if d > 0 => section(seed * 7 + k as i64, keys / 2 + 1, d - 1),
                (1, _) => Value::Array(
                    (0..4)
                        .map(|i| Value::str(format!("10.{seed}.{k}.{i}/24")))
                        .collect(),
                ),
                (2, _) => Value::Bool(k % 2 == 0),
                (3, _) => Value::Int(seed * 1000 + k as i64),
                _ => Value::str(format!("value-{seed}-{k}-some-text")),
            };
            h.insert(Value::str(key), v);
        }
        Value::Hash(h)
    }

    pub(crate) fn astute(node: usize) -> Hash {
        let mut doc = Hash::default();
        for s in 0..40 {
            doc.insert(Value::str(format!("section_{s}")), section(s, 12, 2));
        }
        doc.insert(Value::str("uid"), Value::str(node.to_string()));
        doc.insert(
            Value::str("fqdn"),
            Value::str(format!("node-{node}.domain.tld")),
        );
        doc.insert(Value::str("network_scheme"), section(node as i64, 14, 2));
        doc
    }

    /// The part of astute that differs per node.
    pub(crate) fn node_part(node: usize) -> Hash {
        let mut doc = Hash::default();
        doc.insert(Value::str("uid"), Value::str(node.to_string()));
        doc.insert(
            Value::str("fqdn"),
            Value::str(format!("node-{node}.domain.tld")),
        );
        doc.insert(Value::str("network_scheme"), section(node as i64, 14, 2));
        doc
    }

    pub(crate) fn globals(node: usize) -> Hash {
        match section(node as i64, 40, 1) {
            Value::Hash(h) => h,
            _ => unreachable!(),
        }
    }

    fn count(v: &Value) -> usize {
        1 + match v {
            Value::Hash(h) => h.values().map(count).sum(),
            Value::Array(a) => a.iter().map(count).sum(),
            _ => 0,
        }
    }

    /// The real data/astute.yaml is 74 KB as JSON with 3,133 values.
    #[test]
    fn sizes_are_fuel_like() {
        let doc = Value::Hash(astute(1));
        let bytes = crate::wire::to_string(&doc).len();
        assert!((60_000..120_000).contains(&bytes), "astute {bytes} bytes");
        let values = count(&doc);
        assert!((2_500..8_000).contains(&values), "astute {values} values");
    }
}

/// CPU seconds this process has used, all threads (Linux), so figures
/// mean something on a shared, loaded machine.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime, in clock ticks (100 per second on Linux).
    (ticks(11) + ticks(12)) / 100.0
}

/// Measures load_all + Snapshot::build for 1,000 nodes; run with
/// `cargo test --release -- --ignored --nocapture snapshot_scale`.
#[test]
#[ignore = "a measurement: run in release"]
fn snapshot_scale() {
    use std::time::Instant;
    const NODES: usize = 1000;
    let dir = tempfile::tempdir().unwrap();
    for (label, full) in [
        ("full astute per node", true),
        ("shared root astute", false),
    ] {
        let file = dir.path().join(format!("{full}.sqlite"));
        let s = SqliteStore::open(&file).unwrap();
        seed(&s);
        let mut documents = vec![
            import_doc(
                "",
                "astute",
                DocKind::Values,
                if full {
                    Hash::default()
                } else {
                    synthetic::astute(0)
                },
            ),
            import_doc("", "globals", DocKind::Values, synthetic::globals(0)),
        ];
        for n in 1..=NODES {
            let p = format!("nodes=node-{n}.domain.tld");
            let astute = if full {
                synthetic::astute(n)
            } else {
                synthetic::node_part(n)
            };
            documents.push(import_doc(&p, "astute", DocKind::Values, astute));
            documents.push(import_doc(
                &p,
                "globals",
                DocKind::Values,
                synthetic::globals(n),
            ));
            if n % 10 == 0 {
                documents.push(import_doc(
                    &p,
                    "astute",
                    DocKind::Overrides,
                    rhash! {"section_1" => Value::Hash(rhash! {"key_1_3" => "override"})},
                ));
            }
        }
        let t = Instant::now();
        s.import(&ImportBatch {
            env: 1,
            documents,
            ..ImportBatch::default()
        })
        .unwrap();
        let import = t.elapsed();
        let bytes = std::fs::metadata(&file).unwrap().len()
            + std::fs::metadata(dir.path().join(format!("{full}.sqlite-wal")))
                .map(|m| m.len())
                .unwrap_or(0);
        drop(s);
        let s = SqliteStore::open(&file).unwrap();
        let (t, cpu) = (Instant::now(), cpu_seconds());
        let data = s.load_all().unwrap();
        let load = t.elapsed();
        let mut load_cpu = cpu_seconds() - cpu;
        let docs = data.documents.len();
        let heap_mb = data
            .documents
            .iter()
            .map(|d| {
                d.content.capacity() * 2 * std::mem::size_of::<Value>()
                    + d.content
                        .iter()
                        .map(|(k, v)| heap_bytes(k) + heap_bytes(v))
                        .sum::<usize>()
            })
            .sum::<usize>() as f64
            / 1e6;
        let (t, cpu) = (Instant::now(), cpu_seconds());
        let snap = Snapshot::build(data);
        let build = t.elapsed();
        load_cpu += cpu_seconds() - cpu;
        // The lookup path: one key per datasource, folded on its own.
        let t = Instant::now();
        let (section, fqdn) = (Value::str("section_1"), Value::str("fqdn"));
        for n in 1..=NODES {
            let p = path(&format!("nodes=node-{n}.domain.tld"));
            let at = snap.at(1, &p).unwrap();
            assert!(
                at.effective_key("astute", &HashedKey::new(&section))
                    .is_some()
            );
            let (got, _) = at.effective_key("astute", &HashedKey::new(&fqdn)).unwrap();
            assert_eq!(*got, Value::str(format!("node-{n}.domain.tld")));
        }
        let keyed = t.elapsed();
        let t = Instant::now();
        let mut shared_with_root = 0;
        let root = snap.effective(1, &LevelPath::root(), "globals").unwrap();
        for n in 1..=NODES {
            let p = path(&format!("nodes=node-{n}.domain.tld"));
            let a = snap.effective(1, &p, "astute").unwrap();
            assert_eq!(a[&Value::str("uid")], Value::str(n.to_string()));
            let g = snap.effective(1, &p, "override/node").unwrap();
            shared_with_root += usize::from(g.is_empty());
            let _ = snap.effective(1, &p, "globals").unwrap();
        }
        let first = t.elapsed();
        let t = Instant::now();
        for n in 1..=NODES {
            let p = path(&format!("nodes=node-{n}.domain.tld"));
            let _ = snap.effective(1, &p, "astute").unwrap();
        }
        let cached = t.elapsed();
        assert_eq!(shared_with_root, NODES);
        assert!(!root.is_empty());
        println!(
            "{label}: {docs} documents, database {:.1} MB; import {import:?}; load_all {load:?} + build {build:?} wall, {load_cpu:.2} CPU-s; effective_key x 2 keys x {NODES} nodes {keyed:?}; first effective of 3 resources x {NODES} nodes {first:?}; cached astute x {NODES} {cached:?}; decoded documents ~{heap_mb:.0} MB of heap",
            bytes as f64 / 1e6
        );
        drop(snap);
        // CPU time, not wall time: other work shares this machine. On two
        // idle cores the wall time is about half of it.
        assert!(load_cpu < 3.0, "{load_cpu} CPU-s");
    }
}

/// Reading never fails on what the writer accepted. Generated
/// values of every type the model has (Symbols, NaN and infinite Floats,
/// big Integers, Hashes with non-String keys and with a `__hierad__` key,
/// nesting up to the limit) go through a real store, whose encoding and
/// decoding must give them back, from `get` and from `load_all`.
/// `PROPTEST_CASES` sets the number of cases (256 by default).
mod round_trip {
    use super::*;
    use crate::wire::MAX_DEPTH;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            ".{0,8}",
            Just(crate::wire::TAG.to_owned()),
            Just("$serde_json::private::Number".to_owned()),
            Just("%{x}".to_owned()),
        ]
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Nil),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            "-?[1-9][0-9]{19,40}".prop_map(|t| Value::integer(t.parse().unwrap())),
            any::<f64>().prop_map(Value::Float),
            prop_oneof![
                Just(f64::NAN),
                Just(f64::INFINITY),
                Just(f64::NEG_INFINITY),
                Just(-0.0)
            ]
            .prop_map(Value::Float),
            text().prop_map(Value::String),
            text().prop_map(Value::Symbol),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(4, 48, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((text().prop_map(Value::String), inner.clone()), 0..5)
                    .prop_map(|kv| Value::Hash(kv.into_iter().collect())),
                prop::collection::vec((inner.clone(), inner), 0..4)
                    .prop_map(|kv| Value::Hash(kv.into_iter().collect())),
            ]
        })
    }

    /// A value inside a chain of containers as deep as the limit allows:
    /// 0 an Array, 1 a String-keyed Hash, 2 a Symbol-keyed Hash, 3 a Hash
    /// under its `__hierad__` key, 4 a Hash keyed by the value itself.
    fn deep() -> impl Strategy<Value = Value> {
        (value(), prop::collection::vec(0..5u8, 0..MAX_DEPTH)).prop_map(|(v, chain)| {
            // The document's own Hash is a level too.
            let room = MAX_DEPTH - 1 - v.depth_upto(MAX_DEPTH);
            chain.into_iter().take(room).fold(v, |v, kind| {
                let mut h = Hash::default();
                match kind {
                    0 => return Value::Array(vec![v]),
                    1 => h.insert(Value::str("k"), v),
                    2 => h.insert(Value::Symbol("k".into()), v),
                    3 => h.insert(Value::str(crate::wire::TAG), v),
                    _ => h.insert(v, Value::Nil),
                };
                Value::Hash(h)
            })
        })
    }

    proptest! {
        #[test]
        fn what_the_store_accepts_reads_back(v in prop_oneof![value(), deep()]) {
            let s = fuel();
            let a = at(1, "", "astute", DocKind::Values);
            let doc = rhash! {"v" => v};
            s.put(&a, &doc).unwrap();
            let (_, back) = s.get(&a, None).unwrap().unwrap();
            prop_assert_eq!(&back, &doc);
            let text = crate::wire::to_string(&Value::Hash(doc.clone()));
            prop_assert_eq!(crate::wire::to_string(&Value::Hash(back)), text);
            prop_assert_eq!(&s.load_all().unwrap().documents[0].content, &doc);
        }
    }
}
