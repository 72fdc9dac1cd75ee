//! `hierad puppet-lookup` on what only hierad decides: refusals of what
//! Puppet reads and hierad does not, each naming it, and the command-line
//! errors. Its answers against the real `puppet lookup` are the oracle
//! suite's (tests/oracle/hiera5).

use crate::binary::{refused, run, text};
use std::path::Path;

/// An environment whose one hierarchy entry uses `entry`.
fn tree(entry: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("envs/production");
    std::fs::create_dir_all(env.join("data")).unwrap();
    std::fs::write(
        env.join("hiera.yaml"),
        format!("version: 5\nhierarchy:\n  - name: the entry\n    {entry}\n"),
    )
    .unwrap();
    std::fs::write(env.join("data/common.yaml"), "key: value\n").unwrap();
    std::fs::write(
        dir.path().join("facts.json"),
        r#"{"os": {"family": "Debian"}}"#,
    )
    .unwrap();
    dir
}

fn args<'a>(dir: &'a Path, extra: &[&'a str]) -> Vec<String> {
    let mut all: Vec<String> = ["puppet-lookup", "--environmentpath"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    all.push(dir.join("envs").to_string_lossy().into_owned());
    for (flag, value) in [("--confdir", "conf"), ("--facts", "facts.json")] {
        all.push(flag.to_owned());
        all.push(dir.join(value).to_string_lossy().into_owned());
    }
    all.extend(extra.iter().map(|s| (*s).to_owned()));
    all
}

fn refused_in(dir: &Path, extra: &[&str]) -> String {
    let all = args(dir, extra);
    refused(&all.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn a_tree_answers_and_a_missing_key_exits_1_silently() {
    let dir = tree("path: common.yaml\n    data_hash: yaml_data");
    let all = args(dir.path(), &["key"]);
    let out = run(&all.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "--- value\n".to_owned())
    );
    let all = args(dir.path(), &["no_such_key"]);
    let out = run(&all.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
}

#[test]
fn data_functions_hierad_does_not_read_are_named() {
    for (entry, named) in [
        (
            "path: common.yaml\n    lookup_key: hiera_vault",
            "'lookup_key: hiera_vault'",
        ),
        (
            "path: common.yaml\n    data_hash: my_data",
            "'data_hash: my_data'",
        ),
        (
            "path: common.yaml\n    data_dig: my_dig",
            "'data_dig: my_dig'",
        ),
    ] {
        let dir = tree(entry);
        let message = refused_in(dir.path(), &["key"]);
        assert!(
            message.contains(named) && message.contains("hierarchy 'the entry'"),
            "{message}"
        );
    }
}

#[test]
fn what_hierad_does_not_do_yet_is_refused_by_name() {
    let dir = tree("path: common.yaml\n    data_hash: yaml_data");
    let message = refused_in(dir.path(), &["--explain", "--render-as", "yaml", "key"]);
    assert!(message.contains("explains as text"), "{message}");
    let message = refused_in(dir.path(), &["--render-as", "msgpack", "key"]);
    assert!(message.contains("msgpack"), "{message}");
    let message = refused_in(dir.path(), &["--environment", "nosuch", "key"]);
    assert!(
        message.contains("Could not find a directory environment named 'nosuch'"),
        "{message}"
    );
}

#[test]
fn facts_that_are_no_hash_are_refused_in_puppets_words() {
    let dir = tree("path: common.yaml\n    data_hash: yaml_data");
    std::fs::write(dir.path().join("facts.json"), "[1]").unwrap();
    let all = args(dir.path(), &["key"]);
    let out = run(&all.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("Error: Could not run: Incorrectly formatted data in ")
            && stderr.contains("facts.json given via the --facts flag"),
        "{stderr}"
    );
}
