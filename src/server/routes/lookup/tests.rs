//! Unit tests of `server/routes/lookup.rs`.

use super::*;
use crate::hiera::lookup::Resolution;
use std::borrow::Cow;

fn error_of(body: &str) -> String {
    match parse_request(body.as_bytes()) {
        Err(ApiError::BadRequest(message)) => message,
        Err(other) => panic!("{body}: {other:?}"),
        Ok(_) => panic!("{body}: parsed"),
    }
}

/// What a client reads for each mistake (a prefix, for serde_json's
/// own wording after it).
#[test]
fn bad_requests_say_what_is_wrong() {
    let cases = [
        ("{", "malformed JSON: EOF while parsing an object"),
        ("", "malformed JSON: EOF while parsing a value"),
        (
            "{\"key\":\"k\",\"environment\":1} x",
            "malformed JSON: trailing characters",
        ),
        ("[1]", "a lookup request is a JSON object"),
        ("42", "a lookup request is a JSON object"),
        ("\"x\"", "a lookup request is a JSON object"),
        (
            r#"{"environment":1,"key":"k","bogus":1}"#,
            r#"unknown field "bogus" in the lookup request"#,
        ),
        (
            r#"{"bogus":{"__hierad__":"nope"},"environment":"x"}"#,
            r#"unknown field "bogus" in the lookup request"#,
        ),
        (r#"{"key":"k"}"#, "the lookup request has no environment"),
        (
            r#"{"environment":1.0,"key":"k"}"#,
            "environment must be an integer id",
        ),
        (
            r#"{"environment":"one","key":"k"}"#,
            "environment must be an integer id",
        ),
        (
            r#"{"environment":null,"key":"k"}"#,
            "environment must be an integer id",
        ),
        (
            r#"{"environment":[1],"key":"k"}"#,
            "environment must be an integer id",
        ),
        (
            r#"{"environment":1,"key":"k","level":3}"#,
            "level is a string like \"nodes=node-1\"",
        ),
        (
            r#"{"environment":1,"key":"k","level":"nodes"}"#,
            "\"nodes\" in level path \"nodes\" is not of the form level=value",
        ),
        (r#"{"environment":1}"#, "the lookup request has no key"),
        (
            r#"{"environment":1,"key":"k","keys":["k"]}"#,
            "give either key or keys, not both",
        ),
        (
            r#"{"environment":1,"key":3}"#,
            "key is a string and keys a list of strings",
        ),
        (
            r#"{"environment":1,"keys":"k"}"#,
            "key is a string and keys a list of strings",
        ),
        (
            r#"{"environment":1,"keys":["a",1]}"#,
            "keys must be strings",
        ),
        (
            r#"{"environment":1,"key":"k","resolution":3}"#,
            "resolution is \"priority\", \"array\", \"hash\" or an object of merge options",
        ),
        (
            r#"{"environment":1,"key":"k","hierarchy":"common"}"#,
            "hierarchy is a list of datasource names",
        ),
        (
            r#"{"environment":1,"key":"k","hierarchy":["a",null]}"#,
            "hierarchy is a list of datasource names",
        ),
        (
            r#"{"environment":1,"key":"k","scope":[]}"#,
            "scope is an object of variables",
        ),
        (
            r#"{"environment":1,"key":"k","scope":{"a":{"__hierad__":"sym"}}}"#,
            "scope: malformed tagged value: __hierad__ object without \"name\"",
        ),
        (
            r#"{"environment":1,"key":"k","default":{"__hierad__":"float","value":"1"}}"#,
            "default: malformed tagged value: float value",
        ),
        (
            r#"{"environment":1,"key":"k","order_override":{"__hierad__":"x"}}"#,
            "order_override: malformed tagged value: unknown tag \"x\"",
        ),
        (
            r#"{"environment":1,"key":"k","resolution":{"__hierad__":"float","value":"NaN"}}"#,
            "resolution is \"priority\"",
        ),
        (
            r#"{"environment":1,"key":"k","explain":"yes"}"#,
            "explain is true or false",
        ),
    ];
    for (body, want) in cases {
        let message = error_of(body);
        assert!(message.starts_with(want), "{body}: {message}");
    }
}

#[test]
fn good_requests_parse() {
    let parsed = parse_request(
        br#"{"environment":"7","level":"nodes=n1","key":"k","resolution":"hash",
             "hierarchy":["a","b"],"scope":{"::fqdn":"n1","n":1.5,"s":{"__hierad__":"sym","name":"x"}},
             "merge_behavior":"deeper","deep_merge_options":{"knockout_prefix":"--"},
             "order_override":null,"default":[1,{"a":null}],"explain":true,"format":"yaml"}"#,
    )
    .expect("a good request");
    let r = &parsed.request;
    assert_eq!((r.env, r.key.as_str(), r.explain), (7, "k", true));
    assert_eq!(r.level, LevelPath::parse_cli("nodes=n1").unwrap());
    assert!(matches!(r.resolution, Resolution::Hash));
    assert_eq!(
        r.hierarchy.as_deref().map(Hierarchy::written),
        Some(&Value::Array(vec![Value::str("a"), Value::str("b")]))
    );
    assert_eq!(
        r.scope,
        crate::rhash! {"::fqdn" => "n1", "n" => Value::Float(1.5), "s" => Value::Symbol("x".into())}
    );
    assert_eq!(r.merge_behavior, Some(Value::str("deeper")));
    assert_eq!(
        r.deep_merge_options,
        Some(Value::Hash(crate::rhash! {"knockout_prefix" => "--"}))
    );
    assert_eq!(r.order_override, Some(Value::Nil));
    assert_eq!(
        r.default,
        Some(Value::Array(vec![
            Value::Int(1),
            Value::Hash(crate::rhash! {"a" => Value::Nil})
        ]))
    );
    assert!(parsed.keys.is_none());

    let parsed = parse_request(br#" {"keys":["a","b"],"environment":1,"level":"","scope":null,"resolution":{"behavior":"deeper"}} "#)
        .expect("a good request");
    assert_eq!(parsed.keys, Some(vec!["a".to_owned(), "b".to_owned()]));
    assert!(parsed.request.level.is_root());
    assert!(parsed.request.scope.is_empty());
    assert!(matches!(parsed.request.resolution, Resolution::HashWith(_)));
    assert!(parsed.request.default.is_none());

    // A Symbol names its resolution as a String does.
    let parsed = parse_request(
        br#"{"environment":1,"key":"k","resolution":{"__hierad__":"sym","name":"array"}}"#,
    )
    .expect("a good request");
    assert!(matches!(parsed.request.resolution, Resolution::Array));
}

/// What the remote client sends is what the server reads: every field
/// of the typed request arrives under the name the parser knows.
#[test]
fn the_typed_request_is_what_the_server_reads() {
    let typed = api::LookupRequest {
        environment: 3,
        keys: api::Keys::one("k"),
        resolution: Some("array".into()),
        level: Some("nodes=n1".into()),
        hierarchy: Some(vec!["a".into(), "b".into()]),
        hierarchy_id: None,
        scope: Some(WireValue(Value::Hash(
            crate::rhash! {"::fqdn" => "n1", "s" => Value::Symbol("x".into())},
        ))),
        default: Some(WireValue(Value::Float(2.0))),
        explain: true,
        node: Some("n1".into()),
        merge: Some(WireValue(Value::str("deep"))),
    };
    let parsed =
        parse_request(serde_json::to_string(&typed).unwrap().as_bytes()).expect("a good request");
    assert_eq!(parsed.merge, Some(Value::str("deep")));
    let r = &parsed.request;
    assert_eq!((r.env, r.key.as_str(), r.explain), (3, "k", true));
    assert!(matches!(r.resolution, Resolution::Array));
    assert_eq!(r.level, LevelPath::parse_cli("nodes=n1").unwrap());
    assert_eq!(
        r.hierarchy.as_deref().map(Hierarchy::written),
        Some(&Value::Array(vec![Value::str("a"), Value::str("b")]))
    );
    assert_eq!(
        r.scope,
        crate::rhash! {"::fqdn" => "n1", "s" => Value::Symbol("x".into())}
    );
    assert_eq!(r.default, Some(Value::Float(2.0)));
    assert_eq!(parsed.node.as_deref(), Some("n1"));
    let bare = api::LookupRequest {
        environment: 1,
        keys: api::Keys::one("k"),
        ..api::LookupRequest::default()
    };
    let parsed =
        parse_request(serde_json::to_string(&bare).unwrap().as_bytes()).expect("a good request");
    assert!(parsed.request.level.is_root() && !parsed.request.explain);
    assert!(parsed.request.default.is_none());
    let by_id = api::LookupRequest {
        environment: 1,
        keys: api::Keys::one("k"),
        hierarchy_id: Some("00112233445566778899aabbccddeeff".into()),
        ..api::LookupRequest::default()
    };
    let parsed =
        parse_request(serde_json::to_string(&by_id).unwrap().as_bytes()).expect("a good request");
    assert_eq!(
        parsed.hierarchy_id.map(|id| id.to_string()).as_deref(),
        by_id.hierarchy_id.as_deref()
    );
}

/// `hierarchy_id` names a registered hierarchy in place of `hierarchy`:
/// parsed here, looked up by the handler.
#[test]
fn a_hierarchy_id_is_parsed_in_place_of_the_hierarchy() {
    let id = "0123456789abcdef0123456789abcdef";
    let parsed = parse_request(
        format!(r#"{{"environment":1,"key":"k","hierarchy_id":"{id}","hierarchy":null}}"#)
            .as_bytes(),
    )
    .expect("a good request");
    assert_eq!(parsed.hierarchy_id.unwrap().to_string(), id);
    assert!(parsed.request.hierarchy.is_none());
    let both = format!(r#"{{"environment":1,"key":"k","hierarchy_id":"{id}","hierarchy":["a"]}}"#);
    let message = error_of(&both);
    assert!(
        message.contains("hierarchy or hierarchy_id") && message.contains("not both"),
        "{message}"
    );
    for bad in [
        r#""0123456789ABCDEF0123456789ABCDEF""#,
        r#""0123456789abcdef""#,
        "12",
        r#"["0123456789abcdef0123456789abcdef"]"#,
    ] {
        let message = error_of(&format!(
            r#"{{"environment":1,"key":"k","hierarchy_id":{bad}}}"#
        ));
        assert!(
            message.starts_with("hierarchy_id is the id POST /api/v1/hierarchies answered"),
            "{bad}: {message}"
        );
    }
}

/// A server on a runtime of ONE async worker, over environment 1
/// whose `common` holds `f1` = "y" and `fN` = ten `%{hiera('fN-1')}`.
fn fan_out_server(
    settings: crate::settings::Settings,
) -> (tokio::runtime::Runtime, std::net::SocketAddr) {
    use crate::configdb::{ComponentRef, DocAddress, DocKind, NewComponent, NewEnvironment};
    use crate::store::{SqliteStore, Store};
    let store = SqliteStore::open_in_memory().unwrap();
    store
        .create_component(&NewComponent {
            id: None,
            name: "app".into(),
            resource_definitions: vec!["common".into()],
        })
        .unwrap();
    store
        .create_environment(&NewEnvironment {
            hiera: Default::default(),
            id: Some(1),
            components: vec![ComponentRef::Name("app".into())],
            hierarchy_levels: vec![],
        })
        .unwrap();
    let mut data = crate::rhash! {"f1" => "y"};
    for n in 2..=7 {
        let token = format!("%{{hiera('f{}')}}", n - 1);
        data.insert(Value::str(format!("f{n}")), Value::str(token.repeat(10)));
    }
    let at = DocAddress::new(1, LevelPath::root(), "common", DocKind::Values);
    store.put(&at, &data).unwrap();
    let state = AppState::new(std::sync::Arc::new(store), settings).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    runtime.spawn(crate::server::serve(
        listener,
        state,
        None,
        std::future::pending(),
    ));
    (runtime, addr)
}

/// The status line and body of one request, sent as is.
fn exchange(addr: std::net::SocketAddr, method: &str, path: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

fn lookup_of(key: &str) -> String {
    format!(r#"{{"environment":1,"key":"{key}"}}"#)
}

/// A lookup that outgrows its inline attempt runs off the async
/// workers: the request time limit ends the client's wait (before,
/// the lookup held the only worker to its end and answered 200), and
/// /healthz answers meanwhile; the budget then bounds its CPU.
#[test]
fn a_costly_lookup_leaves_the_workers_and_the_time_limit_ends_its_wait() {
    let settings = crate::settings::Settings {
        request_timeout: std::time::Duration::from_millis(50),
        // f6: 111,110 steps, which take far longer than 50 ms.
        lookup_budget: Budget {
            steps: 200_000,
            bytes: 1 << 30,
        },
        lookup_workers: 1,
        ..crate::settings::Settings::default()
    };
    let (runtime, addr) = fan_out_server(settings);
    let answer = exchange(addr, "POST", "/api/v1/lookup", &lookup_of("f2"));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.ends_with(&format!("\"{}\"}}", "y".repeat(10))),
        "{answer}"
    );
    let answer = exchange(addr, "POST", "/api/v1/lookup", &lookup_of("f6"));
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let answer = exchange(addr, "GET", "/healthz", "");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The lookup goes on on the blocking pool; don't wait for it.
    runtime.shutdown_background();
}

#[test]
fn over_budget_lookups_get_422_naming_the_budget_and_its_flag() {
    let settings = crate::settings::Settings {
        lookup_budget: Budget {
            steps: 500,
            bytes: 1 << 20,
        },
        ..crate::settings::Settings::default()
    };
    let (runtime, addr) = fan_out_server(settings);
    // Within 500 steps after an inline attempt over 100: answered.
    let answer = exchange(addr, "POST", "/api/v1/lookup", &lookup_of("f3"));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(&"y".repeat(100)), "{answer}");
    for body in [
        lookup_of("f4"),
        r#"{"environment":1,"keys":["f1","f4"]}"#.to_owned(),
        r#"{"environment":1,"key":"f4","explain":true}"#.to_owned(),
    ] {
        let answer = exchange(addr, "POST", "/api/v1/lookup", &body);
        assert!(answer.starts_with("HTTP/1.1 422"), "{answer}");
        let json: serde_json::Value =
            serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(json["error"], "budget_exceeded", "{json}");
        assert_eq!(json["class"], "Hierad::StepBudgetExceeded", "{json}");
        assert_eq!(json["budget"], "steps", "{json}");
        assert_eq!(json["limit"], 500, "{json}");
        assert_eq!(json["flag"], "--budget-steps", "{json}");
    }
    runtime.shutdown_background();
}

#[test]
fn answer_text_is_the_answer_json() {
    let big = Value::Hash(crate::rhash! {"a" => Value::Array(vec![Value::Float(1.0), Value::Nil])});
    let cases = [
        Answer::Found(Cow::Owned(big.clone())),
        Answer::Found(Cow::Owned(Value::Nil)),
        Answer::Found(Cow::Borrowed(&Value::Bool(false))),
        Answer::Default(big),
        Answer::Default(Value::str("x")),
        Answer::NotFound,
    ];
    for answer in cases {
        assert_eq!(
            answer_text(&answer),
            serde_json::to_string(&answer_json(&answer, None))
                .unwrap()
                .as_bytes(),
            "{answer:?}"
        );
    }
}

/// `X-Hierad-Tagged` looks for the tag src/wire.rs writes, as a JSON
/// string: a String holding the name in quotes is escaped, so not a tag.
#[test]
fn the_tagged_header_finds_the_wire_tag() {
    assert_eq!(TAG_STRING, format!("\"{}\"", wire::TAG).as_bytes());
    for (body, tagged) in [
        (
            r#"{"found":true,"value":{"__hierad__":"sym","name":"s"}}"#,
            "true",
        ),
        (r#"{"found":true,"value":"x\"__hierad__\"y"}"#, "false"),
        (r#"{"found":true,"value":"__hierad__"}"#, "true"),
        (r#"{"found":false}"#, "false"),
    ] {
        let response = json_bytes(StatusCode::OK, tag_checked(Bytes::from(body), 1), "MISS");
        assert_eq!(response.headers()[&X_TAGGED], tagged, "{body}");
    }
}

/// A UTF-8 body is read as text, any other as bytes: the strings are
/// the same either way (escapes included), and a body that is not
/// UTF-8 is refused with serde_json's message naming the place.
#[test]
fn text_and_bytes_read_alike() {
    let parsed = parse_request(
        r#"{"environment":1,"key":"clé\u00e9\"","hierarchy":["nœud/%{::fqdn}","a\\b"]}"#.as_bytes(),
    )
    .expect("a good request");
    assert_eq!(parsed.request.key, "cléé\"");
    assert_eq!(
        parsed.request.hierarchy.as_deref().map(Hierarchy::written),
        Some(&Value::Array(vec![
            Value::str("nœud/%{::fqdn}"),
            Value::str("a\\b")
        ]))
    );
    for (body, message) in [
        (
            &b"{\"environment\":1,\"key\":\"k\xff\"}"[..],
            "malformed JSON: invalid unicode code point at line 1 column 26",
        ),
        (
            &b"{\"environment\":1,\"key\":\"k\",\"hierarchy\":[\"\xc3\"]}"[..],
            "malformed JSON: invalid unicode code point at line 1 column 42",
        ),
    ] {
        match parse_request(body) {
            Err(ApiError::BadRequest(m)) => assert_eq!(m, message, "{body:?}"),
            Err(other) => panic!("{body:?}: {other:?}"),
            Ok(_) => panic!("{body:?}: parsed"),
        }
    }
}

/// The lookup routes, merged with their full paths into the
/// application's router: each answers at its path, a wrong method gets
/// the application's 405 (naming what the route takes), and a path
/// beside them the application's 404.
#[test]
fn the_lookup_routes_answer_at_their_full_paths() {
    let (_runtime, addr) = fan_out_server(crate::settings::Settings::default());
    let answer = exchange(addr, "POST", "/api/v1/lookup", &lookup_of("f1"));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#"{"found":true,"value":"y"}"#), "{answer}");
    let answer = exchange(addr, "GET", "/api/v1/environments/1/scope", "");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let answer = exchange(addr, "GET", "/api/v1/data/1/common", "");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""f1":"y""#), "{answer}");
    let answer = exchange(addr, "GET", "/api/v1/lookup", "");
    assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    assert!(answer.to_lowercase().contains("allow: post"), "{answer}");
    assert!(
        answer.contains("/api/v1/lookup does not take GET"),
        "{answer}"
    );
    let answer = exchange(addr, "POST", "/api/v1/lookups", "{}");
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    assert!(
        answer.contains("no route for POST /api/v1/lookups"),
        "{answer}"
    );
    // The route template the metrics count under is the full path.
    let answer = exchange(addr, "GET", "/metrics", "");
    assert!(
        answer.contains(r#"route="/api/v1/lookup",status="200"}"#),
        "{answer}"
    );
}

#[test]
fn found_lookups_are_counted_and_timed_in_their_series() {
    // The found lookup's series is kept aside after the first (metrics
    // `hot`): every later one must still count and time in it, and other
    // answers in their own.
    let (_runtime, addr) = fan_out_server(crate::settings::Settings::default());
    for _ in 0..3 {
        let answer = exchange(addr, "POST", "/api/v1/lookup", &lookup_of("f1"));
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    let answer = exchange(addr, "POST", "/api/v1/lookup", "{}");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let metrics = exchange(addr, "GET", "/metrics", "");
    let line = |prefix: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in {metrics}"))
            .to_owned()
    };
    let found = r#"hierad_http_requests_total{method="POST",route="/api/v1/lookup",status="200"}"#;
    assert_eq!(line(found), format!("{found} 3"));
    let bad = r#"hierad_http_requests_total{method="POST",route="/api/v1/lookup",status="400"}"#;
    assert_eq!(line(bad), format!("{bad} 1"));
    let timed =
        r#"hierad_http_request_duration_seconds_count{method="POST",route="/api/v1/lookup"}"#;
    assert_eq!(line(timed), format!("{timed} 4"));
}

#[test]
fn a_typed_request_sends_its_key_even_empty_or_its_keys() {
    let one = api::LookupRequest {
        environment: 1,
        keys: api::Keys::one(""),
        ..api::LookupRequest::default()
    };
    let parsed = parse_request(serde_json::to_string(&one).unwrap().as_bytes())
        .expect("an empty key is a key");
    assert_eq!((parsed.request.key.as_str(), parsed.keys), ("", None));
    let several = api::LookupRequest {
        environment: 1,
        keys: api::Keys::Several {
            keys: vec!["a".into(), "b".into()],
        },
        ..api::LookupRequest::default()
    };
    let parsed =
        parse_request(serde_json::to_string(&several).unwrap().as_bytes()).expect("a good request");
    assert_eq!(parsed.keys, Some(vec!["a".to_owned(), "b".to_owned()]));
}
