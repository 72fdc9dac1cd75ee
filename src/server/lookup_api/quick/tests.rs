//! Unit tests of `server/lookup_api/quick.rs`: what it reads is what
//! serde reads, and what it gives up on is read by serde alike.

use super::super::{read_fields, typed};
use super::*;
use proptest::prelude::*;

/// The request as both ways read it (`Debug` shows a Hash's order).
fn both(bytes: &[u8]) -> (Option<String>, String) {
    let quick = std::str::from_utf8(bytes)
        .ok()
        .and_then(fields)
        .map(|f| format!("{f:?}"));
    let serde = format!("{:?}", read_fields(bytes));
    (quick, serde)
}

/// Whether the quick reader took `body`, reading it as serde does.
fn reads_alike(body: &[u8]) -> Result<bool, TestCaseError> {
    let (quick, serde) = both(body);
    let text = String::from_utf8_lossy(body);
    if let Some(quick) = &quick {
        prop_assert_eq!(&format!("Ok({quick})"), &serde, "{}", text);
    }
    // The whole request too: the reader chosen, then the types checked.
    let parsed = format!("{:?}", super::super::parse_request(body));
    let old = format!("{:?}", read_fields(body).and_then(typed));
    prop_assert_eq!(parsed, old, "{}", text);
    Ok(quick.is_some())
}

/// The requests the shim and `hierad bench` send are read by hand.
#[test]
fn the_usual_requests_are_read_by_hand() {
    let bodies = [
        r#"{"environment":1,"level":"nodes=n-1.example","hierarchy_id":"0123456789abcdef0123456789abcdef","scope":{"::fqdn":"n-1.example","calling_class":"a::b","calling_module":"a"},"resolution":"hash","key":"k\"1"}"#,
        r#" { "environment" : "2" , "key" : "a\\b\/c\n\t" , "keys" : null, "explain" : false,
            "hierarchy" : ["override/%{::fqdn}", "common"], "scope" : {"n": -0, "m": 123456789012345678,
            "l": [true, null, {"x": []}], "n": "again"}, "format": {"ignored": [1]}, "bogus": 1, "bogus2": 2 }"#,
        "{}",
    ];
    for body in bodies {
        assert!(reads_alike(body.as_bytes()).unwrap(), "{body}");
    }
}

/// What it leaves to serde, serde reads (with its own errors).
#[test]
fn the_rest_is_left_to_serde() {
    let bodies = [
        r#"{"environment":1.5,"key":"k"}"#,
        r#"{"environment":1e3,"key":"k"}"#,
        r#"{"environment":01,"key":"k"}"#,
        r#"{"environment":1234567890123456789,"key":"k"}"#,
        r#"{"environment":1,"key":"\u00e9"}"#,
        r#"{"environment":1,"key":"k","resolution":{"__hierad__":"sym","name":"hash"}}"#,
        "{\"environment\":1,\"key\":\"a\u{1}\"}",
        "\u{c}{\"environment\":1,\"key\":\"k\"}",
        r#"{"environment":1,"key":"k",}"#,
        r#"{"environment":1,"key":"k"} x"#,
        r#"{"environment":1,"key":"k""#,
        r#"{"environment":tru,"key":"k"}"#,
        "[1]",
        "",
    ];
    for body in bodies {
        assert!(!reads_alike(body.as_bytes()).unwrap(), "{body}");
    }
    let deep = format!(
        r#"{{"environment":1,"key":"k","scope":{{"a":{}1{}}}}}"#,
        "[".repeat(DEPTH),
        "]".repeat(DEPTH)
    );
    assert!(!reads_alike(deep.as_bytes()).unwrap());
}

/// A JSON string's text, well formed or not.
fn string() -> impl Strategy<Value = String> {
    let good = prop::sample::select(vec![
        "a",
        "nodes=n1",
        "hash",
        "é",
        "%{::fqdn}",
        "::",
        " ",
        "\\\"",
        "\\\\",
        "\\/",
        "\\n",
        "\\t",
        "\\b",
        "\\f",
        "\\r",
        "\u{7f}",
        "__hierad__",
        "0123456789abcdef0123456789abcdef",
    ]);
    let bad = prop::sample::select(vec!["\\u00e9", "\\ud800", "\\x", "\u{1}", "\""]);
    let piece = prop_oneof![12 => good, 1 => bad];
    prop::collection::vec(piece, 0..4).prop_map(|p| format!("\"{}\"", p.concat()))
}

/// A JSON value's text, well formed or not.
fn value() -> impl Strategy<Value = String> {
    let good = prop::sample::select(vec![
        "0",
        "-0",
        "7",
        "-12",
        "123456789012345678",
        "-123456789012345678",
        "true",
        "false",
        "null",
    ]);
    let odd = prop::sample::select(vec![
        "01",
        "-",
        "1.5",
        "1e3",
        "2E-1",
        "1234567890123456789",
        "99999999999999999999",
        "tru",
        "nul",
        "{\"__hierad__\":\"sym\",\"name\":\"hash\"}",
        "{\"__hierad__\":\"nope\"}",
    ]);
    let scalar = prop_oneof![6 => string(), 3 => good.prop_map(str::to_owned), 1 => odd.prop_map(str::to_owned)];
    scalar.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec((ws(), inner.clone()), 0..4).prop_map(|items| {
                let items: Vec<String> = items.into_iter().map(|(w, v)| w + &v).collect();
                format!("[{}]", items.join(","))
            }),
            prop::collection::vec((string(), ws(), inner), 0..4).prop_map(|entries| {
                let entries: Vec<String> = entries
                    .into_iter()
                    .map(|(k, w, v)| format!("{k}:{w}{v}"))
                    .collect();
                format!("{{{}}}", entries.join(","))
            }),
        ]
    })
}

fn ws() -> impl Strategy<Value = String> {
    // A form feed (not JSON's) now and then.
    let good = prop::sample::select(vec!["", "", "", " ", "\n", "\t ", "\r\n"]);
    prop_oneof![40 => good, 1 => Just("\u{c}")].prop_map(str::to_owned)
}

fn name() -> impl Strategy<Value = String> {
    let mut names: Vec<String> = FIELDS.iter().map(|f| format!("\"{f}\"")).collect();
    names.extend(
        [
            "\"format\"",
            "\"bogus\"",
            "\"envir\\u006fnment\"",
            "\"ke\\y\"",
            "key",
        ]
        .map(str::to_owned),
    );
    prop::sample::select(names)
}

/// A lookup request's text, then perhaps mangled at one place.
fn request() -> impl Strategy<Value = Vec<u8>> {
    let member =
        (ws(), name(), ws(), value(), ws()).prop_map(|(a, n, b, v, c)| format!("{a}{n}{b}:{v}{c}"));
    let pick = |name: &'static str, values: Vec<&'static str>| {
        prop::option::weighted(0.8, prop::sample::select(values))
            .prop_map(move |v| v.map(|v| format!("\"{name}\":{v}")))
    };
    // Mostly the fields of a good request, each perhaps wrong.
    let usual = (
        pick(
            "environment",
            vec!["1", "1", "1", "\"2\"", "-0", "1.5", "null"],
        ),
        string().prop_map(|k| Some(format!("\"key\":{k}"))),
        pick(
            "level",
            vec!["\"nodes=n1\"", "\"nodes=n1\"", "null", "\"nodes\"", "3"],
        ),
        pick(
            "resolution",
            vec!["\"hash\"", "\"array\"", "\"x\"", "null", "[]"],
        ),
        pick(
            "hierarchy_id",
            vec![
                "\"0123456789abcdef0123456789abcdef\"",
                "\"0123456789abcdef0123456789abcdef\"",
                "\"x\"",
                "1",
            ],
        ),
        prop::option::weighted(0.8, value()).prop_map(|v| v.map(|v| format!("\"scope\":{v}"))),
    )
        .prop_map(|(a, b, c, d, e, f)| {
            [a, b, c, d, e, f].into_iter().flatten().collect::<Vec<_>>()
        });
    let body = (ws(), usual, prop::collection::vec(member, 0..2), ws()).prop_map(
        |(a, mut members, more, b)| {
            members.extend(more);
            format!("{a}{{{}}}{b}", members.join(",")).into_bytes()
        },
    );
    let mangle = prop::option::weighted(
        0.2,
        (
            any::<prop::sample::Index>(),
            prop::sample::select(vec![
                None,
                Some(b','),
                Some(b'}'),
                Some(b']'),
                Some(b'"'),
                Some(b'\\'),
                Some(b'x'),
                Some(0),
                Some(0xff),
            ]),
        ),
    );
    (body, mangle).prop_map(|(mut body, mangle)| {
        if let Some((at, byte)) = mangle {
            let at = at.index(body.len() + 1);
            match byte {
                Some(b) => body.insert(at, b),
                None => body.truncate(at),
            }
        }
        body
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// Any request, mangled or not: the same fields when the quick reader
    /// takes it, and the same request or the same error in the end.
    #[test]
    fn any_request_reads_as_serde_reads_it(body in request()) {
        reads_alike(&body)?;
    }
}
