//! Why and what changed, through the CLI on a local database (`--db`) and
//! over HTTP against a real `hierad serve`: `config get --show-lookup`,
//! `config diff`, `hierad scope`, and `hierad lookup --node`.

use crate::binary::{self, Args};
use crate::server::TestServer;
use serde_json::{Value as Json, json};
use std::path::Path;
use std::process::Output;

fn run(conn: &[String], args: &(impl Args + ?Sized), stdin: Option<&str>) -> Output {
    let mut command = binary::command(args);
    command.args(conn);
    binary::output(command, stdin)
}

fn ok(conn: &[String], args: &(impl Args + ?Sized), stdin: Option<&str>) -> String {
    binary::succeeded(&(args.words(), conn), run(conn, args, stdin))
}

fn error(conn: &[String], args: &(impl Args + ?Sized)) -> String {
    binary::refusal(&(args.words(), conn), run(conn, args, None))
}

/// Environment 1: `common` at the root and node n1's own, n1 registered.
fn deploy(conn: &[String], scratch: &Path) {
    let root = scratch.join("root");
    let node = scratch.join("node");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&node).unwrap();
    std::fs::write(
        root.join("common.yaml"),
        "greeting: \"hello %{::role}\"\ntier: common\ndebug: false\n",
    )
    .unwrap();
    std::fs::write(node.join("common.yaml"), "tier: node\n").unwrap();
    ok(conn, &format!("import {} --env 1", root.display()), None);
    ok(
        conn,
        &format!(
            "import {} --env 1 --level nodes=n1 --register",
            node.display()
        ),
        None,
    );
}

fn scenario(conn: &[String], scratch: &Path) {
    deploy(conn, scratch);
    // Provenance: a table naming each key's level and kind.
    let table = ok(
        conn,
        "config get --env 1 --level nodes=n1 --resource common --show-lookup",
        None,
    );
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        ["key", "level", "kind", "version", "author", "time", "(UTC)"],
        "{table}"
    );
    let row = |key: &str| {
        rows.iter()
            .find(|r| r[0] == key)
            .unwrap_or_else(|| panic!("{key}: {table}"))[..4]
            .to_vec()
    };
    assert_eq!(row("greeting"), ["greeting", "(root)", "values", "1"]);
    assert_eq!(row("tier"), ["tier", "nodes/n1", "values", "1"]);
    let json: Json = serde_json::from_str(&ok(
        conn,
        "config get --env 1 --level nodes=n1 --resource common --show-lookup --format json",
        None,
    ))
    .unwrap();
    assert_eq!(json["data"]["tier"], "node");
    assert_eq!(json["lookup"]["tier"]["level"], "nodes/n1");
    // Diffs: the previous and the latest version, readable and as JSON.
    ok(
        conn,
        "config set --env 1 --resource common --key debug --value true --type bool",
        None,
    );
    let text = ok(conn, "config diff --env 1 --resource common", None);
    assert_eq!(
        text,
        "--- version 1\n+++ version 2\n~ debug: false -> true\n"
    );
    let diff: Json = serde_json::from_str(&ok(
        conn,
        "config diff --env 1 --resource common --from 0 --to 2 --format json",
        None,
    ))
    .unwrap();
    assert_eq!(
        (diff["from"].clone(), diff["to"].clone()),
        (json!(0), json!(2))
    );
    assert_eq!(diff["added"], json!(["greeting", "tier", "debug"]));
    let missing = error(conn, "config diff --env 1 --resource common --to 9");
    assert!(missing.contains("version 9"), "{missing}");
    let mixed = error(
        conn,
        "config diff --env 1 --resource common --from-generation 1",
    );
    assert!(mixed.contains("add --effective"), "{mixed}");
    // Node scopes.
    let stored = ok(
        conn,
        "scope set --env 1 --node n1",
        Some(r#"{"::role": "web"}"#),
    );
    assert!(stored.contains("node n1"), "{stored}");
    let got: Json = serde_json::from_str(&ok(conn, "scope get --env 1 --node n1", None)).unwrap();
    assert_eq!(got["scope"], json!({"::role": "web"}));
    assert_eq!(got["version"], json!(1));
    let refused = error(conn, "scope get --env 1 --node n9");
    assert!(refused.contains("n9"), "{refused}");
    let refused = binary::refusal(
        &"scope set",
        run(conn, "scope set --env 1 --node n1", Some("[1]")),
    );
    assert!(refused.contains("JSON object"), "{refused}");
    ok(conn, "scope delete --env 1 --node n1", None);
    let history = ok(conn, "scope history --env 1 --node n1", None);
    assert_eq!(history.lines().count(), 3, "{history}");
    assert!(
        history.lines().last().unwrap().ends_with("deleted"),
        "{history}"
    );
    ok(
        conn,
        "scope set --env 1 --node n1",
        Some(r#"{"::role": "web"}"#),
    );
}

#[test]
fn why_and_what_changed_on_a_local_database() {
    let dir = tempfile::tempdir().unwrap();
    let conn = vec![
        "--db".to_owned(),
        dir.path().join("hierad.db").display().to_string(),
    ];
    scenario(&conn, dir.path());
}

#[test]
fn why_and_what_changed_over_http_and_a_lookup_naming_a_node() {
    let server = TestServer::empty();
    let dir = tempfile::tempdir().unwrap();
    let conn = vec!["--server".to_owned(), server.url.clone()];
    scenario(&conn, dir.path());
    let lookup = |extra: &str| {
        binary::ok(&format!(
            "lookup --server {} --env 1 --node n1 greeting {extra}",
            server.url
        ))
    };
    assert_eq!(lookup(""), "hello web\n");
    // A scope variable on the command line wins over the stored one.
    assert_eq!(lookup("::role=db"), "hello db\n");
    let refused = binary::refused(&format!(
        "lookup --server {} --env 1 --node n2 greeting",
        server.url
    ));
    assert!(refused.contains("n2"), "{refused}");
}
