//! What one principal may do to everyone else's data, and what a stranger
//! learns (docs/security.md): component
//! resource definitions are an admin's, a schema refusal never quotes the
//! refused document, writers have quotas, and `/healthz` and register
//! 404s name nothing a principal may not read.

use crate::binary;
use crate::in_process::InProcess;
use crate::server::{Reply, Served, TestServer, call};

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
    let other = binary::ok(&format!(
        "auth add-token --file {} --role read --env 2 elsewhere",
        auth.display()
    ));
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
    let server = InProcess::empty();
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
    let server = InProcess::start_on(&dir.path().join("h.db"), &["--prune-every", "1s"]);
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

/// `n` bytes of a JSON string's content.
fn pad(n: usize) -> String {
    "x".repeat(n)
}

/// The versions of a document, as the history route lists them.
fn versions(server: &impl Served, doc: &str) -> Vec<u64> {
    let reply = call("GET", &format!("{}{doc}/history", server.url()), None, &[]);
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect()
}

fn put(server: &impl Served, path: &str, body: &str) -> Reply {
    call(
        "PUT",
        &format!("{}{path}", server.url()),
        Some(body),
        &[("content-type", "application/json")],
    )
}

/// A writer could store documents of any size (each costs several times
/// its size in every replica's memory). `--max-document-mib` bounds one
/// document's stored size: a PUT or a key-path edit past it is 413 and
/// writes nothing; without the flag, the default (16 MiB) lets it through.
#[test]
fn a_document_over_the_limit_is_413_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = InProcess::start_on(&dir.path().join("h.db"), &["--max-document-mib", "1"]);
    let doc = "/api/v1/config/environments/1/resources/globals/values";
    let before = versions(&server, doc);
    let big = format!(r#"{{"pad": "{}"}}"#, pad(1024 * 1024));
    let reply = put(&server, doc, &big);
    assert_eq!(reply.status, 413, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["error"], "quota_exceeded", "{body}");
    assert_eq!(body["quota"], "document");
    assert_eq!(body["environment"], 1);
    assert_eq!(body["level"], "");
    assert_eq!(body["resource"], "globals");
    assert_eq!(body["kind"], "values");
    assert_eq!(body["size"], 1024 * 1024 + 10);
    assert_eq!(body["limit"], 1024 * 1024);
    assert_eq!(body["flag"], "--max-document-mib");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("nothing was stored"),
        "{body}"
    );
    assert!(!reply.body.contains("xxxx"), "the document is not quoted");
    assert_eq!(versions(&server, doc), before, "nothing written");

    // A key-path edit grows a document past the limit in a small body.
    let fits = format!(r#"{{"pad": "{}"}}"#, pad(900 * 1024));
    assert_eq!(put(&server, doc, &fits).status, 204);
    let before = versions(&server, doc);
    let reply = put(
        &server,
        &format!("{doc}/keys/more"),
        &format!(r#""{}""#, pad(200 * 1024)),
    );
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert_eq!(reply.json()["quota"], "document");
    assert_eq!(versions(&server, doc), before, "nothing written");
    drop(server);

    // The default limit is --body-limit's: what one request carries fits.
    let server = InProcess::start_on(&dir.path().join("h2.db"), &[]);
    let reply = put(&server, doc, &big);
    assert_eq!(reply.status, 204, "{}", reply.body);
}

/// `--max-environment-mib` bounds the total of an environment's latest
/// documents: an import that would cross it is 413 and writes none of its
/// documents; the same import passes once the limit is raised.
#[test]
fn an_import_past_the_environment_total_is_413_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let import = format!(
        r#"{{"level": "", "documents": {{"astute": {{"a": "{p}"}}, "globals": {{"g": "{p}"}}, "override/plugins": {{"p": "{p}"}}}}}}"#,
        p = pad(800 * 1024)
    );
    let docs = [
        "/api/v1/config/environments/1/resources/astute/values",
        "/api/v1/config/environments/1/resources/globals/values",
        "/api/v1/config/environments/1/resources/override/plugins/values",
    ];
    let mut server = TestServer::start_on(&db, &["--max-environment-mib", "2"]);
    let before: Vec<Vec<u64>> = docs.iter().map(|d| versions(&server, d)).collect();
    let reply = server.post_json("/api/v1/config/environments/1/import", &import);
    assert_eq!(reply.status, 413, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["error"], "quota_exceeded", "{body}");
    assert_eq!(body["quota"], "environment");
    assert_eq!(body["environment"], 1);
    assert_eq!(body["limit"], 2 * 1024 * 1024);
    assert_eq!(body["flag"], "--max-environment-mib");
    assert!(body["total"].as_u64().unwrap() > 2 * 1024 * 1024, "{body}");
    let after: Vec<Vec<u64>> = docs.iter().map(|d| versions(&server, d)).collect();
    assert_eq!(after, before, "the import wrote none of its documents");
    server.stop();

    let server = TestServer::start_on(&db, &["--max-environment-mib", "3"]);
    let reply = server.post_json("/api/v1/config/environments/1/import", &import);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["written"], 3);
}
