//! `hierad puppet-lookup` against the real `puppet lookup` (Puppet 7)
//! over the same Hiera 5 tree, facts and flags: exit status, stdout and
//! stderr byte for byte. The expected answers come from Puppet at test
//! time, every Puppet run forked from one Ruby process that loaded Puppet
//! once (tests/support/puppet_oracle.rb), twelve runs per forked child
//! (checked against runs alone: `ALONE`).

mod broken;
mod eyaml;
mod layers;
mod server;
mod tree;

use crate::binary;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value as Json, json};
use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

/// Flags (after the common ones) and keys: one `puppet lookup` each.
const CASES: &[&str] = &[
    // Plain values through the hierarchy, in each format.
    "greeting",
    "--render-as s greeting",
    "--render-as json greeting",
    "os_only",
    "role_only",
    "int",
    "--render-as json int",
    "--render-as s float",
    "float",
    "big",
    "--render-as json big",
    "yes_string",
    "--render-as s bool",
    "nil_value",
    "--render-as s nil_value",
    "--render-as json nil_value",
    "empty_string",
    "multiline",
    "colon",
    "nested",
    "--render-as s nested",
    "--render-as json nested",
    "json_value",
    "extra_value",
    // Missing keys, several keys, defaults.
    "no_such_key",
    "no_such_key greeting int",
    "--default fallback no_such_key",
    "--default fallback greeting",
    "--render-as json --default 5 no_such_key",
    "lookup_options",
    "lookup_options.hash_deep",
    // Dotted and quoted keys.
    "nested.map.inner",
    "nested.list.1",
    "nested.list.5",
    "nested.list.x",
    "greeting.x",
    "'\"dotted.key\"'",
    "'quoted.\"a.b\".c'",
    "a..b",
    // lookup_options: names, Hashes, patterns, convert_to.
    "hash_deep",
    "list",
    "layered",
    "layered_hash",
    "ko",
    "ko_list",
    "sorted",
    "strategy_only",
    "re_one",
    "re_two",
    "conv_array",
    "conv_int",
    "conv_hash_array",
    "bad_merge",
    // --merge overrides lookup_options.
    "--merge first hash_deep",
    "--merge unique list",
    "--merge hash hash_deep",
    "--merge deep hash_deep",
    "--merge deep --knock-out-prefix -- ko_list",
    "--merge deep --sort-merged-arrays sorted",
    "--merge deep --merge-hash-arrays hash_arrays",
    "--merge unique greeting",
    "--merge hash list",
    "--merge bogus greeting",
    "--sort-merged-arrays greeting",
    // Interpolation.
    "interp_scope",
    "interp_scope_fn",
    "interp_quoted",
    "interp_lookup",
    "interp_lookup_dotted",
    "interp_lookup_missing",
    "interp_alias",
    "interp_alias_list",
    "interp_literal",
    "interp_empty",
    "interp_undefined",
    "interp_hash_in_string",
    "interp_in_hash",
    "interp_in_array",
    "interp_bad_method",
    "interp_alias_partial",
    "interp_loop",
    "interp_loop_a",
    "interp_syntax",
    // glob, globs, mapped_paths.
    "svc_value",
    "svc_list",
    "glob_value",
    "glob_list",
    "many_list",
    // The three layers.
    "global_only",
    "mymod::only",
    "mymod::layered",
    "mymod::merged",
    "mymod::interp",
    "unqualified",
    "broken::key",
    "--environment broken fine",
    "--environment bare global_only",
    "--environment bare greeting",
    // Another node, facts as YAML.
    "--facts facts.yaml greeting",
    "--facts facts.yaml mymod::merged",
    "--facts facts.yaml svc_list",
    // Odd data.
    "--environment odd --merge unique uh",
    "--environment odd --merge hash hh",
    "--environment odd sym",
    "--environment odd bogus",
    "--environment odd al_missing",
    "--environment odd lk_hash",
    "--environment odd tr",
    "--environment odd keyi",
    "--environment odd ca",
    "--environment odd ci",
    "--environment odd cs",
    "--environment odd --merge deep --merge-hash-arrays ma",
    "--environment twice k",
    "--environment yamlish site",
    "--environment yamlish mirror",
    "--environment yamlish all_hosts",
    "--explain --environment yamlish site",
    "--environment dated released",
    "--explain --environment dated released",
    "--environment nodefaults plain",
    "--explain --environment nodefaults plain",
    "--environment nohierarchy elsewhere",
    "--explain --environment nohierarchy elsewhere",
    "--environment versiononly only",
    "--explain --environment versiononly only",
    // --explain: every layer, entry, location, merge, sub key and
    // interpolation searched, and why a lookup failed.
    "--explain greeting",
    "--explain --render-as s int",
    "--explain hash_deep",
    "--explain no_such_key",
    "--explain no_such_key greeting int",
    "--explain --default fallback no_such_key",
    "--explain lookup_options",
    "--explain nested.map.inner",
    "--explain nested.list.5",
    "--explain ko",
    "--explain sorted",
    "--explain re_one",
    "--explain conv_int",
    "--explain bad_merge",
    "--explain --merge unique list",
    "--explain --merge hash list",
    "--explain --merge deep --sort-merged-arrays sorted",
    "--explain mymod::merged",
    "--explain mymod::interp",
    "--explain broken::key",
    "--explain nosuchmod::key",
    "--explain interp_scope",
    "--explain interp_quoted",
    "--explain interp_lookup",
    "--explain interp_alias",
    "--explain interp_bad_method",
    "--explain interp_loop_a",
    "--explain svc_list",
    "--explain glob_list",
    "--explain many_list",
    "--explain --facts facts.yaml mymod::merged",
    "--explain --environment broken fine",
    "--explain --environment bare global_only",
    "--explain --environment odd --merge unique uh",
    "--explain --environment odd sym",
    "--explain --environment twice k",
    "--explain --hiera_config conf/none.yaml global_only",
    "--explain --render-as json greeting",
    "--explain --render-as json no_such_key greeting",
    "--explain --render-as json --merge deep --sort-merged-arrays sorted",
    "--explain --render-as json mymod::merged",
    "--explain --render-as json nosuchmod::key",
    "--explain --render-as json interp_scope",
    "--explain --render-as json nested.list.5",
    "--explain --render-as json --environment twice k",
    // Command lines Puppet refuses.
    "--render-as xml greeting",
    "",
];

/// The flags every run gets: a private confdir (whose hiera.yaml is the
/// global layer), the tree's environments, the node and its facts.
pub(super) fn common(root: &Path, run: usize, node: &str) -> Vec<String> {
    let d = |sub: &str| {
        root.join(format!("run-{run}"))
            .join(sub)
            .to_string_lossy()
            .into_owned()
    };
    let mut args: Vec<String> = vec!["lookup".into()];
    for (flag, value) in [
        (
            "--confdir",
            root.join("conf").to_string_lossy().into_owned(),
        ),
        ("--vardir", d("var")),
        ("--codedir", d("code")),
        ("--rundir", d("run")),
        ("--logdir", d("log")),
        (
            "--environmentpath",
            root.join("envs").to_string_lossy().into_owned(),
        ),
        ("--color", "false".into()),
        ("--node", node.into()),
    ] {
        args.extend([flag.to_owned(), value]);
    }
    args
}

fn words(case: &str) -> Vec<String> {
    crate::shell::shell_split(case).expect("case splits")
}

/// The full argument list of a case; `--facts facts.json` unless the case
/// gives its own, `--environment production` likewise.
pub(super) fn job(root: &Path, run: usize, case: &str) -> Vec<String> {
    let mut args = common(root, run, "web1.example.com");
    let mine = words(case);
    if !mine.iter().any(|w| w == "--facts") {
        args.extend(["--facts".into(), "facts.json".into()]);
    }
    if !mine.iter().any(|w| w == "--environment") {
        args.extend(["--environment".into(), "production".into()]);
    }
    args.extend(mine);
    args
}

#[derive(Debug, PartialEq)]
pub(crate) struct Outcome {
    pub(crate) status: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs per forked child: a run after the first in a child skips most of
/// Puppet's start (tests/support/forked_commands.rb's run_batched).
pub(crate) const BATCH: usize = 12;

/// Cases whose stderr or exit status depend on Puppet's state (warnings
/// given once, errors, a failed lookup): run alone as well, to show that
/// a run sharing a child answers as a run of its own.
const ALONE: &[&str] = &[
    "unqualified",
    "interp_undefined",
    "--merge bogus greeting",
    "--render-as xml greeting",
    "--environment broken fine",
    "--explain --environment odd sym",
];

/// Every job through one Ruby process that loaded Puppet once, `batch`
/// runs per forked child.
pub(crate) fn puppet(root: &Path, jobs: &[Vec<String>], batch: usize) -> Vec<Outcome> {
    let input: Vec<Json> = jobs
        .iter()
        .map(|args| json!({"args": args, "dir": root}))
        .collect();
    let mut child = crate::tools::command("ruby")
        .arg(Path::new(binary::ROOT).join("tests/support/puppet_oracle.rb"))
        .env("LC_ALL", "C.UTF-8")
        .env("PUPPET_ORACLE_JOBS", "2")
        .env("PUPPET_ORACLE_BATCH", batch.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start ruby");
    let bytes = serde_json::to_vec(&input).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().expect("ruby output");
    writer.join().unwrap().expect("write ruby input");
    assert!(
        out.status.success(),
        "puppet_oracle.rb failed: {}",
        out.status
    );
    let results: Json = serde_json::from_slice(&out.stdout).expect("puppet_oracle.rb JSON");
    let text =
        |r: &Json, k: &str| String::from_utf8(B64.decode(r[k].as_str().unwrap()).unwrap()).unwrap();
    results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| Outcome {
            status: r["status"].as_i64().unwrap() as i32,
            stdout: text(r, "stdout"),
            stderr: text(r, "stderr"),
        })
        .collect()
}

pub(super) fn hierad(root: &Path, args: &[String]) -> Outcome {
    let mut all = vec!["puppet-lookup".to_owned()];
    all.extend(args[1..].iter().cloned());
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut command = binary::command(&refs);
    command.current_dir(root);
    let out = binary::output(command, None);
    Outcome {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn puppet_lookup_answers_as_puppet_lookup_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    tree::write(root);
    let jobs: Vec<Vec<String>> = CASES
        .iter()
        .enumerate()
        .map(|(i, c)| job(root, i, c))
        .collect();
    let expected = puppet(root, &jobs, BATCH);
    assert_eq!(expected.len(), CASES.len(), "one Puppet answer per case");

    // Runs sharing a child answer as runs of their own do.
    let alone: Vec<usize> = ALONE
        .iter()
        .map(|c| {
            CASES
                .iter()
                .position(|k| k == c)
                .expect("an ALONE case is a case")
        })
        .collect();
    let jobs_alone: Vec<Vec<String>> = alone.iter().map(|i| jobs[*i].clone()).collect();
    for (i, got) in alone.iter().zip(puppet(root, &jobs_alone, 1)) {
        assert_eq!(got, expected[*i], "{} alone and batched", CASES[*i]);
    }

    // The fork-per-run shortcut gives what the `puppet` command gives.
    let direct = crate::tools::command("puppet")
        .args(job(root, CASES.len(), CASES[0]))
        .current_dir(root)
        .output()
        .expect("run puppet");
    assert_eq!(
        (
            direct.status.code(),
            String::from_utf8_lossy(&direct.stdout).into_owned()
        ),
        (Some(expected[0].status), expected[0].stdout.clone()),
        "puppet directly and through puppet_oracle.rb"
    );

    // Guards against passing vacuously: Puppet answered, found values,
    // refused some, and its answers differ from case to case.
    let found = expected
        .iter()
        .filter(|o| o.status == 0 && !o.stdout.is_empty())
        .count();
    let failed = expected.iter().filter(|o| o.status == 1).count();
    let distinct: std::collections::HashSet<&str> =
        expected.iter().map(|o| o.stdout.as_str()).collect();
    assert!(
        found >= CASES.len() / 2 && failed >= 10 && distinct.len() >= CASES.len() / 2,
        "Puppet found {found}, failed {failed}, {} distinct answers",
        distinct.len()
    );

    assert_answers_as_puppet(root, CASES, &jobs, &expected);
}

/// `hierad puppet-lookup` run on each job answers as Puppet did
/// (`expected`): exit status, stdout and stderr.
pub(super) fn assert_answers_as_puppet(
    root: &Path,
    cases: &[&str],
    jobs: &[Vec<String>],
    expected: &[Outcome],
) {
    let mut problems = Vec::new();
    for ((case, args), want) in cases.iter().zip(jobs).zip(expected) {
        let got = hierad(root, args);
        if got != *want {
            problems.push(format!(
                "puppet-lookup {case}\n  puppet: {want:?}\n  hierad: {got:?}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} cases differ:\n{}",
        problems.len(),
        cases.len(),
        problems.join("\n")
    );
}
