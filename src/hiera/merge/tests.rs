//! Unit tests of the merges: the spec's outcome tables and examples (§4).

use super::*;

/// A value from JSON-ish text (object keys are Strings, order kept).
fn j(text: &str) -> Value {
    fn conv(v: serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap()),
            },
            serde_json::Value::String(s) => Value::String(s),
            serde_json::Value::Array(a) => Value::Array(a.into_iter().map(conv).collect()),
            serde_json::Value::Object(o) => Value::Hash(
                o.into_iter()
                    .map(|(k, v)| (Value::String(k), conv(v)))
                    .collect(),
            ),
        }
    }
    conv(serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}")))
}

fn h(text: &str) -> Hash {
    match j(text) {
        Value::Hash(h) => h,
        other => panic!("not a hash: {other:?}"),
    }
}

fn sym(s: &str) -> Value {
    Value::Symbol(s.into())
}

/// Order-sensitive comparison (Value's own `==` ignores Hash order).
fn same(a: &Value, b: &Value) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

/// [`merge_answer_traced`] without the trace.
fn merge_answer(lower: Hash, higher: Hash, spec: &MergeSpec) -> Result<Hash> {
    merge(lower, higher, spec, None)
}

/// Hiera's fold: levels highest priority first, from an empty answer.
fn fold(levels: &[&str], spec: &MergeSpec) -> Result<Hash> {
    let mut answer = Hash::default();
    for level in levels {
        answer = merge_answer(h(level), answer, spec)?;
    }
    Ok(answer)
}

fn spec(behavior: Behavior, options: &[(&str, Value)]) -> MergeSpec {
    let mut rt = Hash::default();
    for (k, v) in options {
        rt.insert(sym(k), v.clone());
    }
    MergeSpec::new(behavior, DeepMergeOptions::from_hash(&rt))
}

fn check_fold(levels: &[&str], spec: &MergeSpec, want: &str) {
    let got = fold(levels, spec).unwrap_or_else(|e| panic!("{levels:?}: {e}"));
    let want = j(want);
    assert!(
        same(&Value::Hash(got.clone()), &want),
        "{levels:?}\n got {got:?}\nwant {want:?}"
    );
}

const HI: [&str; 7] = [
    r#""H""#,
    "2",
    "true",
    "false",
    "null",
    r#"["h"]"#,
    r#"{"h":1}"#,
];
const LO: [&str; 8] = [
    r#""L""#,
    "1",
    "true",
    "false",
    "null",
    r#"["l"]"#,
    r#"{"l":1}"#,
    "absent",
];

/// Merges one key, `hi` over `lo`, with fresh hashes; `absent` = no key.
fn cell(behavior: Behavior, hi: &str, lo: &str) -> Value {
    let higher = h(&format!(r#"{{"k":{hi}}}"#));
    let lower = if lo == "absent" {
        Hash::default()
    } else {
        h(&format!(r#"{{"k":{lo}}}"#))
    };
    let out = merge_answer(
        lower,
        higher,
        &MergeSpec::new(behavior, DeepMergeOptions::default()),
    )
    .unwrap();
    out.get(&Value::str("k")).cloned().expect("key present")
}

fn check_table(behavior: Behavior, table: &[[&str; 8]; 7]) {
    for (row, hi) in HI.iter().enumerate() {
        for (col, lo) in LO.iter().enumerate() {
            let want = j(table[row][col]);
            let got = cell(behavior, hi, lo);
            assert!(
                same(&got, &want),
                "{behavior:?} hi {hi} lo {lo}: got {got:?} want {want:?}"
            );
        }
    }
}

/// §4.3 deeper outcome table (rows Integer and true "behave like H").
#[test]
fn deeper_outcome_table() {
    let (l, a, hs) = (r#"["l","h"]"#, r#"["h"]"#, r#"{"h":1}"#);
    check_table(
        Behavior::Deeper,
        &[
            [r#""H""#; 8],
            ["2"; 8],
            ["true"; 8],
            ["false"; 8],
            [
                r#""L""#,
                "1",
                "true",
                "null",
                "null",
                r#"["l"]"#,
                r#"{"l":1}"#,
                "null",
            ],
            [a, a, a, a, a, l, a, a],
            [hs, hs, hs, hs, hs, hs, r#"{"l":1,"h":1}"#, hs],
        ],
    );
}

/// §4.3 deep outcome table: the lower level wins unless it is nil/false.
#[test]
fn deep_outcome_table() {
    let lower_wins = |h: &'static str| [r#""L""#, "1", "true", h, h, r#"["l"]"#, r#"{"l":1}"#, h];
    let mut arr = lower_wins(r#"["h"]"#);
    arr[5] = r#"["l","h"]"#;
    let mut hash = lower_wins(r#"{"h":1}"#);
    hash[6] = r#"{"l":1,"h":1}"#;
    check_table(
        Behavior::Deep,
        &[
            lower_wins(r#""H""#),
            lower_wins("2"),
            lower_wins("true"),
            lower_wins("false"),
            [
                r#""L""#,
                "1",
                "true",
                "null",
                "null",
                r#"["l"]"#,
                r#"{"l":1}"#,
                "null",
            ],
            arr,
            hash,
        ],
    );
}

/// §4.2: native merges top-level keys only, lowest level's order first,
/// and a higher nil replaces.
#[test]
fn native_merge() {
    let native = MergeSpec::default();
    check_fold(
        &[
            r#"{"node_only":1,"nested":{"n":1}}"#,
            r#"{"shared":"role","role_only":2,"nested":{"r":1}}"#,
            r#"{"common_only":3,"shared":"common","nested":{"c":1}}"#,
        ],
        &native,
        r#"{"common_only":3,"shared":"role","nested":{"n":1},"role_only":2,"node_only":1}"#,
    );
    check_fold(&[r#"{"a":null}"#, r#"{"a":1}"#], &native, r#"{"a":null}"#);
    // Options are ignored by native merges, even invalid ones.
    let bad = spec(Behavior::Native, &[("knockout_prefix", "".into())]);
    check_fold(
        &[r#"{"a":["--x"]}"#, r#"{"a":["x"]}"#],
        &bad,
        r#"{"a":["--x"]}"#,
    );
}

/// §4.3 key points, each a fold (levels highest first) and its answer.
#[test]
fn deeper_folds() {
    let deeper = spec(Behavior::Deeper, &[]);
    let cases: &[(&[&str], &str)] = &[
        // Arrays: lower level's elements first.
        (
            &[r#"{"k":["x","a"]}"#, r#"{"k":["m"]}"#, r#"{"k":["a","b"]}"#],
            r#"{"k":["a","b","m","x"]}"#,
        ),
        // Nested hashes: lower keys first at every depth.
        (
            &[r#"{"k":{"b":{"y":1}}}"#, r#"{"k":{"a":1,"b":{"x":1}}}"#],
            r#"{"k":{"a":1,"b":{"x":1,"y":1}}}"#,
        ),
        // A one-level key is untouched, duplicates and all.
        (&[r#"{"k":["a","a"]}"#], r#"{"k":["a","a"]}"#),
        // ...but a higher-only sub-array is deduplicated once the key is at two levels.
        (
            &[r#"{"k":{"s":["a","a"]}}"#, r#"{"k":{}}"#],
            r#"{"k":{"s":["a"]}}"#,
        ),
        // Arrays of hashes are unioned whole.
        (
            &[r#"{"k":[{"n":1},{"n":2}]}"#, r#"{"k":[{"n":1},{"n":3}]}"#],
            r#"{"k":[{"n":1},{"n":3},{"n":2}]}"#,
        ),
        // A Hash over a scalar: the first key is taken as is, later keys merge with themselves.
        (
            &[r#"{"k":{"a":[1,1],"b":["x","x"]}}"#, r#"{"k":"s"}"#],
            r#"{"k":{"a":[1,1],"b":["x"]}}"#,
        ),
        // An empty Hash over a scalar changes nothing.
        (&[r#"{"k":{}}"#, r#"{"k":"s"}"#], r#"{"k":"s"}"#),
    ];
    for (levels, want) in cases {
        check_fold(levels, &deeper, want);
    }
}

/// §4.4 knockout_prefix.
#[test]
fn knockout_prefix() {
    let ko = spec(Behavior::Deeper, &[("knockout_prefix", "--".into())]);
    let cases: &[(&[&str], &str)] = &[
        (
            &[r#"{"k":["--a","c"]}"#, r#"{"k":["a","b"]}"#],
            r#"{"k":["b","c"]}"#,
        ),
        // Consumed by the first merge into a lower level that has the lookup key.
        (
            &[r#"{"k":["--a","c"]}"#, r#"{"x":1}"#, r#"{"k":["a","b"]}"#],
            r#"{"k":["a","b","c"],"x":1}"#,
        ),
        // Markers stay when the key is at one level only.
        (&[r#"{"k":["--a","c"]}"#], r#"{"k":["--a","c"]}"#),
        // A bare prefix clears the lower array.
        (
            &[r#"{"k":["--","c"]}"#, r#"{"k":["a","b"]}"#],
            r#"{"k":["c"]}"#,
        ),
        // A prefixed String replacing a scalar or a hash gives "".
        (&[r#"{"k":"--x"}"#, r#"{"k":"old"}"#], r#"{"k":""}"#),
        (&[r#"{"k":"--"}"#, r#"{"k":{"a":1}}"#], r#"{"k":""}"#),
        // ^ is a line anchor: any line may carry the prefix.
        (&[r#"{"k":"a\n--b"}"#, r#"{"k":"old"}"#], r#"{"k":""}"#),
        // An Array replacing a scalar loses its markers.
        (&[r#"{"k":["--a","b"]}"#, r#"{"k":"s"}"#], r#"{"k":["b"]}"#),
        // Higher-only sub-hash: its arrays merge with themselves, and a
        // knockout inside one array empties it (delete_if on itself).
        (
            &[
                r#"{"k":{"s":{"x":["--a","a","b"],"y":["--","q"]},"z":["--","q"]}}"#,
                r#"{"k":{"q":1}}"#,
            ],
            r#"{"k":{"q":1,"s":{"x":[],"y":[]},"z":["q"]}}"#,
        ),
    ];
    for (levels, want) in cases {
        check_fold(levels, &ko, want);
    }
}

#[test]
fn knockout_prefix_errors() {
    let cases: &[(Behavior, Value, &str)] = &[
        (
            Behavior::Deeper,
            "".into(),
            "knockout_prefix cannot be an empty string in deep_merge!",
        ),
        (
            Behavior::Deep,
            "".into(),
            "knockout_prefix cannot be an empty string in deep_merge!",
        ),
        (
            Behavior::Deep,
            "--".into(),
            "overwrite_unmergeable must be true if knockout_prefix is specified in deep_merge!",
        ),
    ];
    for (behavior, prefix, message) in cases {
        let s = spec(*behavior, &[("knockout_prefix", prefix.clone())]);
        // Raised even by the first merge, into an empty answer.
        let err = fold(&[r#"{"k":1}"#], &s).unwrap_err();
        assert_eq!(
            (err.class, err.message.as_str()),
            (ErrorClass::DeepMergeInvalidParameter, *message)
        );
    }
    // preserve_unmergeables: false makes knockout legal under deep.
    let s = spec(
        Behavior::Deep,
        &[
            ("knockout_prefix", "--".into()),
            ("preserve_unmergeables", false.into()),
        ],
    );
    check_fold(
        &[r#"{"k":["--a"]}"#, r#"{"k":["a","b"]}"#],
        &s,
        r#"{"k":["b"]}"#,
    );
}

/// The other §4.4 options, each with its fold and answer.
#[test]
fn deep_merge_options() {
    let t = Value::Bool(true);
    let cases: Vec<(MergeSpec, &[&str], &str)> = vec![
        (
            spec(Behavior::Deeper, &[("merge_hash_arrays", t.clone())]),
            &[
                r#"{"k":[{"a":1},{"b":1},{"c":1}]}"#,
                r#"{"k":[{"a":2,"z":0},{"y":0}]}"#,
            ],
            r#"{"k":[{"a":1,"z":0},{"y":0,"b":1},{"c":1}]}"#,
        ),
        (
            spec(Behavior::Deeper, &[("sort_merged_arrays", t.clone())]),
            &[r#"{"k":["c","a"]}"#, r#"{"k":["d","b"]}"#],
            r#"{"k":["a","b","c","d"]}"#,
        ),
        (
            spec(Behavior::Deeper, &[("unpack_arrays", ",".into())]),
            &[r#"{"k":["1,2,3","4"]}"#, r#"{"k":["5","6","7,8"]}"#],
            r#"{"k":["5","6","7","8","1","2","3","4"]}"#,
        ),
        (
            spec(Behavior::Deeper, &[("overwrite_arrays", t.clone())]),
            &[r#"{"k":["h"]}"#, r#"{"k":["l"]}"#],
            r#"{"k":["h"]}"#,
        ),
        (
            spec(Behavior::Deeper, &[("extend_existing_arrays", t.clone())]),
            &[r#"{"k":"h","m":{"a":1,"b":2}}"#, r#"{"k":["l"],"m":["l"]}"#],
            r#"{"k":["l","h"],"m":["l",{"a":1,"b":2},{"a":1,"b":2}]}"#,
        ),
        (
            spec(Behavior::Deeper, &[("preserve_unmergeables", t.clone())]),
            &[r#"{"k":"H"}"#, r#"{"k":"L"}"#],
            r#"{"k":"L"}"#,
        ),
        (
            spec(Behavior::Deep, &[("preserve_unmergeables", Value::Nil)]),
            &[r#"{"k":"H"}"#, r#"{"k":"L"}"#],
            r#"{"k":"H"}"#,
        ),
        // Options are truthy values: 0 and "no" turn them on.
        (
            spec(
                Behavior::Deeper,
                &[("preserve_unmergeables", Value::Int(0))],
            ),
            &[r#"{"k":"H"}"#, r#"{"k":"L"}"#],
            r#"{"k":"L"}"#,
        ),
        (
            spec(Behavior::Deeper, &[("overwrite_arrays", "no".into())]),
            &[r#"{"k":["h"]}"#, r#"{"k":["l"]}"#],
            r#"{"k":["h"]}"#,
        ),
        // An Integer knockout prefix: `== 1` finds 1 and 1.0; its to_s is the regex.
        (
            spec(Behavior::Deeper, &[("knockout_prefix", Value::Int(1))]),
            &[r#"{"k":[1.0,"1a"]}"#, r#"{"k":["a","b"]}"#],
            r#"{"k":[]}"#,
        ),
    ];
    for (s, levels, want) in &cases {
        check_fold(levels, s, want);
    }
}

#[test]
fn option_errors() {
    let t = Value::Bool(true);
    let cases: Vec<(MergeSpec, &[&str], ErrorClass, &str)> = vec![
        (
            spec(Behavior::Deeper, &[("sort_merged_arrays", t.clone())]),
            &[r#"{"k":[1]}"#, r#"{"k":["a"]}"#],
            ErrorClass::ArgumentError,
            "comparison of String with 1 failed",
        ),
        (
            spec(Behavior::Deeper, &[("unpack_arrays", Value::Int(1))]),
            &[r#"{"k":[1]}"#, r#"{"k":["a"]}"#],
            ErrorClass::TypeError,
            "no implicit conversion of Integer into String",
        ),
        (
            spec(Behavior::Deeper, &[("debug_indent", Value::Int(5))]),
            &[r#"{"k":1}"#, r#"{"k":2}"#],
            ErrorClass::TypeError,
            "String can't be coerced into Integer",
        ),
        (
            spec(Behavior::Deeper, &[("debug_indent", sym("x"))]),
            &[r#"{"k":1}"#, r#"{"k":2}"#],
            ErrorClass::NoMethodError,
            "undefined method `+' for :x:Symbol",
        ),
        (
            MergeSpec::from_config(Some(&sym("deep")), Some(&"x".into())).unwrap(),
            &[r#"{"k":1}"#],
            ErrorClass::TypeError,
            "no implicit conversion of String into Hash",
        ),
    ];
    for (s, levels, class, message) in &cases {
        let err = fold(levels, s).unwrap_err();
        assert_eq!(
            (err.class, err.message.as_str()),
            (*class, *message),
            "{levels:?}"
        );
    }
}

#[test]
fn config_and_resolution_hash() {
    let mut options = Hash::default();
    options.insert(sym("knockout_prefix"), "--".into());
    options.insert("sort_merged_arrays".into(), true.into());
    let options = Value::Hash(options);
    let cases: Vec<(Option<Value>, Behavior)> = vec![
        (None, Behavior::Native),
        (Some(sym("deeper")), Behavior::Deeper),
        (Some("deeper".into()), Behavior::Deeper),
        (Some("deep".into()), Behavior::Deep),
        (Some(sym("deepest")), Behavior::Native),
        (Some(Value::Nil), Behavior::Native),
    ];
    for (mb, want) in cases {
        let s = MergeSpec::from_config(mb.as_ref(), Some(&options)).unwrap();
        assert_eq!(s.behavior, want, "{mb:?}");
        // Symbol keys are read; String keys are ignored.
        assert_eq!(s.options.knockout_prefix, Some("--".into()));
        assert!(!s.options.sort_merged_arrays);
    }
    // A non-Hash option value fails deep merges only.
    let s = MergeSpec::from_config(None, Some(&Value::Int(3))).unwrap();
    assert!(fold(&[r#"{"k":1}"#], &s).is_ok());

    let mut rt = Hash::default();
    rt.insert(sym("behavior"), "deeper".into());
    rt.insert(sym("merge_debug"), Value::Int(1));
    let s = MergeSpec::from_resolution_hash(&rt).unwrap();
    assert_eq!(s.behavior, Behavior::Deeper);
    assert!(s.options.merge_debug);
    let mut rt = Hash::default();
    rt.insert(sym("strategy"), "deep".into());
    assert_eq!(
        MergeSpec::from_resolution_hash(&rt).unwrap().behavior,
        Behavior::Native
    );
}

#[test]
fn merge_debug_trace() {
    let s = spec(
        Behavior::Deeper,
        &[
            ("merge_debug", true.into()),
            ("knockout_prefix", "--".into()),
        ],
    );
    let mut trace = String::new();
    let answer =
        merge_answer_traced(h(r#"{"k":["--a"]}"#), Hash::default(), &s, &mut trace).unwrap();
    let answer = merge_answer_traced(h(r#"{"k":["a","b"]}"#), answer, &s, &mut trace).unwrap();
    assert!(same(&Value::Hash(answer), &j(r#"{"k":["b"]}"#)));
    let want = [
        "Source class: Hash :: Dest class: Hash",
        r#"Hashes: {} :: {"k"=>["--a"]}"#,
        r#"Returning {"k"=>["--a"]}"#,
        "Source class: Hash :: Dest class: Hash",
        r#"Hashes: {"k"=>["--a"]} :: {"k"=>["a", "b"]}"#,
        r#" looping: "k" => ["--a"] :: {"k"=>["a", "b"]}"#,
        r#" ==>merging: "k" => ["--a"] :: ["a", "b"]"#,
        "  Source class: Array :: Dest class: Array",
        r#"  Arrays: ["--a"] :: ["a", "b"]"#,
        "   knocking out: --a - ",
        r#"   merging arrays: [] :: ["b"]"#,
        r#"  Returning ["b"]"#,
        r#"Returning {"k"=>["b"]}"#,
        "",
    ];
    assert_eq!(trace, want.join("\n"));
    // Without merge_debug nothing is traced.
    let mut trace = String::new();
    merge_answer_traced(
        h(r#"{"k":1}"#),
        Hash::default(),
        &spec(Behavior::Deeper, &[]),
        &mut trace,
    )
    .unwrap();
    assert_eq!(trace, "");
}

#[test]
fn resolve_array_flattens_dedups_compacts() {
    let cases: &[(&str, &str)] = &[
        (r#"["a",["b",["a",null]],null,"c"]"#, r#"["a","b","c"]"#),
        (r#"[1,1.0,[1],{"x":1},{"x":1}]"#, r#"[1,1.0,{"x":1}]"#),
        ("[]", "[]"),
        ("[[null]]", "[]"),
    ];
    for (input, want) in cases {
        let Value::Array(input) = j(input) else {
            unreachable!()
        };
        let got = Value::Array(resolve_array(input));
        assert!(same(&got, &j(want)), "{got:?} vs {want}");
    }
}
