//! Use case 4 of docs/spec/configdb-api.md judged by the real `hiera`: after
//! `hierad config override` of a node's deployment_id, the tree `hierad
//! export` writes for the node makes `hiera` answer the overridden value, on a
//! local database (`--db`) and through a server (`--server`). The rest of the
//! use cases are in tests/it/cli_config.rs.

use crate::server::TestServer;
use crate::tools;
use std::path::Path;

use crate::binary::{ROOT, ok};
const NODE: &str = "nodes=node-126.test.domain.local";

fn hierad(conn: &[String], args: &[&str]) {
    let conn: Vec<&str> = conn.iter().map(String::as_str).collect();
    ok(&[args, &conn].concat());
}

/// The sample at the root, the node's astute at its level, deployment_id
/// overridden to 3 there; `hiera` over the node's exported tree answers 3.
fn hiera_answers_the_override(conn: &[String], scratch: &Path) {
    hierad(conn, &["import", "data", "--env", "1"]);
    let node_tree = scratch.join("node-126");
    std::fs::create_dir_all(&node_tree).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("data/astute.yaml"),
        node_tree.join("astute.yaml"),
    )
    .unwrap();
    let node = node_tree.to_str().unwrap();
    hierad(conn, &["import", node, "--env", "1", "--level", NODE]);
    let key = ["--resource", "astute", "--key", "deployment_id"];
    let set = ["--value", "3", "--type", "int"];
    let level = ["config", "override", "--env", "1", "--level", NODE];
    hierad(conn, &[&level[..], &key, &set].concat());
    // Exported as `data/` so the tree's hiera.yaml (datadir: data) finds
    // it when run from `scratch`.
    let tree = scratch.join("data");
    let tree = tree.to_str().unwrap();
    hierad(conn, &["export", "--env", "1", "--level", NODE, tree]);
    let fqdn = "::fqdn=node-126.test.domain.local";
    let out = tools::command("hiera")
        .args(["-c", "data/hiera.yaml", "deployment_id", fqdn])
        .current_dir(scratch)
        .env_remove("COLUMNS")
        .output()
        .expect("run hiera");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(out.status.success(), "hiera: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "3\n");
}

#[test]
fn on_a_local_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    let conn = vec!["--db".to_owned(), db.to_str().unwrap().to_owned()];
    hiera_answers_the_override(&conn, dir.path());
}

#[test]
fn over_http() {
    let server = TestServer::empty();
    let dir = tempfile::tempdir().unwrap();
    let conn = vec!["--server".to_owned(), server.url.clone()];
    hiera_answers_the_override(&conn, dir.path());
}
