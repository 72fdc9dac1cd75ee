//! `hierad migrate`: a whole ConfigDB, history included, copied
//! into another database, verifiably; the copy answers every read as the
//! source does.

use crate::binary;
use crate::server::{TestServer, call};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

fn args(from: &Path, to: &Path, extra: &str) -> String {
    format!(
        "migrate --from {} --to {} {extra}",
        from.display(),
        to.display()
    )
}

fn migrate(from: &Path, to: &Path, extra: &str) -> Output {
    binary::run(&args(from, to, extra))
}

/// The one line a refused copy prints (exit 1, nothing else).
fn refused(from: &Path, to: &Path) -> String {
    binary::refused(&args(from, to, ""))
}

fn send(server: &TestServer, method: &str, path: &str, body: &Value) -> u16 {
    let reply = call(
        method,
        &format!("{}/api/v1/config{path}", server.url),
        Some(&body.to_string()),
        &[("content-type", "application/json")],
    );
    assert!(
        reply.status < 300,
        "{method} {path}: {} {}",
        reply.status,
        reply.body
    );
    reply.status
}

/// Components with a definition's schema, two environments (one deleted),
/// retention, a register, and a history of 23 versions of one document with a deletion
/// marker in it (packed as deltas and keyframes).
fn fill(db: &Path) {
    let server = TestServer::start_on(db, &["--no-sample"]);
    send(
        &server,
        "POST",
        "/components",
        &json!({"name": "fuel", "resource_definitions": [{"name": "globals"}, {"name": "astute"}]}),
    );
    send(
        &server,
        "PUT",
        "/components/fuel/resource_definitions/astute",
        &json!({"schema": {"type": "object", "properties": {"x": {"type": "integer"}}}, "owner": "ops"}),
    );
    send(
        &server,
        "POST",
        "/environments",
        &json!({"id": 1, "components": ["fuel"], "hierarchy_levels": ["nodes"]}),
    );
    send(
        &server,
        "PUT",
        "/environments/1/retention",
        &json!({"keep_versions": 50}),
    );
    let globals = "/environments/1/resources/globals/values";
    let padding = "a line that repeats in every version\n".repeat(40);
    for i in 0..20 {
        send(
            &server,
            "PUT",
            globals,
            &json!({"i": i, "padding": padding, "z": 1, "a": 2}),
        );
    }
    send(&server, "DELETE", globals, &json!(null));
    send(&server, "PUT", globals, &json!({"back": true}));
    send(
        &server,
        "PUT",
        &format!("{globals}/keys/extra"),
        &json!([1, 2.5, "three"]),
    );
    send(
        &server,
        "PUT",
        "/environments/1/nodes/node-1/resources/astute/values",
        &json!({"x": 1}),
    );
    send(
        &server,
        "PUT",
        "/environments/1/nodes/node-1/resources/astute/overrides",
        &json!({"x": 2}),
    );
    send(
        &server,
        "PUT",
        "/environments/1/hierarchy_levels/nodes/register",
        &json!(["node-1", "node-2"]),
    );
    // Two versions of a node's scope.
    for role in ["db", "web"] {
        send(
            &server,
            "PUT",
            "/environments/1/nodes/node-1/scope",
            &json!({"role": role}),
        );
    }
    send(
        &server,
        "POST",
        "/environments",
        &json!({"id": 2, "components": ["fuel"], "hierarchy_levels": []}),
    );
    send(
        &server,
        "PUT",
        "/environments/2/resources/globals/values",
        &json!({"gone": "soon"}),
    );
    send(&server, "DELETE", "/environments/2", &json!(null));
}

/// What a client reads of everything `fill` wrote.
fn everything(server: &TestServer) -> Vec<(String, u16, String)> {
    let globals = "/api/v1/config/environments/1/resources/globals/values";
    let mut paths: Vec<String> = [
        "/api/v1/config/components",
        "/api/v1/config/components/fuel/resource_definitions/astute",
        "/api/v1/config/environments",
        "/api/v1/config/environments?deleted=true",
        "/api/v1/config/environments/1/retention",
        "/api/v1/config/environments/1/hierarchy_levels/nodes/register",
        "/api/v1/config/environments/1/nodes/node-1/resources/astute/values?effective",
        "/api/v1/config/environments/1/nodes/node-1/resources/astute/overrides/history",
        "/api/v1/config/environments/1/nodes/node-1/scope",
        "/api/v1/config/environments/1/nodes/node-1/scope/history",
    ]
    .map(str::to_owned)
    .to_vec();
    paths.push(format!("{globals}/history"));
    paths.push(globals.to_owned());
    for version in 1..=23 {
        paths.push(format!("{globals}?version={version}"));
    }
    paths
        .into_iter()
        .map(|path| {
            let reply = call("GET", &format!("{}{path}", server.url), None, &[]);
            (path, reply.status, reply.body)
        })
        .collect()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The two checksum lines' values.
fn checksums(stdout: &str) -> (String, String) {
    let value = |prefix: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in {stdout}"))
            .trim()
            .to_owned()
    };
    (
        value("checksum of the source"),
        value("checksum of the copy"),
    )
}

#[test]
fn a_copy_holds_everything_and_answers_as_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let (source, copy) = (dir.path().join("source.db"), dir.path().join("copy.db"));
    fill(&source);
    let out = migrate(&source, &copy, "");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    eprintln!("{stdout}");
    let (a, b) = checksums(&stdout);
    assert_eq!(a, b);
    assert_eq!(a.len(), 64, "{a}");
    assert!(stdout.contains("the copy matches the source"), "{stdout}");
    for (name, count) in [
        ("components", 1),
        ("resource definitions", 2),
        ("environments", 2),
        ("  of which deleted", 1),
        ("registers", 1),
        ("register values", 2),
        ("documents", 4),
        ("versions", 26),
        ("  of which deletion markers", 1),
        ("node scope versions", 2),
        ("tags", 0),
    ] {
        let line = format!("{name:<28} {count:>12} {count:>12}");
        assert!(stdout.lines().any(|l| l == line), "{line:?} in\n{stdout}");
    }
    // Every read answers the same on a server over the copy.
    let on_source = everything(&TestServer::start_on(&source, &["--no-sample"]));
    let on_copy = everything(&TestServer::start_on(&copy, &["--no-sample"]));
    assert!(
        on_source.iter().all(|(_, status, _)| *status == 200),
        "{on_source:?}"
    );
    for (s, c) in on_source.iter().zip(&on_copy) {
        assert_eq!(s, c);
    }
    // A deleted environment comes back with its documents.
    let server = TestServer::start_on(&copy, &["--no-sample"]);
    send(&server, "POST", "/environments/2/restore", &json!(null));
    let doc = call(
        "GET",
        &format!(
            "{}/api/v1/config/environments/2/resources/globals/values",
            server.url
        ),
        None,
        &[],
    );
    assert_eq!(doc.json(), json!({"gone": "soon"}));
    drop(server);
    // And back the other way, into a third file: the same checksum.
    let back = dir.path().join("back.db");
    let out = migrate(&source, &back, "");
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(checksums(&text(&out).0).0, a);
}

#[test]
fn a_target_that_is_not_empty_is_refused_unless_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (source, target) = (dir.path().join("source.db"), dir.path().join("target.db"));
    fill(&source);
    let listing = |server: &TestServer| {
        ["components", "environments"].map(|what| {
            call(
                "GET",
                &format!("{}/api/v1/config/{what}", server.url),
                None,
                &[],
            )
            .body
        })
    };
    let before = listing(&TestServer::start_on(&target, &[]));
    let refusal = refused(&source, &target);
    assert!(
        refusal.contains("is not empty")
            && refusal.contains("--replace")
            && refusal.contains("nothing was written"),
        "{refusal}"
    );
    // The target still holds its sample, as it was.
    let after = listing(&TestServer::start_on(&target, &["--no-sample"]));
    assert_eq!(before, after);
    assert!(after[1].contains("\"id\":1"), "{after:?}");
    let replaced = migrate(&source, &target, "--replace");
    let (stdout, stderr) = text(&replaced);
    assert!(replaced.status.success(), "{stdout}{stderr}");
    let (a, b) = checksums(&stdout);
    assert_eq!(a, b);
    // Mistakes name themselves.
    let missing = refused(&dir.path().join("nowhere.db"), &target);
    assert!(missing.contains("no database at"), "{missing}");
    assert!(!dir.path().join("nowhere.db").exists());
    let same = refused(&source, &source);
    assert!(same.contains("the same database"), "{same}");
}

#[test]
fn a_copy_goes_to_postgres_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let (source, back) = (dir.path().join("source.db"), dir.path().join("back.db"));
    fill(&source);
    let pg = crate::pg::fresh_database();
    let to_pg = binary::ok(&["migrate", "--from", source.to_str().unwrap(), "--to", &pg]);
    let (a, b) = checksums(&to_pg);
    assert_eq!(a, b, "{to_pg}");
    let from_pg = binary::ok(&["migrate", "--from", &pg, "--to", back.to_str().unwrap()]);
    let (c, d) = checksums(&from_pg);
    assert_eq!(
        (c.as_str(), d.as_str()),
        (a.as_str(), a.as_str()),
        "{from_pg}"
    );
    // A server on PostgreSQL, and one on the copy brought back, answer
    // every read as the source does.
    let on_source = everything(&TestServer::start_on(&source, &["--no-sample"]));
    let on_pg = everything(&TestServer::start_on(Path::new(&pg), &["--no-sample"]));
    let on_back = everything(&TestServer::start_on(&back, &["--no-sample"]));
    for ((s, p), b) in on_source.iter().zip(&on_pg).zip(&on_back) {
        assert_eq!(s, p);
        assert_eq!(s, b);
    }
    // PostgreSQL refuses a second copy too.
    let refusal = binary::refused(&["migrate", "--from", source.to_str().unwrap(), "--to", &pg]);
    assert!(refusal.contains("is not empty"), "{refusal}");
}
