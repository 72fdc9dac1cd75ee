//! The layers and locations beside the environment's paths, through an
//! imported environment: tests/fixtures/control-repo's module layer
//! (`modules/ntp` with lookup_options of its own and keys merged with the
//! environment's, `modules/apache` with a level of its own and a key
//! outside its namespace, `modules/legacy` whose version 3 hiera.yaml
//! Puppet ignores), its `mapped_paths` level (`facts.services`) and its
//! glob (`shared/*.yaml`). `hierad puppet-lookup --server` after
//! `hierad import-environment` answers every case as the real `puppet
//! lookup` over the files: exit status and stdout byte for byte. Then
//! Puppet through the shim with the printed hiera.yaml and the modules
//! left in place (Puppet reads module data from its modules): the module
//! and glob keys again.

use super::Outcome;
use super::server::{ENV, copy_dir, differences, puppet_over_files_and_shim, shim_environment};
use crate::binary;
use crate::server::TestServer;
use std::path::Path;

/// A node without the `services` fact (the mapped level reads nothing).
const BARE: &str = "bare";

const NODES: [&str; 5] = ["web1", "web2", "db1", "lb1", BARE];

/// Module keys (the module layer, merged with the environment's where
/// both hold one).
const MODULE: &[&str] = &[
    "ntp::servers",
    "ntp::config",
    "ntp::config.tinker.panic",
    "ntp::package",
    "ntp::interp",
    "ntp::enabled",
    "ntp::missing",
    "apache::port",
    "apache::mods",
    "apache::docroot",
    "legacy::key",
    "--merge first ntp::servers",
    "--merge hash ntp::config",
    "--merge unique apache::mods",
    "--render-as json ntp::config",
    "ntp::missing apache::docroot",
];

/// The glob's keys.
const GLOB: &[&str] = &[
    "shared::motd",
    "shared::list",
    "shared::only_base",
    "shared::only_site",
    "--merge unique shared::list",
];

/// The mapped level's keys.
const MAPPED: &[&str] = &[
    "service::ports",
    "service::first",
    "service::config",
    "service::nginx::enabled",
    "service::ssh::enabled",
    "service::postgresql::enabled",
    "--merge deep service::config",
    "--render-as json service::ports",
    "--merge first service::ports",
];

fn cases() -> Vec<(&'static str, &'static str)> {
    NODES
        .iter()
        .flat_map(|n| MODULE.iter().chain(GLOB).chain(MAPPED).map(|c| (*n, *c)))
        .collect()
}

fn found(o: &Outcome) -> bool {
    o.status == 0 && !o.stdout.is_empty()
}

#[test]
fn modules_mapped_paths_and_globs_answer_as_puppet_lookup_over_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let fixture = Path::new(binary::ROOT).join("tests/fixtures/control-repo");
    let env_dir = root.join("envs/production");
    copy_dir(&fixture, &env_dir);
    std::fs::write(
        env_dir.join(format!("facts/{BARE}.yaml")),
        "---\ndatacenter: fra\nos:\n  family: RedHat\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("conf")).unwrap();

    let server = TestServer::empty();
    let (env, dir_arg) = (ENV.to_string(), env_dir.to_string_lossy());
    let args = [
        "import-environment",
        &dir_arg,
        "--server",
        &server.url,
        "--env",
        &env,
    ];
    let out = binary::output(binary::command(&args[..]), None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("imported the module layer of apache, ntp")
            && stderr.contains("left out module legacy: its hiera.yaml is not version 5")
            && stderr.contains("leaves out hierarchy entry \"Per-service data\""),
        "{stderr}"
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(
        printed.contains("uris: [\"shared/10-base\",\"shared/20-site\"]"),
        "{printed}"
    );
    let shim = root.join("envs/viashim");
    shim_environment(&shim, &printed);
    for module in ["ntp", "apache", "legacy"] {
        copy_dir(
            &fixture.join("modules").join(module),
            &shim.join("modules").join(module),
        );
    }

    let cases = cases();
    let shim_cases: Vec<usize> = (0..cases.len())
        .filter(|i| !MAPPED.contains(&cases[*i].1) && matches!(cases[*i].0, "web1" | "lb1"))
        .collect();
    let (expected, through_shim) = puppet_over_files_and_shim(root, &cases, &shim_cases);

    // Guards against passing vacuously: Puppet found module, glob and
    // mapped keys for most nodes, with answers that differ by node, and
    // merged a key across the environment and module layers.
    let count = |keys: &[&str]| {
        cases
            .iter()
            .zip(&expected)
            .filter(|((_, c), o)| keys.contains(c) && found(o))
            .count()
    };
    let distinct = |prefix: &str| {
        let answers: std::collections::HashSet<&str> = cases
            .iter()
            .zip(&expected)
            .filter(|((_, c), o)| c.starts_with(prefix) && found(o))
            .map(|(_, o)| o.stdout.as_str())
            .collect();
        answers.len()
    };
    let (module, glob, mapped) = (count(MODULE), count(GLOB), count(MAPPED));
    assert!(
        module >= MODULE.len() * NODES.len() * 2 / 3
            && glob >= GLOB.len() * NODES.len() * 2 / 3
            && mapped >= MAPPED.len() * 2
            && distinct("ntp::") >= 10
            && distinct("service::") >= 8,
        "Puppet found {module} module, {glob} glob and {mapped} mapped answers"
    );
    let web1 = |case: &str| {
        let at = cases.iter().position(|c| *c == ("web1", case)).unwrap();
        expected[at].stdout.clone()
    };
    let servers = web1("ntp::servers");
    assert!(
        servers.contains("env.pool") && servers.contains("module.pool"),
        "{servers}"
    );
    assert!(web1("legacy::key").is_empty() && web1("ntp::package").contains("ntpsec"));

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
