//! A tree with data files that do not parse, looked up by the real `hiera`
//! over the files (yaml backend) and after `hierad import` of the same
//! tree (the hierad backend alone, and beside the yaml backend, where it
//! reads whole datasources): for keys whose lookup reads a broken file
//! and keys whose lookup does not, stdout, exit status and Hiera's error
//! must be identical. The expectations are the real `hiera`'s, made at
//! test time.

use super::env::{ENV, Hierad};
use super::oracle::{Job, run_hiera};
use std::path::Path;

/// The tree: `first` answers `early` before any broken file is read;
/// `syntax`, `list` and `latin1` are three ways Hiera fails to read a
/// file; `good` and `common` read fine.
const FILES: &[(&str, &[u8])] = &[
    ("data/first.yaml", b"early: first\n"),
    ("data/syntax.yaml", b"k: [1\nother: 2\n"),
    ("data/list.yaml", b"- k\n- v\n"),
    ("data/latin1.yaml", b"k: caf\xe9\n"),
    ("data/good.yaml", b"k: good\nlist: [g]\n"),
    ("data/common.yaml", b"k: common\nearly: common\nlist: [c]\n"),
];

const HIERARCHY: &str = ":hierarchy:\n  - first\n  - \"%{file}\"\n  - common\n";

/// Every lookup, for each file the middle level may name.
const LOOKUPS: &[&str] = &["k", "early", "-a early", "-a list", "-h missing", "nope"];
const NAMED: &[&str] = &["syntax", "list", "latin1", "good", "none"];

#[test]
fn hiera_over_an_imported_broken_tree_fails_and_answers_as_over_the_files() {
    let hierad = Hierad::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (path, bytes) in FILES {
        std::fs::create_dir_all(d.join(path).parent().unwrap()).unwrap();
        std::fs::write(d.join(path), bytes).unwrap();
    }
    // Imported from where hiera runs, so the kept files carry the names
    // Hiera gives them (`data/list.yaml`).
    let skipped = hierad.import_named(d, Path::new("data"), "datadir=n1");
    assert!(skipped.is_empty(), "{skipped:?}");
    let section = format!(
        ":hierad:\n  :url: {}\n  :environment: {ENV}\n  :level: datadir=n1\n",
        hierad.url()
    );
    let configs = [
        (
            "yaml",
            ":backends: [yaml]\n:yaml:\n  :datadir: data\n".to_owned(),
        ),
        ("hierad", format!(":backends: [hierad]\n{section}")),
        (
            "beside",
            format!(":backends: [hierad, yaml]\n{section}:yaml:\n  :datadir: none\n"),
        ),
    ];
    for (name, backends) in &configs {
        std::fs::write(
            d.join(format!("{name}.yaml")),
            format!("{backends}{HIERARCHY}"),
        )
        .unwrap();
    }
    let mut cases = Vec::new();
    for lookup in LOOKUPS {
        for file in NAMED {
            cases.push(format!("{lookup} file={file}"));
        }
    }
    let jobs: Vec<Job> = configs
        .iter()
        .flat_map(|(config, _)| {
            cases.iter().map(move |case| {
                let mut args = vec!["-c".to_owned(), format!("{config}.yaml")];
                args.extend(case.split(' ').map(str::to_owned));
                Job {
                    args,
                    dir: d.to_owned(),
                    columns: None,
                }
            })
        })
        .collect();
    let outcomes = run_hiera(&jobs);
    let (yaml, rest) = outcomes.split_at(cases.len());
    let mut failed = 0;
    let mut answered = 0;
    for (i, case) in cases.iter().enumerate() {
        let want = &yaml[i];
        if want.status == 0 {
            answered += 1;
        } else {
            failed += 1;
        }
        for (n, (config, _)) in configs[1..].iter().enumerate() {
            let got = &rest[n * cases.len() + i];
            assert_eq!(
                (got.status, &got.stdout, got.error_line()),
                (want.status, &want.stdout, want.error_line()),
                "hiera {case} with {config}: {got:?}\nyaml: {want:?}"
            );
        }
    }
    // Both kinds are compared: lookups that read a broken file, and
    // lookups that answer past it (`early` is found before any is read).
    assert!(
        failed >= 12 && answered >= 12,
        "{failed} failed, {answered} answered"
    );
    let errors: Vec<String> = yaml
        .iter()
        .filter_map(super::oracle::Outcome::error_line)
        .collect();
    for class in ["(Psych::SyntaxError)", "(TypeError)"] {
        assert!(
            errors.iter().any(|e| e.ends_with(class)),
            "no {class} in {errors:?}"
        );
    }
    assert!(
        errors
            .iter()
            .any(|e| e.contains("Data retrieved from data/list.yaml is Array not Hash")),
        "{errors:?}"
    );
}
