//! What one principal may do to everyone else's data, and what a stranger
//! learns (issue "Attacks that still work", items 6, 7 and 10): component
//! resource definitions are an admin's, a schema refusal never quotes the
//! refused document, writers have quotas, and `/healthz` and register
//! 404s name nothing a principal may not read.

use crate::binary;
use crate::server::{Reply, TestServer, call};

/// A server over the sample with an auth file holding an admin, an
/// unlimited writer and a writer limited to environment 1; with the
/// `Authorization` header of each.
struct Authed {
    server: TestServer,
    admin: String,
    writer: String,
    limited: String,
    _dir: tempfile::TempDir,
}

impl Authed {
    fn start(extra: &[&str]) -> Authed {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.toml");
        let f = file.to_str().unwrap();
        let token = |role: &str, name: &str, env: &[&str]| {
            let mut args = vec!["auth", "add-token", "--file", f, "--role", role];
            args.extend_from_slice(env);
            args.push(name);
            format!("Bearer {}", binary::ok(&args).trim())
        };
        let admin = token("admin", "root", &[]);
        let writer = token("write", "deployer", &[]);
        let limited = token("write", "env1", &["--env", "1"]);
        let mut args = vec!["--auth", f];
        args.extend_from_slice(extra);
        let server = TestServer::start_on(&dir.path().join("hierad.db"), &args);
        Authed {
            server,
            admin,
            writer,
            limited,
            _dir: dir,
        }
    }

    fn send(&self, who: &str, method: &str, path: &str, body: Option<&str>) -> Reply {
        call(
            method,
            &format!("{}{path}", self.server.url),
            body,
            &[("authorization", who), ("content-type", "application/json")],
        )
    }
}

const DEFINITION: &str =
    "/api/v1/config/components/fuel/resource_definitions/override/configuration/cluster";

/// A definition's content (its schema) checks writes in every environment
/// using the component, so changing it is an admin's: an unlimited writer
/// could set `{"schema": {"not": {}}}` and block the resource everywhere.
#[test]
fn only_an_admin_may_change_a_resource_definition() {
    let authed = Authed::start(&[]);
    let block = r#"{"schema": {"not": {}}}"#;
    for who in [&authed.writer, &authed.limited] {
        let reply = authed.send(who, "PUT", DEFINITION, Some(block));
        assert_eq!(reply.status, 403, "{}", reply.body);
        assert!(reply.body.contains("needs admin"), "{}", reply.body);
    }
    // Reading it is still a reader's; nothing changed.
    let reply = authed.send(&authed.writer, "GET", DEFINITION, None);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(!reply.body.contains("\"not\""), "{}", reply.body);
    let reply = authed.send(&authed.admin, "PUT", DEFINITION, Some(block));
    assert_eq!(reply.status, 200, "{}", reply.body);
}

/// A schema refusal names the failing path and rule, never the value:
/// the refused document may hold a password, and the refusal reaches the
/// writer's terminal and the logs.
#[test]
fn a_schema_refusal_does_not_quote_the_document() {
    let authed = Authed::start(&[]);
    let secret = "s3cret-pa55word-never-shown";
    let path = "/api/v1/config/environments/1/resources/override/configuration/cluster/values";
    for body in [
        format!(r#"{{"configuration_options": {{"create": "{secret}"}}}}"#),
        format!(r#"{{"defaults": {{"file": "{secret}"}}}}"#),
    ] {
        let reply = authed.send(&authed.writer, "PUT", path, Some(&body));
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert!(reply.body.contains("(rule /"), "{}", reply.body);
        assert!(!reply.body.contains(secret), "{}", reply.body);
    }
    // A schema refusing everything: the whole document was quoted.
    let reply = authed.send(
        &authed.admin,
        "PUT",
        DEFINITION,
        Some(r#"{"schema": {"not": {}}}"#),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = format!(r#"{{"password": "{secret}"}}"#);
    let reply = authed.send(&authed.writer, "PUT", path, Some(&body));
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(!reply.body.contains(secret), "{}", reply.body);
    assert!(reply.body.contains("at /: "), "{}", reply.body);
}

/// `/healthz` needs no credentials (a balancer's probe), and it named the
/// unreadable documents, node names included, to anyone. It says how
/// many; only a request that authenticates is told which, and only in
/// the environments its principal may use.
#[test]
fn healthz_names_unreadable_documents_only_to_who_may_read_them() {
    let mut authed = Authed::start(&[]);
    let node = "/api/v1/config/environments/1/nodes/secret-node.example/resources/globals/values";
    let reply = authed.send(&authed.admin, "PUT", node, Some(r#"{"k": 1}"#));
    assert_eq!(reply.status, 204, "{}", reply.body);
    assert!(authed.server.stop().success());
    let db = authed._dir.path().join("hierad.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let changed = conn
        .execute(
            "UPDATE documents SET content = '{\"k\":' WHERE level_value = 'secret-node.example'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let auth = authed._dir.path().join("auth.toml");
    let other = binary::ok(&[
        "auth",
        "add-token",
        "--file",
        auth.to_str().unwrap(),
        "--role",
        "read",
        "--env",
        "2",
        "elsewhere",
    ]);
    let other = format!("Bearer {}", other.trim());
    authed.server = TestServer::start_on(&db, &["--auth", auth.to_str().unwrap()]);
    let health = |who: Option<&str>| {
        let headers: Vec<(&str, &str)> = who.map(|w| ("authorization", w)).into_iter().collect();
        let reply = call(
            "GET",
            &format!("{}/healthz", authed.server.url),
            None,
            &headers,
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.body
    };
    let stranger = health(None);
    assert!(
        stranger.starts_with("degraded: 1 unreadable document(s)\n"),
        "{stranger}"
    );
    assert!(!stranger.contains("secret-node"), "{stranger}");
    assert!(!health(Some(&other)).contains("secret-node"));
    for who in [&authed.admin, &authed.limited] {
        let named = health(Some(who));
        assert!(
            named.contains("unreadable: version 1 of the values of resource \"globals\""),
            "{named}"
        );
        assert!(named.contains("secret-node.example"), "{named}");
    }
    // Wrong credentials are refused, as on any route.
    assert_eq!(
        call(
            "GET",
            &format!("{}/healthz", authed.server.url),
            None,
            &[("authorization", "Bearer nope")]
        )
        .status,
        401
    );
}

/// A 300-byte resource name was accepted, then `hierad export` failed
/// halfway on it ("File name too long"). It is refused at write time.
#[test]
fn a_resource_name_export_cannot_write_is_refused() {
    let server = TestServer::empty();
    let long = "r".repeat(300);
    let reply = server.post_json(
        "/api/v1/config/components",
        &format!(r#"{{"name": "app", "resource_definitions": [{{"name": "override/{long}"}}]}}"#),
    );
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(
        reply.body.contains("longer than 250 bytes"),
        "{}",
        reply.body
    );
    let reply = server.post_json(
        "/api/v1/config/components",
        &format!(
            r#"{{"name": "app", "resource_definitions": [{{"name": "{}"}}]}}"#,
            "r".repeat(250)
        ),
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
}

/// History kept every version by default, for ever. The server's default
/// retention keeps the last 100 versions of each document; the pruned
/// ones go, the kept ones still read.
#[test]
fn the_default_retention_keeps_the_last_100_versions() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_on(&dir.path().join("h.db"), &["--prune-every", "1s"]);
    let get = |path: &str| call("GET", &format!("{}{path}", server.url), None, &[]);
    assert_eq!(
        get("/api/v1/config/environments/1/retention").json()["effective"],
        serde_json::json!({"keep_versions": 100, "keep_days": 0})
    );
    let doc = "/api/v1/config/environments/1/resources/globals/values";
    // Version 1 is the sample's; 101 more.
    for n in 0..101 {
        let reply = call(
            "PUT",
            &format!("{}{doc}", server.url),
            Some(&format!(r#"{{"n": {n}, "pad": "{}"}}"#, "x".repeat(100))),
            &[("content-type", "application/json")],
        );
        assert_eq!(reply.status, 204, "{}", reply.body);
    }
    let start = std::time::Instant::now();
    loop {
        let history = get(&format!("{doc}/history")).json();
        let versions: Vec<u64> = history
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["version"].as_u64().unwrap())
            .collect();
        if versions.len() == 100 {
            assert_eq!(versions.first(), Some(&3), "{versions:?}");
            break;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "not pruned: {} versions",
            versions.len()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(get(&format!("{doc}?version=2")).status, 404);
    let oldest = get(&format!("{doc}?version=3"));
    assert_eq!(oldest.status, 200, "{}", oldest.body);
    assert!(oldest.body.contains(r#""n":1"#), "{}", oldest.body);
}
