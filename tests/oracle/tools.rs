//! The real tools the oracle suites compare hierad with, and the one place
//! that starts them: a missing tool fails the test with its name and how to
//! install it, never a skip (CI must not pass by running nothing).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every tool some oracle test runs.
const TOOLS: &[&str] = &[
    "ruby",
    "hiera",
    "puppet",
    "openssl",
    "eyaml",
    "keystone-manage",
    "keystone-wsgi-public",
];

/// `Command::new(tool)`, after checking that `tool` is on PATH.
pub(crate) fn command(tool: &str) -> Command {
    if let Some(message) = missing(&[tool]) {
        panic!("{message}");
    }
    Command::new(tool)
}

/// `eyaml createkeys` run in `dir` (made if missing): the folder of the
/// pair it wrote, `dir/keys` (`private_key.pkcs7.pem`,
/// `public_key.pkcs7.pem`).
pub(crate) fn eyaml_createkeys(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let out = command("eyaml")
        .arg("createkeys")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "eyaml createkeys: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("keys")
}

/// The message naming the tools of `tools` that are not on PATH, if any.
fn missing(tools: &[&str]) -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let absent: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|tool| !std::env::split_paths(&path).any(|dir| is_executable(&dir.join(tool))))
        .collect();
    (!absent.is_empty()).then(|| {
        format!(
            "the oracle suite (tests/oracle) compares hierad with the real tools and \
             cannot find {} on PATH. Install Ruby, Hiera 3, deep_merge, Puppet 7, \
             openssl, hiera-eyaml and Keystone with `bash .ci/run`, or run only the fast suite with \
             `cargo test --lib --test it`.",
            absent.join(", ")
        )
    })
}

fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[test]
fn the_oracle_tools_are_installed() {
    if let Some(message) = missing(TOOLS) {
        panic!("{message}");
    }
}

#[test]
fn a_missing_tool_is_named() {
    let message = missing(&["hierad-no-such-tool"]).expect("reported");
    assert!(
        message.contains("cannot find hierad-no-such-tool on PATH") && message.contains(".ci/run"),
        "{message}"
    );
}
