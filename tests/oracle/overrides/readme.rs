//! README.md's Puppet recipes, run as printed with the real Puppet against
//! a server holding the sample: the module's install and the environment's
//! Hiera 5 `hiera.yaml` ("The shim on a Puppet master"), then the
//! override_resources path ("Changing any Puppet resource from data").
//!
//! Three things are redirected, nothing else: `puppet` gets its
//! directories (codedir, confdir, vardir…) under a temporary folder and
//! the certname `node-1.domain.tld`, as a wrapper script first on PATH;
//! the server's URL is the test server's; `/tmp/motd` is a file of the
//! temporary folder. The commands run from a folder whose `hiera` is the
//! repository's, so nothing is written into the checkout.

use crate::server::TestServer;
use crate::shim::oracle::ROOT;
use std::path::Path;
use std::process::{Command, Output};

/// The indented command block of README.md whose first line starts with
/// `first`, without its indentation.
fn block(readme: &str, first: &str) -> String {
    let lines: Vec<&str> = readme.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.strip_prefix("    ").is_some_and(|l| l.starts_with(first)))
        .unwrap_or_else(|| panic!("README.md has no command block starting with {first:?}"));
    lines[start..]
        .iter()
        .map_while(|l| l.strip_prefix("    "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Runs `script` with bash -e in `dir`, `puppet` and `hierad` on PATH.
fn run(dir: &Path, script: &str) -> Output {
    let path = format!(
        "{}:{}:{}",
        dir.join("bin").display(),
        Path::new(env!("CARGO_BIN_EXE_hierad"))
            .parent()
            .unwrap()
            .display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", script])
        .current_dir(dir.join("cwd"))
        .env("PATH", path)
        .output()
        .expect("run bash")
}

/// A folder for one run: `bin/puppet` (the real one with its directories
/// here) and `cwd/hiera` (the repository's module).
fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let real = crate::tools::command("puppet").get_program().to_owned();
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join(&real))
        .find(|p| p.is_file())
        .unwrap();
    let d = dir.path().display();
    std::fs::create_dir_all(dir.path().join("bin")).unwrap();
    std::fs::create_dir_all(dir.path().join("cwd")).unwrap();
    let wrapper = dir.path().join("bin/puppet");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec {} \"$@\" --confdir {d}/conf --codedir {d}/code --vardir {d}/var \
             --rundir {d}/run --logdir {d}/log --certname node-1.domain.tld --color false\n",
            real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    for module in ["hiera", "puppet"] {
        std::os::unix::fs::symlink(
            Path::new(ROOT).join(module),
            dir.path().join("cwd").join(module),
        )
        .unwrap();
    }
    dir
}

fn show(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stderr: Vec<&str> = stderr.lines().filter(|l| !l.contains("Facter:")).collect();
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        stderr.join("\n")
    )
}

#[test]
fn the_readmes_puppet_recipes_work_on_the_sample_as_printed() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let server = TestServer::with_sample();
    let local = |text: String, dir: &Path| {
        text.replace("http://127.0.0.1:8750", &server.url)
            .replace("/tmp/motd", &dir.join("motd").to_string_lossy())
    };
    let install = block(&readme, "env=$(puppet config print codedir)");
    let recipe = block(&readme, "cat > motd.yaml");
    assert!(
        install.contains("version: 5") && install.contains("override/configuration/cluster"),
        "{install}"
    );

    let dir = sandbox();
    let out = run(dir.path(), &local(install.clone(), dir.path()));
    assert!(out.status.success(), "{}", show(&out));
    // `puppet lookup deployment_id`: the sample's astute, through hierad.
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with("--- 15\n"),
        "{}",
        show(&out)
    );
    assert!(
        dir.path()
            .join(
                "code/environments/production/modules/hierad_resources/lib/puppet/type/override_resources.rb"
            )
            .is_file(),
        "{}",
        show(&out)
    );
    let out = run(dir.path(), &local(recipe.clone(), dir.path()));
    assert!(out.status.success(), "{}", show(&out));
    use std::os::unix::fs::PermissionsExt as _;
    let motd = dir.path().join("motd");
    assert_eq!(
        std::fs::read_to_string(&motd).ok().as_deref(),
        Some("managed by hierad\n"),
        "{}",
        show(&out)
    );
    assert_eq!(
        std::fs::metadata(&motd).unwrap().permissions().mode() & 0o7777,
        0o644
    );

    // What README says of `types_filter: [file]`: without it, the sample's
    // OpenStack types stop the run before anything is changed.
    let dir = sandbox();
    let unfiltered: String = recipe
        .lines()
        .filter(|l| !l.contains("configuration_options:") && !l.contains("types_filter"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        run(dir.path(), &local(install, dir.path()))
            .status
            .success()
    );
    let out = run(dir.path(), &local(unfiltered, dir.path()));
    assert!(!out.status.success(), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "the type 'keystone_config' (configuration.keystone_config) is not found in the \
             modulepath of environment production"
        ),
        "{}",
        show(&out)
    );
    assert!(!dir.path().join("motd").exists(), "{}", show(&out));
}
