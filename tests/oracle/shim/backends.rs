//! The hierad backend beside the yaml backend (`:backends: [hierad,
//! yaml]`): a hierad value that interpolates data only the yaml backend
//! holds (`%{hiera('secret')}`, `%{alias('…')}`) gets the answer the real
//! `hiera` gives. Expected: `hiera` over YAML files only, the hierad
//! backend's data and the yaml backend's as two halves of one hierarchy
//! (Hiera 3 asks its backends in turn, each over the whole hierarchy, and
//! merges their answers in that order). Actual: `hiera` with the hierad
//! backend, its half of the data imported into a running hierad.

use super::env::Hierad;
use super::oracle::{Job, run_hiera};
use std::path::Path;

/// The hierad backend's data (imported), as files of its own datadir.
const HIERAD_DATA: &[(&str, &str)] = &[
    (
        "nodes/n1.example.yaml",
        "url: \"http://%{hiera('secret')}/x\"\n\
         both: [from-hierad-node]\n\
         merged: {node: \"%{hiera('secret')}\", shared: hierad-node}\n",
    ),
    (
        "common.yaml",
        "whoami: \"%{::fqdn} as %{scope('role')}, %{role}\"\n\
         aliased: \"%{alias('yaml_list')}\"\n\
         chained: \"%{hiera('url')}/more\"\n\
         own: \"%{hiera('local')}-%{hiera('secret')}\"\n\
         local: here\n\
         both: [from-hierad-common, \"%{hiera('secret')}\"]\n\
         merged: {common: 1, shared: hierad-common, deep: {a: \"%{hiera('secret')}\"}}\n\
         hkey: {\"%{hiera('secret')}\": value}\n",
    ),
];

/// The yaml backend's data.
const YAML_DATA: &[(&str, &str)] = &[
    (
        "nodes/n1.example.yaml",
        "both: [from-yaml-node]\nmerged: {yaml_node: true}\n",
    ),
    (
        "common.yaml",
        "secret: s3cret\n\
         yaml_list: [a, \"%{role}\"]\n\
         both: [from-yaml-common]\n\
         merged: {shared: yaml-common, yaml: \"%{hiera('local')}\", deep: {b: 2}}\n",
    ),
];

const HIERARCHY: &[&str] = &["nodes/%{::fqdn}", "common"];

/// The lookups compared: `hiera()`, scope and plain variables, `alias`,
/// chains through both backends, interpolated keys, and array and hash
/// merges across the two backends.
const LOOKUPS: &[&[&str]] = &[
    &["url"],
    &["whoami"],
    &["aliased"],
    &["chained"],
    &["own"],
    &["hkey"],
    &["secret"],
    &["absent"],
    &["-a", "both"],
    &["-h", "merged"],
    &["-h", "hkey"],
];

fn write_tree(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn levels(prefix: &str) -> String {
    HIERARCHY
        .iter()
        .map(|l| format!("  - \"{prefix}{l}\"\n"))
        .collect()
}

#[test]
fn hierad_beside_yaml_answers_as_hiera_over_files() {
    let hierad = Hierad::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_tree(&d.join("files/hierad"), HIERAD_DATA);
    write_tree(&d.join("files/yaml"), YAML_DATA);
    assert!(
        hierad
            .import_dir(&d.join("files/hierad"), "datadir=n1")
            .is_empty(),
        "every file imports"
    );
    let files = d.join("files");
    std::fs::write(
        d.join("files.yaml"),
        format!(
            ":backends: [yaml]\n:yaml:\n  :datadir: {}\n:hierarchy:\n{}{}",
            files.display(),
            levels("hierad/"),
            levels("yaml/")
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("hierad.yaml"),
        format!(
            ":backends: [hierad, yaml]\n:yaml:\n  :datadir: {}\n:hierarchy:\n{}\
             :hierad:\n  :url: {}\n  :environment: {}\n  :level: datadir=n1\n",
            files.join("yaml").display(),
            levels(""),
            hierad.url(),
            super::env::ENV
        ),
    )
    .unwrap();

    let job = |config: &str, format: &str, lookup: &[&str]| {
        let mut args = vec!["-c".to_owned(), config.to_owned()];
        if !format.is_empty() {
            args.extend(["-f".to_owned(), format.to_owned()]);
        }
        args.extend(lookup.iter().map(|a| (*a).to_owned()));
        args.extend(["::fqdn=n1.example".to_owned(), "role=web".to_owned()]);
        Job {
            args,
            dir: d.to_owned(),
            columns: None,
        }
    };
    let mut jobs = Vec::new();
    for lookup in LOOKUPS {
        for format in ["", "json"] {
            jobs.push(job("files.yaml", format, lookup));
            jobs.push(job("hierad.yaml", format, lookup));
        }
    }
    let before = hierad.requests("GET", "/api/v1/data/{env}/{*resource}");
    let outcomes = run_hiera(&jobs);
    let mut failures = Vec::new();
    for (pair, jobs) in outcomes.chunks(2).zip(jobs.chunks(2)) {
        let (files, through) = (&pair[0], &pair[1]);
        if files.status != through.status || files.stdout != through.stdout {
            failures.push(format!(
                "{:?}:\n  files:  exit {} {}\n  hierad: exit {} {}{}",
                &jobs[1].args[2..],
                files.status,
                String::from_utf8_lossy(&files.stdout).trim(),
                through.status,
                String::from_utf8_lossy(&through.stdout).trim(),
                String::from_utf8_lossy(&through.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Not vacuous: the answers hold what only the other backend has, and
    // the hierad backend read its datasources from the server.
    let text = |i: usize| String::from_utf8_lossy(&outcomes[i].stdout).into_owned();
    assert_eq!(text(0).trim(), "http://s3cret/x");
    // `aliased`, the yaml backend's Array through an alias.
    assert_eq!(text(8).trim(), "[\"a\", \"web\"]");
    assert!(hierad.requests("GET", "/api/v1/data/{env}/{*resource}") > before);
}
