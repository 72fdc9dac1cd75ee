//! The operator's first hour with docs/spec/configdb-api.md open: `hierad
//! serve` run outside the repository serves the built-in sample and says
//! so; the specification's acceptance use cases 1–4, word for word,
//! against it;
//! level registers from the command line.

use crate::binary::{self, BIN, ROOT, text};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// A `hierad serve` started in `dir` (not the repository) with the log at
/// info; the log lines up to "listening on" are kept.
struct Served {
    url: String,
    log: Vec<String>,
    child: Child,
}

impl Served {
    fn start(dir: &Path, extra: &[&str]) -> Result<Served, Vec<String>> {
        let mut child = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .current_dir(dir)
            .env("HIERAD_LOG", "info")
            .env_remove("HIERAD_DB")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut log = Vec::new();
        let url = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    let line = plain(&line);
                    if let Some(url) = line.strip_prefix("listening on ") {
                        break url.to_owned();
                    }
                    log.push(line);
                }
                _ => {
                    child.wait().unwrap();
                    return Err(log);
                }
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Ok(Served { url, log, child })
    }

    fn logged(&self, words: &[&str]) -> bool {
        self.log.iter().any(|l| words.iter().all(|w| l.contains(w)))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A log line without its colours (ESC [ … m).
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs a command line as an operator types it (split on spaces), with
/// `HIERAD_SERVER` pointing at `url`, in `dir`.
fn typed(dir: &Path, url: &str, line: &str) -> Output {
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[0], "hierad");
    Command::new(BIN)
        .args(&words[1..])
        .current_dir(dir)
        .env("HIERAD_SERVER", url)
        .env_remove("COLUMNS")
        .output()
        .unwrap()
}

fn ok(dir: &Path, url: &str, line: &str) -> String {
    let out = typed(dir, url, line);
    assert!(out.status.success(), "{line}: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn serve_outside_the_repository_loads_the_built_in_sample_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]).unwrap();
    assert!(
        served.logged(&[
            "loaded the sample as environment 1",
            "built-in sample",
            "documents=9"
        ]),
        "{:#?}",
        served.log
    );
    let url = served.url.clone();
    let got = ok(
        dir.path(),
        &url,
        "hierad config get --env 1 --resource astute --key deployment_id --format plain",
    );
    assert_eq!(got, "15\n");
    drop(served);
    // Started again on the same database: nothing loaded, and it says why.
    let again = Served::start(dir.path(), &[]).unwrap();
    assert!(
        again.logged(&["the database holds environments: no sample loaded"]),
        "{:#?}",
        again.log
    );
    drop(again);

    // --sample DIR replaces the built-in sample.
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("common.yaml"), "answer: 42\n").unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let served = Served::start(&other, &["--sample", tree.to_str().unwrap()]).unwrap();
    assert!(
        served.logged(&["loaded the sample as environment 1", "documents=1", "tree"]),
        "{:#?}",
        served.log
    );
    let got = ok(
        &other,
        &served.url,
        "hierad config get --env 1 --resource common --key answer --format plain",
    );
    assert_eq!(got, "42\n");
    let missing = typed(
        &other,
        &served.url,
        "hierad config get --env 1 --resource astute",
    );
    assert_eq!(missing.status.code(), Some(1));
    drop(served);

    // A --sample that is not a folder is an error, not a silent empty server.
    let log = Served::start(
        dir.path(),
        &["--db", "x.db", "--sample", "/nonexistent/tree"],
    )
    .err()
    .unwrap();
    assert!(
        log.iter()
            .any(|l| l.contains("--sample /nonexistent/tree: not a directory")),
        "{log:#?}"
    );
    // --no-sample: nothing, said so.
    let served = Served::start(dir.path(), &["--db", "y.db", "--no-sample"]).unwrap();
    assert!(
        served.logged(&["--no-sample: no sample loaded"]),
        "{:#?}",
        served.log
    );
}

#[test]
fn seeds_004_use_cases_word_for_word_against_the_sample() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]).unwrap();
    let url = served.url.clone();
    let astute_yaml = std::fs::read_to_string(Path::new(ROOT).join("data/astute.yaml")).unwrap();
    let astute = hierad::hiera::yaml::load(&astute_yaml).unwrap();

    // Use case 1, step 7, word for word: JSON, the seed's default format.
    let got = ok(
        dir.path(),
        &url,
        "hierad config get --env 1 --level node=node-1.domain.tld --resource astute",
    );
    assert_eq!(hierad::wire::from_str(&got).unwrap(), astute);
    // Step 8: "the format specific for serialized data from
    // /etc/hiera/astute.yaml": with --format yaml, YAML that reads back as
    // the file does, written as Ruby's to_yaml writes it.
    let got = ok(
        dir.path(),
        &url,
        "hierad config get --env 1 --level node=node-1.domain.tld --resource astute --format yaml",
    );
    assert!(got.starts_with("---\n"), "{}", &got[..80]);
    assert_eq!(hierad::hiera::yaml::load(&got).unwrap(), astute);

    // Use case 2.
    let got = ok(
        dir.path(),
        &url,
        "hierad config get --env 1 --level node=node-1.domain.tld --resource astute --key deployment_id",
    );
    assert_eq!(got, "{\n  \"deployment_id\": 15\n}\n");

    // Use case 3: override, then look it up again. The Integer stays one
    // (no --type in the seed's words), and the command says so.
    let got = ok(
        dir.path(),
        &url,
        "hierad config override --env 1 --level node=node-1.domain.tld --resource astute --key deployment_id --value 2",
    );
    assert_eq!(got, "deployment_id = 2 (Integer)\n");
    let got = ok(
        dir.path(),
        &url,
        "hierad config get --env 1 --level node=node-1.domain.tld --resource astute --key deployment_id",
    );
    assert_eq!(got, "{\n  \"deployment_id\": 2\n}\n");
    // Written at the level the seed means (`nodes`), nowhere else.
    let got = ok(
        dir.path(),
        &url,
        "hierad config get --env 1 --level nodes=node-1.domain.tld --resource astute --stored --kind overrides",
    );
    assert_eq!(got, "{\n  \"deployment_id\": 2\n}\n");
    let got = ok(
        dir.path(),
        &url,
        "hierad config get --env 1 --level node=node-2.domain.tld --resource astute --key deployment_id --format plain",
    );
    assert_eq!(got, "15\n");

    // Use case 4: a Hiera lookup of deployment_id with the node's scope
    // from test_scope.yaml, through the server (the real `hiera` with the
    // shim: tests/oracle/shim).
    std::fs::write(
        dir.path().join("test_scope.yaml"),
        "::fqdn: node-1.domain.tld\n",
    )
    .unwrap();
    let got = ok(
        dir.path(),
        &url,
        "hierad lookup --env 1 --level node=node-1.domain.tld deployment_id --yaml test_scope.yaml",
    );
    assert_eq!(got, "2\n");
    let got = ok(
        dir.path(),
        &url,
        "hierad lookup --env 1 --level node=node-2.domain.tld deployment_id --yaml test_scope.yaml",
    );
    assert_eq!(got, "15\n");
}

/// The node register's life from the command line, over `conn`
/// (`--db PATH` or `--server URL`) to a database holding the sample as
/// environment 1; `scratch` for a tree to import.
fn register_from_the_command_line(conn: &str, scratch: &Path) {
    let run = |line: &str| binary::output(binary::command(&format!("{line} {conn}")), None);
    let ok = |line: &str| {
        let out = run(line);
        assert!(out.status.success(), "{line} {conn}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let fails = |line: &str| {
        let out = run(line);
        assert_eq!(out.status.code(), Some(1), "{line} {conn}");
        text(&out.stderr)
    };
    if conn.starts_with("--db") {
        ok("import data --env 1");
    }
    // Without a register, any node, as before.
    ok("config get --env 1 --level nodes=node-5 --resource astute --key deployment_id");
    assert!(
        fails("register list --env 1 --level nodes")
            .contains("environment 1 keeps no register of level \"nodes\"")
    );
    assert_eq!(
        ok("register add --env 1 --level nodes node-1 node-2"),
        "added 2 value(s) to the register of level nodes of environment 1 (2 in all)\n"
    );
    assert_eq!(
        ok("register list --env 1 --level nodes"),
        "node-1\nnode-2\n"
    );
    let refused = fails("config get --env 1 --level node=node-5 --resource astute");
    assert!(
        refused.starts_with("hierad: Cannot find a node with the given identifier: \"node-5\""),
        "{refused}"
    );
    let refused =
        fails("config override --env 1 --level nodes=node-5 --resource astute --key a --value 1");
    assert!(
        refused.contains("Cannot find a node with the given identifier"),
        "{refused}"
    );
    ok("config override --env 1 --level node=node-1 --resource astute --key a --value 1");
    // import --register registers as it uploads.
    let tree = scratch.join("node-tree");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("astute.yaml"), "uid: '7'\n").unwrap();
    let tree = tree.to_str().unwrap();
    let refused = fails(&format!("import {tree} --env 1 --level nodes=node-7"));
    assert!(
        refused.contains("Cannot find a node with the given identifier"),
        "{refused}"
    );
    ok(&format!(
        "import {tree} --env 1 --level nodes=node-7 --register"
    ));
    assert_eq!(
        ok("register list --env 1 --level nodes"),
        "node-1\nnode-2\nnode-7\n"
    );
    assert_eq!(
        ok("config get --env 1 --level nodes=node-7 --resource astute --key uid --format plain"),
        "7\n"
    );
    assert_eq!(
        ok("register remove --env 1 --level nodes node-2 node-9"),
        "removed 1 value(s) from the register of level nodes of environment 1 (2 left)\n"
    );
    assert!(
        fails("register add --env 1 --level nodes=x y")
            .contains("--level names a level here (e.g. nodes), not a level path")
    );
    assert!(
        fails("register add --env 1 --level racks r1")
            .contains("level \"racks\" is not one of environment 1's levels")
    );
    assert_eq!(
        ok("register clear --env 1 --level nodes"),
        "removed the register of level nodes of environment 1: the level takes any value\n"
    );
    ok("config get --env 1 --level nodes=node-5 --resource astute --key deployment_id");
}

#[test]
fn registers_from_the_command_line_on_a_local_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    register_from_the_command_line(&format!("--db {}", db.display()), dir.path());
}

#[test]
fn registers_from_the_command_line_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &["--db", "served.db"]).unwrap();
    register_from_the_command_line(&format!("--server {}", served.url), dir.path());
}
