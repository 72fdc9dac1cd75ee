//! Unit tests of `wire.rs`.

use super::*;
use crate::rhash;

#[test]
fn round_trips_every_type() {
    let mut odd = Hash::default();
    odd.insert(Value::Int(1), "one".into());
    odd.insert(Value::Nil, Value::Bool(true));
    odd.insert(Value::Symbol("s".into()), Value::Float(1.0));
    let cases = vec![
        Value::Nil,
        Value::Bool(false),
        Value::Int(-3),
        Value::integer("123456789012345678901234567890".parse().unwrap()),
        Value::Float(1.0),
        Value::Float(1.5e300),
        Value::Float(f64::NEG_INFINITY),
        Value::str("%{x}"),
        Value::Symbol("sym".into()),
        Value::Hash(odd),
        Value::Hash(rhash! {"__hierad__" => "user data", "b" => Value::Array(vec![])}),
        Value::Hash(rhash! {"z" => 1, "a" => Value::Hash(rhash! {"k" => Value::Nil})}),
    ];
    for v in cases {
        let text = to_string(&v);
        let back = from_str(&text).unwrap();
        assert_eq!(back, v, "{text}");
        assert_eq!(to_string(&back), text, "stable encoding");
    }
    let nan = from_str(&to_string(&Value::Float(f64::NAN))).unwrap();
    assert!(matches!(nan, Value::Float(f) if f.is_nan()));
}

#[test]
fn written_directly_as_the_json_tree() {
    let mut odd = Hash::default();
    odd.insert(Value::Int(1), "one".into());
    odd.insert(Value::Symbol("s".into()), Value::Float(f64::NAN));
    let cases = vec![
        Value::Nil,
        Value::Bool(true),
        Value::Bool(false),
        Value::Int(i64::MIN),
        Value::integer("-123456789012345678901234567890".parse().unwrap()),
        Value::Float(0.1),
        Value::Float(-0.0),
        Value::Float(1e100),
        Value::Float(f64::INFINITY),
        Value::Float(f64::NEG_INFINITY),
        Value::Float(1.0e-5),
        Value::str("quote \" and \u{1} and é"),
        Value::Symbol("sym".into()),
        Value::Array(vec![
            Value::Hash(odd.clone()),
            Value::Array(vec![]),
            Value::Nil,
        ]),
        Value::Hash(rhash! {"__hierad__" => "user data"}),
        Value::Hash(rhash! {"a" => Value::Hash(odd), "b" => Value::Hash(Hash::default())}),
    ];
    for v in cases {
        assert_eq!(to_string(&v), to_json(&v).to_string(), "{v:?}");
    }
}

/// Every byte at every place of the first words, among fillers close to
/// the special ones: the eight-at-a-time scan finds exactly the first
/// control character, quote or backslash.
#[test]
fn the_plain_prefix_ends_at_the_first_special_byte() {
    for filler in [b'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff] {
        for len in 0..20 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut bytes = vec![filler; len];
                    bytes[at] = b;
                    let special = b < 0x20 || b == b'"' || b == b'\\';
                    let expected = if special { at } else { len };
                    assert_eq!(plain_len(&bytes), expected, "{bytes:?}");
                }
            }
        }
    }
}

proptest::proptest! {
    /// Strings and integers are written as serde_json writes them, byte
    /// for byte (every control character, quote and backslash among
    /// any text).
    #[test]
    fn strings_and_integers_are_written_as_serde_json_writes_them(
        s in "(\\PC|[\\x00-\\x1f\"\\\\\\x7f]|\\p{Cc}){0,40}",
        n: i64,
    ) {
        let plain = s.bytes().position(|b| b < 0x20 || b == b'"' || b == b'\\');
        proptest::prop_assert_eq!(plain_len(s.as_bytes()), plain.unwrap_or(s.len()));
        let mut out = Vec::new();
        write_str(&mut out, &s);
        proptest::prop_assert_eq!(out, serde_json::to_vec(&s).unwrap());
        let v = Value::Array(vec![Value::Int(n), Value::str(&s), Value::Symbol(s.clone())]);
        proptest::prop_assert_eq!(to_string(&v), to_json(&v).to_string());
    }
}

#[test]
fn plain_json_stays_plain() {
    let v = Value::Hash(
        rhash! {"a" => 1, "f" => Value::Float(2.0), "l" => Value::Array(vec!["x".into()])},
    );
    assert_eq!(to_string(&v), r#"{"a":1,"f":2.0,"l":["x"]}"#);
}

/// From text and from a JSON tree (serde_json presents numbers
/// differently to each), to the same values.
#[test]
fn decodes_numbers_and_tags_in_any_order() {
    let big = |text: &str| Value::integer(text.parse().unwrap());
    let sym = |name: &str| Value::Symbol(name.into());
    let mut pairs = Hash::default();
    pairs.insert(Value::Int(1), sym("one"));
    pairs.insert(Value::Hash(rhash! {"__hierad__" => "k"}), Value::Nil);
    let cases = [
        ("0", Value::Int(0)),
        ("-0", Value::Int(0)),
        ("-12", Value::Int(-12)),
        ("9223372036854775807", Value::Int(i64::MAX)),
        ("9223372036854775808", big("9223372036854775808")),
        ("-9223372036854775809", big("-9223372036854775809")),
        (
            "123456789012345678901234567890123456789012",
            big("123456789012345678901234567890123456789012"),
        ),
        ("1.0", Value::Float(1.0)),
        ("-0.0", Value::Float(-0.0)),
        ("1e3", Value::Float(1000.0)),
        ("2.5E-1", Value::Float(0.25)),
        ("1.5e300", Value::Float(1.5e300)),
        (r#""a\"\u00e9""#, Value::str("a\"é")),
        (
            r#"{"b\n":[null,true],"a":{},"b\n":1}"#,
            Value::Hash(rhash! {"b\n" => 1, "a" => Value::Hash(Hash::default())}),
        ),
        (r#"{"name":"s","__hierad__":"sym"}"#, sym("s")),
        (r#"{"__hierad__":"sym","other":[1],"name":"s"}"#, sym("s")),
        (
            r#"{"pairs":[[1,{"__hierad__":"sym","name":"one"}]],"x":2,"__hierad__":"hash"}"#,
            Value::Hash({
                let mut h = Hash::default();
                h.insert(Value::Int(1), sym("one"));
                h
            }),
        ),
        (
            r#"[{"__hierad__":"hash","pairs":[[1,{"__hierad__":"sym","name":"one"}],[{"__hierad__":"hash","pairs":[["__hierad__","k"]]},null]]}]"#,
            Value::Array(vec![Value::Hash(pairs)]),
        ),
        (
            r#"{"__hierad__":"float","value":"-Infinity"}"#,
            Value::Float(f64::NEG_INFINITY),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(from_str(text), Ok(want.clone()), "{text}");
        let tree: Json = serde_json::from_str(text).unwrap();
        assert_eq!(from_wire(tree), Ok(want), "{text} as a tree");
    }
}

#[test]
fn malformed_tags_say_what_is_wrong() {
    let cases = [
        (r#"{"__hierad__":"nope"}"#, r#"unknown tag "nope""#),
        (r#"{"__hierad__":1,"name":"x"}"#, "unknown tag 1"),
        (
            r#"{"name":"x","__hierad__":"sym","x":{"__hierad__":0}}"#,
            "ok",
        ),
        (
            r#"{"__hierad__":"sym"}"#,
            "__hierad__ object without \"name\"",
        ),
        (r#"{"__hierad__":"sym","name":[]}"#, "symbol name []"),
        (r#"{"__hierad__":"float","value":1.5}"#, "float value 1.5"),
        (
            r#"{"__hierad__":"hash","pairs":{}}"#,
            "hash pairs must be a list",
        ),
        (
            r#"{"__hierad__":"hash","pairs":[[1,2,3]]}"#,
            "hash pair [1,2,3]",
        ),
        (
            r#"[1,{"a":{"__hierad__":"hash","pairs":[7]}}]"#,
            "hash pair 7",
        ),
    ];
    for (text, want) in cases {
        let got = match from_str(text) {
            Ok(_) => "ok".to_owned(),
            Err(WireError::Tag(message)) => message,
            Err(other) => panic!("{text}: {other}"),
        };
        assert_eq!(got, want, "{text}");
    }
    assert_eq!(
        from_str("[1,"),
        Err(WireError::Json(
            "EOF while parsing a value at line 1 column 3".into()
        ))
    );
    assert!(matches!(from_str("[1] 2"), Err(WireError::Json(m)) if m.starts_with("trailing")));
}

/// The deepest stored form of an accepted value: a non-String-key
/// Hash at every level (three JSON levels each), a NaN at the bottom.
fn worst(levels: usize) -> Value {
    (1..levels).fold(
        {
            let mut h = Hash::default();
            h.insert(Value::Int(0), Value::Float(f64::NAN));
            Value::Hash(h)
        },
        |inner, _| {
            let mut h = Hash::default();
            h.insert(Value::Symbol("k".into()), inner);
            Value::Hash(h)
        },
    )
}

fn json_depth(text: &str) -> usize {
    json_nesting(text.as_bytes())
}

#[test]
fn every_value_within_the_depth_limit_reads_back() {
    let v = worst(MAX_DEPTH);
    assert_eq!(v.depth_upto(MAX_DEPTH), MAX_DEPTH);
    let text = to_string(&v);
    assert_eq!(json_depth(&text), MAX_JSON_DEPTH, "the bound is tight");
    assert_eq!(from_str(&text), Ok(v.clone()));
    // On a small thread stack too (the reader grows its own).
    let back = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || from_str(&text).map(|b| b == v))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(back, Ok(true));
    assert_eq!(
        from_envelope::<Json>(&to_string(&worst(MAX_DEPTH))).map(|_| ()),
        Ok(())
    );
}

#[test]
fn deeper_json_is_refused_without_recursing_into_it() {
    let text = to_string(&worst(MAX_DEPTH + 1));
    assert!(json_depth(&text) > MAX_JSON_DEPTH);
    assert_eq!(from_str(&text), Err(WireError::TooDeep));
    for n in [MAX_JSON_DEPTH + 1, 1_000_000] {
        let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(from_str(&deep), Err(WireError::TooDeep), "{n}");
    }
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    // Answers wrap values in a few levels of envelope.
    assert!(from_envelope::<Json>(&deep(MAX_JSON_DEPTH + 8)).is_ok());
    assert_eq!(
        from_envelope::<Json>(&deep(MAX_JSON_DEPTH + 9)),
        Err(WireError::TooDeep)
    );
    assert_eq!(
        from_envelope::<Json>(&deep(1_000_000)),
        Err(WireError::TooDeep)
    );
    let ok = format!(
        "{}{}",
        "[".repeat(MAX_JSON_DEPTH),
        "]".repeat(MAX_JSON_DEPTH)
    );
    assert!(from_str(&ok).is_ok());
    assert_eq!(
        WireError::TooDeep.to_string(),
        "the JSON nests more than 193 levels deep; hierad stores values nesting at most 64 levels of Hashes and Arrays"
    );
    assert_eq!(json_depth(r#"{"[\"{":[]}"#), 2);
}

/// serde_json's private number key is an ordinary key.
#[test]
fn the_number_token_is_an_ordinary_key() {
    let key = "$serde_json::private::Number";
    for (text, want) in [
        (
            format!(r#"{{"a":{{"{key}":"xyz"}}}}"#),
            Value::Hash(rhash! {"a" => Value::Hash(rhash! {key => "xyz"})}),
        ),
        (
            format!(r#"{{"{key}":"12"}}"#),
            Value::Hash(rhash! {key => "12"}),
        ),
        (
            format!(r#"[{{"{key}":[1.5]}},1.5,123456789012345678901]"#),
            Value::Array(vec![
                Value::Hash(rhash! {key => Value::Array(vec![Value::Float(1.5)])}),
                Value::Float(1.5),
                Value::integer("123456789012345678901".parse().unwrap()),
            ]),
        ),
    ] {
        assert_eq!(from_str(&text), Ok(want.clone()), "{text}");
        assert_eq!(to_string(&want), text.replace(' ', ""), "{text}");
    }
}

#[test]
fn malformed_tags_are_errors() {
    for text in [
        r#"{"__hierad__":"nope"}"#,
        r#"{"__hierad__":"sym"}"#,
        r#"{"__hierad__":"hash","pairs":[[1]]}"#,
        r#"{"__hierad__":"float","value":"1.5"}"#,
    ] {
        assert!(matches!(from_str(text), Err(WireError::Tag(_))), "{text}");
    }
    assert!(matches!(from_str("{"), Err(WireError::Json(_))));
}

/// The work lists a decoding leaves for the next on its thread come back
/// empty, whatever stopped the last one part-way, and lists grown past
/// [`SPARE_MAX`] are not kept.
#[test]
fn a_decoding_starts_from_empty_work_lists() {
    assert!(from_str(r#"{"a": {"b": [1, 2, {"c": 3"#).is_err());
    assert!(from_str(r#"{"a": [1, 2, {"__hierad__": "nope"}]}"#).is_err());
    let decoding = Decoding::with_capacity(4, 4);
    assert!(decoding.entries.borrow().is_empty() && decoding.items.borrow().is_empty());
    drop(decoding);
    assert_eq!(
        from_str(r#"{"d": [4, 5]}"#).unwrap(),
        Value::Hash(rhash! {"d" => Value::Array(vec![Value::Int(4), Value::Int(5)])})
    );
    let long = format!("[{}]", vec!["1"; SPARE_MAX + 1].join(","));
    assert!(matches!(from_str(&long).unwrap(), Value::Array(a) if a.len() == SPARE_MAX + 1));
    let spare = SPARE.take();
    assert!(spare.is_none_or(|(_, items)| items.capacity() <= SPARE_MAX));
}
