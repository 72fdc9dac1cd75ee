//! Origins against brute force: for generated layers, each key's origin
//! is the last layer in fold order that holds it, and the keys are the
//! fold's own, in its order.

use super::*;
use crate::configdb::LevelValue;
use crate::configdb::fold::fold;
use proptest::prelude::*;

fn version(number: u64) -> Version {
    Version {
        number,
        created_at: 1_700_000_000 + number as i64,
        size: 0,
        deleted: false,
        author: Some(format!("author-{number}")),
    }
}

fn doc(keys: &[(&str, i64)]) -> Hash {
    keys.iter()
        .map(|(k, v)| (Value::str(*k), Value::Int(*v)))
        .collect()
}

#[test]
fn a_hand_case_names_level_kind_and_version() {
    let root = LevelPath::root();
    let node = LevelPath::new(vec![LevelValue::new("nodes", "node-12").unwrap()]);
    let (v1, v2, v3) = (version(1), version(2), version(3));
    let (a, b, c) = (
        doc(&[("a", 1), ("b", 1)]),
        doc(&[("b", 2)]),
        doc(&[("c", 3), ("a", 4)]),
    );
    let layers = [
        Layer {
            path: &root,
            kind: DocKind::Values,
            version: &v1,
            content: &a,
        },
        Layer {
            path: &node,
            kind: DocKind::Values,
            version: &v2,
            content: &b,
        },
        Layer {
            path: &node,
            kind: DocKind::Overrides,
            version: &v3,
            content: &c,
        },
    ];
    let got = origins(&layers);
    let names: Vec<(&str, &str, DocKind, u64)> = got
        .iter()
        .map(|(k, o)| (k.as_str(), o.level.as_str(), o.kind, o.version.number))
        .collect();
    assert_eq!(
        names,
        [
            ("a", "nodes/node-12", DocKind::Overrides, 3),
            ("b", "nodes/node-12", DocKind::Values, 2),
            ("c", "nodes/node-12", DocKind::Overrides, 3),
        ]
    );
    assert_eq!(got[0].1.version.author.as_deref(), Some("author-3"));
    assert_eq!(level_url(&root), "");
}

/// Up to six layers of up to five keys from a small alphabet (so layers
/// share keys), with nested Hashes now and then.
fn layers() -> impl Strategy<Value = Vec<Hash>> {
    let value = prop_oneof![
        any::<i8>().prop_map(|n| Value::Int(i64::from(n))),
        prop::collection::vec(("[xy]", any::<i8>()), 0..3).prop_map(|pairs| {
            Value::Hash(
                pairs
                    .into_iter()
                    .map(|(k, v)| (Value::str(k), Value::Int(i64::from(v))))
                    .collect(),
            )
        }),
    ];
    let layer = prop::collection::vec(("[a-f]", value), 0..5)
        .prop_map(|pairs| pairs.into_iter().map(|(k, v)| (Value::str(k), v)).collect());
    prop::collection::vec(layer, 0..6)
}

proptest! {
    #[test]
    fn each_origin_is_the_last_layer_holding_the_key(docs in layers()) {
        let paths: Vec<LevelPath> = (0..docs.len())
            .map(|i| LevelPath::new((0..i / 2).map(|d| LevelValue::new(format!("l{d}"), "v").unwrap()).collect()))
            .collect();
        let versions: Vec<Version> = (0..docs.len()).map(|i| version(i as u64 + 1)).collect();
        let layers: Vec<Layer<'_>> = docs
            .iter()
            .enumerate()
            .map(|(i, content)| Layer {
                path: &paths[i],
                kind: if i % 2 == 0 { DocKind::Values } else { DocKind::Overrides },
                version: &versions[i],
                content,
            })
            .collect();
        let got = origins(&layers);
        let folded = fold(docs.iter());
        let fold_keys: Vec<&str> = folded.keys().filter_map(Value::as_str).collect();
        let got_keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        prop_assert_eq!(got_keys, fold_keys);
        for (key, origin) in &got {
            let last = (0..docs.len())
                .rev()
                .find(|&i| docs[i].contains_key(&Value::str(key.as_str())))
                .expect("a key of the fold is in some layer");
            prop_assert_eq!(origin.version.number, last as u64 + 1);
            prop_assert_eq!(&origin.level, &level_url(&paths[last]));
            prop_assert_eq!(origin.kind, layers[last].kind);
        }
    }
}
