//! A control repository (tests/fixtures/control-repo: five levels keyed
//! by trusted and facts variables, a JSON level, lookup_options with
//! names, Hashes and a regexp, a few hundred keys) moved into a server by
//! `hierad import-environment`, then every key looked up through
//! `hierad puppet-lookup --server`: exit status and stdout byte for byte
//! what the real `puppet lookup` answers over the files (generated at
//! test time, as the suite beside this one does). Then Puppet itself
//! through the shim (`hierad::data_hash`, hiera/) with the hiera.yaml the
//! import printed, on the merging, interpolating and reserved keys of a
//! node with data of its own, one without, and one whose facts leave
//! levels empty or unset: the same answers again. stderr is not compared: Puppet's warnings are its
//! own process's.

use super::{BATCH, Outcome, puppet};
use crate::binary;
use crate::server::TestServer;
use std::path::Path;

pub(super) const ENV: i64 = 5;

/// The fixture's levels and how many `…_only_N` keys each holds.
const LEVELS: [&str; 10] = [
    "common", "debian", "redhat", "ams", "fra", "web", "db", "lb", "web1", "db1",
];

/// Keys whose answers merge, interpolate or are reserved: asked of
/// every node.
const SPECIAL: &[&str] = &[
    "profile::users",
    "profile::hosts",
    "profile::packages_base",
    "profile::packages_extra",
    "profile::limits",
    "profile::sysctl",
    "profile::ntp::servers",
    "profile::converted",
    "profile::motd",
    "profile::ref",
    "profile::alias_arr",
    "profile::literal",
    "profile::scope",
    "profile::hiera_fn",
    "profile::hostname",
    "profile::domain",
    "profile::nested",
    "profile::nested.map.inner",
    "profile::nested.list.1",
    "profile::users.root.uid",
    "lookup_options",
    "lookup_options.profile::users",
    "no::such::key",
    "no::such::key profile::motd",
    "--default fallback no::such::key",
    "--merge first profile::users",
    "--merge unique profile::ntp::servers",
    "--merge hash profile::hosts",
    "--merge deep --knock-out-prefix -- --sort-merged-arrays profile::hosts",
    "--merge deep --merge-hash-arrays profile::users",
    "--render-as json profile::users",
    "--render-as s profile::limits",
    "--render-as json profile::base::setting_3",
];

/// `--explain` cases (text and json): the paths Puppet prints are the
/// files' under the directory the environment was imported from.
const EXPLAIN: &[&str] = &[
    "--explain profile::users",
    "--explain profile::users.root.uid",
    "--explain profile::motd",
    "--explain profile::ref",
    "--explain profile::nested.list.1",
    "--explain no::such::key",
    "--explain no::such::key profile::motd",
    "--explain --default fallback no::such::key",
    "--explain --merge unique profile::ntp::servers",
    "--explain --merge deep --knock-out-prefix -- --sort-merged-arrays profile::hosts",
    "--explain --render-as json profile::users",
    "--explain --render-as json profile::base::setting_3",
    "--explain --render-as json no::such::key profile::motd",
    "--explain --render-as json --default fallback no::such::key",
];

/// A node whose `role` fact is missing and whose `datacenter` is empty:
/// the levels they key name no data file (`roles/.yaml`) and Puppet goes
/// on to the next, where the shim sends `level: "facts.role="`.
const BARE: &str = "bare";

/// Every key of the fixture for web1; every tenth, and the special ones,
/// for the others.
fn cases() -> Vec<(&'static str, String)> {
    let mut all: Vec<String> = (0..120)
        .map(|i| format!("profile::base::setting_{i}"))
        .collect();
    for level in LEVELS {
        all.extend((0..8).map(|j| format!("{level}_only_{j}")));
    }
    let mut cases = Vec::new();
    for node in ["web1", "db1", "lb1", "web2", BARE] {
        let every = if node == "web1" { 1 } else { 10 };
        for key in all.iter().step_by(every) {
            cases.push((node, key.clone()));
        }
        cases.extend(SPECIAL.iter().map(|c| (node, (*c).to_owned())));
        if matches!(node, "web1" | "lb1" | BARE) {
            cases.extend(EXPLAIN.iter().map(|c| (node, (*c).to_owned())));
        }
    }
    cases
}

pub(super) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn facts(root: &Path, node: &str) -> String {
    root.join(format!("envs/production/facts/{node}.yaml"))
        .to_string_lossy()
        .into_owned()
}

/// `puppet lookup`'s arguments for one case in environment `env`.
pub(super) fn puppet_job(
    root: &Path,
    run: usize,
    env: &str,
    node: &str,
    case: &str,
) -> Vec<String> {
    puppet_args(root, run, env, (node, &facts(root, node)), case)
}

/// `puppet lookup`'s arguments for `case` in environment `env`, for
/// `node` (`NODE.example`) with the facts file given.
pub(super) fn puppet_args(
    root: &Path,
    run: usize,
    env: &str,
    (node, facts): (&str, &str),
    case: &str,
) -> Vec<String> {
    let mut args = super::common(root, run, &format!("{node}.example"));
    args.extend(["--environment".into(), env.to_owned()]);
    args.extend(["--facts".into(), facts.to_owned()]);
    args.extend(crate::shell::shell_split(case).expect("case splits"));
    args
}

/// Puppet's answers to every case over the files (environment
/// `production`), and to the `shim` cases (indexes into `cases`) again
/// through the shim (environment `viashim`): one batch of jobs.
pub(super) fn puppet_over_files_and_shim<C: AsRef<str>>(
    root: &Path,
    cases: &[(&str, C)],
    shim: &[usize],
) -> (Vec<Outcome>, Vec<Outcome>) {
    let mut jobs: Vec<Vec<String>> = cases
        .iter()
        .enumerate()
        .map(|(i, (node, case))| puppet_job(root, i, "production", node, case.as_ref()))
        .collect();
    jobs.extend(shim.iter().enumerate().map(|(j, i)| {
        let (node, case) = &cases[*i];
        puppet_job(root, cases.len() + j, "viashim", node, case.as_ref())
    }));
    let mut expected = puppet(root, &jobs, BATCH);
    assert_eq!(expected.len(), jobs.len(), "one Puppet answer per job");
    let through_shim = expected.split_off(cases.len());
    (expected, through_shim)
}

/// Where an answer differs from Puppet's over the files (`expected`):
/// the `shim` cases' answers through the shim, and every case's from
/// `hierad puppet-lookup --server url`.
pub(super) fn differences<C: AsRef<str>>(
    root: &Path,
    url: &str,
    cases: &[(&str, C)],
    expected: &[Outcome],
    shim: &[usize],
    through_shim: &[Outcome],
) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, got) in shim.iter().zip(through_shim) {
        let ((node, case), want) = (&cases[*i], &expected[*i]);
        if (got.status, &got.stdout) != (want.status, &want.stdout) {
            problems.push(format!(
                "{node}: puppet lookup {} through the shim\n  files: {want:?}\n  shim:  {got:?}",
                case.as_ref()
            ));
        }
    }
    for ((node, case), want) in cases.iter().zip(expected) {
        let got = hierad(root, url, node, case.as_ref());
        if (got.status, &got.stdout) != (want.status, &want.stdout) {
            problems.push(format!(
                "{node}: puppet-lookup {}\n  puppet: {want:?}\n  hierad: {got:?}",
                case.as_ref()
            ));
        }
    }
    problems
}

pub(super) fn hierad(root: &Path, url: &str, node: &str, case: &str) -> Outcome {
    hierad_at(url, ENV, (node, &facts(root, node)), case)
}

/// `hierad puppet-lookup --server url --env env` for `case`, for `node`
/// (`NODE.example`) with the facts file given.
pub(super) fn hierad_at(url: &str, env: i64, (node, facts): (&str, &str), case: &str) -> Outcome {
    let mut args: Vec<String> = ["puppet-lookup", "--server", url, "--env", &env.to_string()]
        .map(str::to_owned)
        .to_vec();
    args.extend(["--node".into(), format!("{node}.example")]);
    args.extend(["--facts".into(), facts.to_owned()]);
    args.extend(crate::shell::shell_split(case).expect("case splits"));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = binary::output(binary::command(&refs), None);
    Outcome {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// The environment Puppet reads through the shim: the hiera.yaml the
/// import printed, and the shim as module `hierad`.
pub(super) fn shim_environment(dir: &Path, printed: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("hiera.yaml"), printed).unwrap();
    let shim = Path::new(binary::ROOT).join("hiera");
    copy_dir(&shim.join("lib"), &dir.join("modules/hierad/lib"));
    std::fs::copy(
        shim.join("metadata.json"),
        dir.join("modules/hierad/metadata.json"),
    )
    .unwrap();
}

#[test]
fn an_imported_environment_answers_as_puppet_lookup_over_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let env_dir = root.join("envs/production");
    copy_dir(
        &Path::new(binary::ROOT).join("tests/fixtures/control-repo"),
        &env_dir,
    );
    std::fs::write(
        env_dir.join(format!("facts/{BARE}.yaml")),
        "---\ndatacenter: ''\nos:\n  family: Debian\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("conf")).unwrap();

    let server = TestServer::empty();
    let env = ENV.to_string();
    let dir_arg = env_dir.to_string_lossy();
    let printed = binary::ok(
        &[
            "import-environment",
            &dir_arg,
            "--server",
            &server.url,
            "--env",
            &env,
        ][..],
    );
    assert!(
        printed.starts_with("---\nversion: 5\nhierarchy:\n  - name: \"Per-node data\"\n    data_hash: hierad::data_hash\n    uri: \"nodes\"\n"),
        "{printed}"
    );
    assert!(
        printed.contains("level: \"trusted.certname=%{trusted.certname}\""),
        "{printed}"
    );
    shim_environment(&root.join("envs/viashim"), &printed);

    // Every case over the files, then the special ones through the shim.
    let cases = cases();
    let shim_cases: Vec<usize> = (0..cases.len())
        .filter(|i| {
            matches!(cases[*i].0, "web1" | "lb1" | BARE) && SPECIAL.contains(&cases[*i].1.as_str())
        })
        .collect();
    let (expected, through_shim) = puppet_over_files_and_shim(root, &cases, &shim_cases);

    // Guards against passing vacuously: Puppet found most keys, failed
    // some, and its answers differ from case to case.
    let found = expected
        .iter()
        .filter(|o| o.status == 0 && !o.stdout.is_empty())
        .count();
    let failed = expected.iter().filter(|o| o.status == 1).count();
    let distinct: std::collections::HashSet<&str> =
        expected.iter().map(|o| o.stdout.as_str()).collect();
    assert!(
        found >= cases.len() * 2 / 3 && failed >= 8 && distinct.len() >= cases.len() / 3,
        "Puppet found {found} and failed {failed} of {}, {} distinct answers",
        cases.len(),
        distinct.len()
    );

    // The explanations name the files under the imported directory, some
    // found and some not, and the json ones are Puppet's tree.
    let explained: Vec<&Outcome> = cases
        .iter()
        .zip(&expected)
        .filter(|((_, case), _)| case.starts_with("--explain"))
        .map(|(_, o)| o)
        .collect();
    let data = format!("Path \"{}/data/", env_dir.display());
    let text = |o: &&Outcome| o.status == 0 && o.stdout.contains(&data);
    let json = |o: &&Outcome| o.status == 0 && o.stdout.contains("\"original_path\":");
    assert_eq!(explained.len(), EXPLAIN.len() * 3, "explain cases");
    assert!(
        explained.iter().filter(|o| text(o) || json(o)).count() == explained.len()
            && explained
                .iter()
                .any(|o| o.stdout.contains("Path not found\n"))
            && explained.iter().filter(|o| json(o)).count() >= 4 * 3,
        "Puppet's explanations: {explained:?}"
    );

    // And the node with empty levels found most of its keys over the
    // files, so that the shim failing alike would not pass.
    let bare_found = shim_cases
        .iter()
        .filter(|i| cases[**i].0 == BARE && expected[**i].status == 0)
        .filter(|i| !expected[**i].stdout.is_empty())
        .count();
    assert!(bare_found >= SPECIAL.len() / 2, "{BARE} found {bare_found}");

    let problems = differences(
        root,
        &server.url,
        &cases,
        &expected,
        &shim_cases,
        &through_shim,
    );
    assert!(
        problems.is_empty(),
        "{} of {} cases differ:\n{}",
        problems.len(),
        cases.len() + shim_cases.len(),
        problems.join("\n")
    );
}
