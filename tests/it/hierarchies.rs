//! Hierarchies sent by reference (issue 15 goal 3), over the real server:
//! `POST /api/v1/hierarchies` answers an id, and a lookup naming it by
//! `hierarchy_id` answers exactly as the same lookup with the hierarchy
//! inline; an id this server does not hold is a 409 the client mends by
//! registering again.

use crate::server::{Reply, TestServer, call};
use serde_json::{Value, json};

/// The sample's hierarchy (data/hiera.yaml), as the shim sends it: the
/// level templates as written.
const SAMPLE_LEVELS: [&str; 15] = [
    "override/node/%{::fqdn}",
    "override/class/%{calling_class}",
    "override/module/%{calling_module}",
    "override/plugins",
    "override/common",
    "override/configuration/%{::fqdn}",
    "override/configuration/role",
    "override/configuration/cluster",
    "override/configuration/default_route",
    "class/%{calling_class}",
    "module/%{calling_module}",
    "deleted_nodes",
    "nodes",
    "globals%{disable_globals_yaml}",
    "astute",
];

fn post(server: &TestServer, path: &str, body: &str) -> Reply {
    call(
        "POST",
        &format!("{}{path}", server.url),
        Some(body),
        &[("content-type", "application/json")],
    )
}

fn register(server: &TestServer, body: &Value) -> Reply {
    post(server, "/api/v1/hierarchies", &body.to_string())
}

/// The id a registration of `levels` answers (checking its form).
fn id_of(server: &TestServer, levels: &[&str]) -> String {
    let r = register(server, &json!({ "hierarchy": levels }));
    assert_eq!(r.status, 200, "{}", r.body);
    let id = r.json()["id"].as_str().expect("an id").to_owned();
    assert!(
        id.len() == 32
            && id
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{id}"
    );
    id
}

fn lookup(server: &TestServer, request: &Value) -> Reply {
    post(server, "/api/v1/lookup", &request.to_string())
}

#[test]
fn a_registered_hierarchy_answers_as_the_inline_one() {
    let server = TestServer::with_sample();
    let before = lookup(&server, &json!({"environment": 1, "key": "uid"}));
    let id = id_of(&server, &SAMPLE_LEVELS);
    assert_eq!(
        id_of(&server, &SAMPLE_LEVELS),
        id,
        "the same list, the same id"
    );
    assert_ne!(id_of(&server, &SAMPLE_LEVELS[1..]), id);
    assert_ne!(id_of(&server, &["override/plugins", "astute"]), id);
    // A registration is no data write: its answer carries the generation
    // a read would, and no later answer carries a newer one.
    let again = register(&server, &json!({ "hierarchy": SAMPLE_LEVELS }));
    assert_eq!(again.generation, before.generation);
    let node = json!({"::fqdn": "node-126.test.domain.local"});
    let cases = [
        json!({"key": "keystone_auth_uri", "scope": node}),
        json!({"key": "nova", "resolution": "hash", "scope": node}),
        json!({"key": "dns_nameservers", "resolution": "array", "scope": node}),
        json!({"key": "configuration", "resolution": {"behavior": "deeper"}, "scope": node}),
        json!({"key": "uid", "scope": node, "explain": true}),
        json!({"key": "nova", "resolution": "hash", "scope": node, "explain": true}),
        json!({"key": "no_such_key", "scope": node, "default": "d"}),
        json!({"key": "no_such_key", "scope": node, "explain": true}),
        json!({"keys": ["uid", "nope", "nova.db_password"], "scope": node}),
        json!({"key": "uid", "order_override": "astute", "scope": {}, "explain": true}),
        // Hiera's own error: the same 422 either way.
        json!({"key": "nova", "resolution": "array", "scope": node}),
    ];
    for case in cases {
        let mut inline = case.clone();
        inline["environment"] = json!(1);
        let mut by_id = inline.clone();
        inline["hierarchy"] = json!(SAMPLE_LEVELS);
        by_id["hierarchy_id"] = json!(id);
        let (a, b) = (lookup(&server, &inline), lookup(&server, &by_id));
        assert!(a.status == 200 || a.status == 422, "{case}: {}", a.body);
        assert_eq!((a.status, &a.body), (b.status, &b.body), "{case}");
        // Not vacuous: the hierarchy is walked, not the environment's own.
        if case.get("explain").is_some() && case["scope"] == node {
            let steps = b.json()["explain"].as_array().unwrap().clone();
            assert!(
                steps
                    .iter()
                    .any(|s| s["source"] == "override/node/node-126.test.domain.local"),
                "{case}: {steps:?}"
            );
        }
    }
    // A list of other levels answers otherwise: ids are not all one.
    let astute_only = id_of(&server, &["astute"]);
    let only = lookup(
        &server,
        &json!({"environment": 1, "key": "uid", "hierarchy_id": astute_only, "explain": true}),
    );
    let steps = only.json()["explain"].as_array().unwrap().clone();
    assert!(steps.iter().all(|s| s["source"] == "astute"), "{steps:?}");
}

#[test]
fn unknown_and_malformed_ids_are_refused() {
    let server = TestServer::with_sample();
    let unknown = "0123456789abcdef0123456789abcdef";
    let r = lookup(
        &server,
        &json!({"environment": 1, "key": "uid", "hierarchy_id": unknown}),
    );
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(r.json()["error"], "conflict");
    let message = r.json()["message"].as_str().unwrap().to_owned();
    for part in [
        unknown,
        "not registered on this server",
        "POST /api/v1/hierarchies",
    ] {
        assert!(message.contains(part), "{message}");
    }
    // Once registered, the same request answers.
    let id = id_of(&server, &["astute"]);
    let r = lookup(
        &server,
        &json!({"environment": 1, "key": "uid", "hierarchy_id": id}),
    );
    assert_eq!(
        r.json(),
        json!({"found": true, "value": "126"}),
        "{}",
        r.body
    );

    let bad_lookups = [
        (
            json!({"environment": 1, "key": "uid", "hierarchy_id": id, "hierarchy": ["astute"]}),
            "give either hierarchy or hierarchy_id",
        ),
        (
            json!({"environment": 1, "key": "uid", "hierarchy_id": id.to_uppercase()}),
            "hierarchy_id is the id POST /api/v1/hierarchies answered",
        ),
        (
            json!({"environment": 1, "key": "uid", "hierarchy_id": &id[1..]}),
            "hierarchy_id is the id POST /api/v1/hierarchies answered",
        ),
        (
            json!({"environment": 1, "key": "uid", "hierarchy_id": 12}),
            "hierarchy_id is the id POST /api/v1/hierarchies answered",
        ),
    ];
    for (body, says) in bad_lookups {
        let r = lookup(&server, &body);
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!(r.json()["error"], "bad_request");
        let message = r.json()["message"].as_str().unwrap().to_owned();
        assert!(message.starts_with(says), "{body}: {message}");
    }
    let bad_registrations = [
        (
            r#"{"hierarchy": "astute"}"#,
            "hierarchy is a list of datasource names",
        ),
        (
            r#"{"hierarchy": ["astute", 1]}"#,
            "hierarchy is a list of datasource names",
        ),
        (
            r#"{"hierarchy": ["astute"], "key": "uid"}"#,
            "unknown field \"key\"",
        ),
        (r"{}", "the hierarchy registration has no hierarchy"),
        (r#"{"hierarchy": ["#, "malformed JSON"),
    ];
    for (body, says) in bad_registrations {
        let r = post(&server, "/api/v1/hierarchies", body);
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        let message = r.json()["message"].as_str().unwrap().to_owned();
        assert!(message.starts_with(says), "{body}: {message}");
    }
    // The route takes POST only.
    let r = call(
        "GET",
        &format!("{}/api/v1/hierarchies", server.url),
        None,
        &[],
    );
    assert_eq!(r.status, 405, "{}", r.body);
}

/// Ids are derived from the levels alone: another process (a restarted
/// server, another replica) gives the same list the same id, and answers
/// 409 to it until it is registered there.
#[test]
fn ids_are_the_same_in_every_process() {
    let (first, second) = (TestServer::with_sample(), TestServer::with_sample());
    let id = id_of(&first, &SAMPLE_LEVELS);
    let request = json!({"environment": 1, "key": "uid", "hierarchy_id": id});
    assert_eq!(lookup(&first, &request).status, 200);
    assert_eq!(lookup(&second, &request).status, 409);
    assert_eq!(id_of(&second, &SAMPLE_LEVELS), id);
    assert_eq!(
        lookup(&second, &request).body,
        lookup(&first, &request).body
    );
}

/// A lookup body of exactly `len` bytes (its scope padded), of a key the
/// sample holds.
fn lookup_of_len(len: usize) -> String {
    let body = |pad: &str| {
        json!({ "environment": 1, "key": "fqdn", "hierarchy": ["astute"], "scope": { "pad": pad } })
            .to_string()
    };
    let body = body(&"x".repeat(len - body("").len()));
    assert_eq!(body.len(), len);
    body
}

/// Lookups and registrations are parsed whole into trees many times their
/// size (a 16 MiB registration of empty levels peaked at 1.2 GB RSS), so
/// their bodies have a limit of their own, `--lookup-body-limit`, below
/// the one for documents: over it, 413 naming the flag, and the server's
/// memory untouched; at it, answered. A document over it is still taken.
#[test]
fn lookup_bodies_have_a_limit_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_on(
        &dir.path().join("hierad.db"),
        &["--lookup-body-limit", "4096"],
    );
    let at = post(&server, "/api/v1/lookup", &lookup_of_len(4096));
    assert_eq!(at.status, 200, "{}", at.body);
    let refused = |r: Reply, limit: &str, flag: bool| {
        assert_eq!(r.status, 413, "{}", r.body);
        assert_eq!(r.json()["error"], "payload_too_large", "{}", r.body);
        let message = r.json()["message"].as_str().unwrap().to_owned();
        assert!(
            message.contains(&format!("limit of {limit} bytes")),
            "{message}"
        );
        assert_eq!(message.contains("--lookup-body-limit"), flag, "{message}");
    };
    refused(
        post(&server, "/api/v1/lookup", &lookup_of_len(4097)),
        "4096",
        true,
    );
    // A registration of many levels: refused over the limit, taken at it.
    let levels = |n: usize| json!({ "hierarchy": vec!["level"; n] }).to_string();
    let fits = (1..)
        .take_while(|n| levels(*n).len() <= 4096)
        .last()
        .unwrap();
    assert_eq!(
        register(&server, &json!({ "hierarchy": vec!["level"; fits] })).status,
        200
    );
    refused(
        post(&server, "/api/v1/hierarchies", &levels(fits + 1)),
        "4096",
        true,
    );
    // Documents keep --body-limit (16 MiB).
    let big = json!({ "blob": "y".repeat(64 * 1024) }).to_string();
    let put = call(
        "PUT",
        &format!(
            "{}/api/v1/config/environments/1/resources/astute/values",
            server.url
        ),
        Some(&big),
        &[("content-type", "application/json")],
    );
    assert_eq!(put.status, 204, "{}", put.body);

    // A --body-limit below the lookup limit is the one that applies, and
    // the one named.
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &["--body-limit", "2048"]);
    assert_eq!(
        post(&server, "/api/v1/lookup", &lookup_of_len(2048)).status,
        200
    );
    refused(
        post(&server, "/api/v1/lookup", &lookup_of_len(2049)),
        "2048",
        false,
    );
}

/// Bodies over 1 MiB are handled one at a time (the server's memory then
/// holds one big body's tree, not one per client): sent at once, every
/// one is still written, none waits on another forever.
#[test]
fn big_bodies_sent_at_once_are_all_written() {
    let server = TestServer::with_sample();
    let put = |n: usize| {
        let body = json!({ "blob": format!("{n}:{}", "y".repeat(3 * 1024 * 1024)) }).to_string();
        call(
            "PUT",
            &format!(
                "{}/api/v1/config/environments/1/resources/astute/values",
                server.url
            ),
            Some(&body),
            &[("content-type", "application/json")],
        )
    };
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let all: Vec<_> = (0..4).map(|n| s.spawn(move || put(n).status)).collect();
        all.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(statuses, [204; 4]);
    let history = call(
        "GET",
        &format!(
            "{}/api/v1/config/environments/1/resources/astute/values/history",
            server.url
        ),
        None,
        &[],
    );
    assert_eq!(history.status, 200, "{}", history.body);
    let big = history
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["size"].as_u64() > Some(3 << 20))
        .count();
    assert_eq!(big, 4, "{}", history.body);
}

/// A body limit under 1 KiB (no lookup fits) is refused at start, naming
/// the flag, before anything is opened.
#[test]
fn body_limits_under_a_kibibyte_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--lookup-body-limit", "--body-limit"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hierad"))
            .args(["serve", "--listen", "127.0.0.1:0", "--db"])
            .arg(dir.path().join("hierad.db"))
            .args([flag, "0"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag}: {stderr}");
        assert!(
            stderr.contains(&format!("invalid value '0' for '{flag}")),
            "{stderr}"
        );
        assert!(
            !dir.path().join("hierad.db").exists(),
            "{flag}: a database was made"
        );
    }
}
