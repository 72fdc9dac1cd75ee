//! A data file that does not parse, kept by `hierad import-environment`
//! (docs/hiera5.md): `puppet lookup` over the files, Puppet through the
//! shim (`hierad::data_hash`, with the hiera.yaml the import printed) and
//! `hierad puppet-lookup --server` give the same exit status and output.
//! A lookup that reads the file fails (exit 1, nothing printed); with
//! `--explain` the failure is the explanation's last line, Puppet's
//! `Unable to parse (PATH): …` naming the file where it was imported
//! from, through the shim as over the files. Lookups that never read it
//! answer. (The explanations as a whole differ through the shim: it
//! names `uri`s, not paths; `hierad puppet-lookup --server --explain`
//! prints the files' explanation whole.)

use super::server::{hierad_at, puppet_args, shim_environment};
use super::{BATCH, Outcome, puppet};
use crate::binary;
use crate::server::TestServer;
use std::path::Path;

const ENV: i64 = 6;

const HIERA: &str = "version: 5
defaults: {datadir: data, data_hash: yaml_data}
hierarchy:
  - {name: \"Per-node data\", path: \"nodes/%{trusted.certname}.yaml\"}
  - {name: common, path: common.yaml}
";

const FILES: [(&str, &str); 4] = [
    ("hiera.yaml", HIERA),
    (
        "data/nodes/bad.example.yaml",
        "greeting: [unclosed\nother: 1\n",
    ),
    (
        "data/nodes/good.example.yaml",
        "greeting: hello\nname: good\n",
    ),
    ("data/common.yaml", "greeting: common\nshared: everyone\n"),
];

/// Node and case: every key of both nodes, plain and explained.
const CASES: &[(&str, &str)] = &[
    ("bad", "greeting"),
    ("bad", "shared"),
    ("bad", "--default fallback nothing"),
    ("bad", "--render-as json greeting"),
    ("bad", "--explain greeting"),
    ("bad", "--explain shared"),
    ("bad", "--explain --render-as json greeting"),
    ("good", "greeting"),
    ("good", "shared"),
    ("good", "--explain name"),
];

fn facts(root: &Path, node: &str) -> String {
    root.join(format!("facts/{node}.yaml"))
        .to_string_lossy()
        .into_owned()
}

fn puppet_job(root: &Path, run: usize, env: &str, node: &str, case: &str) -> Vec<String> {
    puppet_args(root, run, env, (node, &facts(root, node)), case)
}

fn hierad(root: &Path, url: &str, node: &str, case: &str) -> Outcome {
    hierad_at(url, ENV, (node, &facts(root, node)), case)
}

/// The last line of an explanation (the failure, or what was found).
fn last_line(text: &str) -> &str {
    text.trim_end().rsplit('\n').next().unwrap_or_default()
}

#[test]
fn a_kept_broken_file_fails_as_puppet_fails_over_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let env_dir = root.join("envs/production");
    for (rel, text) in FILES {
        let path = env_dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir_all(root.join("facts")).unwrap();
    std::fs::create_dir_all(root.join("conf")).unwrap();
    for node in ["bad", "good"] {
        let name = format!("{node}.example");
        std::fs::write(
            facts(root, node),
            format!("{{clientcert: {name}, fqdn: {name}, hostname: {node}, domain: example}}\n"),
        )
        .unwrap();
    }

    let server = TestServer::empty();
    let out = binary::output(
        binary::command(&[
            "import-environment",
            &env_dir.to_string_lossy(),
            "--server",
            &server.url,
            "--env",
            &ENV.to_string(),
        ]),
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("kept unparsed") && stderr.contains("bad.example.yaml"),
        "{stderr}"
    );
    shim_environment(
        &root.join("envs/viashim"),
        &String::from_utf8(out.stdout).unwrap(),
    );

    let mut jobs: Vec<Vec<String>> = CASES
        .iter()
        .enumerate()
        .map(|(i, (node, case))| puppet_job(root, i, "production", node, case))
        .collect();
    jobs.extend(
        CASES
            .iter()
            .enumerate()
            .map(|(i, (node, case))| puppet_job(root, CASES.len() + i, "viashim", node, case)),
    );
    let mut files = puppet(root, &jobs, BATCH);
    assert_eq!(files.len(), jobs.len(), "one Puppet answer per job");
    let shim = files.split_off(CASES.len());

    // Guards against passing vacuously: over the files, the broken file
    // failed the bad node's lookups (exit 1 and nothing printed, even
    // with --default; or Puppet's parse error as an explanation's last
    // line) and the good node's answered.
    let unable = format!(
        "Unable to parse ({}/data/nodes/bad.example.yaml): did not find expected ',' or ']'",
        env_dir.display()
    );
    for ((node, case), got) in CASES.iter().zip(&files) {
        let explained = case.contains("--explain");
        let json = case.contains("json");
        let ok = match (*node, explained, json) {
            ("bad", true, false) => got.status == 0 && last_line(&got.stdout).starts_with(&unable),
            // The tree as data has no root texts: the file it stopped at.
            ("bad", true, true) => got.status == 0 && got.stdout.contains("bad.example.yaml\"}]"),
            ("bad", false, _) => got.status == 1 && got.stdout.is_empty(),
            _ => got.status == 0 && !got.stdout.is_empty(),
        };
        assert!(ok, "{node}: puppet lookup {case} over the files: {got:?}");
    }

    let mut problems = Vec::new();
    for (((node, case), want), via) in CASES.iter().zip(&files).zip(&shim) {
        // Through the shim an explanation names uris, not paths: its
        // failure (the last line) is compared; the rest whole.
        let same = if case.contains("--explain") && !case.contains("json") {
            via.status == want.status && last_line(&via.stdout) == last_line(&want.stdout)
        } else if case.contains("--explain") {
            // As data, the tree has no failure to compare.
            via.status == want.status
        } else {
            (via.status, &via.stdout) == (want.status, &want.stdout)
        };
        if !same {
            problems.push(format!(
                "{node}: puppet lookup {case} through the shim\n  files: {want:?}\n  shim:  {via:?}"
            ));
        }
        let got = hierad(root, &server.url, node, case);
        if (got.status, &got.stdout) != (want.status, &want.stdout) {
            problems.push(format!(
                "{node}: puppet-lookup --server {case}\n  puppet: {want:?}\n  hierad: {got:?}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} differ:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
