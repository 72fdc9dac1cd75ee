//! `--dry-run` on `hierad config set|override|delete|restore` and
//! `hierad import`, on a local
//! database (`--db`) and against a server (`--server`): nothing is
//! written (the generation and the document's history stay), and the
//! changes printed are those the real write then makes (as `nodes
//! changed` since a tag taken before it reports them).

use crate::binary;
use crate::server::TestServer;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

fn ok(conn: &str, args: &str) -> String {
    binary::ok(&format!("{args} {conn}"))
}

/// Environment 1 from the sample tree at the root, node-1 and node-2
/// registered, each with its own `mine` in `astute`.
fn fill(db: &Path) {
    let db = db.display();
    binary::ok(&format!("import data --env 1 --db {db}"));
    for node in ["node-1", "node-2"] {
        binary::ok(&format!(
            "register add --env 1 --level nodes {node} --db {db}"
        ));
        binary::ok(&format!(
            "config set --env 1 --level nodes={node} --resource astute --key mine --value {node} --db {db}"
        ));
    }
}

/// A new tag's generation.
fn generation(conn: &str, tag: &str) -> u64 {
    let made = ok(conn, &format!("tag create {tag}"));
    made.trim_end()
        .rsplit(' ')
        .next()
        .and_then(|g| g.parse().ok())
        .unwrap_or_else(|| panic!("no generation in {made:?}"))
}

/// (node, resource, path) of a `--dry-run=json` answer.
fn previewed(answer: &str) -> BTreeSet<(String, String, String)> {
    let answer: Value = serde_json::from_str(answer).unwrap();
    assert_eq!(answer["dry_run"], json!(true), "{answer}");
    let mut out = BTreeSet::new();
    for node in answer["nodes"].as_array().unwrap() {
        for c in node["changes"].as_array().unwrap() {
            out.insert((
                node["node"].as_str().unwrap().to_owned(),
                c["resource"].as_str().unwrap().to_owned(),
                c["path"].as_str().unwrap().to_owned(),
            ));
        }
    }
    out
}

/// (node, resource, path) of `nodes changed --json`.
fn changed(conn: &str, since: &str) -> BTreeSet<(String, String, String)> {
    let answer = ok(
        conn,
        &format!("nodes changed --env 1 --since {since} --json"),
    );
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let mut out = BTreeSet::new();
    for node in answer["nodes"].as_array().unwrap() {
        for (resource, paths) in node["resources"].as_object().unwrap() {
            for path in paths.as_array().unwrap() {
                out.insert((
                    node["node"].as_str().unwrap().to_owned(),
                    resource.clone(),
                    path.as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    out
}

/// Dry-runs `write` (then checks nothing moved), writes it for real,
/// and compares the preview with what changed.
fn preview_then_write(conn: &str, write: &str, tag: &str) -> BTreeSet<(String, String, String)> {
    let root = "config history --env 1 --resource astute --json";
    let node = "config history --env 1 --level nodes=node-2 --resource astute --json";
    let before = (
        generation(conn, &format!("{tag}-a")),
        ok(conn, root),
        ok(conn, node),
    );
    let answer = ok(conn, &format!("{write} --dry-run=json"));
    let text = ok(conn, &format!("{write} --dry-run"));
    assert!(text.ends_with("; nothing was written\n"), "{text}");
    let after = (
        generation(conn, &format!("{tag}-b")),
        ok(conn, root),
        ok(conn, node),
    );
    assert_eq!(before, after, "{write} --dry-run wrote");
    let preview = previewed(&answer);
    ok(conn, write);
    assert_eq!(
        preview,
        changed(conn, &format!("{tag}-b")),
        "{write}: {answer}"
    );
    preview
}

fn scenario(conn: &str) {
    let set = preview_then_write(
        conn,
        "config set --env 1 --resource astute --key fresh --value 1",
        "set",
    );
    let both: BTreeSet<_> = ["node-1", "node-2"]
        .map(|n| (n.to_owned(), "astute".to_owned(), "fresh".to_owned()))
        .into();
    assert_eq!(set, both);
    // Every node overrides `mine`: a root change of it changes no node.
    let none = preview_then_write(
        conn,
        "config set --env 1 --resource astute --key mine --value root",
        "cancelled",
    );
    assert!(none.is_empty(), "{none:?}");
    let text = ok(
        conn,
        "config override --env 1 --level nodes=node-2 --resource astute --key mine --value o --dry-run",
    );
    assert_eq!(
        text,
        "node-2 (nodes/node-2)\n  astute mine: \"node-2\" -> \"o\"\n\
         dry run: 1 node would change; nothing was written\n"
    );
    let deleted = preview_then_write(
        conn,
        "config delete --env 1 --level nodes=node-2 --resource astute",
        "delete",
    );
    assert!(
        deleted.contains(&("node-2".into(), "astute".into(), "mine".into())),
        "{deleted:?}"
    );
    let restored = preview_then_write(
        conn,
        "config restore --env 1 --resource astute --version 1",
        "restore",
    );
    assert!(
        restored.contains(&("node-1".into(), "astute".into(), "fresh".into())),
        "{restored:?}"
    );
    let tree = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("astute.yaml"), "mine: node-1\nfresh: 7\n").unwrap();
    let import = format!(
        "import {} --env 1 --level nodes=node-1",
        tree.path().display()
    );
    let imported = preview_then_write(conn, &import, "import");
    let fresh = ("node-1".to_owned(), "astute".to_owned(), "fresh".to_owned());
    assert_eq!(imported, [fresh].into());
    let error = binary::refused(&format!(
        "import {} --env 9 --dry-run {conn}",
        tree.path().display()
    ));
    assert!(error.contains("environment 9 does not exist"), "{error}");
    // A preview would show the plaintext: clap refuses the pair.
    let out = binary::run(&format!(
        "config set --env 1 --resource astute --key k --value v --encrypt k --dry-run {conn}"
    ));
    let error = binary::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{error}");
    assert!(
        error.contains("'--encrypt <KEYPATH>' cannot be used with"),
        "{error}"
    );
}

#[test]
fn dry_runs_on_a_local_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    fill(&db);
    scenario(&format!("--db {}", db.display()));
}

#[test]
fn dry_runs_through_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    fill(&db);
    let server = TestServer::start_on(&db, "");
    scenario(&format!("--server {}", server.url));
}
