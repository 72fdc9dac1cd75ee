//! Hierarchies sent by reference (docs/api.md), over the server (in process):
//! `POST /api/v1/hierarchies` answers an id, and a lookup naming it by
//! `hierarchy_id` answers exactly as the same lookup with the hierarchy
//! inline; an id this server does not hold is a 409 the client mends by
//! registering again.

use crate::in_process::InProcess;
use crate::server::{Reply, Served, call};
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

fn register(server: &impl Served, body: &Value) -> Reply {
    server.post_json("/api/v1/hierarchies", &body.to_string())
}

/// The id a registration of `levels` answers (checking its form).
fn id_of(server: &impl Served, levels: &[&str]) -> String {
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

fn lookup(server: &impl Served, request: &Value) -> Reply {
    server.post_json("/api/v1/lookup", &request.to_string())
}

#[test]
fn a_registered_hierarchy_answers_as_the_inline_one() {
    let server = InProcess::with_sample();
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
fn an_unknown_id_is_a_conflict_until_it_is_registered() {
    let server = InProcess::with_sample();
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
}

#[test]
fn a_malformed_lookup_by_id_is_refused_saying_why() {
    let server = InProcess::with_sample();
    let id = id_of(&server, &["astute"]);
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
}

/// A registration is a POST of a list of datasource names.
#[test]
fn a_malformed_registration_is_refused_saying_why() {
    let server = InProcess::with_sample();
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
        let r = server.post_json("/api/v1/hierarchies", body);
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
    let (first, second) = (InProcess::with_sample(), InProcess::with_sample());
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
