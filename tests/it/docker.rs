//! The Dockerfile, checked where Docker cannot run (issue 14, item 9): the
//! build stage's COPY and RUN steps replayed in a clean folder (the build
//! as `cargo check`, sharing this build's target folder: a release build
//! from nothing takes too long), the runtime stage's files, its
//! HEALTHCHECK, and the entrypoint's two ways of starting.
//!
//! The replayed build takes a minute or more, so it is ignored in the fast
//! suite and run by .ci/run (`cargo test --test it docker:: -- --ignored`).

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The Dockerfile's instructions, continuation lines joined: (stage index,
/// instruction, arguments).
fn instructions() -> Vec<(usize, String, String)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("Dockerfile")).unwrap();
    let mut joined = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if current.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => current.push_str(part),
            None => {
                current.push_str(line);
                joined.push(std::mem::take(&mut current));
            }
        }
    }
    let mut stage = 0;
    let mut out = Vec::new();
    for line in joined {
        let (word, rest) = line.split_once(' ').unwrap_or((&line, ""));
        let word = word.to_uppercase();
        if word == "FROM" && !out.is_empty() {
            stage += 1;
        }
        out.push((stage, word, rest.trim().to_owned()));
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("COPY {}: {e}", from.display()));
    }
}

/// Where the build stage's COPY puts a source: `./src` in WORKDIR.
fn destination(workdir: &Path, source: &str, dest: &str) -> PathBuf {
    let dest = dest.trim_start_matches("./");
    if dest.is_empty() || dest.ends_with('/') {
        workdir
            .join(dest)
            .join(Path::new(source).file_name().unwrap())
    } else {
        workdir.join(dest)
    }
}

#[test]
#[ignore = "a cargo check of the crate in a clean folder: run by .ci/run"]
fn the_build_stage_builds_in_a_clean_folder() {
    let clean = tempfile::tempdir().unwrap();
    let steps: Vec<_> = instructions()
        .into_iter()
        .filter(|(s, _, _)| *s == 0)
        .collect();
    assert!(steps[0].2.ends_with("AS build"), "{:?}", steps[0]);
    let mut ran = 0;
    for (_, word, args) in &steps {
        match word.as_str() {
            "COPY" => {
                let words: Vec<&str> = args.split_whitespace().collect();
                let (dest, sources) = words.split_last().unwrap();
                for source in sources {
                    let to = destination(clean.path(), source, dest);
                    if let Some(parent) = to.parent() {
                        std::fs::create_dir_all(parent).unwrap();
                    }
                    copy_tree(&Path::new(ROOT).join(source), &to);
                }
            }
            "RUN" => {
                // `cargo build --release …` as a check: what the folder
                // must hold is the same.
                let words: Vec<&str> = args.split_whitespace().collect();
                assert_eq!(&words[..3], ["cargo", "build", "--release"], "{args}");
                let out = Command::new(env!("CARGO"))
                    .arg("check")
                    .args(&words[3..])
                    .current_dir(clean.path())
                    .env("CARGO_TARGET_DIR", Path::new(ROOT).join("target"))
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
            }
            "FROM" | "WORKDIR" => {}
            other => panic!("the build stage has {other}: teach this test what it does"),
        }
    }
    assert_eq!(ran, 1);
}

#[test]
fn the_runtime_stage_runs_unprivileged_with_a_healthcheck() {
    let steps: Vec<_> = instructions()
        .into_iter()
        .filter(|(s, _, _)| *s == 1)
        .collect();
    let has = |word: &str| {
        steps
            .iter()
            .find(|(_, w, _)| w == word)
            .map(|(_, _, a)| a.clone())
    };
    let health = has("HEALTHCHECK").expect("a HEALTHCHECK");
    // `hierad health` finds the server on HIERAD_LISTEN's port, over TLS
    // too (tests/it/health.rs); a plain-HTTP probe would fail on TLS.
    assert!(health.ends_with("CMD [\"hierad\", \"health\"]"), "{health}");
    assert!(
        has("USER").is_none(),
        "the entrypoint drops root itself (a USER would keep it from fixing the volume)"
    );
    assert_eq!(
        has("ENTRYPOINT").as_deref(),
        Some("[\"hierad-entrypoint\"]")
    );
    assert_eq!(has("VOLUME").as_deref(), Some("/var/lib/hierad"));
    // Every file the stage copies from the repository exists; the
    // entrypoint is executable.
    for (_, word, args) in &steps {
        if word == "COPY" && !args.starts_with("--from") {
            let source = args.split_whitespace().next().unwrap();
            let path = Path::new(ROOT).join(source);
            assert!(path.exists(), "{source}");
            use std::os::unix::fs::PermissionsExt as _;
            assert!(
                path.metadata().unwrap().permissions().mode() & 0o111 != 0,
                "{source} is not executable"
            );
        }
    }
}

/// The entrypoint as a user that is not root: it runs hierad when the
/// data folder is writable and says what to do when it is not. (Its root
/// branch needs the image's hierad user: it chowns and drops to it.)
#[test]
fn the_entrypoint_without_root() {
    let script = Path::new(ROOT).join("docker/entrypoint.sh");
    let syntax = Command::new("sh").arg("-n").arg(&script).status().unwrap();
    assert!(syntax.success());
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_hierad"))
        .parent()
        .unwrap()
        .to_owned();
    let data = tempfile::tempdir().unwrap();
    let is_root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let run = |mode: u32| {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(data.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        let mut command = if is_root {
            // As nobody, as `docker run --user 65534` would.
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh"]);
            c
        } else {
            Command::new("sh")
        };
        command
            .arg(&script)
            .arg("--version")
            .env("HIERAD_DATA", data.path())
            .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
            .output()
            .unwrap()
    };
    let out = run(0o777);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("hierad "));
    let out = run(0o555);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is not writable by uid") && stderr.contains("chown it on the host"),
        "{stderr}"
    );
}

/// The README states the minimum Rust version as Cargo.toml's
/// rust-version. (That the crate keeps to it: its dependencies' own
/// rust-versions are at most 1.85 in Cargo.lock, clippy's incompatible_msrv
/// lint refuses newer standard library APIs, and the code uses no let
/// chains, which need 1.88.)
#[test]
fn the_readme_states_the_rust_version_of_cargo_toml() {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("Rust {version} or newer")),
        "README.md must state Rust {version}"
    );
}
