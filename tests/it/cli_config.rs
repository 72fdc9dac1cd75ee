//! The acceptance use cases 1–4 of docs/spec/configdb-api.md end to end
//! through `hierad config` (and `hierad lookup` for 4), twice: on a local
//! database (`--db`) and over HTTP against `hierad serve` (in process). Plus the
//! user errors: each is one line on stderr, exit status 1, and writes nothing.
//!
//! Use case 4's "hiera looks up the right value" is judged over HTTP by
//! `hierad lookup --server`, whose answers must match the local `hierad
//! lookup` over the tree `hierad export` writes; the real `hiera` judges
//! that tree in tests/oracle/export_hiera.rs.

use crate::binary::{self, Args, BIN, ROOT, quote, text};
use crate::in_process::InProcess;
use hierad::hiera::{Value, yaml};
use std::path::Path;
use std::process::{Command, Output};

const NODE: &str = "nodes=node-126.test.domain.local";
const FQDN_SCOPE: &str = "::fqdn=node-126.test.domain.local";

/// Runs hierad with `args`, then `conn` (`--db X` or `--server URL`).
fn run(conn: &[String], args: &(impl Args + ?Sized), stdin: Option<&str>) -> Output {
    let mut command = binary::command(args);
    command.args(conn);
    binary::output(command, stdin)
}

fn ok(conn: &[String], args: &(impl Args + ?Sized)) -> String {
    ok_in(conn, args, None)
}

fn ok_in(conn: &[String], args: &(impl Args + ?Sized), stdin: Option<&str>) -> String {
    binary::succeeded(&(args.words(), conn), run(conn, args, stdin))
}

/// The one line a failing command prints; it must exit 1.
fn error(conn: &[String], args: &(impl Args + ?Sized)) -> String {
    binary::refusal(&(args.words(), conn), run(conn, args, None))
}

fn astute() -> Value {
    yaml::load(&std::fs::read_to_string(Path::new(ROOT).join("data/astute.yaml")).unwrap()).unwrap()
}

/// The String at a path of nested Hash keys.
fn nested(v: &Value, path: &[&str]) -> String {
    let mut cur = v;
    for key in path {
        cur = &cur.as_hash().unwrap()[&Value::str(*key)];
    }
    cur.as_str().unwrap().to_owned()
}

fn get(args: &str) -> String {
    format!("config get --env 1 --level {NODE} {args}")
}

/// The environment of the use cases: Fuel's sample tree at the root (its
/// hiera.yaml becomes the environment's Hiera configuration) and the
/// node's own astute at the node's level, both uploaded by `hierad import`.
fn deploy(conn: &[String], scratch: &Path) {
    let report = ok(conn, &["import", "data", "--env", "1"]);
    assert!(report.contains("9 written"), "{report}");
    let node_tree = scratch.join("node-126");
    std::fs::create_dir_all(&node_tree).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("data/astute.yaml"),
        node_tree.join("astute.yaml"),
    )
    .unwrap();
    let report = ok(
        conn,
        &format!("import {} --env 1 --level {NODE}", node_tree.display()),
    );
    assert!(report.contains("1 written"), "{report}");
}

/// Use cases 1–3, and the config-side checks of 4.
fn use_cases(conn: &[String], scratch: &Path) {
    deploy(conn, scratch);

    // Use case 1: all deployment data of a node, in the format of the
    // node's /etc/hiera/astute.yaml (and as JSON, the default format).
    let as_yaml = ok(conn, &get("--resource astute --format yaml"));
    assert_eq!(yaml::load(&as_yaml).unwrap(), astute());
    let as_json = ok(conn, &get("--resource astute"));
    assert_eq!(hierad::wire::from_str(&as_json).unwrap(), astute());

    // Use case 2: one key.
    let key = "--resource astute --key deployment_id";
    assert_eq!(ok(conn, &get(key)), "{\n  \"deployment_id\": 15\n}\n");
    let with = |extra: &str| format!("{key} {extra}");
    assert_eq!(ok(conn, &get(&with("--format plain"))), "15\n");
    assert_eq!(
        ok(conn, &get(&with("--format yaml"))),
        "---\ndeployment_id: 15\n"
    );
    // Nested keys and Array indexes read the same way.
    assert_eq!(
        ok(
            conn,
            &get("--resource astute --key network_metadata.vips.management.ipaddr --format plain")
        ),
        format!(
            "{}\n",
            nested(
                &astute(),
                &["network_metadata", "vips", "management", "ipaddr"]
            )
        )
    );

    // Use case 3: override one key; the effective value changes, the
    // uploaded value does not.
    let override_args = |extra: &str| {
        format!(
            "config override --env 1 --level {NODE} --resource astute --key deployment_id {extra}"
        )
    };
    // The seed's exact command: --value without --type keeps the type of
    // the Integer it overrides, and says what it stored.
    assert_eq!(
        ok(conn, &override_args("--value 2")),
        "deployment_id = 2 (Integer)\n"
    );
    assert_eq!(ok(conn, &get(&with("--format plain"))), "2\n");
    assert_eq!(ok(conn, &get(key)), "{\n  \"deployment_id\": 2\n}\n");
    ok(conn, &override_args("--value 3 --type int"));
    assert_eq!(ok(conn, &get(key)), "{\n  \"deployment_id\": 3\n}\n");
    assert_eq!(ok(conn, &get(&with("--stored --format plain"))), "15\n");
    assert_eq!(
        ok(conn, &get("--resource astute --stored --kind overrides")),
        "{\n  \"deployment_id\": 3\n}\n"
    );
    assert_eq!(
        ok(conn, &get("--resource astute --kind overrides --version 1")),
        "{\n  \"deployment_id\": 2\n}\n"
    );
    // An override of a nested key keeps its siblings.
    ok(
        conn,
        &format!(
            "config override --env 1 --level {NODE} --resource astute --key nova.state_path --value /srv/nova"
        ),
    );
    let nova = ok(conn, &get("--resource astute --key nova"));
    let nova = hierad::wire::from_str(&nova).unwrap();
    let nova = nova.as_hash().unwrap()[&Value::str("nova")]
        .as_hash()
        .unwrap()
        .clone();
    assert_eq!(nova[&Value::str("state_path")], Value::str("/srv/nova"));
    assert!(nova.contains_key(&Value::str("db_password")), "{nova:?}");

    // set: one key from stdin (typed), and a whole document from stdin.
    ok_in(
        conn,
        "config set --env 1 --resource globals --key extra.list --type yaml",
        Some("[1, two, 3.0, null, true]\n"),
    );
    assert_eq!(
        ok(
            conn,
            "config get --env 1 --resource globals --key extra.list --format yaml"
        ),
        "---\nextra.list:\n- 1\n- two\n- 3.0\n-\n- true\n"
    );
    let document = "{\"a\": 1, \"b\": [1.0, null, {\"c\": \"d\"}], \"s\": {\"__hierad__\": \"sym\", \"name\": \"x\"}}";
    ok_in(
        conn,
        &format!("config set --env 1 --level {NODE} --resource override/plugins --format json"),
        Some(document),
    );
    let stored = ok(
        conn,
        &get("--resource override/plugins --stored --format yaml"),
    );
    assert_eq!(stored, "---\na: 1\nb:\n- 1.0\n-\n- c: d\ns: :x\n");
}

/// The user errors: one line, exit 1, nothing written.
fn user_errors(conn: &[String]) {
    // One case a line: the command (split on spaces; `NODE` is the node's
    // level path) and the start of the one line it must fail with.
    #[rustfmt::skip]
    let cases: &[(&str, &str)] = &[
        ("config get --env 9 --resource astute", "environment 9 does not exist"),
        ("config get --env 1 --resource nope", "resource \"nope\" is not defined in environment 1 (it defines "),
        ("config get --env 1 --level racks=r1 --resource astute", "level \"racks\" is not one of environment 1's levels [nodes]"),
        ("config get --env 1 --level nodes --resource astute", "\"nodes\" in level path \"nodes\" is not of the form level=value"),
        ("config get --env 1 --resource astute --key no_such_key", "key \"no_such_key\" is not in the effective values of resource \"astute\" at the root of environment 1"),
        ("config override --env 1 --level NODE --resource astute --key deployment_id --type int --value two", "bad value for --type int: \"two\" is not an integer"),
        ("config override --env 1 --level NODE --resource astute --key deployment_id --type bool --value yes", "bad value for --type bool: \"yes\" is neither true nor false"),
        ("config override --env 1 --level NODE --resource astute --key deployment_id.x --value 1", "cannot use key \"deployment_id.x\": \"deployment_id\" is Integer, not a Hash or an Array"),
        ("config set --env 1 --resource astute --key a..b --value 1", "invalid key path \"a..b\""),
        ("config override --env 1 --resource astute --key x --type null --value 1", "--type null takes no --value"),
    ];
    for (line, want) in cases {
        let args: Vec<&str> = line
            .split(' ')
            .map(|word| if word == "NODE" { NODE } else { word })
            .collect();
        let got = error(conn, &args);
        assert!(got.starts_with(want), "{args:?}:\n got {got}\nwant {want}");
    }
    // Nothing was written: the node's overrides still have their three
    // versions and their content.
    let third = error(conn, &get("--resource astute --kind overrides --version 4"));
    assert!(third.contains("version 4"), "{third}");
    assert_eq!(
        ok(
            conn,
            &get("--resource astute --key deployment_id --format plain")
        ),
        "3\n"
    );
}

/// `config history|restore|delete` on the node's overrides of globals,
/// which nothing else writes: each write is a version, a restore and a delete
/// are versions too, and the refusals name the problem and write nothing.
fn versions(conn: &[String]) {
    let doc = ["--env", "1", "--level", NODE, "--resource", "globals"];
    let cmd = |verb: &'static str, extra: &[&'static str]| -> Vec<&'static str> {
        [&["config", verb][..], &doc, extra].concat()
    };
    let history = || ok(conn, &cmd("history", &["--kind", "overrides"]));
    let stored = || ok(conn, &cmd("get", &["--stored", "--kind", "overrides"]));
    assert!(history().ends_with(": never written\n"), "{}", history());
    for value in ["1", "2"] {
        ok(conn, &cmd("override", &["--key", "a", "--value", value]));
    }
    let lines: Vec<String> = history().lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("version  written (UTC)"), "{lines:?}");
    assert!(lines[1].starts_with("      1  ") && !lines[1].ends_with("latest"));
    assert!(lines[2].starts_with("      2  ") && lines[2].ends_with("latest"));
    // The author: the local user on a database, the principal over HTTP.
    let author = if conn[0] == "--db" {
        "  local:"
    } else {
        "  anonymous  "
    };
    assert!(lines[2].contains(author), "{lines:?}");

    let restored = ok(
        conn,
        &cmd("restore", &["--kind", "overrides", "--version", "1"]),
    );
    assert!(
        restored.ends_with("version 1 restored as version 3\n"),
        "{restored}"
    );
    assert_eq!(stored(), "{\n  \"a\": \"1\"\n}\n");
    let deleted = ok(conn, &cmd("delete", &["--kind", "overrides"]));
    assert!(deleted.contains("deleted (version 4;"), "{deleted}");
    assert_eq!(stored(), "{}\n");
    let json: serde_json::Value = serde_json::from_str(&ok(
        conn,
        &cmd("history", &["--kind", "overrides", "--json"]),
    ))
    .unwrap();
    assert_eq!(json[3]["version"], 4);
    assert_eq!(json[3]["deleted"], true);

    // Refusals: one line each, and the history stays at 4 versions.
    let err = error(conn, &cmd("delete", &["--kind", "overrides"]));
    assert!(err.contains("globals"), "{err}");
    let err = error(
        conn,
        &cmd("restore", &["--kind", "overrides", "--version", "9"]),
    );
    assert!(
        err.contains("version 9 of the overrides of resource \"globals\""),
        "{err}"
    );
    assert!(err.ends_with("does not exist (the latest is 4)"), "{err}");
    let err = error(
        conn,
        &cmd("restore", &["--kind", "overrides", "--version", "4"]),
    );
    assert!(
        err.ends_with("to version 4: it is a deletion marker"),
        "{err}"
    );
    assert_eq!(history().lines().count(), 5, "{}", history());

    ok(
        conn,
        &cmd("restore", &["--kind", "overrides", "--version", "3"]),
    );
    assert_eq!(stored(), "{\n  \"a\": \"1\"\n}\n");
}

/// `set --key K --value V` without `--type`: V keeps the type of the
/// value it replaces when it reads as one, else it is a String and the
/// report says what it was; `--type` always wins; a key whose dots make
/// new Hashes says which.
fn types_kept_and_hashes_created(conn: &[String]) {
    // A node the other cases leave alone; globals has none of these keys.
    const KEPT: &str = "nodes=node-127.test.domain.local";
    let set = |key: &str, extra: &[&str]| {
        let line = format!(
            "config set --env 1 --level {KEPT} --resource globals --key {}",
            quote(key)
        );
        let mut args = line.words();
        args.extend(extra.iter().map(|s| s.to_string()));
        ok(conn, &args)
    };
    for (key, ty, value) in [
        ("int", "int", "1"),
        ("float", "yaml", "1.5"),
        ("bool", "bool", "true"),
        ("list", "json", "[1]"),
        ("map", "json", "{\"a\": 1}"),
        ("str", "str", "x"),
    ] {
        set(key, &["--value", value, "--type", ty]);
    }
    set("nil", &["--type", "null"]);
    for (key, value, report) in [
        ("int", "7", "int = 7 (Integer)"),
        ("int", "seven", "int = \"seven\" (String, was Integer)"),
        ("int", "8", "int = \"8\" (String)"),
        ("float", "2.5", "float = 2.5 (Float)"),
        ("float", "3", "float = 3.0 (Float)"),
        ("float", "inf", "float = \"inf\" (String, was Float)"),
        ("bool", "false", "bool = false (Boolean)"),
        ("bool", "yes", "bool = \"yes\" (String, was Boolean)"),
        ("list", "[1, \"b\"]", "list = [1,\"b\"] (Array)"),
        ("map", "{\"b\": 2}", "map = {\"b\":2} (Hash)"),
        ("map", "[2]", "map = \"[2]\" (String, was Hash)"),
        ("nil", "3", "nil = \"3\" (String, was nil)"),
        ("str", "5", "str = \"5\" (String)"),
        ("new", "5", "new = \"5\" (String)"),
    ] {
        assert_eq!(
            set(key, &["--value", value]),
            format!("{report}\n"),
            "{key} {value}"
        );
    }
    assert_eq!(
        set("str", &["--value", "9", "--type", "int"]),
        "str = 9 (Integer, was String)\n"
    );
    let stored = ok(
        conn,
        &format!("config get --env 1 --level {KEPT} --resource globals --stored --format json"),
    );
    let stored = hierad::wire::from_str(&stored).unwrap();
    let stored = stored.as_hash().unwrap();
    assert_eq!(stored[&Value::str("float")], Value::str("inf"));
    assert_eq!(
        stored[&Value::str("list")],
        Value::Array(vec![Value::Int(1), Value::str("b")])
    );
    assert_eq!(stored[&Value::str("bool")], Value::str("yes"));
    assert_eq!(stored[&Value::str("str")], Value::Int(9));

    // A file name's dots split the key: the write says which Hashes it made.
    assert_eq!(
        set(
            "configuration.file./etc/app.conf.content",
            &["--value", "x"]
        ),
        "configuration.file./etc/app.conf.content = \"x\" (String)\n\
         created Hashes: configuration, configuration.file, configuration.file./etc/app, \
         configuration.file./etc/app.conf (each dot of --key splits a key; quote a key \
         holding dots: a.'b.c')\n"
    );
    assert_eq!(
        set(
            "configuration.file.'/etc/app.conf'.content",
            &["--value", "y"]
        ),
        "configuration.file.'/etc/app.conf'.content = \"y\" (String)\n\
         created Hashes: configuration.file.'/etc/app.conf' (each dot of --key splits a key; \
         quote a key holding dots: a.'b.c')\n"
    );
    assert_eq!(
        set(
            "configuration.file.'/etc/app.conf'.mode",
            &["--value", "0644"]
        ),
        "configuration.file.'/etc/app.conf'.mode = \"0644\" (String)\n"
    );
    let got = ok(
        conn,
        &format!(
            "config get --env 1 --level {KEPT} --resource globals --key configuration.file --format yaml"
        ),
    );
    assert_eq!(
        got,
        "---\nconfiguration.file:\n  \"/etc/app\":\n    conf:\n      content: x\n  \
         \"/etc/app.conf\":\n    content: \"y\"\n    mode: '0644'\n"
    );
}

fn conn_db(db: &Path) -> Vec<String> {
    vec!["--db".into(), db.to_str().unwrap().into()]
}

#[test]
fn use_cases_on_a_local_database() {
    let dir = tempfile::tempdir().unwrap();
    let conn = conn_db(&dir.path().join("hierad.db"));
    use_cases(&conn, dir.path());
    user_errors(&conn);
    versions(&conn);
    types_kept_and_hashes_created(&conn);
    // --help says how to quote a key holding dots.
    let help = ok(&[], &["config", "set", "--help"]);
    assert!(
        help.contains("--key \"configuration.file.'/etc/app.conf'.content\""),
        "{help}"
    );
    // A database that does not exist is not created by a read.
    let missing = dir.path().join("missing.db");
    let err = error(
        &conn_db(&missing),
        &["config", "get", "--env", "1", "--resource", "astute"],
    );
    assert!(err.starts_with("no database at "), "{err}");
    assert!(!missing.exists());
}

#[test]
fn use_cases_over_http() {
    let server = InProcess::empty();
    let dir = tempfile::tempdir().unwrap();
    let conn = vec!["--server".to_owned(), server.url.clone()];
    use_cases(&conn, dir.path());
    user_errors(&conn);
    versions(&conn);
    types_kept_and_hashes_created(&conn);
}

/// A server holding the use cases' environment, with the node's
/// deployment_id overridden to 3 as use case 3 leaves it; its `conn`.
fn deployed_over_http(scratch: &Path) -> (InProcess, Vec<String>) {
    let server = InProcess::empty();
    let conn = vec!["--server".to_owned(), server.url.clone()];
    deploy(&conn, scratch);
    ok(
        &conn,
        &format!(
            "config override --env 1 --level {NODE} --resource astute --key deployment_id --value 3 --type int"
        ),
    );
    (server, conn)
}

/// Use case 4 through the server: `hierad lookup --server` answers as
/// `hierad lookup` over the exported tree, in every format and
/// resolution, errors included.
#[test]
fn lookups_over_http_answer_as_lookups_over_the_exported_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = deployed_over_http(dir.path());
    set_looping(&conn);
    // Exported as `data/` so the tree's hiera.yaml (datadir: data) finds
    // it when run from the scratch folder.
    let tree = dir.path().join("data");
    ok(
        &conn,
        &format!("export --env 1 --level {NODE} {}", tree.display()),
    );
    let cases = [
        "deployment_id",
        "-f json deployment_id",
        "-f yaml nova",
        "-h nova",
        "-a dns_nameservers",
        "keystone_auth_uri",
        "management_vip",
        "no_such_key",
        "no_such_key fallback",
        "-f json no_such_key",
        "-a deployment_id",
        "looping",
        "network_metadata",
    ];
    for case in cases {
        let remote = format!(
            "lookup --server {} --env 1 --level {NODE} {case} {FQDN_SCOPE}",
            server.url
        );
        let remote = run(&[], &remote, None);
        let local = Command::new(BIN)
            .args(format!("lookup -c data/hiera.yaml {case} {FQDN_SCOPE}").words())
            .current_dir(dir.path())
            .env_remove("COLUMNS")
            .output()
            .unwrap();
        assert_eq!(
            (
                text(&remote.stdout),
                text(&remote.stderr),
                remote.status.code()
            ),
            (
                text(&local.stdout),
                text(&local.stderr),
                local.status.code()
            ),
            "{case:?}"
        );
    }
}

/// Sets a key whose value interpolates itself (an endless loop).
fn set_looping(conn: &[String]) {
    ok(
        conn,
        "config set --env 1 --resource globals --key looping --value \"%{hiera('looping')}\"",
    );
}

#[test]
fn a_lookup_over_http_names_a_loop_and_explains_the_levels() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = deployed_over_http(dir.path());
    set_looping(&conn);
    let looping = run(
        &[],
        &["lookup", "--server", &server.url, "--env", "1", "looping"],
        None,
    );
    assert_eq!(looping.status.code(), Some(1));
    assert!(
        text(&looping.stderr).ends_with("(Hiera::InterpolationLoop)\n"),
        "{}",
        text(&looping.stderr)
    );
    let explained = ok(
        &[],
        &format!(
            "lookup --server {} --env 1 --level {NODE} --explain deployment_id {FQDN_SCOPE}",
            server.url
        ),
    );
    let lines: Vec<&str> = explained.lines().collect();
    assert_eq!(lines[0], "Explaining priority lookup of 'deployment_id':");
    assert!(lines.contains(&"  level 'astute': FOUND 3"), "{explained}");
    assert!(
        lines
            .contains(&"  level 'override/class/': skipped: not a valid level after interpolation"),
        "{explained}"
    );
    assert_eq!(lines[lines.len() - 2..], ["Result: found", "3"]);
}

#[test]
fn hierad_server_stands_for_server() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = deployed_over_http(dir.path());
    let out = Command::new(BIN)
        .args(get("--resource astute --key deployment_id --format plain").words())
        .env("HIERAD_SERVER", &server.url)
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "3\n", "{}", text(&out.stderr));
    let out = Command::new(BIN)
        .args(["lookup", "--env", "1", "--level", NODE, "deployment_id"])
        .env("HIERAD_SERVER", &server.url)
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "3\n", "{}", text(&out.stderr));
}

#[test]
fn an_unreachable_server_is_named() {
    // Port 1 on the loopback: nothing listens there.
    let url = "http://127.0.0.1:1";
    let conn = vec!["--server".to_owned(), url.to_owned()];
    let cases = [
        "config get --env 1 --resource astute",
        "config override --env 1 --resource astute --key a --value 1",
        "import data --env 1",
    ];
    for args in cases {
        let err = error(&conn, args);
        assert!(
            err.starts_with("cannot reach the hierad server at http://127.0.0.1:1: "),
            "{args:?}: {err}"
        );
    }
    let out = run(
        &[],
        &["lookup", "--server", url, "--env", "1", "deployment_id"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .starts_with("hierad: cannot reach the hierad server at http://127.0.0.1:1: "),
        "{}",
        text(&out.stderr)
    );
    let out = run(&[], &["lookup", "--env", "1", "deployment_id"], None);
    assert_eq!(
        text(&out.stderr),
        "hierad: a server lookup needs --server URL (or HIERAD_SERVER)\n"
    );
}

/// A process on the database file writes as `local:` and its uid's name
/// from the password database, even from a shell that sets no `$USER`
/// (cron, `su -c`, a container), where it once wrote `local:uid=0`.
#[test]
fn local_authors_are_the_uid_s_name_without_user_in_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    let conn = conn_db(&db);
    ok(&conn, &["import", "data", "--env", "1"]);
    let mut command =
        binary::command("config override --env 1 --resource astute --key a --value 1");
    command.args(&conn).env_remove("USER").env_remove("LOGNAME");
    binary::succeeded(&"config override", binary::output(command, None));
    let name = Command::new("id").arg("-un").output().unwrap();
    let name = text(&name.stdout).trim().to_owned();
    assert!(!name.is_empty());
    let history = ok(
        &conn,
        "config history --env 1 --resource astute --kind overrides",
    );
    assert!(
        history.contains(&format!("  local:{name}  ")),
        "{name}: {history}"
    );
}
