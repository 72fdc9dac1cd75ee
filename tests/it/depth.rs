//! No write may store a document the server cannot read
//! back. Every way in refuses documents nesting past the limit (64 levels)
//! with a 400 or a CLI error naming it, before anything is written; what
//! is accepted, however its stored form nests, survives a restart.

use crate::server::{Reply, TestServer, call};
use std::process::Command;

const DOC: &str = "/api/v1/config/environments/5/resources/a/values";
const LIMIT_MESSAGE: &str = "would nest more than 64 levels";

fn send(server: &TestServer, method: &str, path: &str, body: &str, content_type: &str) -> Reply {
    call(
        method,
        &format!("{}{path}", server.url),
        Some(body),
        &[("content-type", content_type)],
    )
}

fn json(server: &TestServer, method: &str, path: &str, body: &str) -> Reply {
    send(server, method, path, body, "application/json")
}

fn get(server: &TestServer, path: &str) -> Reply {
    call("GET", &format!("{}{path}", server.url), None, &[])
}

/// Environment 5, levels [nodes], component "app" defining `a`.
fn setup(server: &TestServer) {
    let r = json(
        server,
        "POST",
        "/api/v1/config/components",
        r#"{"name": "app", "resource_definitions": [{"name": "a"}]}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let r = json(
        server,
        "POST",
        "/api/v1/config/environments",
        r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
}

fn brackets(n: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(n), "]".repeat(n))
}

/// YAML Hashes with an Integer key, `levels` deep (block style), a Symbol
/// at the bottom: three JSON levels each in the stored form.
fn int_keyed_yaml(levels: usize) -> String {
    let mut yaml = String::from("a:\n");
    for level in 1..levels {
        yaml.push_str(&" ".repeat(level));
        yaml.push_str(if level + 1 == levels {
            "1: :s\n"
        } else {
            "1:\n"
        });
    }
    yaml
}

fn refused(r: &Reply) {
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("64 levels"), "{}", r.body);
}

#[test]
fn every_way_in_refuses_too_deep_documents_and_accepted_ones_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut server = TestServer::start_on(&db, &["--no-sample"]);
    setup(&server);
    assert_eq!(json(&server, "PUT", DOC, r#"{"kept": 1}"#).status, 204);
    // Documents once too deep to answer: YAML 127 deep, JSON 126 arrays around
    // a tagged float, Integer-keyed YAML Hashes, deep JSON of any depth.
    let yaml = format!("a: {}", brackets(127, ""));
    refused(&send(&server, "PUT", DOC, &yaml, "application/yaml"));
    let r = json(
        &server,
        "PUT",
        DOC,
        &format!("{{\"a\":{}}}", brackets(126, "1e400")),
    );
    refused(&r);
    assert!(r.body.contains(LIMIT_MESSAGE), "{}", r.body);
    refused(&send(
        &server,
        "PUT",
        DOC,
        &int_keyed_yaml(65),
        "application/yaml",
    ));
    refused(&json(&server, "PUT", DOC, &brackets(100_000, "")));
    // A key path counts: a.b.c puts the body three levels down.
    let key = format!("{DOC}/keys/a.b.c");
    refused(&json(&server, "PUT", &key, &brackets(62, "")));
    let import = format!(r#"{{"documents": {{"a": {{"x": {}}}}}}}"#, brackets(64, ""));
    refused(&json(
        &server,
        "POST",
        "/api/v1/config/environments/5/import",
        &import,
    ));
    let r = get(&server, &format!("{DOC}/history"));
    assert_eq!(
        r.json().as_array().unwrap().len(),
        1,
        "nothing written: {}",
        r.body
    );

    // At the limit, the deepest stored form (191 JSON levels) is accepted.
    let deepest = int_keyed_yaml(64);
    assert_eq!(
        send(&server, "PUT", DOC, &deepest, "application/yaml").status,
        204
    );
    let stored = get(&server, DOC).body;
    assert_eq!(json(&server, "PUT", &key, &brackets(61, "")).status, 204);
    let keyed = get(&server, &format!("{DOC}/keys/a.b.c")).body;
    assert_eq!(keyed, brackets(61, ""));
    assert!(server.stop().success());

    let server = TestServer::start_on(&db, &["--no-sample"]);
    assert_eq!(get(&server, &format!("{DOC}/keys/a.b.c")).body, keyed);
    let r = json(&server, "POST", &format!("{DOC}/restore?version=2"), "");
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(get(&server, DOC).body, stored);
}

#[test]
fn the_cli_import_refuses_a_too_deep_file_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("ok.yaml"), "a: 1\n").unwrap();
    std::fs::write(
        tree.join("deep.yaml"),
        format!("a: {}\n", brackets(200, "")),
    )
    .unwrap();
    let db = dir.path().join("h.db");
    let out = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .arg("import")
        .arg(&tree)
        .args(["--env", "7", "--db"])
        .arg(&db)
        .env_remove("HIERAD_SERVER")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("deep.yaml"), "{stderr}");
    assert!(
        stderr.contains("the values of resource \"deep\" at the root of environment 7 would nest more than 64 levels"),
        "{stderr}"
    );
    // Nothing written, not even the environment.
    let out = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .args(["config", "get", "--env", "7", "--resource", "ok", "--db"])
        .arg(&db)
        .env_remove("HIERAD_SERVER")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("environment 7 does not exist"), "{stderr}");
}

/// serde_json's private number key is an ordinary key
/// in a document body and in a lookup's values.
#[test]
fn the_number_token_is_an_ordinary_key_on_every_way_in() {
    let server = TestServer::empty();
    setup(&server);
    let doc = r#"{"a":{"$serde_json::private::Number":"xyz"}}"#;
    assert_eq!(json(&server, "PUT", DOC, doc).status, 204);
    assert_eq!(get(&server, DOC).body, doc);
    let r = json(
        &server,
        "POST",
        "/api/v1/lookup",
        r#"{"environment": 5, "key": "nope", "hierarchy": ["a"], "default": {"$serde_json::private::Number":"12"}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body.contains(r#"{"$serde_json::private::Number":"12"}"#),
        "{}",
        r.body
    );
}

// Defence in depth: a stored document that cannot be read no longer
// stops the server. It starts, serves everything else, names the
// document in /healthz (200, degraded) and in a metric, answers 500 only
// for requests that need it, and a write replaces it.

/// A server over a database whose version 1 of resource "a" (at the
/// root of environment 5) is not valid JSON; resource "b" at nodes=n1
/// holds {"k": "from b"}.
fn with_an_unreadable_document() -> (tempfile::TempDir, TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut server = TestServer::start_on(&db, &["--no-sample"]);
    let r = json(
        &server,
        "POST",
        "/api/v1/config/components",
        r#"{"name": "app", "resource_definitions": [{"name": "a"}, {"name": "b"}]}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let r = json(
        &server,
        "POST",
        "/api/v1/config/environments",
        r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let b = "/api/v1/config/environments/5/nodes/n1/resources/b/values";
    assert_eq!(
        json(&server, "PUT", DOC, r#"{"k": "secret-a"}"#).status,
        204
    );
    assert_eq!(json(&server, "PUT", b, r#"{"k": "from b"}"#).status, 204);
    assert!(server.stop().success());

    let conn = rusqlite::Connection::open(&db).unwrap();
    let changed = conn
        .execute(
            r#"UPDATE documents SET content = '{"k": "secret-a"' WHERE resource = 'a'"#,
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);

    let server = TestServer::start_on(&db, &["--no-sample"]);
    (dir, server)
}

/// A lookup of "k" at nodes=n1 of environment 5 over `hierarchy` (JSON).
fn lookup_k(server: &TestServer, hierarchy: &str) -> Reply {
    json(
        server,
        "POST",
        "/api/v1/lookup",
        &format!(
            r#"{{"environment": 5, "key": "k", "level": "nodes=n1", "hierarchy": {hierarchy}}}"#
        ),
    )
}

#[test]
fn an_unreadable_document_is_named_in_healthz_and_a_metric() {
    let (_dir, server) = with_an_unreadable_document();
    let health = get(&server, "/healthz");
    assert_eq!(health.status, 200);
    assert!(
        health
            .body
            .starts_with("degraded: 1 unreadable document(s)\n"),
        "{}",
        health.body
    );
    assert!(
        health.body.contains("version 1 of the values of resource \"a\" at the root of environment 5: it is not valid wire JSON"),
        "{}",
        health.body
    );
    assert!(!health.body.contains("secret"), "{}", health.body);
    let metrics = get(&server, "/metrics").body;
    assert!(
        metrics.contains("hierad_unreadable_documents 1"),
        "{metrics}"
    );
}

#[test]
fn only_what_needs_an_unreadable_document_fails() {
    let (_dir, server) = with_an_unreadable_document();
    let b = "/api/v1/config/environments/5/nodes/n1/resources/b/values";
    let lookup = |hierarchy: &str| lookup_k(&server, hierarchy);
    assert_eq!(get(&server, b).body, r#"{"k":"from b"}"#);
    let r = lookup(r#"["b"]"#);
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, r#"{"found":true,"value":"from b"}"#)
    );
    assert_eq!(lookup(r#"["a", "b"]"#).status, 500);
    let r = get(&server, DOC);
    assert_eq!(r.status, 500, "{}", r.body);
    assert!(!r.body.contains("secret"), "{}", r.body);
}

#[test]
fn a_write_replaces_an_unreadable_document() {
    let (_dir, server) = with_an_unreadable_document();
    let lookup = |hierarchy: &str| lookup_k(&server, hierarchy);
    assert_eq!(json(&server, "PUT", DOC, r#"{"k": "new"}"#).status, 204);
    assert_eq!(get(&server, "/healthz").body, "ok\n");
    assert!(
        get(&server, "/metrics")
            .body
            .contains("hierad_unreadable_documents 0")
    );
    assert_eq!(lookup(r#"["a", "b"]"#).status, 200);
}

fn doctor(db: &std::path::Path, repair: bool) -> (i32, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hierad"));
    command.arg("doctor").arg("--db").arg(db);
    if repair {
        command.arg("--repair");
    }
    let out = command.env_remove("HIERAD_DB").output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// `hierad doctor` reads the history too: a corrupt packed old version,
/// and the older ones packed against it, are listed by number, exit 1.
/// (It read only the latest versions: "no unreadable documents", exit 0,
/// while reading or restoring those versions answered 500.)
#[test]
fn doctor_lists_unreadable_old_versions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut server = TestServer::start_on(&db, &["--no-sample"]);
    setup(&server);
    for n in 1..=4 {
        let body = format!(r#"{{"k": {n}}}"#);
        assert_eq!(json(&server, "PUT", DOC, &body).status, 204);
    }
    assert!(server.stop().success());
    let (code, out) = doctor(&db, false);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no unreadable documents in"), "{out}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let changed = conn
        .execute(
            "UPDATE documents SET packed = x'00112233445566' WHERE version = 3",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);

    let (code, out) = doctor(&db, false);
    assert_eq!(code, 1, "{out}");
    let doc = "the values of resource \"a\" at the root of environment 5";
    assert!(
        out.contains(&format!(
            "unreadable: version 3 of {doc}: not a zstd frame\n"
        )),
        "{out}"
    );
    assert!(out.contains(&format!("unreadable: versions 1-2 of {doc}: it is packed against a newer version that cannot be read\n")), "{out}");
    assert!(out.contains("1 unreadable document(s): 3 of the 4 stored version(s) cannot be read, 0 of them a latest version"), "{out}");
    assert!(out.contains("restore the database from a backup"), "{out}");
}

/// `hierad doctor` lists unreadable documents, and
/// `--repair` restores the newest readable version of each, or deletes a
/// document that has none.
#[test]
fn doctor_lists_and_repairs_unreadable_documents() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut server = TestServer::start_on(&db, &["--no-sample"]);
    setup(&server);
    let node = "/api/v1/config/environments/5/nodes/n1/resources/a/values";
    for (path, body) in [
        (DOC, r#"{"k": "one"}"#),
        (DOC, r#"{"k": "two"}"#),
        (node, r#"{"k": "node"}"#),
    ] {
        assert_eq!(json(&server, "PUT", path, body).status, 204);
    }
    assert!(server.stop().success());
    assert_eq!(doctor(&db, false).0, 0);
    let conn = rusqlite::Connection::open(&db).unwrap();
    for (level_value, version) in [("", 2), ("n1", 1)] {
        let changed = conn
            .execute(
                "UPDATE documents SET content = '[' WHERE level_value = ?1 AND version = ?2",
                rusqlite::params![level_value, version],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }
    drop(conn);

    let (code, out) = doctor(&db, false);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("unreadable: version 2 of the values of resource \"a\" at the root of environment 5: it is not valid wire JSON"), "{out}");
    assert!(
        out.contains(
            "unreadable: version 1 of the values of resource \"a\" at nodes=n1 of environment 5"
        ),
        "{out}"
    );
    assert!(out.contains("2 unreadable document(s)"), "{out}");
    let (code, out) = doctor(&db, true);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("repaired: the values of resource \"a\" at the root of environment 5: version 1 restored as version 3"), "{out}");
    assert!(out.contains("repaired: the values of resource \"a\" at nodes=n1 of environment 5: deleted as version 2 (no readable version"), "{out}");
    // The unreadable versions stay in the history, where they are listed.
    let (code, out) = doctor(&db, false);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("2 unreadable document(s): 2 of the 5 stored version(s) cannot be read, 0 of them a latest version"), "{out}");

    let server = TestServer::start_on(&db, &["--no-sample"]);
    assert_eq!(get(&server, "/healthz").body, "ok\n");
    assert_eq!(get(&server, DOC).body, r#"{"k":"one"}"#);
}
