//! `hierad tag` and `hierad nodes changed`, on a local database (`--db`)
//! and against a server (`--server`): the same answers either way, and
//! each user error one line naming the problem.

use crate::binary;
use crate::server::TestServer;
use std::path::Path;

fn ok(conn: &str, args: &str) -> String {
    binary::ok(&format!("{args} {conn}"))
}

fn refused(conn: &str, args: &str) -> String {
    binary::refused(&format!("{args} {conn}"))
}

/// Environment 1 from the sample tree at the root, node-1 and node-2
/// registered at the level `nodes`, each with its own `astute` values.
fn fill(db: &Path) {
    let db = db.display();
    binary::ok(&format!("import data --env 1 --db {db}"));
    for node in ["node-1", "node-2"] {
        let level = format!("nodes={node}");
        binary::ok(&format!(
            "register add --env 1 --level nodes {node} --db {db}"
        ));
        binary::ok(&format!(
            "config set --env 1 --level {level} --resource astute --key mine --value {node} --db {db}"
        ));
    }
}

/// The scenario over `conn` (`--db X` or `--server URL`), with `write`
/// writing to the same database.
fn scenario(conn: &str, write: &str) {
    let made = ok(conn, "tag create deploy-1");
    assert!(made.starts_with("tag deploy-1 names generation "), "{made}");
    let listed = ok(conn, "tag list");
    assert!(listed.starts_with("deploy-1 "), "{listed}");
    let json = ok(conn, "tag list --json");
    assert!(json.contains("\"name\": \"deploy-1\""), "{json}");
    for (args, says) in [
        ("tag create deploy-1", "deploy-1"),
        ("tag create 42", "is not a valid name"),
        ("tag create later --generation 999999", "999999"),
        ("nodes changed --env 1 --since nope", "nope"),
        (
            "nodes changed --env 1 --since deploy-1 --resource nope",
            "nope",
        ),
    ] {
        let error = refused(conn, args);
        assert!(error.contains(says), "{args}: {error}");
    }
    let none = ok(conn, "nodes changed --env 1 --since deploy-1");
    assert_eq!(none.trim_end().lines().count(), 1, "{none}");
    assert!(none.starts_with("0 node(s) changed"), "{none}");
    // A change node-1's own values override changes node-2 only.
    binary::ok(&format!(
        "config set --env 1 --resource astute --key mine --value root {write}"
    ));
    binary::ok(&format!(
        "config set --env 1 --resource astute --key fresh --value 1 {write}"
    ));
    binary::ok(&format!(
        "config set --env 1 --level nodes=node-2 --resource astute --key mine --value gone {write}"
    ));
    let changed = ok(
        conn,
        "nodes changed --env 1 --since deploy-1 --resource astute",
    );
    let lines: Vec<&str> = changed.trim_end().lines().collect();
    assert_eq!(lines[0].split(' ').next(), Some("2"), "{changed}");
    assert!(
        lines.contains(&"node-1 (nodes/node-1): astute: fresh"),
        "{changed}"
    );
    assert!(
        lines.contains(&"node-2 (nodes/node-2): astute: fresh, mine"),
        "{changed}"
    );
    let json = ok(conn, "nodes changed --env 1 --since deploy-1 --json");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["nodes"].as_array().map(Vec::len), Some(2), "{json}");
    assert_eq!(
        ok(conn, "tag delete deploy-1").trim_end(),
        "deleted tag deploy-1"
    );
    let error = refused(conn, "tag delete deploy-1");
    assert!(error.contains("deploy-1"), "{error}");
}

#[test]
fn tags_and_changed_nodes_on_a_local_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    fill(&db);
    let conn = format!("--db {}", db.display());
    scenario(&conn, &conn);
}

#[test]
fn tags_and_changed_nodes_through_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    fill(&db);
    let server = TestServer::start_on(&db, "");
    let conn = format!("--server {}", server.url);
    scenario(&conn, &conn);
}
