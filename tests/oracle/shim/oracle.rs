//! Runs Ruby: the real `hiera` command through tests/support/diff_oracle.rb
//! (one Ruby process, a fork per invocation), and helper scripts.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value as Json, json};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

pub(crate) const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The shim's Ruby library, put on RUBYLIB so `hiera` finds the backend.
pub(crate) fn shim_lib() -> PathBuf {
    Path::new(ROOT).join("hiera/lib")
}

pub(crate) fn support(script: &str) -> PathBuf {
    Path::new(ROOT).join("tests/support").join(script)
}

/// One invocation of the `hiera` command.
#[derive(Clone, Debug)]
pub(crate) struct Job {
    pub(crate) args: Vec<String>,
    pub(crate) dir: PathBuf,
    pub(crate) columns: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Outcome {
    pub(crate) status: i32,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

impl Outcome {
    /// The first line of an uncaught exception or of a startup failure,
    /// without Ruby's `file:line:in 'method': ` prefix (the shim raises
    /// from other lines than the yaml backend).
    pub(crate) fn error_line(&self) -> Option<String> {
        let text = String::from_utf8_lossy(&self.stderr);
        let line = text.lines().find(|l| {
            !(l.starts_with("DEBUG: ")
                || l.starts_with("WARN: ")
                || l.starts_with('\t')
                || l.trim().is_empty())
        })?;
        let located = regex::Regex::new(r"^\S.*?:\d+:in [`'][^']*': ").unwrap();
        Some(located.replace(line, "").into_owned())
    }
}

/// Runs a Ruby script with JSON on stdin; returns its stdout as JSON.
pub(crate) fn ruby_json(script: &Path, input: &Json, env: &[(&str, &str)]) -> Json {
    let mut cmd = crate::tools::command("ruby");
    cmd.arg(script)
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start ruby");
    let bytes = serde_json::to_vec(input).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().expect("ruby output");
    writer.join().unwrap().expect("write ruby input");
    assert!(
        out.status.success(),
        "{} failed: {}",
        script.display(),
        out.status
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: output is not JSON: {e}", script.display()))
}

/// Runs every job through the real `hiera`, with the shim on RUBYLIB.
pub(crate) fn run_hiera(jobs: &[Job]) -> Vec<Outcome> {
    let input: Vec<Json> = jobs
        .iter()
        .map(|j| json!({"args": j.args, "dir": j.dir, "columns": j.columns}))
        .collect();
    let lib = shim_lib();
    let results = ruby_json(
        &support("diff_oracle.rb"),
        &Json::Array(input),
        &[
            ("RUBYLIB", lib.to_str().unwrap()),
            ("DIFF_ORACLE_JOBS", "2"),
            // Loaded once by the parent rather than by every forked run.
            ("RUBYOPT", "-rsocket"),
        ],
    );
    let results = results.as_array().expect("a list");
    assert_eq!(results.len(), jobs.len(), "the oracle lost runs");
    results
        .iter()
        .map(|r| Outcome {
            status: r["status"].as_i64().unwrap() as i32,
            stdout: B64.decode(r["stdout"].as_str().unwrap()).unwrap(),
            stderr: B64.decode(r["stderr"].as_str().unwrap()).unwrap(),
        })
        .collect()
}
