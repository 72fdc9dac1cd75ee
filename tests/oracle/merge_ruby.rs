//! Differential test of `hiera::merge` against the real Ruby code: Hiera
//! 3.10's `Backend.merge_answer` fold with deep_merge 1.1.1, and array
//! resolution's `[x].flatten.uniq.compact`. All cases go to one Ruby
//! process (`tests/support/merge_oracle.rb`); answers, errors (class and
//! message) and the `merge_debug` trace must match exactly.

use crate::tagged;
use hierad::hiera::merge::{MergeSpec, merge_answer_traced, resolve_array};
use hierad::hiera::{Hash, Value};
use serde_json::{Value as Json, json};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

/// Where a fold's merge behaviour comes from.
#[derive(Clone, Debug)]
enum SpecSource {
    /// hiera.yaml's `:merge_behavior:` / `:deep_merge_options:` (None = key absent).
    Config {
        behavior: Option<Value>,
        options: Option<Value>,
    },
    /// A Hash resolution type.
    Resolution(Hash),
}

#[derive(Clone, Debug)]
enum Case {
    /// Level values, highest priority first.
    Fold {
        label: String,
        levels: Vec<Hash>,
        spec: SpecSource,
    },
    ResolveArray {
        label: String,
        value: Vec<Value>,
    },
}

/// What a case gives: the answer (as order-sensitive text: `Value`'s own
/// `==` ignores Hash order) or the error class and message, and the trace.
#[derive(Debug, PartialEq)]
struct Outcome {
    result: Result<String, (String, String)>,
    trace: String,
}

fn shown(v: &Value) -> String {
    format!("{v:?}")
}

// ---------------------------------------------------------------------------
// Writing values: JSON text where `"$sym:x"` is a Symbol, `"$nan"` a NaN and
// `"$int:1"` / `"$nil"` / `"$true"` keys are Integer/nil/true keys.

fn conv(v: Json, symbol_keys: bool) -> Value {
    match v {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().expect("number")),
        },
        Json::String(s) => special(&s).unwrap_or(Value::String(s)),
        Json::Array(a) => Value::Array(a.into_iter().map(|e| conv(e, false)).collect()),
        Json::Object(o) => Value::Hash(
            o.into_iter()
                .map(|(k, v)| {
                    let key = match special(&k) {
                        Some(key) => key,
                        None if symbol_keys => Value::Symbol(k),
                        None => Value::String(k.strip_prefix("$str:").unwrap_or(&k).to_owned()),
                    };
                    (key, conv(v, false))
                })
                .collect(),
        ),
    }
}

fn special(s: &str) -> Option<Value> {
    if let Some(name) = s.strip_prefix("$sym:") {
        return Some(Value::Symbol(name.to_owned()));
    }
    if let Some(n) = s.strip_prefix("$int:") {
        return Some(Value::Int(n.parse().expect("int")));
    }
    match s {
        "$nan" => Some(Value::Float(f64::NAN)),
        "$nil" => Some(Value::Nil),
        "$true" => Some(Value::Bool(true)),
        _ => None,
    }
}

fn val(text: &str) -> Value {
    conv(
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}")),
        false,
    )
}

fn hash(text: &str) -> Hash {
    match val(text) {
        Value::Hash(h) => h,
        other => panic!("not a Hash: {other:?}"),
    }
}

/// Options Hash: keys are Symbols unless written `"$str:name"`.
fn options(text: &str) -> Hash {
    match conv(
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}")),
        true,
    ) {
        Value::Hash(h) => h,
        other => panic!("not a Hash: {other:?}"),
    }
}

/// A Hash resolution type: `{:behavior => :<behavior>}` plus options.
fn rt(behavior: &str, opts: &str) -> SpecSource {
    let mut h = Hash::default();
    if !behavior.is_empty() {
        h.insert(
            Value::Symbol("behavior".into()),
            Value::Symbol(behavior.into()),
        );
    }
    h.extend(options(opts));
    SpecSource::Resolution(h)
}

fn config(behavior: Option<Value>, opts: Option<Value>) -> SpecSource {
    SpecSource::Config {
        behavior,
        options: opts,
    }
}

fn fold(label: impl Into<String>, levels: &[&str], spec: SpecSource) -> Case {
    Case::Fold {
        label: label.into(),
        levels: levels.iter().map(|l| hash(l)).collect(),
        spec,
    }
}

// ---------------------------------------------------------------------------
// Hand-written cases.

fn table_cases() -> Vec<Case> {
    let his = [
        r#""H""#,
        "2",
        "true",
        "false",
        "null",
        r#"["h"]"#,
        r#"{"h":1}"#,
        "2.5",
        r#"[]"#,
        r#"{}"#,
    ];
    let los = [
        r#""L""#,
        "1",
        "true",
        "false",
        "null",
        r#"["l"]"#,
        r#"{"l":1}"#,
        "absent",
        "[]",
        "{}",
    ];
    let mut cases = Vec::new();
    for behavior in ["deeper", "deep", "native"] {
        for hi in his {
            for lo in los {
                let higher = format!(r#"{{"k":{hi}}}"#);
                let lower = if lo == "absent" {
                    r#"{"x":0}"#.to_owned()
                } else {
                    format!(r#"{{"k":{lo}}}"#)
                };
                let label = format!("table {behavior}: {hi} over {lo}");
                cases.push(fold(&label, &[&higher, &lower], rt(behavior, "{}")));
            }
        }
    }
    cases
}

fn hand_cases() -> Vec<Case> {
    let sym = |s: &str| Some(Value::Symbol(s.into()));
    let ko = r#"{"knockout_prefix":"--"}"#;
    let ko_debug = r#"{"knockout_prefix":"--","merge_debug":true}"#;
    let fuel_node = r#"{"node_only":1,"nested":{"n":[1,2]},"shared":{"a":"node"}}"#;
    let fuel_role = r#"{"shared":{"a":"role","b":"role"},"role_only":2,"nested":{"r":[2,3]}}"#;
    let fuel_common = r#"{"common_only":3,"shared":{"c":"common"},"nested":{"c":1}}"#;
    let mut cases = vec![
        // §4.2 and key order in every behaviour, from the config.
        fold(
            "native key order",
            &[fuel_node, fuel_role, fuel_common],
            config(None, None),
        ),
        fold(
            "native nil wins",
            &[r#"{"a":null}"#, r#"{"a":1}"#],
            config(sym("native"), None),
        ),
        fold(
            "deeper key order",
            &[fuel_node, fuel_role, fuel_common],
            config(sym("deeper"), None),
        ),
        fold(
            "deep key order",
            &[fuel_node, fuel_role, fuel_common],
            config(Some("deep".into()), None),
        ),
        fold(
            "deeper as String",
            &[fuel_node, fuel_role],
            config(Some("deeper".into()), None),
        ),
        fold(
            "unknown behaviour",
            &[fuel_node, fuel_role],
            config(sym("deepest"), None),
        ),
        fold(
            "nil behaviour",
            &[fuel_node, fuel_role],
            config(Some(Value::Nil), None),
        ),
        fold(
            "behaviour nil options",
            &[fuel_node, fuel_role],
            config(sym("deeper"), Some(Value::Nil)),
        ),
        fold(
            "array union order",
            &[r#"{"k":["x","a"]}"#, r#"{"k":["m"]}"#, r#"{"k":["a","b"]}"#],
            rt("deeper", "{}"),
        ),
        fold(
            "one level untouched",
            &[r#"{"k":["a","a","--a"]}"#],
            rt("deeper", ko),
        ),
        fold(
            "higher-only sub-array dedup",
            &[r#"{"k":{"s":["a","a"]}}"#, r#"{"k":{}}"#],
            rt("deeper", "{}"),
        ),
        fold(
            "hash over scalar, later keys self-merge",
            &[
                r#"{"k":{"a":[1,1],"b":["x","x"],"c":null,"d":false}}"#,
                r#"{"k":"s"}"#,
            ],
            rt("deeper", r#"{"merge_debug":true}"#),
        ),
        fold(
            "empty hash over scalar",
            &[r#"{"k":{}}"#, r#"{"k":"s"}"#],
            rt("deeper", "{}"),
        ),
        fold(
            "hash over scalar deep",
            &[r#"{"k":{"a":1}}"#, r#"{"k":"s"}"#],
            rt("deep", "{}"),
        ),
        fold(
            "hash over nil and false",
            &[
                r#"{"k":{"a":[1,1]},"f":{"b":[2,2]}}"#,
                r#"{"k":null,"f":false}"#,
            ],
            rt("deep", "{}"),
        ),
        fold(
            "arrays of hashes unioned",
            &[r#"{"k":[{"n":1},{"n":2}]}"#, r#"{"k":[{"n":1},{"n":3}]}"#],
            rt("deeper", "{}"),
        ),
        fold(
            "symbol and integer keys",
            &[
                r#"{"k":{"$sym:s":1,"$int:2":[1]}}"#,
                r#"{"k":{"$int:2":[0],"$nil":1}}"#,
            ],
            rt("deeper", "{}"),
        ),
        // Knockout (§4.4).
        fold(
            "ko basic",
            &[r#"{"k":["--a","c"]}"#, r#"{"k":["a","b"]}"#],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko consumed by mid level",
            &[r#"{"k":["--a","c"]}"#, r#"{"x":1}"#, r#"{"k":["a","b"]}"#],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko bare clears",
            &[r#"{"k":["--","c"]}"#, r#"{"k":["a","b"]}"#],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko bare over string",
            &[r#"{"k":["--","c","--d"]}"#, r#"{"k":"s"}"#],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko bare over hash",
            &[r#"{"k":["--","c"]}"#, r#"{"k":{"a":1}}"#],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko bare over integer",
            &[r#"{"k":["--","c"]}"#, r#"{"k":5}"#],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko string over scalar",
            &[
                r#"{"k":"--x","m":"--","n":"a\n--b","o":"a--"}"#,
                r#"{"k":"old","m":{"a":1},"n":1,"o":1}"#,
            ],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko array over scalar",
            &[r#"{"k":["--a","b"]}"#, r#"{"k":"s"}"#],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko marker and its target in source",
            &[
                r#"{"k":["--a","a","b","--b"]}"#,
                r#"{"k":["a","b","c","--a"]}"#,
            ],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko self-merged sub-hash",
            &[
                r#"{"k":{"s":{"x":["--a","a","b"],"y":["--","q"],"z":"--s"},"z":["--","q"]}}"#,
                r#"{"k":{"q":1}}"#,
            ],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko self-merge delete_if shrinking",
            &[
                r#"{"k":{"s":{"x":["b","--a","c","a","--b","d"]}}}"#,
                r#"{"k":{}}"#,
            ],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko newline marker",
            &[
                r#"{"k":["x\n--a","--b\n--c"]}"#,
                r#"{"k":["x\na","b\nc","b\n--c"]}"#,
            ],
            rt("deeper", ko),
        ),
        fold(
            "ko nan",
            &[
                r#"{"k":["$nan","a"],"n":"$nan"}"#,
                r#"{"k":["$nan","b"],"n":1}"#,
            ],
            rt("deeper", ko_debug),
        ),
        fold(
            "ko in hash array",
            &[r#"{"k":[{"a":["--x"]}]}"#, r#"{"k":[{"a":["x","y"]}]}"#],
            rt(
                "deeper",
                r#"{"knockout_prefix":"--","merge_hash_arrays":true}"#,
            ),
        ),
        fold(
            "ko empty prefix",
            &[r#"{"k":1}"#],
            rt("deeper", r#"{"knockout_prefix":""}"#),
        ),
        fold("ko with deep", &[r#"{"k":1}"#], rt("deep", ko)),
        fold(
            "ko with deep, preserve false",
            &[r#"{"k":["--a"]}"#, r#"{"k":["a","b"]}"#],
            rt(
                "deep",
                r#"{"knockout_prefix":"--","preserve_unmergeables":false}"#,
            ),
        ),
        fold(
            "ko with deeper, preserve true",
            &[r#"{"k":1}"#],
            rt(
                "deeper",
                r#"{"knockout_prefix":"--","preserve_unmergeables":true}"#,
            ),
        ),
        fold(
            "ko false prefix",
            &[r#"{"k":["--a"]}"#, r#"{"k":["a"]}"#],
            rt("deep", r#"{"knockout_prefix":false}"#),
        ),
        fold(
            "ko integer prefix",
            &[
                r#"{"k":[1.0,"1a"],"m":[1,"x"]}"#,
                r#"{"k":["a","b"],"m":["y"]}"#,
            ],
            rt("deeper", r#"{"knockout_prefix":1}"#),
        ),
        fold(
            "ko symbol prefix",
            &[r#"{"k":["~a","$sym:~"]}"#, r#"{"k":["a","b"]}"#],
            rt("deeper", r#"{"knockout_prefix":"$sym:~"}"#),
        ),
        fold(
            "ko float prefix",
            &[r#"{"k":["1x5a","1.5b"]}"#, r#"{"k":["a","b"]}"#],
            rt("deeper", r#"{"knockout_prefix":1.5}"#),
        ),
        fold(
            "ko array prefix",
            &[r#"{"k":["-a","\"b","c"]}"#, r#"{"k":["a","b","c"]}"#],
            rt("deeper", r#"{"knockout_prefix":["-"]}"#),
        ),
        fold(
            "ko from config, string keys ignored",
            &[r#"{"k":["--a"]}"#, r#"{"k":["a"]}"#],
            config(
                sym("deeper"),
                Some(Value::Hash(options(r#"{"$str:knockout_prefix":"--"}"#))),
            ),
        ),
        fold(
            "ko from config",
            &[r#"{"k":["--a"]}"#, r#"{"k":["a"]}"#],
            config(sym("deeper"), Some(Value::Hash(options(ko)))),
        ),
        // Options other than knockout.
        fold(
            "merge_hash_arrays",
            &[
                r#"{"k":[{"a":1},{"b":1},{"c":1}]}"#,
                r#"{"k":[{"a":2,"z":0},{"y":0}]}"#,
            ],
            rt("deeper", r#"{"merge_hash_arrays":true,"merge_debug":true}"#),
        ),
        fold(
            "merge_hash_arrays shorter source",
            &[r#"{"k":[{"a":1}]}"#, r#"{"k":[{"a":2},{"b":2}]}"#],
            rt("deeper", r#"{"merge_hash_arrays":true,"merge_debug":true}"#),
        ),
        fold(
            "merge_hash_arrays empty dest",
            &[r#"{"k":[{"a":1},{"a":1}]}"#, r#"{"k":[]}"#],
            rt("deeper", r#"{"merge_hash_arrays":true}"#),
        ),
        fold(
            "merge_hash_arrays mixed",
            &[r#"{"k":[{"a":1},"x"]}"#, r#"{"k":[{"a":2}]}"#],
            rt("deeper", r#"{"merge_hash_arrays":true}"#),
        ),
        fold(
            "merge_hash_arrays dup",
            &[r#"{"k":{"s":[{"a":[1,1]},{"b":[2,2]}]}}"#, r#"{"k":{}}"#],
            rt("deeper", r#"{"merge_hash_arrays":true,"merge_debug":true}"#),
        ),
        fold(
            "merge_hash_arrays deep",
            &[r#"{"k":[{"a":1,"b":[1]}]}"#, r#"{"k":[{"a":2,"b":[2]}]}"#],
            rt("deep", r#"{"merge_hash_arrays":true}"#),
        ),
        fold(
            "sort strings",
            &[r#"{"k":["c","a"]}"#, r#"{"k":["d","b","B","é"]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort numbers",
            &[r#"{"k":[3,1.5,2]}"#, r#"{"k":[2.0,1,-1]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort mixed",
            &[r#"{"k":[1]}"#, r#"{"k":["a"]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort nil",
            &[r#"{"k":[null,1]}"#, r#"{"k":[2]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort true",
            &[r#"{"k":[1,true]}"#, r#"{"k":[2]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort float right",
            &[r#"{"k":[1.5]}"#, r#"{"k":["a"]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort nan",
            &[r#"{"k":["$nan"]}"#, r#"{"k":[1]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort hashes",
            &[r#"{"k":[{"a":1}]}"#, r#"{"k":[{"b":1}]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort equal hashes",
            &[r#"{"k":[{"a":1}]}"#, r#"{"k":[{"a":1.0}]}"#],
            rt(
                "deeper",
                r#"{"sort_merged_arrays":true,"merge_hash_arrays":true}"#,
            ),
        ),
        fold(
            "sort arrays",
            &[r#"{"k":[[2,"a"],[1]]}"#, r#"{"k":[[1,0],[2,"b"]]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort arrays fail",
            &[r#"{"k":[[1]]}"#, r#"{"k":[["a"]]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort big int",
            &[r#"{"k":["a"]}"#, r#"{"k":[4611686018427387904]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort fixnum max",
            &[r#"{"k":[4611686018427387903]}"#, r#"{"k":["a"]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort self-merged",
            &[r#"{"k":{"s":["b","a",1]}}"#, r#"{"k":{}}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "sort eight",
            &[r#"{"k":[5,4,3,2]}"#, r#"{"k":[1,0,7,"x"]}"#],
            rt("deeper", r#"{"sort_merged_arrays":true}"#),
        ),
        fold(
            "unpack",
            &[r#"{"k":["1,2,3","4"]}"#, r#"{"k":["5","6","7,8"]}"#],
            rt("deeper", r#"{"unpack_arrays":",","merge_debug":true}"#),
        ),
        fold(
            "unpack to_s",
            &[
                r#"{"k":[1,null,true,1.5,["x",["y"]],{"h":1},"$sym:s",[]]}"#,
                r#"{"k":[",a,,",""]}"#,
            ],
            rt("deeper", r#"{"unpack_arrays":","}"#),
        ),
        fold(
            "unpack space",
            &[r#"{"k":[" a  b ","c\td"]}"#, r#"{"k":["e f"]}"#],
            rt("deeper", r#"{"unpack_arrays":" "}"#),
        ),
        fold(
            "unpack empty",
            &[r#"{"k":["ab"]}"#, r#"{"k":["cd"]}"#],
            rt("deeper", r#"{"unpack_arrays":""}"#),
        ),
        fold(
            "unpack over scalar",
            &[r#"{"k":["a,b"]}"#, r#"{"k":"s"}"#],
            rt("deeper", r#"{"unpack_arrays":","}"#),
        ),
        fold(
            "unpack self",
            &[r#"{"k":{"s":["a,b","a"]}}"#, r#"{"k":{}}"#],
            rt("deeper", r#"{"unpack_arrays":",","knockout_prefix":"--"}"#),
        ),
        fold(
            "unpack integer",
            &[r#"{"k":["a"]}"#, r#"{"k":["b"]}"#],
            rt("deeper", r#"{"unpack_arrays":1}"#),
        ),
        fold(
            "unpack integer empty",
            &[r#"{"k":[]}"#, r#"{"k":["b"]}"#],
            rt("deeper", r#"{"unpack_arrays":1}"#),
        ),
        fold(
            "unpack true",
            &[r#"{"k":["a"]}"#, r#"{"k":["b"]}"#],
            rt("deeper", r#"{"unpack_arrays":true}"#),
        ),
        fold(
            "unpack symbol",
            &[r#"{"k":[]}"#, r#"{"k":["b"]}"#],
            rt("deeper", r#"{"unpack_arrays":"$sym:x"}"#),
        ),
        fold(
            "unpack ko",
            &[r#"{"k":["--a,c"]}"#, r#"{"k":["a,b"]}"#],
            rt("deeper", r#"{"unpack_arrays":",","knockout_prefix":"--"}"#),
        ),
        fold(
            "overwrite_arrays",
            &[r#"{"k":["h","h"]}"#, r#"{"k":["l"]}"#],
            rt("deeper", r#"{"overwrite_arrays":true,"merge_debug":true}"#),
        ),
        fold(
            "overwrite_arrays over scalar",
            &[r#"{"k":["h"]}"#, r#"{"k":"s"}"#],
            rt("deep", r#"{"overwrite_arrays":true}"#),
        ),
        fold(
            "extend scalar",
            &[
                r#"{"k":"h","n":null,"f":false}"#,
                r#"{"k":["l"],"n":["l"],"f":["l"]}"#,
            ],
            rt(
                "deeper",
                r#"{"extend_existing_arrays":true,"merge_debug":true}"#,
            ),
        ),
        fold(
            "extend hash",
            &[r#"{"k":{"a":1,"b":2}}"#, r#"{"k":["l"]}"#],
            rt(
                "deep",
                r#"{"extend_existing_arrays":true,"merge_debug":true}"#,
            ),
        ),
        fold(
            "extend array",
            &[r#"{"k":["h"]}"#, r#"{"k":["l"]}"#],
            rt("deeper", r#"{"extend_existing_arrays":true}"#),
        ),
        fold(
            "preserve in deeper",
            &[r#"{"k":"H","a":["h"]}"#, r#"{"k":"L","a":"s"}"#],
            rt("deeper", r#"{"preserve_unmergeables":true}"#),
        ),
        fold(
            "preserve false in deep",
            &[r#"{"k":"H","a":["h"]}"#, r#"{"k":"L","a":"s"}"#],
            rt("deep", r#"{"preserve_unmergeables":false}"#),
        ),
        fold(
            "preserve nil in deep",
            &[r#"{"k":"H"}"#, r#"{"k":"L"}"#],
            rt("deep", r#"{"preserve_unmergeables":null}"#),
        ),
        fold(
            "preserve 0 in deeper",
            &[r#"{"k":"H"}"#, r#"{"k":"L"}"#],
            rt("deeper", r#"{"preserve_unmergeables":0}"#),
        ),
        fold(
            "preserve from config",
            &[r#"{"k":"H"}"#, r#"{"k":"L"}"#],
            config(
                sym("deeper"),
                Some(Value::Hash(options(r#"{"preserve_unmergeables":"yes"}"#))),
            ),
        ),
        fold(
            "preserve string key ignored",
            &[r#"{"k":"H"}"#, r#"{"k":"L"}"#],
            config(
                sym("deeper"),
                Some(Value::Hash(options(
                    r#"{"$str:preserve_unmergeables":true}"#,
                ))),
            ),
        ),
        fold(
            "unknown options ignored",
            &[r#"{"k":[1]}"#, r#"{"k":[1,2]}"#],
            rt(
                "deeper",
                r#"{"keep_array_duplicates":true,"merge_nil_values":true}"#,
            ),
        ),
        // merge_debug traces through every branch.
        fold(
            "debug everything",
            &[
                r#"{"a":{"x":[1,"é",2.5,1e20,null]},"b":"--s","c":["--z","y"],"d":{"$sym:k":"v"},"e":null,"f":false,"g":"t\n#{x}"}"#,
                r#"{"a":{"x":[1],"w":{"q":1}},"b":"s","c":["z"],"d":"s","e":1,"f":["l"],"g":1}"#,
                r#"{"a":{"x":[3]},"c":"s","d":{"$sym:k":"w"}}"#,
            ],
            rt("deeper", ko_debug),
        ),
        fold(
            "debug deep",
            &[
                r#"{"a":{"x":"h"},"b":"h","c":false}"#,
                r#"{"a":{"x":"l"},"b":["l"],"c":false}"#,
            ],
            rt("deep", r#"{"merge_debug":true}"#),
        ),
        fold(
            "debug indent string",
            &[r#"{"a":{"x":[1]}}"#, r#"{"a":{"x":[2]}}"#],
            rt("deeper", r#"{"merge_debug":true,"debug_indent":">"}"#),
        ),
        fold(
            "debug indent integer",
            &[r#"{"a":1}"#, r#"{"a":2}"#],
            rt("deeper", r#"{"merge_debug":true,"debug_indent":7}"#),
        ),
        fold(
            "debug indent integer, no recursion",
            &[r#"{"a":1}"#],
            rt("deeper", r#"{"merge_debug":true,"debug_indent":7}"#),
        ),
        fold(
            "debug indent float",
            &[r#"{"a":1}"#, r#"{"b":2}"#],
            rt("deeper", r#"{"debug_indent":1.5}"#),
        ),
        fold(
            "debug indent array",
            &[r#"{"a":1}"#, r#"{"a":2}"#],
            rt("deeper", r#"{"debug_indent":[1]}"#),
        ),
        fold(
            "debug indent hash",
            &[r#"{"a":1}"#, r#"{"a":2}"#],
            rt("deeper", r#"{"debug_indent":{"a":1}}"#),
        ),
        fold(
            "debug indent true",
            &[r#"{"a":[{"a":1}]}"#, r#"{"a":[{"b":2}]}"#],
            rt(
                "deeper",
                r#"{"debug_indent":true,"merge_hash_arrays":true}"#,
            ),
        ),
        // The config's options must be a Hash (for deep merges).
        fold(
            "options string",
            &[r#"{"a":1}"#],
            config(sym("deeper"), Some("x".into())),
        ),
        fold(
            "options integer",
            &[r#"{"a":1}"#],
            config(sym("deep"), Some(Value::Int(1))),
        ),
        fold(
            "options array",
            &[r#"{"a":1}"#],
            config(sym("deep"), Some(val("[[1,2]]"))),
        ),
        fold(
            "options true",
            &[r#"{"a":1}"#],
            config(sym("deep"), Some(Value::Bool(true))),
        ),
        fold(
            "options false",
            &[r#"{"a":1}"#, r#"{"a":2}"#],
            config(sym("deeper"), Some(Value::Bool(false))),
        ),
        fold(
            "options string, native",
            &[r#"{"a":1}"#, r#"{"b":1}"#],
            config(sym("native"), Some("x".into())),
        ),
        // Hash resolution types.
        fold(
            "rt without behavior",
            &[r#"{"a":{"x":1}}"#, r#"{"a":{"y":1}}"#],
            rt("", r#"{"knockout_prefix":""}"#),
        ),
        fold(
            "rt strategy key",
            &[r#"{"a":{"x":1}}"#, r#"{"a":{"y":1}}"#],
            rt("", r#"{"strategy":"deep"}"#),
        ),
        fold(
            "rt string behavior",
            &[r#"{"a":{"x":1}}"#, r#"{"a":{"y":1}}"#],
            {
                let mut h = Hash::default();
                h.insert(Value::Symbol("behavior".into()), "deeper".into());
                SpecSource::Resolution(h)
            },
        ),
        fold(
            "rt string-keyed behavior",
            &[r#"{"a":{"x":1}}"#, r#"{"a":{"y":1}}"#],
            {
                let mut h = Hash::default();
                h.insert("behavior".into(), "deeper".into());
                SpecSource::Resolution(h)
            },
        ),
    ];
    // The prefix is a regex fragment: metacharacters act as patterns.
    for prefix in [
        ".", "-*", "a|b", "*a", "?a", "+a", "[-]", "\\d", "\\-", "(?i)X", "x{2}", "{", "**", "!",
        "~~", "\\", "(", "x|*", "[b-a]",
    ] {
        let opts = json!({"knockout_prefix": prefix, "merge_debug": true}).to_string();
        cases.push(fold(
            format!("ko regex {prefix:?}"),
            &[
                r#"{"k":["-a","--b","a","xxc","Xd","1e","ba","x\n-f"],"s":"-z","t":"a","u":"xxq"}"#,
                r#"{"k":["a","b","c","d","e","f","-a","g"],"s":"l","t":"l","u":"l"}"#,
            ],
            rt("deeper", &opts),
        ));
    }
    cases
}

/// A few `[x].flatten.uniq.compact` cases by hand.
fn resolve_cases() -> Vec<Case> {
    [
        r#"["a",["b",["a",null]],null,"c"]"#,
        r#"[1,1.0,[1],{"x":1},{"x":1.0},{"x":1}]"#,
        "[]",
        "[[null],[[]]]",
        r#"["$nan",["$nan"],0.0,-0.0,false,null,false]"#,
    ]
    .iter()
    .map(|text| {
        let Value::Array(value) = val(text) else {
            unreachable!()
        };
        Case::ResolveArray {
            label: format!("resolve {text}"),
            value,
        }
    })
    .collect()
}

// ---------------------------------------------------------------------------
// Seeded pseudo-random cases.

/// SplitMix64: small, seeded, good enough to spread cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

fn random_scalar(rng: &mut Rng) -> Value {
    match rng.below(20) {
        0..=8 => Value::str(rng.pick(&[
            "a", "b", "c", "--a", "--b", "--", "x,y", "--a\nb", "B", "é", "",
        ])),
        9..=11 => Value::Int(rng.pick(&[1, 2, 3])),
        12 => Value::Float(rng.pick(&[1.0, 2.5, 1e20])),
        13 if rng.chance(20) => Value::Float(f64::NAN),
        14 => Value::Bool(true),
        15 => Value::Bool(false),
        _ => Value::Nil,
    }
}

fn random_key(rng: &mut Rng) -> Value {
    match rng.below(12) {
        0 => Value::Symbol("s".into()),
        1 => Value::Int(1),
        _ => Value::str(rng.pick(&["a", "b", "c", "d"])),
    }
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    if depth == 0 {
        return random_scalar(rng);
    }
    match rng.below(10) {
        0..=3 => random_scalar(rng),
        4..=6 => {
            let hashes = rng.chance(25);
            let len = rng.below(5);
            Value::Array(
                (0..len)
                    .map(|_| {
                        if hashes {
                            Value::Hash(random_hash(rng, depth - 1))
                        } else {
                            random_value(rng, depth - 1)
                        }
                    })
                    .collect(),
            )
        }
        _ => Value::Hash(random_hash(rng, depth - 1)),
    }
}

fn random_hash(rng: &mut Rng, depth: usize) -> Hash {
    let len = rng.below(4);
    (0..len)
        .map(|_| (random_key(rng), random_value(rng, depth)))
        .collect()
}

fn random_spec(rng: &mut Rng) -> SpecSource {
    let behavior = match rng.below(20) {
        0..=2 => "native",
        3..=9 => "deep",
        _ => "deeper",
    };
    let mut opts = Hash::default();
    let mut set = |name: &str, v: Value| {
        opts.insert(Value::Symbol(name.into()), v);
    };
    if rng.chance(45) {
        let prefix = if rng.chance(85) {
            Value::str("--")
        } else {
            rng.pick(&[Value::str("-"), Value::str("."), Value::Int(1)])
        };
        set("knockout_prefix", prefix);
    }
    if rng.chance(25) {
        set("preserve_unmergeables", Value::Bool(rng.chance(50)));
    }
    for (name, percent) in [
        ("merge_hash_arrays", 25),
        ("sort_merged_arrays", 15),
        ("overwrite_arrays", 8),
        ("extend_existing_arrays", 12),
        ("merge_debug", 25),
    ] {
        if rng.chance(percent) {
            set(name, Value::Bool(true));
        }
    }
    if rng.chance(12) {
        set("unpack_arrays", Value::str(","));
    }
    if rng.chance(50) {
        let mut rt = Hash::default();
        rt.insert(
            Value::Symbol("behavior".into()),
            Value::Symbol(behavior.into()),
        );
        rt.extend(opts);
        SpecSource::Resolution(rt)
    } else {
        let name = if rng.chance(50) {
            Value::Symbol(behavior.into())
        } else {
            Value::str(behavior)
        };
        SpecSource::Config {
            behavior: Some(name),
            options: (!opts.is_empty()).then_some(Value::Hash(opts)),
        }
    }
}

fn random_cases(seed: u64, folds: usize, resolves: usize) -> Vec<Case> {
    let mut rng = Rng(seed);
    let mut cases = Vec::new();
    for i in 0..folds {
        let levels = 1 + rng.below(4);
        let levels = (0..levels)
            .map(|_| {
                // Level keys from a small pool, so levels overlap.
                let len = 1 + rng.below(3);
                (0..len)
                    .map(|_| {
                        (
                            Value::str(rng.pick(&["k", "m", "n"])),
                            random_value(&mut rng, 3),
                        )
                    })
                    .collect()
            })
            .collect();
        cases.push(Case::Fold {
            label: format!("random fold #{i} (seed {seed})"),
            levels,
            spec: random_spec(&mut rng),
        });
    }
    for i in 0..resolves {
        let len = rng.below(6);
        let value = (0..len).map(|_| random_value(&mut rng, 2)).collect();
        cases.push(Case::ResolveArray {
            label: format!("random resolve #{i}"),
            value,
        });
    }
    cases
}

// ---------------------------------------------------------------------------
// Running both sides.

fn request(id: usize, case: &Case) -> Json {
    match case {
        Case::Fold { levels, spec, .. } => {
            let spec = match spec {
                SpecSource::Config { behavior, options } => {
                    let mut s = json!({"kind": "config"});
                    if let Some(b) = behavior {
                        s["merge_behavior"] = tagged::encode(b);
                    }
                    if let Some(o) = options {
                        s["deep_merge_options"] = tagged::encode(o);
                    }
                    s
                }
                SpecSource::Resolution(h) => {
                    json!({"kind": "hash", "rt": tagged::encode(&Value::Hash(h.clone()))})
                }
            };
            let levels: Vec<Json> = levels
                .iter()
                .map(|l| tagged::encode(&Value::Hash(l.clone())))
                .collect();
            json!({"id": id, "op": "fold", "levels": levels, "spec": spec})
        }
        Case::ResolveArray { value, .. } => {
            json!({"id": id, "op": "resolve_array", "value": tagged::encode(&Value::Array(value.clone()))})
        }
    }
}

fn run_ruby(cases: &[Case]) -> Vec<Outcome> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/merge_oracle.rb");
    let mut child = crate::tools::command("ruby")
        // error_highlight would append a source snippet to NoMethodError messages.
        // -W0: the `**` prefix case makes Ruby warn about its own regex.
        .args(["-W0", "--disable=error_highlight,did_you_mean", script])
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ruby runs");
    let input: String = cases
        .iter()
        .enumerate()
        .map(|(i, c)| request(i, c).to_string() + "\n")
        .collect();
    let mut stdin = child.stdin.take().expect("stdin");
    let writer =
        std::thread::spawn(move || stdin.write_all(input.as_bytes()).expect("write cases"));
    let mut outcomes = Vec::with_capacity(cases.len());
    for (i, line) in BufReader::new(child.stdout.take().expect("stdout"))
        .lines()
        .enumerate()
    {
        let answer: Json = serde_json::from_str(&line.expect("read")).expect("JSON answer");
        assert_eq!(answer["id"], json!(i), "answers out of order");
        let result = match answer.get("ok") {
            Some(ok) => {
                Ok(tagged::decode(ok).map_or_else(|e| format!("undecodable: {e}"), |v| shown(&v)))
            }
            None => {
                let class = answer["err"][0].as_str().unwrap();
                // ErrorClass has no RegexpError (a knockout prefix that is a
                // bad regex): hierad reports it as RuntimeError, same message.
                let class = if class == "RegexpError" {
                    "RuntimeError"
                } else {
                    class
                };
                Err((
                    class.to_owned(),
                    answer["err"][1].as_str().unwrap().to_owned(),
                ))
            }
        };
        outcomes.push(Outcome {
            result,
            trace: answer["trace"].as_str().unwrap_or_default().to_owned(),
        });
    }
    writer.join().expect("writer");
    assert!(child.wait().expect("ruby exits").success(), "ruby failed");
    assert_eq!(outcomes.len(), cases.len(), "ruby answered every case");
    outcomes
}

fn run_ours(case: &Case) -> Outcome {
    let mut trace = String::new();
    let result = match case {
        Case::Fold { levels, spec, .. } => {
            let spec = match spec {
                SpecSource::Config { behavior, options } => {
                    MergeSpec::from_config(behavior.as_ref(), options.as_ref())
                }
                SpecSource::Resolution(h) => MergeSpec::from_resolution_hash(h),
            }
            .expect("spec");
            let mut answer = Ok(Hash::default());
            for level in levels {
                answer =
                    answer.and_then(|a| merge_answer_traced(level.clone(), a, &spec, &mut trace));
            }
            answer
                .map(|a| shown(&Value::Hash(a)))
                .map_err(|e| (e.class.ruby_name().to_owned(), e.message))
        }
        Case::ResolveArray { value, .. } => Ok(shown(&Value::Array(resolve_array(value.clone())))),
    };
    Outcome { result, trace }
}

fn describe(case: &Case) -> String {
    match case {
        Case::Fold {
            label,
            levels,
            spec,
        } => {
            let mut s = format!("{label}\n  spec: {spec:?}\n");
            for (i, l) in levels.iter().enumerate() {
                s += &format!("  level {i}: {}\n", tagged::encode(&Value::Hash(l.clone())));
            }
            s
        }
        Case::ResolveArray { label, value } => {
            format!(
                "{label}\n  value: {}\n",
                tagged::encode(&Value::Array(value.clone()))
            )
        }
    }
}

fn diff(ruby: &Outcome, ours: &Outcome) -> String {
    let mut s = String::new();
    if ruby.result != ours.result {
        let show = |r: &Result<String, (String, String)>| match r {
            Ok(v) => v.clone(),
            Err((class, message)) => format!("{class}: {message}"),
        };
        s += &format!(
            "  ruby: {}\n  ours: {}\n",
            show(&ruby.result),
            show(&ours.result)
        );
    }
    if ruby.trace != ours.trace {
        let (r, o): (Vec<&str>, Vec<&str>) = (
            ruby.trace.split('\n').collect(),
            ours.trace.split('\n').collect(),
        );
        let at = r
            .iter()
            .zip(&o)
            .position(|(a, b)| a != b)
            .unwrap_or(r.len().min(o.len()));
        s += &format!(
            "  trace differs at line {}:\n    ruby: {:?}\n    ours: {:?}\n",
            at + 1,
            r.get(at).unwrap_or(&"<end>"),
            o.get(at).unwrap_or(&"<end>")
        );
    }
    s
}

fn check(cases: Vec<Case>) {
    let ruby = run_ruby(&cases);
    let mut failures = Vec::new();
    for (case, want) in cases.iter().zip(&ruby) {
        let got = run_ours(case);
        if got != *want {
            failures.push(format!("{}{}", describe(case), diff(want, &got)));
        }
    }
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(15).collect();
        panic!(
            "{} of {} cases differ from Ruby; first {}:\n\n{}",
            failures.len(),
            cases.len(),
            shown.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn hand_written_cases_match_ruby() {
    let mut cases = table_cases();
    cases.extend(hand_cases());
    cases.extend(resolve_cases());
    assert!(cases.len() >= 300, "{} cases", cases.len());
    check(cases);
}

#[test]
fn random_cases_match_ruby() {
    for seed in [0x5EED_2024, 7919, 104_729] {
        check(random_cases(seed, 1000, 100));
    }
}
