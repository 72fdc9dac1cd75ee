//! Property tests of the pure core, so what is fixed stays fixed: the
//! YAML loader never panics, and what it loads, dumped and loaded again, is
//! the same value; dotted keys split back into their segments. Bounded:
//! `PROPTEST_CASES` cases each (256 by default).

use super::key::split_key;
use super::render::yaml::to_yaml;
use super::{Value, yaml};
use proptest::prelude::*;

/// Plain data the dumper writes: nil, booleans, Integers, Strings,
/// Arrays and String-keyed Hashes.
fn plain() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        "[a-z0-9 :#'\"-]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..4).prop_map(|kv| {
                Value::Hash(kv.into_iter().map(|(k, v)| (Value::String(k), v)).collect())
            }),
        ]
    })
}

proptest! {
    #[test]
    fn the_yaml_loader_never_panics(text in "(?s).{0,64}") {
        let _ = yaml::load(&text);
    }

    #[test]
    fn the_yaml_loader_never_panics_on_yaml_like_text(
        text in "([-:?&*!|>{}\\[\\],#'\" \\n]|[a-z0-9]{1,3}){0,48}"
    ) {
        let _ = yaml::load(&text);
    }

    #[test]
    fn dumped_yaml_loads_back_as_the_same_value(v in plain()) {
        let text = to_yaml(&v).unwrap();
        prop_assert_eq!(yaml::load(&text).unwrap(), v, "{}", text);
    }

    #[test]
    fn dotted_keys_split_into_their_segments(
        segments in prop::collection::vec("[a-z0-9_:-]{1,6}", 1..5)
    ) {
        let key = segments.join(".");
        let split = split_key(&key).unwrap();
        prop_assert_eq!(split, segments.iter().map(String::as_str).collect::<Vec<_>>());
        let quoted: Vec<String> = segments.iter().map(|s| format!("\"{s}.x\"")).collect();
        let key = quoted.join(".");
        let split = split_key(&key).unwrap();
        let want: Vec<String> = segments.iter().map(|s| format!("{s}.x")).collect();
        prop_assert_eq!(split, want.iter().map(String::as_str).collect::<Vec<_>>());
    }

    #[test]
    fn key_parsing_never_panics(key in "(?s).{0,32}") {
        let _ = split_key(&key);
    }
}
