//! `hierad lookup` behaviours that the differential suite cannot show:
//! hierad's additions (`--explain`, `-y` without Puppet) and the README's
//! first command on the sample data.

use crate::binary::{Args, BIN, ROOT, text};
use std::path::Path;
use std::process::{Command, Output};

fn lookup(dir: &Path, args: &(impl Args + ?Sized)) -> Output {
    Command::new(BIN)
        .arg("lookup")
        .args(args.words())
        .current_dir(dir)
        .env_remove("COLUMNS")
        .output()
        .expect("run hierad")
}

#[test]
fn readme_command_answers_from_the_sample_data() {
    let out = lookup(
        Path::new(ROOT),
        "-c data/hiera.yaml -h nova ::fqdn=node-126.test.domain.local",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The node override's state_path wins; astute supplies the rest.
    assert_eq!(
        text(&out.stdout),
        "{\"db_password\"=>\"PVzZrklbvr2gHtJL4e8a0s6t\",\n \"state_path\"=>\"/srv/nova\",\n \"user_password\"=>\"f09qoLIdLU7oGLGFAGFNj1Ja\"}\n"
    );
}

#[test]
fn explain_names_the_levels_and_what_each_supplied() {
    let out = lookup(
        Path::new(ROOT),
        "-c data/hiera.yaml --explain -a dns_nameservers ::fqdn=node-126.test.domain.local",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "Explaining array lookup of 'dns_nameservers':");
    assert!(lines.contains(
        &"  yaml level 'override/node/node-126.test.domain.local' (data/override/node/node-126.test.domain.local.yaml): FOUND [\"10.109.15.53\"]"
    ), "{stdout}");
    assert!(
        lines.contains(
            &"  yaml level 'override/class/': skipped: not a valid level after interpolation"
        ),
        "{stdout}"
    );
    assert!(
        lines.contains(&"  yaml level 'nodes' (data/nodes.yaml): no data"),
        "{stdout}"
    );
    assert!(
        lines.contains(
            &"  yaml level 'override/plugins' (data/override/plugins.yaml): key not present"
        ),
        "{stdout}"
    );
    assert_eq!(lines[lines.len() - 2], "Result: found");
    assert_eq!(
        lines[lines.len() - 1],
        "[\"10.109.15.53\", \"10.109.15.1\"]"
    );
}

#[test]
fn explain_reports_errors_and_defaults() {
    let out = lookup(
        Path::new(ROOT),
        "-c data/hiera.yaml --explain no_such_key fallback",
    );
    assert!(out.status.success());
    assert!(text(&out.stdout).ends_with("Result: not found, the default applies\nfallback\n"));
    let out = lookup(
        Path::new(ROOT),
        &["-c", "data/hiera.yaml", "--explain", "-a", "nova"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains(
        "Result: error: Hiera type mismatch for key 'nova': expected Array and got Hash (Exception)"
    ));
    assert_eq!(
        text(&out.stderr),
        "hierad: Hiera type mismatch for key 'nova': expected Array and got Hash (Exception)\n"
    );
}

#[test]
fn yaml_scope_works_without_puppet() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(
        dir.path().join("hiera.yaml"),
        ":hierarchy:\n  - \"nodes/%{::fqdn}\"\n  - common\n:yaml:\n  :datadir: data\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("data/nodes")).unwrap();
    std::fs::write(dir.path().join("data/nodes/n1.yaml"), "role: web\n").unwrap();
    std::fs::write(dir.path().join("data/common.yaml"), "role: none\n").unwrap();
    std::fs::write(dir.path().join("scope.yaml"), "'::fqdn': n1\n").unwrap();
    std::fs::write(dir.path().join("list.yaml"), "- a\n").unwrap();
    let out = lookup(
        dir.path(),
        &["-c", "hiera.yaml", "-y", "scope.yaml", "role"],
    );
    assert_eq!(text(&out.stdout), "web\n", "{}", text(&out.stderr));
    let out = lookup(dir.path(), &["-c", "hiera.yaml", "-y", "list.yaml", "role"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "Could not load YAML scope: RuntimeError: Scope from yaml file list.yaml should be a Hash\n"
    );
    let out = lookup(
        dir.path(),
        &["-c", "hiera.yaml", "-y", "missing.yaml", "role"],
    );
    assert_eq!(
        text(&out.stderr),
        "Could not load YAML scope: RuntimeError: Cannot find scope yaml file missing.yaml\n"
    );
}

#[test]
fn help_lists_the_hiera_options_and_explain() {
    let out = lookup(Path::new(ROOT), &["--help"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("Usage: hiera [options] key [default value] [variable='text'...]\n")
    );
    for option in ["-h, --hash", "-f, --format TYPE", "--explain"] {
        assert!(stdout.contains(option), "{option} missing from:\n{stdout}");
    }
}

#[test]
fn inventory_service_fails_as_without_puppet() {
    let out = lookup(
        Path::new(ROOT),
        &["-c", "data/hiera.yaml", "-i", "node1", "k"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "Puppet inventory service lookup failed: LoadError: cannot load such file -- puppet/util/run_mode\n\
         Could not load Puppet inventory service scope: SystemExit: exit\n"
    );
}

/// Data whose interpolation fans out: `f1` is "y",
/// `fN` ten `%{hiera('fN-1')}`, so `f6` would take 111,110 steps.
fn fan_out_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hiera.yaml"),
        format!(
            ":backends: [yaml]\n:hierarchy: [common]\n:yaml:\n  :datadir: {}\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let mut data = String::from("f1: y\n");
    for n in 2..=6 {
        data.push_str(&format!(
            "f{n}: \"{}\"\n",
            format!("%{{hiera('f{}')}}", n - 1).repeat(10)
        ));
    }
    std::fs::write(dir.path().join("common.yaml"), data).unwrap();
    dir
}

#[test]
fn a_lookup_over_its_budget_is_refused_naming_the_flag() {
    let dir = fan_out_tree();
    let out = lookup(dir.path(), &["-c", "hiera.yaml", "f6"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "hierad: Lookup budget exceeded: more than 10000 interpolation steps (%{} expansions, hiera() and alias() lookups) (Hierad::StepBudgetExceeded)\n\
         hierad: the lookup was refused, not answered: look for interpolation fan-out in the data, or raise the budget with --budget-steps N\n"
    );
    assert!(out.stdout.is_empty());
    // Raised, the same lookup answers (f4: 1,110 steps).
    let out = lookup(
        dir.path(),
        &["-c", "hiera.yaml", "--budget-steps", "1110", "f4"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{}\n", "y".repeat(1000)));
    let out = lookup(
        dir.path(),
        &["-c", "hiera.yaml", "--budget-steps=1109", "f4"],
    );
    assert_eq!(out.status.code(), Some(1));
    let out = lookup(
        dir.path(),
        &["-c", "hiera.yaml", "--budget-bytes", "999", "f4"],
    );
    assert!(
        text(&out.stderr).contains("(Hierad::ByteBudgetExceeded)\nhierad: the lookup was refused, not answered: look for interpolation fan-out in the data, or raise the budget with --budget-bytes N\n"),
        "{}",
        text(&out.stderr)
    );
    let out = lookup(
        dir.path(),
        &["-c", "hiera.yaml", "--budget-steps", "many", "f4"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "hierad: invalid argument: --budget-steps many (a whole number of steps) (OptionParser::InvalidArgument)\n"
    );
    // A server lookup runs on the server's budget.
    let out = lookup(
        dir.path(),
        "--server http://127.0.0.1:1 --env 1 --budget-steps 5 f4",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("a server lookup runs on the server's"),
        "{}",
        text(&out.stderr)
    );
}
