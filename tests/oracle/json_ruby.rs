//! Differential test of `hierad::hiera::json::{load, load_scope}` against
//! Ruby's own `JSON.parse` and `JSON.load` (json 2.6.1 of Ruby 3.1.2): every
//! corpus text, and every Fuel fixture converted to JSON by Ruby, is parsed
//! by both, in one Ruby process; values are compared type for type (key
//! order, Integer vs Float, float bits), errors by class and exact message.

use crate::tagged::{self, same};

use base64::Engine as _;
use hierad::hiera::render::ruby::inspect;
use hierad::hiera::{HieraError, Value, json};
use std::fmt::Write as _;
use std::path::Path;

/// How a case is compared, for `JSON.parse` and for `JSON.load`.
#[derive(Clone, Copy)]
enum Check {
    /// Same value, or same error class and message.
    Exact,
    /// As `Exact`, but a String or message of Ruby's that is not valid
    /// UTF-8 is compared in its scrubbed form (for generated cases, where
    /// lone low surrogates come up by chance).
    Scrubbed,
    /// Knowingly different, for the reason given. The test fails if the
    /// case starts to agree, so stale reasons do not linger.
    Known(&'static str),
}
use Check::{Exact, Known, Scrubbed};

/// Texts compared exactly by both `JSON.parse` and `JSON.load`.
const TEXTS: &[&str] = &[
    // scalars at the top level
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1",
    "-1",
    "123",
    "12345678901234567890",
    "-12345678901234567890",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "123456789012345678901234567890123456789012345678901234567890",
    "1.5",
    "-1.5",
    "0.0",
    "-0.0",
    "1e5",
    "1E5",
    "1e+5",
    "1e-5",
    "1.5e3",
    "2.5E-3",
    "0e0",
    "-0E-0",
    "1e400",
    "-1e400",
    "1e-400",
    "0.1",
    "0.30000000000000004",
    "123456789012345678901234567890.5",
    "0.1000000000000000055511151231257827021181583404541015625",
    "4.9406564584124654e-324",
    "2.4703282292062327e-324",
    "2.2250738585072011e-308",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "9007199254740993",
    "9007199254740993.0",
    "\"s\"",
    "\"\"",
    "\" \"",
    // white space
    "  1  ",
    "\t\r\n1\n",
    "\n[\n1\n]\n",
    "\u{b}1",
    "\u{c}1",
    "\u{a0}1",
    "\u{2028}1",
    // strings and escapes
    r#""\n\r\t\b\f\"\\\/""#,
    r#""\u0041\u00e9\u20AC\u20ac""#,
    r#""\ud83d\ude00\uD83D\uDE00""#,
    r#""\u0000""#,
    r#""a\u0000b""#,
    r#""\x\a\q\'\ ""#,
    "\"\\é\"",
    "\"é日本😀\"",
    "\"\u{7f}\"",
    r#""\ud800""#,
    r#"["\ud800"]"#,
    r#""\ud800x""#,
    r#""ab\ud800cd""#,
    r#"{"a":"xy\ud800z"}"#,
    r#""\ud800abcdef""#,
    r#""\ud800\u0041""#,
    r#""\ud800\\nabc""#,
    r#""\ud800\nabcd""#,
    r#""\ud800\ud800""#,
    r#""\udbff\udfff""#,
    r#""\ud800\udc00""#,
    r#""\ud800\\\\u123""#,
    r#""\ud800\\u123""#,
    r#""\ud800\\u1234""#,
    r#""\ud800\\u12""#,
    r#""\ud800\\ud800abcdefg""#,
    r#""\ud800\\\\u1234""#,
    r#""\u12""#,
    r#""\u12g4""#,
    r#""\uXYZW""#,
    r#""\u""#,
    r#""\u123""#,
    "\"\\",
    "\"\\\n\"",
    "\"a\tb\"",
    "\"a\nb\"",
    "[\"a\u{1}\"]",
    "\"a\u{0}b\"",
    "{\"a\u{1f}\":1}",
    "\"abc",
    "[1, \"abc",
    // arrays and objects
    "[]",
    "[ ]",
    "{}",
    "{ }",
    "[1,2,3]",
    "[ 1 , 2 , 3 ]",
    "[[[]]]",
    r#"{"a":{"b":{"c":[1,{"d":null}]}}}"#,
    r#"{"b":1,"a":2,"b":3}"#,
    r#"{"":1}"#,
    r#"{"\u0041":1,"A":2}"#,
    r#"{"k":[true,false,null,1,1.0,"s",{},[]]}"#,
    "{\n  \"a\" : 1 ,\n  \"b\" : [ 2 ]\n}\n",
    r#"{"json_class":null,"a":1}"#,
    // comments
    "/* c */ 1",
    "1 /* c */",
    "// c\n1",
    "1 // c\n",
    "1 // c",
    "[1 /* x */ , 2]",
    r#"{"a" /* x */ : /* y */ 1 /* z */}"#,
    "/**/1",
    "/***/1",
    "/* ** */1",
    "/*/1",
    "1 /*/ 2 */",
    "/* x",
    "/x",
    "1 /",
    "1 /x",
    "[1 /x]",
    "[1 /",
    r#"{"a":1 /x}"#,
    r#"{"a" /x:1}"#,
    "/* */ /* */ 1",
    "[// c\n1]",
    "# c\n1",
    // empty and blank
    "",
    "  ",
    "\n",
    "\t",
    // truncated
    "{",
    "{\"",
    "{\"k\"",
    "{\"k\":",
    "{\"k\": ",
    "{\"k\": \n",
    "{\"k\":1",
    "{\"k\":1,",
    "[",
    "[1",
    "[1,",
    "{\"a\":\"b",
    "[{",
    "[{\"a\":1",
    "{\"a\":[1",
    "{\"a\":[1,",
    "[[1,2],[3",
    // literals
    "nul",
    "nulx",
    "tru",
    "fals",
    "True",
    "NULL",
    "nil",
    "[nul]",
    r#"{"a":tru}"#,
    "[true false]",
    "nullnull",
    "truex",
    "[null,]",
    // NaN and Infinity
    "NaN",
    "[NaN]",
    r#"{"a":NaN}"#,
    "NaNx",
    "[NaN",
    "Infinity",
    "[Infinity]",
    "  Infinity",
    r#"{"a":Infinity}"#,
    "[1,Infinity]",
    "-Infinity",
    "[-Infinity]",
    "[1,-Infinity,2]",
    "[-Infinit]",
    "Infinit",
    "[Infinityx",
    "Infinity1",
    "-Infinityx",
    "nan",
    "-NaN",
    "+Infinity",
    "infinity",
    // trailing and missing separators
    "[1,]",
    "[1,,2]",
    "[,1]",
    r#"{"a":1,}"#,
    "{,}",
    r#"[{"a":1,}]"#,
    r#"{"a":[1,]}"#,
    r#"{"a":{"b":1,}}"#,
    r#"{"a" 1}"#,
    r#"{"a"}"#,
    r#"{"a":1 "b":2}"#,
    "[1 2]",
    "{1:1}",
    "{a:1}",
    "{'a':1}",
    r#"{"a"::1}"#,
    "[1:2]",
    r#"{"a":}"#,
    // garbage after the value
    "1 x",
    "[1]x",
    "{}}",
    "[]]",
    "1 2",
    r#""a" "b""#,
    "{} {}",
    "1,",
    "]",
    "}",
    ":",
    ",",
    "x",
    "'a'",
    "[1]\u{0}x",
    "[1,\u{0}]",
    "\u{0}",
    "é",
    "[é]",
    r#"{"a":1}é"#,
    "\u{feff}{}",
    "\u{feff}",
    // numbers
    "01",
    "-01",
    "00",
    "[01]",
    "-",
    "--1",
    "-a",
    "+1",
    "1.",
    "[1.]",
    "2.",
    "0.",
    "-0.",
    ".5",
    "-.5",
    "1.e5",
    "1e",
    "[1e]",
    "1e+",
    "1E-",
    "1.5e",
    "1.5.3",
    "1e5.3",
    "1e5e5",
    "1-2",
    "[1-2]",
    "[1e5-]",
    "[1.5-]",
    "1.5+",
    "[1.5+]",
    "0x1F",
    "1_000",
    "[-]",
    "[-1.]",
    r#"{"a":-}"#,
    r#"{"a":01}"#,
    "[1.5E]",
    "[0e]",
    "-0.5e-10",
    "[1,2.5,-3e2,4E+1]",
    // json_class (create_additions in JSON.load only)
    r#"{"json_class":"Hash","a":1}"#,
    r#"{"json_class":"::Hash::","a":1}"#,
    r#"{"json_class":"","a":1}"#,
    r#"{"json_class":"::","a":1}"#,
    r#"{"json_class":"Object"}"#,
    r#"{"json_class":"Hiera"}"#,
    r#"{"json_class":"JSON::GenericObject","a":1}"#,
    r#"{"a":{"json_class":"Integer","b":[1]}}"#,
    r#"{"json_class":"String","raw":[104,105]}"#,
    r#"{"json_class":"String","raw":[104,361,-151.5,1e2,1180591620717411303489,-1180591620717411303615]}"#,
    r#"{"json_class":"String","raw":[]}"#,
    r#"[{"json_class":"String","raw":[97]},{"json_class":"String","raw":[98]}]"#,
    r#"{"json_class":"String"}"#,
    r#"{"json_class":"String","raw":null}"#,
    r#"{"json_class":"String","raw":1}"#,
    r#"{"json_class":"String","raw":1.5}"#,
    r#"{"json_class":"String","raw":true}"#,
    r#"{"json_class":"String","raw":"x"}"#,
    r#"{"json_class":"String","raw":{"a":1}}"#,
    r#"{"json_class":"String","raw":[null]}"#,
    r#"{"json_class":"String","raw":["a"]}"#,
    r#"{"json_class":"String","raw":[false]}"#,
    r#"{"json_class":"String","raw":[[1]]}"#,
    r#"{"json_class":"String","raw":[{}]}"#,
    r#"{"json_class":"Nope","a":1}"#,
    r#"{"json_class":"Nope::X"}"#,
    r#"{"json_class":"Hash::Nope"}"#,
    r#"{"json_class":"nope"}"#,
    r#"{"json_class":"Hash::nope"}"#,
    r#"{"json_class":1}"#,
    r#"{"json_class":1.5}"#,
    r#"{"json_class":true}"#,
    r#"{"json_class":[1]}"#,
    r#"{"json_class":"Kernel"}"#,
    r#"{"json_class":"Comparable"}"#,
    r#"{"json_class":"Hash::Kernel"}"#,
    r#"{"json_class":"Hash","json_class":null}"#,
    r#"[{"json_class":"Nope"}, NaN, ]"#,
    r#"[{"json_class":"Nope"} x"#,
];

/// Cases compared more weakly, with the reason: (name, text, JSON.parse
/// check, JSON.load check).
const SPECIAL: &[(&str, &[u8], Check, Check)] = &[
    (
        "lone low surrogate",
        br#""\udc00""#,
        Known(LONE_LOW),
        Known(LONE_LOW),
    ),
    (
        "lone low surrogate in a key",
        br#"{"a\uDFFFb":1}"#,
        Known(LONE_LOW),
        Known(LONE_LOW),
    ),
    (
        "shifted escapes ending in a lone low surrogate",
        br#""\ud800\\ud800\\udc00""#,
        Known(LONE_LOW),
        Known(LONE_LOW),
    ),
    (
        "swallowed lead byte",
        "\"\\ud800\\u00e9\\ud800é12345\"".as_bytes(),
        Known(SWALLOWED),
        Known(SWALLOWED),
    ),
    (
        "invalid UTF-8 in a string",
        b"[\"\xff\"]",
        Known(NOT_UTF8),
        Known(NOT_UTF8),
    ),
    (
        "invalid UTF-8 at the top",
        b"\xff",
        Known(NOT_UTF8),
        Known(NOT_UTF8),
    ),
    (
        "invalid UTF-8 after the value",
        b"[1]\xc3",
        Known(NOT_UTF8),
        Known(NOT_UTF8),
    ),
    (
        "binary String",
        br#"{"json_class":"String","raw":[195]}"#,
        Exact,
        Known("String.json_create makes a binary String of \\xC3; ours is U+FFFD"),
    ),
    (
        "json_class with DidYouMean",
        br#"{"json_class":"Strin"}"#,
        Exact,
        Known("DidYouMean's suggestions (String, STDIN) are not modelled"),
    ),
    (
        "json_class naming a non-class constant",
        br#"{"json_class":"ARGV"}"#,
        Exact,
        Known("only classes and modules are modelled as constants"),
    ),
];

/// How many seeded mutants join the corpus.
const MUTANTS: usize = 600;

const LONE_LOW: &str =
    "Ruby's String holds the CESU bytes of the surrogate (invalid UTF-8); ours U+FFFDs";
const SWALLOWED: &str =
    "after a high surrogate Ruby drops one byte, here the lead byte of é, leaving invalid UTF-8";
const NOT_UTF8: &str =
    "callers decode bytes with from_utf8_lossy: the invalid byte reaches us as U+FFFD";

/// Nesting cases: (name, text, parse check, load check).
fn nesting_cases() -> Vec<Case> {
    let arrays = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let objects = |n: usize| format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
    let mixed = |n: usize| format!("{}{}", "[{\"k\":".repeat(n / 2), "}]".repeat(n / 2));
    let mut cases = vec![
        ("arrays 100", arrays(100), Exact, Exact),
        ("arrays 101", arrays(101), Exact, Exact),
        ("objects 100", objects(100), Exact, Exact),
        ("objects 101", objects(101), Exact, Exact),
        ("mixed 102", mixed(102), Exact, Exact),
        ("open arrays 101", "[".repeat(101), Exact, Exact),
        ("open arrays 100", "[".repeat(100), Exact, Exact),
        (
            "error before the limit",
            format!("[1,]{}", "[".repeat(101)),
            Exact,
            Exact,
        ),
        (
            "error after the limit",
            format!("{}x", "[".repeat(101)),
            Exact,
            Exact,
        ),
        ("arrays 1000", arrays(1000), Exact, Exact),
        ("objects 1000", objects(1000), Exact, Exact),
        (
            "arrays 1001",
            arrays(1001),
            Exact,
            Known("SystemStackError past 1,000 levels, where Ruby's C stack takes ~58,000"),
        ),
        ("arrays 100000", arrays(100_000), Exact, Exact),
    ];
    cases
        .drain(..)
        .map(|(name, text, parse, load)| Case {
            name: format!("nesting {name}"),
            bytes: text.into_bytes(),
            parse,
            load,
        })
        .collect()
}

/// Documents whose every prefix, and seeded single-byte mutations, join
/// the corpus: the machines' failures at every position.
const SEEDS: &[&str] = &[
    "{\"a\": [1, -2.5e3, \"x\\u00e9\\n\\ud83d\\ude00\", true, null, {\"b\": false}], /* c */ \"c\" : NaN}\n",
    "[0, -0.0, 1E+2, \"\\/\\\"\", [], {}, Infinity, -Infinity] // end\n",
    "// head\n{ \"k\" :{\"kind\": \"Hash\", \"v\": [\"\\ud800\\udc00\",12]} , \"e\":{}}\t/**/",
];

/// Bytes a mutation inserts or writes: the grammar's own, and some others.
const ALPHABET: &[u8] = b"{}[]:,\"\\/*-+.eE0123456789 \n\tnultrfasIiNyxu\x00\x01";

/// Every prefix of each seed, then `count` mutants (a byte deleted,
/// inserted or replaced, one to three times) from a fixed xorshift seed.
fn mutation_cases(count: usize) -> Vec<Case> {
    let mut cases = Vec::new();
    for (n, seed) in SEEDS.iter().enumerate() {
        for len in 0..seed.len() {
            cases.push(Case {
                name: format!("seed {n} prefix {len}"),
                bytes: seed.as_bytes()[..len].to_vec(),
                parse: Scrubbed,
                load: Scrubbed,
            });
        }
    }
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    for i in 0..count {
        let mut bytes = SEEDS[i % SEEDS.len()].as_bytes().to_vec();
        for _ in 0..=next(3) {
            let at = next(bytes.len());
            let b = ALPHABET[next(ALPHABET.len())];
            match next(3) {
                0 => {
                    bytes.remove(at);
                }
                1 => bytes.insert(at, b),
                _ => bytes[at] = b,
            }
        }
        cases.push(Case {
            name: format!("mutant {i}"),
            bytes,
            parse: Scrubbed,
            load: Scrubbed,
        });
    }
    cases
}

struct Case {
    name: String,
    bytes: Vec<u8>,
    parse: Check,
    load: Check,
}

/// What Ruby answered for one text and one method.
struct Answer {
    /// A value, or for deeply nested ones its `inspect`, or an error.
    result: Result<Value, (String, String)>,
    inspect: Option<String>,
    /// Whether the value or message was valid UTF-8 (else scrubbed).
    exact: bool,
}

fn decode_answer(a: &serde_json::Value) -> Answer {
    let exact = a["exact"].as_bool().expect("exact flag");
    if let Some(text) = a.get("inspect") {
        return Answer {
            result: Ok(Value::Nil),
            inspect: Some(text.as_str().unwrap().to_owned()),
            exact,
        };
    }
    let result = if let Some(err) = a.get("error") {
        Err((
            err[0].as_str().unwrap().to_owned(),
            err[1].as_str().unwrap().to_owned(),
        ))
    } else {
        match tagged::decode(&a["ok"]) {
            Ok(v) => Ok(v),
            Err(class) => Err((format!("#<{class}>"), String::new())),
        }
    };
    Answer {
        result,
        inspect: None,
        exact,
    }
}

/// Runs the corpus (and the Fuel fixtures, converted to JSON) through one
/// Ruby process: the Fuel JSON texts, then (parse, load) answers for all.
fn ruby_answers(texts: &[&[u8]], fuel: &[String]) -> (Vec<String>, Vec<(Answer, Answer)>) {
    let support = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/json_load.rb");
    let b64 = base64::engine::general_purpose::STANDARD;
    let corpus = serde_json::json!({
        "texts": texts.iter().map(|t| b64.encode(t)).collect::<Vec<_>>(),
        "fuel": fuel,
    });
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), corpus.to_string()).expect("write corpus");
    let out = crate::tools::command("ruby")
        .arg(&support)
        .arg(file.path())
        .output()
        .expect("ruby must be installed to run the differential JSON test");
    assert!(
        out.status.success(),
        "json_load.rb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("json_load.rb output");
    let fuel_texts = reply["fuel"]
        .as_array()
        .expect("fuel texts")
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    let answers = reply["answers"]
        .as_array()
        .expect("answers")
        .iter()
        .map(|a| (decode_answer(&a["parse"]), decode_answer(&a["load"])))
        .collect();
    (fuel_texts, answers)
}

fn fuel_paths() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuel");
    let mut paths: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/fuel")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 10,
        "fuel fixtures missing from {}",
        dir.display()
    );
    paths
}

fn agrees(ours: &Result<Value, HieraError>, ruby: &Answer, check: Check) -> bool {
    (ruby.exact || matches!(check, Scrubbed))
        && match (ours, &ruby.result) {
            (Ok(v), Ok(_)) if ruby.inspect.is_some() => {
                ruby.inspect.as_deref() == Some(&inspect(v))
            }
            (Ok(v), Ok(w)) => same(v, w),
            (Err(e), Err((class, message))) => {
                e.class.ruby_name() == class && e.message == *message
            }
            _ => false,
        }
}

fn show(a: &Answer) -> String {
    match &a.result {
        Ok(_) if a.inspect.is_some() => a.inspect.clone().unwrap_or_default(),
        Ok(v) => format!("{v:?}"),
        Err((class, message)) => format!("{class}: {message:?}"),
    }
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(400).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

#[test]
fn json_parse_and_load_agree_with_ruby() {
    let mut cases: Vec<Case> = TEXTS
        .iter()
        .map(|t| Case {
            name: format!("{t:?}"),
            bytes: t.as_bytes().to_vec(),
            parse: Exact,
            load: Exact,
        })
        .collect();
    cases.extend(SPECIAL.iter().map(|(name, bytes, parse, load)| Case {
        name: (*name).to_owned(),
        bytes: bytes.to_vec(),
        parse: *parse,
        load: *load,
    }));
    cases.extend(nesting_cases());
    assert!(cases.len() >= 150, "only {} corpus texts", cases.len());
    cases.extend(mutation_cases(MUTANTS));

    let fuel = fuel_paths();
    let texts: Vec<&[u8]> = cases.iter().map(|c| c.bytes.as_slice()).collect();
    let (fuel_texts, answers) = ruby_answers(&texts, &fuel);
    assert_eq!(fuel_texts.len(), fuel.len() * 3);
    for (i, text) in fuel_texts.into_iter().enumerate() {
        let file = Path::new(&fuel[i / 3])
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let form = ["compact", "pretty", "pretty, cut at 2/3"][i % 3];
        cases.push(Case {
            name: format!("fuel {file} ({form})"),
            bytes: text.into_bytes(),
            parse: Exact,
            load: Exact,
        });
    }
    assert_eq!(answers.len(), cases.len());

    let mut report = String::new();
    let mut failures = 0;
    let mut fuel_values = 0;
    for (case, (parse, load)) in cases.iter().zip(&answers) {
        // What the callers hand us: the file's bytes, lossily decoded.
        let text = String::from_utf8_lossy(&case.bytes);
        for (method, ours, ruby, check) in [
            ("JSON.parse", json::load(&text), parse, case.parse),
            ("JSON.load", json::load_scope(&text), load, case.load),
        ] {
            if case.name.starts_with("fuel") && ours.is_ok() {
                fuel_values += 1;
            }
            let ok = agrees(&ours, ruby, check);
            let failed = match check {
                Exact | Scrubbed => !ok,
                Known(_) => ok,
            };
            if failed {
                failures += 1;
                let why = match check {
                    Known(reason) => {
                        format!("\n  marked known-different ({reason}) but agrees now")
                    }
                    Exact | Scrubbed => String::new(),
                };
                let ours = match &ours {
                    Ok(v) => format!("{v:?}"),
                    Err(e) => format!("{}: {:?}", e.class.ruby_name(), e.message),
                };
                let _ = write!(
                    report,
                    "\n{} [{method}]\n  text: {}\n  ruby: {}\n  ours: {}{why}\n",
                    clip(&case.name),
                    clip(&format!("{text:?}")),
                    clip(&show(ruby)),
                    clip(&ours),
                );
            }
        }
    }
    // Compact and pretty Fuel texts load under both methods.
    assert_eq!(fuel_values, fuel.len() * 4, "Fuel JSON texts that loaded");
    assert!(
        failures == 0,
        "{failures} answers of {} cases disagree with Ruby:\n{report}",
        cases.len()
    );
}
