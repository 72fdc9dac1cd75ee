//! Every command block of README.md, docs/*.md, hiera/README.md,
//! puppet/README.md and data/README.md run as printed, so a recipe cannot rot: each document's
//! blocks in order, as one bash script (`set -e`), in a fresh copy of the
//! checkout with `hierad` on the PATH and `HOME` there, against the servers
//! the recipes start themselves (on 8750, the docs' port). A failure names
//! the file, the line, the block and its output.
//!
//! Which blocks are commands (docs/architecture.md, "Recipes in the
//! docs", says the same for writers):
//! - an indented block (4 spaces after a blank line), or a fenced block
//!   tagged `sh`, `bash`, `shell` or untagged, is a command block and runs;
//! - a fenced block with another tag (`yaml`, `json`, `puppet`, `text`…)
//!   is not;
//! - a marker, the line before the block (blank lines aside), says
//!   otherwise: `<!-- recipe: skip (REASON) -->` (not run: it needs what
//!   the test lacks), `<!-- recipe: text -->` (not a command: output, a
//!   usage, an excerpt), `<!-- recipe: file PATH -->` (a file the commands
//!   use, written to PATH before the document's first command), or
//!   `<!-- recipe: background -->` (a server, as in a second terminal:
//!   started in the background, the next block runs once it prints
//!   `listening on`).
//!
//! A `cargo` on the PATH stands in for the build the test has done:
//! `cargo run [--release] -- ARGS` runs `hierad ARGS`, `cargo install`
//! does nothing (hierad is on the PATH), `cargo build` links
//! target/{debug,release}/hierad to it; anything else fails.

use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::binary::{BIN, ROOT};

/// The port the docs' servers listen on (hierad's default).
const PORT: u16 = 8750;
/// How long one document's blocks may run, all together.
const LIMIT: Duration = Duration::from_secs(180);

#[derive(Debug, PartialEq)]
enum Kind {
    Command,
    Background,
    File(String),
    Skip(String),
    Text,
}

#[derive(Debug)]
struct Block {
    /// The line of its first content line, 1-based.
    line: usize,
    kind: Kind,
    text: String,
}

/// The documents whose blocks are recipes, relative to the repository.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    let mut all = vec!["README.md".to_owned()];
    all.extend(docs);
    all.extend(["hiera/README.md", "puppet/README.md", "data/README.md"].map(str::to_owned));
    all
}

/// The marker `line` holds, if it is one.
fn marker(line: &str) -> Option<Result<Kind, String>> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim()
        .strip_prefix("recipe:")?
        .trim();
    let kind = match inner.split_once(' ') {
        _ if inner == "text" => Ok(Kind::Text),
        _ if inner == "background" => Ok(Kind::Background),
        Some(("file", path)) if !path.trim().is_empty() => Ok(Kind::File(path.trim().to_owned())),
        Some(("skip", reason)) => match reason.trim().strip_prefix('(') {
            Some(reason) if reason.len() > 1 && reason.ends_with(')') => {
                Ok(Kind::Skip(reason.strip_suffix(')').unwrap().to_owned()))
            }
            _ => Err(format!("`{inner}`: a skip says why, in parentheses")),
        },
        _ => Err(format!(
            "unknown marker `{inner}` (skip (REASON), text, file PATH, background)"
        )),
    };
    Some(kind)
}

/// The blocks of `doc`, each with the kind its fence or marker gives it.
fn blocks(doc: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut blocks = Vec::new();
    let mut pending: Option<(usize, Kind)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(found) = marker(line) {
            if let Some((at, _)) = pending {
                return Err(format!("line {}: a marker not followed by a block", at + 1));
            }
            pending = Some((i, found.map_err(|e| format!("line {}: {e}", i + 1))?));
            i += 1;
            continue;
        }
        let (start, end, text, command) = if let Some(tag) = line.strip_prefix("```") {
            let end = (i + 1..lines.len())
                .find(|&j| lines[j].starts_with("```"))
                .ok_or_else(|| format!("line {}: a fence never closed", i + 1))?;
            let tag = tag.split_whitespace().next().unwrap_or("");
            let command = matches!(tag, "" | "sh" | "bash" | "shell");
            (i + 1, end + 1, lines[i + 1..end].join("\n"), command)
        } else if line.starts_with("    ") && (i == 0 || lines[i - 1].trim().is_empty()) {
            let mut end = i;
            while end < lines.len()
                && (lines[end].starts_with("    ")
                    || (lines[end].trim().is_empty()
                        && lines.get(end + 1).is_some_and(|l| l.starts_with("    "))))
            {
                end += 1;
            }
            let indent = lines[i..end]
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| l.len() - l.trim_start().len())
                .min()
                .unwrap_or(4);
            let text = lines[i..end]
                .iter()
                .map(|l| l.get(indent..).unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            (i, end, text, true)
        } else {
            if let Some((at, _)) = pending.as_ref().filter(|_| !line.trim().is_empty()) {
                return Err(format!("line {}: a marker not followed by a block", at + 1));
            }
            i += 1;
            continue;
        };
        let kind = match pending.take() {
            Some((at, Kind::Skip(_) | Kind::Background)) if !command => {
                return Err(format!(
                    "line {}: skip and background mark command blocks; this one is not",
                    at + 1
                ));
            }
            Some((_, kind)) => kind,
            None if command => Kind::Command,
            None => Kind::Text,
        };
        blocks.push(Block {
            line: start + 1,
            kind,
            text,
        });
        i = end;
    }
    match pending {
        Some((at, _)) => Err(format!("line {}: a marker not followed by a block", at + 1)),
        None => Ok(blocks),
    }
}

/// What every script starts with: stop at the first failing command,
/// nothing read from the test's input, and `recipe_wait OUT PID`, which
/// waits until a background block's server prints `listening on`.
const PRELUDE: &str = r#"set -e
exec </dev/null
recipe_wait() {
  for _ in $(seq 600); do
    grep -q 'listening on' "$1" && return 0
    kill -0 "$2" 2>/dev/null || { echo '(recipes test: it exited before listening)' >>"$1"; return 1; }
    sleep 0.1
  done
  echo '(recipes test: not listening after 60 s)' >>"$1"; return 1
}
"#;

/// The bash script that runs `blocks` in order, with each block's output
/// in `state/N.out` and the block running in `state/current`.
fn script(blocks: &[Block], state: &Path) -> String {
    let state = state.display();
    let mut script = PRELUDE.to_owned();
    for (n, block) in blocks.iter().enumerate() {
        let out = format!("{state}/{n}.out");
        match block.kind {
            Kind::Command => writeln!(
                script,
                "echo {n} >{state}/current\nexec >{out} 2>&1\n{}",
                block.text
            ),
            Kind::Background => writeln!(
                script,
                "echo {n} >{state}/current\n( {}\n) >{out} 2>&1 &\nrecipe_wait {out} $!",
                block.text
            ),
            _ => Ok(()),
        }
        .unwrap();
    }
    writeln!(script, "echo done >{state}/current").unwrap();
    script
}

/// The stand-in for `cargo` (see the module's comment).
const CARGO: &str = r#"#!/bin/sh
case "$1" in
  run) while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
       [ $# -gt 0 ] && shift
       exec hierad "$@" ;;
  install) echo "(recipes test: hierad is on the PATH already)" ;;
  build) mkdir -p target/debug target/release
         ln -sf "$RECIPES_HIERAD" target/debug/hierad
         ln -sf "$RECIPES_HIERAD" target/release/hierad ;;
  *) echo "cargo $*: not available to the recipes test (mark the block)" >&2; exit 1 ;;
esac
"#;

/// A copy of the checkout (without target/ and .git) in `to`.
fn copy_checkout(from: &Path, to: &Path, top: bool) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if top && (name == "target" || name == ".git") {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_checkout(&entry.path(), &to.join(&name), false);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// Waits until nothing listens on [`PORT`] (a previous document's server
/// is gone), or panics naming it.
fn port_free() {
    let start = Instant::now();
    while std::net::TcpListener::bind(("127.0.0.1", PORT)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "port {PORT} is in use: the recipes start their servers on it (the docs' \
             default port); stop what listens there and run the test again"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Ends the process group of `child` (the script and the servers it
/// started): TERM, then KILL if some are still there after 10 s.
fn stop_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let signal = |sig: &str| {
        Command::new("kill")
            .args([sig, "--", &group])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    signal("-TERM");
    let _ = child.wait();
    let start = Instant::now();
    while signal("-0") {
        if start.elapsed() > Duration::from_secs(10) {
            signal("-KILL");
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs the command blocks of `name`; the failure's report, if one fails.
fn run_document(name: &str, blocks: &[Block]) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let state = dir.path().join("state");
    let bin = state.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    copy_checkout(Path::new(ROOT), &work, true);
    for block in blocks {
        if let Kind::File(path) = &block.kind {
            let path = work.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, format!("{}\n", block.text)).unwrap();
        }
    }
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, CARGO).unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script_path = state.join("script.sh");
    std::fs::write(&script_path, script(blocks, &state)).unwrap();

    let hierad_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}:{}",
        hierad_dir.display(),
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("bash");
    command
        .arg(&script_path)
        .current_dir(&work)
        .env("PATH", path)
        .env("HOME", &work)
        .env("RECIPES_HIERAD", BIN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (var, _) in std::env::vars() {
        if var.starts_with("HIERAD_") || var == "COLUMNS" {
            command.env_remove(var);
        }
    }
    command.process_group(0);
    port_free();
    let mut child = command.spawn().expect("run bash");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > LIMIT {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    stop_group(&mut child);
    let current = std::fs::read_to_string(state.join("current")).unwrap_or_default();
    let current = current.trim();
    if status.is_some_and(|s| s.success()) && current == "done" {
        return None;
    }
    let n: usize = current.parse().ok()?;
    let block = &blocks[n];
    let output = std::fs::read_to_string(state.join(format!("{n}.out"))).unwrap_or_default();
    let tail: String = {
        let chars: Vec<char> = output.chars().collect();
        chars[chars.len().saturating_sub(4000)..].iter().collect()
    };
    let how = match status {
        Some(status) => format!("failed ({status})"),
        None => format!("did not finish within {LIMIT:?}"),
    };
    Some(format!(
        "{name}:{}: the block {how}:\n{}\n--- its output ---\n{tail}",
        block.line, block.text
    ))
}

#[test]
fn every_recipe_in_the_docs_runs_as_printed() {
    let mut failures = Vec::new();
    let mut counts = (0, 0);
    for name in documents() {
        let doc = std::fs::read_to_string(Path::new(ROOT).join(&name)).unwrap();
        let blocks = match blocks(&doc) {
            Ok(blocks) => blocks,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let runs = |b: &&Block| matches!(b.kind, Kind::Command | Kind::Background);
        let run = blocks.iter().filter(runs).count();
        counts.0 += run;
        counts.1 += blocks
            .iter()
            .filter(|b| matches!(b.kind, Kind::Skip(_)))
            .count();
        if run > 0 {
            failures.extend(run_document(&name, &blocks));
        }
    }
    eprintln!(
        "recipes: {} command blocks run, {} skipped",
        counts.0, counts.1
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn markers_tell_commands_from_files_output_and_skips() {
    let doc = "text\n\n    hierad one\n    hierad two\n\n```yaml\na: 1\n```\n\n\
               <!-- recipe: file a.yaml -->\n\n```yaml\nb: 2\n```\n\n\
               <!-- recipe: skip (needs docker) -->\n\n    docker run x\n\n\
               <!-- recipe: text -->\n\n    usage\n\n\
               <!-- recipe: background -->\n```sh\nhierad serve\n```\n";
    let kinds: Vec<(usize, Kind)> = blocks(doc)
        .unwrap()
        .into_iter()
        .map(|b| (b.line, b.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            (3, Kind::Command),
            (7, Kind::Text),
            (13, Kind::File("a.yaml".into())),
            (18, Kind::Skip("needs docker".into())),
            (22, Kind::Text),
            (26, Kind::Background),
        ]
    );
    assert!(blocks("<!-- recipe: skip -->\n\n    x\n").is_err());
    assert!(blocks("<!-- recipe: skip (why) -->\n\nprose\n").is_err());
    assert!(blocks("<!-- recipe: run -->\n\n    x\n").is_err());
    assert!(blocks("<!-- recipe: skip (why) -->\n```yaml\na: 1\n```\n").is_err());
}
