use super::*;
use crate::configdb::keypath::{KeyPath, get};
use crate::rhash;
use proptest::prelude::*;

fn applied(a: &Value, b: &Value) -> String {
    let mut doc = wire::to_json(a);
    json_patch::patch(&mut doc, &patch(a, b)).unwrap();
    serde_json::to_string(&doc).unwrap()
}

fn wire_text(v: &Value) -> String {
    serde_json::to_string(&wire::to_json(v)).unwrap()
}

#[test]
fn key_paths_name_what_was_added_removed_and_changed() {
    let a = Value::Hash(rhash! {
        "keep" => 1, "gone" => 2, "int" => 1,
        "nested" => rhash! {"x.y" => "old", "same" => true, "it's.here" => 1},
        "list" => vec![Value::from(1), Value::from(2)],
        "short" => vec![Value::from(1)],
    });
    let b = Value::Hash(rhash! {
        "keep" => 1, "int" => Value::Float(1.0), "new" => rhash! {"deep" => 1},
        "nested" => rhash! {"same" => true, "x.y" => "new", "it's.here" => 2},
        "list" => vec![Value::from(1), Value::from(3)],
        "short" => vec![Value::from(1), Value::from(2)],
    });
    let d = key_diff(&a, &b);
    assert_eq!(d.added, vec!["new"]);
    assert_eq!(d.removed, vec!["gone"]);
    assert_eq!(
        d.changed,
        vec![
            "int",
            "nested.'x.y'",
            "nested.\"it's.here\"",
            "list.1",
            "short"
        ]
    );
    assert_eq!(d.all_paths()[..3], ["gone", "int", "list.1"]);
    assert_eq!(applied(&a, &b), wire_text(&b));
    // Order alone is no change to Ruby, but the patch still makes it exact.
    let c = Value::Hash(rhash! {"b" => 1, "a" => 2});
    let d2 = Value::Hash(rhash! {"a" => 2, "b" => 1});
    assert!(key_diff(&c, &d2).is_empty());
    assert_eq!(applied(&c, &d2), wire_text(&d2));
    assert!(patch(&a, &a).is_empty());
    // A changed value is one operation at its place, not the document.
    let edited = Value::Hash(rhash! {
        "keep" => 1, "gone" => 2, "int" => 1,
        "nested" => rhash! {"x.y" => "new", "same" => true, "it's.here" => 1},
        "list" => vec![Value::from(1), Value::from(2)],
        "short" => vec![Value::from(1)],
        "added" => true,
    });
    let text = serde_json::to_string(&patch(&a, &edited)).unwrap();
    assert_eq!(
        text,
        r#"[{"op":"add","path":"/added","value":true},{"op":"replace","path":"/nested/x.y","value":"new"}]"#
    );
}

#[test]
fn ruby_types_change_the_path_and_patch_exactly() {
    let sym = Value::Hash(rhash! {"k" => Value::Symbol("a".into()), "z" => Value::Float(-0.0)});
    let text = Value::Hash(rhash! {"k" => "a", "z" => Value::Float(0.0)});
    assert_eq!(key_diff(&sym, &text).changed, vec!["k"]);
    assert_eq!(applied(&sym, &text), wire_text(&text));
    let mut odd = Hash::default();
    odd.insert(Value::Int(1), Value::from("one"));
    let odd = Value::Hash(rhash! {"h" => Value::Hash(odd)});
    let plain = Value::Hash(rhash! {"h" => rhash! {"1" => "one"}});
    assert_eq!(key_diff(&odd, &plain).changed, vec!["h"]);
    assert_eq!(applied(&odd, &plain), wire_text(&plain));
    assert_eq!(key_diff(&Value::Nil, &plain).changed, vec![""]);
    assert_eq!(applied(&Value::Nil, &plain), wire_text(&plain));
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[abc]",
        Just("x.y".to_owned()),
        Just("q'.r".to_owned()),
        Just("a/b~c".to_owned()),
        Just(wire::TAG.to_owned()),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        (0..3i64).prop_map(Value::Int),
        "[1-9][0-9]{20}".prop_map(|t| Value::integer(t.parse().unwrap())),
        prop_oneof![Just(0.0), Just(-0.0), Just(1.0), Just(f64::NAN)].prop_map(Value::Float),
        text().prop_map(Value::String),
        text().prop_map(Value::Symbol),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((text().prop_map(Value::String), inner.clone()), 0..5)
                .prop_map(|kv| Value::Hash(kv.into_iter().collect())),
            prop::collection::vec((scalar(), inner), 0..3)
                .prop_map(|kv| Value::Hash(kv.into_iter().collect())),
        ]
    })
}

/// Two documents that share much: `b` is `a` with some keys edited,
/// dropped, added, and the order shuffled.
fn pair() -> impl Strategy<Value = (Value, Value)> {
    let doc = || prop::collection::vec((text(), value()), 0..6);
    (doc(), doc(), any::<u64>()).prop_map(|(a, edits, seed)| {
        let a: Hash = a.into_iter().map(|(k, v)| (Value::String(k), v)).collect();
        let mut b = a.clone();
        for (i, (k, v)) in edits.into_iter().enumerate() {
            match (seed >> (2 * i)) & 3 {
                0 => {
                    b.shift_remove(&Value::String(k));
                }
                _ => {
                    b.insert(Value::String(k), v);
                }
            }
        }
        if seed & (1 << 40) != 0 {
            b.reverse();
        }
        (Value::Hash(a), Value::Hash(b))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The patch of (A, B) applied to A is B exactly: the same wire text,
    /// key order and Ruby types included.
    #[test]
    fn the_patch_of_a_and_b_applied_to_a_gives_b((a, b) in pair()) {
        prop_assert_eq!(applied(&a, &b), wire_text(&b));
    }

    #[test]
    fn any_two_values_patch_exactly(a in value(), b in value()) {
        prop_assert_eq!(applied(&a, &b), wire_text(&b));
    }

    /// Every listed path reads as its kind says, and no difference goes
    /// unlisted: equal values (as Ruby compares) list nothing.
    #[test]
    fn key_paths_agree_with_reads((a, b) in pair()) {
        let d = key_diff(&a, &b);
        prop_assert_eq!(d.is_empty(), a == b);
        let (Value::Hash(x), Value::Hash(y)) = (&a, &b) else { unreachable!() };
        let read = |h: &Hash, p: &str| get(h, &KeyPath::parse(p).unwrap()).unwrap().cloned();
        for p in &d.added {
            prop_assert!(read(x, p).is_none() && read(y, p).is_some(), "added {}", p);
        }
        for p in &d.removed {
            prop_assert!(read(x, p).is_some() && read(y, p).is_none(), "removed {}", p);
        }
        for p in &d.changed {
            prop_assert!(read(x, p) != read(y, p), "changed {}", p);
        }
    }
}
