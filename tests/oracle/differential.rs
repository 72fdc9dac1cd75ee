//! Differential suite: `hierad lookup ARGS` must print the same stdout, the
//! same stderr (up to the agreed error form) and exit with the same status as
//! the real `hiera ARGS` (Hiera 3.10), case by case, in every output format.
//!
//! Cases live in `tests/fixtures/hiera/<group>/cases.txt` (format below);
//! the Fuel group adds cases generated from its data files' keys. Expected
//! answers come from the real command at test time, through
//! `tests/support/diff_oracle.rb` (one Ruby process, one fork per run).
//!
//! `cases.txt`: one invocation per line, the arguments after the command
//! name, split like a POSIX shell (`'..'`, `".."`, `$'..'`, `\`). Lines
//! starting with `#` are comments. Leading `@` words set options:
//! `@fail` (the real hiera must exit non-zero), `@warn` (exit 0 with text on
//! stderr; otherwise a case must exit 0 with stderr empty), `@asis` (run as
//! written, no `-f` added), `@columns=80,40,unset` (widths to run at;
//! default 80), `@proof` (also run through the real `hiera` executable to
//! prove the oracle, see `oracle_matches_real_hiera`). Unless the case
//! passes `-f` itself or says `@asis`, it runs three times: without `-f`
//! (ruby output) and with `-f json` and `-f yaml` put first.
//!
//! Stdout and the exit status must be equal, byte for byte. Stderr: when
//! Ruby died of an uncaught exception (`FILE:LINE:in `m': MESSAGE (CLASS)`,
//! `\tfrom` lines, the reports of its causes), hierad must print whatever
//! Ruby printed before it, then `hierad: MESSAGE (CLASS)` (more lines may
//! follow). Otherwise the texts must be equal. Ignored on both sides: the
//! times in `DEBUG: <time>: ` / `WARN: <time>: ` lines, and what Ruby's
//! developer gems add to messages (error_highlight's source line and
//! carets, did_you_mean's `Did you mean?` suggestions). Both commands run
//! with `LC_ALL=C.UTF-8` and stdin from /dev/null.
//!
//! Knobs (environment): `DIFF_HIERAD_BIN` runs another binary instead of
//! the crate's `hierad` (to smoke-test this harness); `DIFF_GROUPS=a,b` and
//! `DIFF_ORACLE_ONLY=1` narrow a run for debugging, and then the test fails
//! on purpose so a narrowed run can never pass for a full one; `DIFF_JOBS`
//! is the number of hierad runs at once (default 2); `DIFF_SHOW` the number
//! of mismatches printed in full (default 30; all go to the report file).

use crate::shell::shell_split;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use regex::Regex;
use serde_json::json;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hiera");
const ORACLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/diff_oracle.rb");
const KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/diff_keys.rb");
/// The real command, for the proof that the oracle's shortcut is faithful.
const HIERA: &str = "/usr/bin/hiera";
/// The Fuel group, whose cases are mostly generated from its data.
const FUEL: &str = "fuel";
/// A hierad run that takes longer than this is killed and reported.
const TIMEOUT: Duration = Duration::from_secs(20);

/// What the real hiera is expected to do with a case (a fixture sanity
/// check, so a broken fixture cannot pass unnoticed).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// Exit 0, nothing on stderr.
    Quiet,
    /// Exit 0, something on stderr.
    Warn,
    /// Exit non-zero.
    Fail,
}

/// One run: a case in one output format at one terminal width.
#[derive(Clone, Debug)]
struct Run {
    /// `group/cases.txt:LINE` or `fuel/<generator>`.
    id: String,
    dir: PathBuf,
    args: Vec<String>,
    /// `COLUMNS`; `None` leaves it unset.
    columns: Option<String>,
    expect: Expect,
    proof: bool,
    /// Generated from data keys: an error is as good an answer as a value.
    generated: bool,
}

#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    status: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

// ---------------------------------------------------------------------------
// Cases

/// Quotes words for display, so a printed command can be pasted into a shell.
fn shell_join(words: &[String]) -> String {
    let plain = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c))
    };
    words
        .iter()
        .map(|w| {
            if plain(w) {
                w.clone()
            } else if w.chars().any(|c| c.is_control()) {
                let mut s = String::from("$'");
                for c in w.chars() {
                    match c {
                        '\n' => s.push_str("\\n"),
                        '\t' => s.push_str("\\t"),
                        '\'' => s.push_str("\\'"),
                        '\\' => s.push_str("\\\\"),
                        c if c.is_control() => write!(s, "\\x{:02x}", c as u32).unwrap(),
                        c => s.push(c),
                    }
                }
                s + "'"
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Does the case choose its output format itself?
fn sets_format(args: &[String]) -> bool {
    args.iter()
        .any(|a| (a.starts_with("-f") && !a.starts_with("--")) || a.starts_with("--fo"))
}

/// The runs of one case: every format (unless fixed) at every width.
fn expand(id: String, dir: &Path, args: Vec<String>, opts: &CaseOpts, runs: &mut Vec<Run>) {
    let formats: &[&str] = if opts.asis || sets_format(&args) {
        &[""]
    } else {
        &["", "json", "yaml"]
    };
    for format in formats {
        for columns in &opts.columns {
            let mut full = Vec::new();
            if !format.is_empty() {
                full.extend(["-f".to_owned(), (*format).to_owned()]);
            }
            full.extend(args.iter().cloned());
            runs.push(Run {
                id: id.clone(),
                dir: dir.to_owned(),
                args: full,
                columns: columns.clone(),
                expect: opts.expect,
                proof: opts.proof,
                generated: opts.generated,
            });
        }
    }
}

struct CaseOpts {
    expect: Expect,
    asis: bool,
    proof: bool,
    generated: bool,
    columns: Vec<Option<String>>,
}

/// Parses a `cases.txt` into runs.
fn parse_cases(group: &str, dir: &Path, text: &str) -> Result<Vec<Run>, String> {
    let mut runs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let id = format!("{group}/cases.txt:{}", n + 1);
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let words = shell_split(trimmed).map_err(|e| format!("{id}: {e}"))?;
        let mut opts = CaseOpts {
            expect: Expect::Quiet,
            asis: false,
            proof: false,
            generated: false,
            columns: vec![Some("80".to_owned())],
        };
        let mut rest = words.as_slice();
        while let Some(w) = rest.first().filter(|w| w.starts_with('@')) {
            match w.as_str() {
                "@fail" => opts.expect = Expect::Fail,
                "@warn" => opts.expect = Expect::Warn,
                "@asis" => opts.asis = true,
                "@proof" => opts.proof = true,
                w if w.starts_with("@columns=") => {
                    opts.columns = w["@columns=".len()..]
                        .split(',')
                        .map(|c| (c != "unset").then(|| c.to_owned()))
                        .collect();
                }
                other => return Err(format!("{id}: unknown option {other}")),
            }
            rest = &rest[1..];
        }
        expand(id, dir, rest.to_vec(), &opts, &mut runs);
    }
    Ok(runs)
}

/// The Fuel group's generated cases: every top-level key of every data
/// file of a node, looked up for that node with priority, `-a` and `-h`.
/// Node `nodes/<fqdn>/` is selected by the scope file `scope-<fqdn>.json`.
fn fuel_cases(dir: &Path) -> Result<Vec<Run>, String> {
    let mut runs = Vec::new();
    let mut nodes: Vec<PathBuf> = std::fs::read_dir(dir.join("nodes"))
        .map_err(|e| format!("fuel nodes: {e}"))?
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    nodes.sort();
    if nodes.is_empty() {
        return Err("fuel: no nodes".into());
    }
    for node in nodes {
        let fqdn = node.file_name().unwrap().to_string_lossy().into_owned();
        let scope = format!("scope-{fqdn}.json");
        if !dir.join(&scope).is_file() {
            return Err(format!("fuel: no {scope} for node {fqdn}"));
        }
        let mut keys = top_level_keys(&node)?;
        // A node tree is an astute.yaml and more: far fewer keys means a
        // broken link or file, not a small node.
        if keys.len() < 60 {
            return Err(format!("fuel: only {} keys for {fqdn}", keys.len()));
        }
        keys.push("no_such_key".to_owned());
        let opts = CaseOpts {
            expect: Expect::Quiet,
            asis: false,
            proof: false,
            generated: true,
            columns: vec![Some("80".to_owned())],
        };
        for key in keys {
            for res in [None, Some("-a"), Some("-h")] {
                let mut args: Vec<String> =
                    vec!["-c".into(), "hiera.yaml".into(), "-j".into(), scope.clone()];
                args.extend(res.map(str::to_owned));
                if key.starts_with('-') {
                    args.push("--".into());
                }
                args.push(key.clone());
                let id = format!("fuel/generated {fqdn} {} {key}", res.unwrap_or("priority"));
                expand(id, dir, args, &opts, &mut runs);
            }
        }
    }
    Ok(runs)
}

/// The String top-level keys of the YAML files under `dir` (read by Ruby, so
/// they are the keys Hiera sees), in file order, each once.
fn top_level_keys(dir: &Path) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let out = crate::tools::command("ruby")
        .arg(KEYS)
        .args(&files)
        .output()
        .map_err(|e| format!("ruby {KEYS}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{KEYS}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let keys: Vec<String> = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    let mut seen = std::collections::HashSet::new();
    Ok(keys
        .into_iter()
        .filter(|k| seen.insert(k.clone()))
        .collect())
}

/// All runs, group by group; `DIFF_GROUPS` narrows the set.
fn load_runs(with_fuel: bool) -> (Vec<Run>, Option<String>) {
    let only: Option<Vec<String>> = std::env::var("DIFF_GROUPS")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    let mut groups: Vec<String> = std::fs::read_dir(FIXTURES)
        .expect("fixtures dir")
        .map(|e| e.unwrap())
        .filter(|e| e.path().join("cases.txt").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|g| (g == FUEL) == with_fuel)
        .collect();
    groups.sort();
    assert!(!groups.is_empty(), "no case groups under {FIXTURES}");
    let total = groups.len();
    if let Some(only) = &only {
        groups.retain(|g| only.contains(g));
    }
    let narrowed = only.map(|_| format!("DIFF_GROUPS ran {} of {total} groups", groups.len()));
    let mut runs = Vec::new();
    for g in &groups {
        let dir = Path::new(FIXTURES).join(g);
        let text = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
        runs.extend(parse_cases(g, &dir, &text).unwrap_or_else(|e| panic!("{e}")));
        if g == FUEL {
            runs.extend(fuel_cases(&dir).unwrap_or_else(|e| panic!("{e}")));
        }
    }
    (runs, narrowed)
}

// ---------------------------------------------------------------------------
// Running

/// Runs every case through the real hiera in one Ruby process.
fn run_oracle(runs: &[Run]) -> Vec<Outcome> {
    let jobs: Vec<_> = runs
        .iter()
        .map(|r| json!({"args": r.args, "dir": r.dir, "columns": r.columns}))
        .collect();
    let mut child = crate::tools::command("ruby")
        .arg(ORACLE)
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start ruby (the oracle)");
    let input = serde_json::to_vec(&jobs).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("oracle output");
    writer.join().unwrap().expect("write oracle input");
    assert!(out.status.success(), "the oracle crashed: {}", out.status);
    let results: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("oracle output is JSON");
    assert_eq!(results.len(), runs.len(), "the oracle lost runs");
    results
        .iter()
        .map(|r| Outcome {
            status: r["status"].as_i64().unwrap() as i32,
            stdout: B64.decode(r["stdout"].as_str().unwrap()).unwrap(),
            stderr: B64.decode(r["stderr"].as_str().unwrap()).unwrap(),
        })
        .collect()
}

/// Runs a command with output to files (no pipe can fill up) and a time
/// limit, so a hanging implementation fails the case instead of the suite.
fn run_command(mut cmd: Command, scratch: &Path, slot: usize) -> Outcome {
    let out_path = scratch.join(format!("{slot}.out"));
    let err_path = scratch.join(format!("{slot}.err"));
    cmd.stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap());
    let started = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                status: -1,
                stdout: vec![],
                stderr: format!("cannot start: {e}").into_bytes(),
            };
        }
    };
    let mut pause = Duration::from_micros(100);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code().unwrap_or(-1);
        }
        if started.elapsed() > TIMEOUT {
            child.kill().ok();
            child.wait().ok();
            let mut err = std::fs::read(&err_path).unwrap_or_default();
            err.extend_from_slice(format!("\n[killed after {TIMEOUT:?}]").as_bytes());
            return Outcome {
                status: -1,
                stdout: std::fs::read(&out_path).unwrap_or_default(),
                stderr: err,
            };
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    };
    Outcome {
        status,
        stdout: std::fs::read(&out_path).unwrap(),
        stderr: std::fs::read(&err_path).unwrap(),
    }
}

fn hierad_bin() -> String {
    std::env::var("DIFF_HIERAD_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_hierad").to_owned())
}

fn command_for(program: &str, prefix: &[&str], run: &Run) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(prefix).args(&run.args).current_dir(&run.dir);
    match &run.columns {
        Some(c) => cmd.env("COLUMNS", c),
        None => cmd.env_remove("COLUMNS"),
    };
    cmd.env("LC_ALL", "C.UTF-8");
    cmd
}

/// Runs every case through `program prefix... args...`, a few at a time.
fn run_all(program: &str, prefix: &[&str], runs: &[Run]) -> Vec<Outcome> {
    let jobs: usize = std::env::var("DIFF_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or(2);
    let scratch = tempfile::tempdir().unwrap();
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<Outcome>> = vec![None; runs.len()];
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs)
            .map(|w| {
                let next = &next;
                let scratch = scratch.path();
                s.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(run) = runs.get(i) else { break };
                        done.push((
                            i,
                            run_command(command_for(program, prefix, run), scratch, w),
                        ));
                    }
                    done
                })
            })
            .collect();
        for w in workers {
            for (i, o) in w.join().unwrap() {
                results[i] = Some(o);
            }
        }
    });
    results.into_iter().map(Option::unwrap).collect()
}

// ---------------------------------------------------------------------------
// Comparing

/// Ruby's stderr, taken apart: the text printed before an uncaught exception
/// (debug lines, warnings) and the exception's class and message.
#[derive(Debug, PartialEq)]
struct RubyStderr {
    before: String,
    exception: Option<(String, String)>,
}

/// Drops the times of `-d` log lines and logger warnings.
fn normalize_times(text: &str) -> String {
    static TIMES: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^(DEBUG|WARN): \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}: ").unwrap()
    });
    TIMES.replace_all(text, "$1: ").into_owned()
}

/// Removes from stderr what is the machine's, not Hiera's: the times of
/// log lines, and what Ruby's developer gems add to exception messages
/// (error_highlight's source line and carets, did_you_mean's suggestions,
/// which depend on the installed files). Applied to both sides.
fn normalize_stderr(text: &str) -> String {
    static HIGHLIGHT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\n\n[^\n]*\n *\^+(\n|$)").unwrap());
    static DID_YOU_MEAN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\nDid you mean\?[^\n]*(\n +[^\n]*)*").unwrap());
    let text = normalize_times(text);
    let text = HIGHLIGHT.replace_all(&text, "$1");
    DID_YOU_MEAN.replace_all(&text, "").into_owned()
}

fn parse_ruby_stderr(raw: &[u8]) -> RubyStderr {
    let text = normalize_stderr(&String::from_utf8_lossy(raw));
    static HEADER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[^\t].*?:\d+:in [`'][^']*': (.*)$").unwrap());
    static CLASS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(.*) \(([A-Z][A-Za-z0-9_:]*)\)$").unwrap());
    let header = &*HEADER;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let is_header = |i: usize| {
        let l = lines[i];
        !l.starts_with("DEBUG: ")
            && !l.starts_with("WARN: ")
            && header.is_match(l.trim_end_matches('\n'))
    };
    // The report of an uncaught exception is its header line, the rest of a
    // multi-line message, then `\tfrom` lines (none when raised in the
    // script's top frame), then the reports of its causes, which Ruby 3.1
    // prints too. Nothing follows: the process died.
    let Some(h) = (0..lines.len()).find(|&i| is_header(i)) else {
        return RubyStderr {
            before: text,
            exception: None,
        };
    };
    let end = (h + 1..lines.len())
        .find(|&i| lines[i].starts_with("\tfrom ") || is_header(i))
        .unwrap_or(lines.len());
    let first = header.captures(lines[h].trim_end_matches('\n')).unwrap()[1].to_owned();
    let rest: String = lines[h + 1..end].concat();
    // Ruby prints the first line of the message, then ` (Class)`, then the
    // message's other lines; an empty message prints the class name alone.
    let (class, mut message) = match CLASS.captures(&first) {
        Some(c) => (c[2].to_owned(), c[1].to_owned()),
        None => (first.clone(), String::new()),
    };
    if !rest.is_empty() {
        message.push('\n');
        message.push_str(rest.trim_end_matches('\n'));
    }
    RubyStderr {
        before: lines[..h].concat(),
        exception: Some((class, message)),
    }
}

/// What hierad must print on stderr for Ruby's stderr.
fn expected_stderr(ruby: &RubyStderr) -> String {
    match &ruby.exception {
        None => ruby.before.clone(),
        Some((class, message)) => format!("{}hierad: {message} ({class})", ruby.before),
    }
}

/// Problems of hierad's outcome against hiera's, empty when they agree.
fn compare(expected: &Outcome, actual: &Outcome) -> Vec<String> {
    let mut problems = Vec::new();
    if expected.status != actual.status {
        problems.push(format!(
            "exit status: hiera {}, hierad {}",
            expected.status, actual.status
        ));
    }
    if expected.stdout != actual.stdout {
        problems.push(format!(
            "stdout differs:\n{}",
            diff(&expected.stdout, &actual.stdout)
        ));
    }
    let ruby = parse_ruby_stderr(&expected.stderr);
    let want = expected_stderr(&ruby);
    let got = normalize_stderr(&String::from_utf8_lossy(&actual.stderr));
    let ok = match ruby.exception {
        // The error line may be followed by more text (a hint), nothing else.
        Some(_) => got
            .strip_prefix(&want)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('\n')),
        None => got == want,
    };
    if !ok {
        problems.push(format!(
            "stderr differs (wanted{}):\n{}",
            if ruby.exception.is_some() {
                " this, then optionally more lines"
            } else {
                ""
            },
            diff(want.as_bytes(), got.as_bytes())
        ));
    }
    problems
}

/// A short line diff: the differing middle with two lines of context.
fn diff(expected: &[u8], actual: &[u8]) -> String {
    let a = String::from_utf8_lossy(expected);
    let b = String::from_utf8_lossy(actual);
    let a: Vec<&str> = a.split_inclusive('\n').collect();
    let b: Vec<&str> = b.split_inclusive('\n').collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = String::new();
    let show = |out: &mut String, mark: char, line: &str| {
        let _ = writeln!(out, "  {mark} {:?}", line);
    };
    for l in &a[prefix.saturating_sub(2)..prefix] {
        show(&mut out, ' ', l);
    }
    for (shown, l) in a[prefix..a.len() - suffix].iter().enumerate() {
        if shown == 40 {
            out.push_str("  - ...\n");
            break;
        }
        show(&mut out, '-', l);
    }
    for (shown, l) in b[prefix..b.len() - suffix].iter().enumerate() {
        if shown == 40 {
            out.push_str("  + ...\n");
            break;
        }
        show(&mut out, '+', l);
    }
    for l in &a[a.len() - suffix..][..suffix.min(2)] {
        show(&mut out, ' ', l);
    }
    let _ = writeln!(
        out,
        "  (- hiera, + hierad; first difference at line {})",
        prefix + 1
    );
    out
}

fn describe(run: &Run) -> String {
    let cols = run
        .columns
        .as_deref()
        .map_or("COLUMNS unset".to_owned(), |c| format!("COLUMNS={c}"));
    let dir = run
        .dir
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(&run.dir);
    format!(
        "{} [{cols}]\n  $ (cd {} && hiera {})",
        run.id,
        dir.display().to_string().trim_start_matches('/'),
        shell_join(&run.args)
    )
}

fn show_outcome(name: &str, o: &Outcome) -> String {
    format!(
        "  {name}: exit {}\n    stdout: {:?}\n    stderr: {:?}\n",
        o.status,
        truncate(&String::from_utf8_lossy(&o.stdout)),
        truncate(&String::from_utf8_lossy(&o.stderr))
    )
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 600 {
        s.chars().take(600).collect::<String>() + "…"
    } else {
        s.to_owned()
    }
}

/// The fixture sanity check: does the real hiera do what the case says?
fn check_expectation(run: &Run, o: &Outcome) -> Option<String> {
    let ok = match run.expect {
        // Any answer will do, but a success must still be quiet.
        _ if run.generated => o.status != 0 || o.stderr.is_empty(),
        Expect::Quiet => o.status == 0 && o.stderr.is_empty(),
        Expect::Warn => o.status == 0 && !o.stderr.is_empty(),
        Expect::Fail => o.status != 0,
    };
    // An exception raised in the oracle itself (say, a missing directory)
    // must never pass for an expected error.
    let harness_crash = String::from_utf8_lossy(&o.stderr)
        .lines()
        .any(|l| l.starts_with(ORACLE));
    (!ok || harness_crash).then(|| {
        format!(
            "FIXTURE {}\n  expected {:?}\n{}",
            describe(run),
            run.expect,
            show_outcome("hiera", o)
        )
    })
}

/// The suites and the proof run one at a time: each already keeps the
/// machine's two cores busy, and their times stay meaningful.
static HEAVY: Mutex<()> = Mutex::new(());

fn heavy() -> MutexGuard<'static, ()> {
    HEAVY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs the suite over `runs` and fails once, at the end, with everything.
fn differential(name: &str, runs: Vec<Run>, narrowed: Option<String>) {
    let _one_at_a_time = heavy();
    let started = Instant::now();
    let oracle_only = std::env::var_os("DIFF_ORACLE_ONLY").is_some();
    let bin = hierad_bin();
    let (expected, actual) = std::thread::scope(|s| {
        let oracle = s.spawn(|| run_oracle(&runs));
        let actual = (!oracle_only).then(|| run_all(&bin, &["lookup"], &runs));
        (oracle.join().unwrap(), actual)
    });
    let mut report = String::new();
    let mut fixture_problems = 0;
    for (run, o) in runs.iter().zip(&expected) {
        if let Some(p) = check_expectation(run, o) {
            fixture_problems += 1;
            report.push_str(&p);
            report.push('\n');
        }
    }
    let mut mismatches: Vec<(usize, Vec<String>)> = Vec::new();
    if let Some(actual) = &actual {
        for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
            let problems = compare(e, a);
            if !problems.is_empty() {
                mismatches.push((i, problems));
            }
        }
    }
    let mut per_group: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in &runs {
        per_group
            .entry(r.id.split('/').next().unwrap())
            .or_default()
            .0 += 1;
    }
    for (i, _) in &mismatches {
        per_group
            .entry(runs[*i].id.split('/').next().unwrap())
            .or_default()
            .1 += 1;
    }
    let show: usize = std::env::var("DIFF_SHOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let mut full = report.clone();
    for (n, (i, problems)) in mismatches.iter().enumerate() {
        let mut text = format!("MISMATCH {}\n", describe(&runs[*i]));
        for p in problems {
            let _ = writeln!(text, "  {}", p.replace('\n', "\n  "));
        }
        text.push_str(&show_outcome("hiera ", &expected[*i]));
        text.push_str(&show_outcome("hierad", &actual.as_ref().unwrap()[*i]));
        full.push_str(&text);
        full.push('\n');
        if n < show {
            report.push_str(&text);
            report.push('\n');
        } else if n < show + 300 {
            let r = &runs[*i];
            let _ = writeln!(report, "MISMATCH {}: hiera {}", r.id, shell_join(&r.args));
        }
    }
    if oracle_only {
        // For review by eye: every answer of the real hiera.
        for (run, o) in runs.iter().zip(&expected) {
            let _ = writeln!(full, "RUN {}\n{}", describe(run), show_outcome("hiera", o));
        }
    }
    let report_path =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("differential-{name}.txt"));
    std::fs::write(&report_path, &full).unwrap();
    let mut summary = format!(
        "{name}: {} runs in {:.1?}; {} fixture problems; {} mismatches; full report: {}\n",
        runs.len(),
        started.elapsed(),
        fixture_problems,
        mismatches.len(),
        report_path.display()
    );
    for (g, (n, bad)) in &per_group {
        let _ = writeln!(summary, "  {g}: {bad} of {n} runs differ");
    }
    eprintln!("{report}{summary}");
    assert!(
        fixture_problems == 0,
        "{fixture_problems} cases do not do what they say with the real hiera"
    );
    assert!(
        !oracle_only,
        "DIFF_ORACLE_ONLY is set: the oracle checks passed, hierad was not run"
    );
    assert!(
        mismatches.is_empty(),
        "{} of {} runs differ from the real hiera",
        mismatches.len(),
        runs.len()
    );
    if let Some(n) = narrowed {
        panic!("{n}: a narrowed run does not count as a pass");
    }
}

/// `hierad lookup` must exist: a missing subcommand fails here with a clear
/// message (and, in the suites, as a mismatch of every case).
#[test]
fn hierad_has_lookup() {
    let out = Command::new(hierad_bin())
        .args(["lookup", "--version"])
        .output()
        .expect("run hierad");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
        ),
        (Some(0), "3.10.0\n".to_owned()),
        "`hierad lookup --version` must print hiera's version; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every group but Fuel.
#[test]
fn lookup_matches_hiera() {
    let (runs, narrowed) = load_runs(false);
    differential("groups", runs, narrowed);
}

/// The Fuel group (§11): real node data, every key, every resolution.
#[test]
fn lookup_matches_hiera_on_fuel() {
    let (runs, narrowed) = load_runs(true);
    differential("fuel", runs, narrowed);
}

/// The oracle's shortcut (fork + `load` of the command in a warm Ruby) gives
/// what the real command gives: the same exit status, the same stdout bytes,
/// the same stderr apart from the backtrace frames under an uncaught
/// exception (the fork adds its own) and the times of log lines.
#[test]
fn oracle_matches_real_hiera() {
    let (mut runs, _) = load_runs(false);
    runs.extend(load_runs(true).0);
    runs.retain(|r| r.proof);
    assert!(runs.len() >= 10, "only {} @proof runs", runs.len());
    let _one_at_a_time = heavy();
    let via_oracle = run_oracle(&runs);
    let direct = run_all(HIERA, &[], &runs);
    // `load` names the script's top frame `<top (required)>`, not `<main>`.
    let top = Regex::new(r"(?m)^(\S+):(\d+):in `<top \(required\)>'").unwrap();
    let strip = |o: &Outcome| {
        let text = normalize_times(&String::from_utf8_lossy(&o.stderr));
        let text = top.replace_all(&text, "$1:$2:in `<main>'");
        let kept: String = text
            .split_inclusive('\n')
            .filter(|l| !l.starts_with("\tfrom "))
            .collect();
        (o.status, o.stdout.clone(), kept)
    };
    let mut bad = Vec::new();
    for ((run, a), b) in runs.iter().zip(&via_oracle).zip(&direct) {
        if strip(a) != strip(b) {
            bad.push(format!(
                "{}\n{}{}",
                describe(run),
                show_outcome("oracle", a),
                show_outcome("hiera ", b)
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} proof runs differ:\n{}",
        bad.len(),
        runs.len(),
        bad.join("\n")
    );
}

#[test]
fn shell_split_cases() {
    let table: &[(&str, &[&str])] = &[
        ("a b  c", &["a", "b", "c"]),
        ("'a b' \"c d\" e\\ f", &["a b", "c d", "e f"]),
        ("'' \"\"", &["", ""]),
        ("$'a\\nb' $'\\x41\\''", &["a\nb", "A'"]),
        ("\"a\\\"b\\n\"", &["a\"b\\n"]),
        ("x='%{hiera(\"k\")}'", &["x=%{hiera(\"k\")}"]),
    ];
    for (line, words) in table {
        assert_eq!(shell_split(line).unwrap(), *words, "{line}");
        assert_eq!(
            shell_split(&shell_join(&shell_split(line).unwrap())).unwrap(),
            *words,
            "{line}"
        );
    }
    assert!(shell_split("'open").is_err());
}

#[test]
fn ruby_stderr_cases() {
    let exc = |c: &str, m: &str| Some((c.to_owned(), m.to_owned()));
    // (raw stderr, text before the exception, (class, message))
    type Row<'a> = (&'a str, &'a str, Option<(String, String)>);
    let table: &[Row] = &[
        ("", "", None),
        (
            "Cannot find config file: x\n",
            "Cannot find config file: x\n",
            None,
        ),
        (
            "/usr/lib/ruby/vendor_ruby/hiera/backend.rb:216:in `lookup': Hiera type mismatch for key 'k': expected Array and got Integer (Exception)\n\tfrom /usr/bin/hiera:243:in `<main>'\n",
            "",
            exc(
                "Exception",
                "Hiera type mismatch for key 'k': expected Array and got Integer",
            ),
        ),
        (
            "WARN: 2024-01-02 03:04:05 +0000: w\n/x.rb:1:in `f': a (ArgumentError)\nb\n\tfrom /x.rb:2\n",
            "WARN: w\n",
            exc("ArgumentError", "a\nb"),
        ),
        (
            "/x.rb:9:in `q': undefined method `include?' for 80:Integer (NoMethodError)\n\n          throw :no_such_key unless value.include?(segment)\n                                         ^^^^^^^^^\n\tfrom /x.rb:2\n",
            "",
            exc(
                "NoMethodError",
                "undefined method `include?' for 80:Integer",
            ),
        ),
        (
            "/x.rb:1:in `<main>': ArgumentError\n\tfrom y\n",
            "",
            exc("ArgumentError", ""),
        ),
        (
            "/usr/bin/hiera:175:in `<main>': invalid option: -x (OptionParser::InvalidOption)\n/usr/bin/hiera:175:in `<main>': invalid option: x (OptionParser::InvalidOption)\n",
            "",
            exc("OptionParser::InvalidOption", "invalid option: -x"),
        ),
        (
            "Failed to start Hiera: RuntimeError: Cannot load backend foo: cannot load such file -- hiera/backend/foo_backend\nDid you mean? hiera/backend/json_backend\n",
            "Failed to start Hiera: RuntimeError: Cannot load backend foo: cannot load such file -- hiera/backend/foo_backend\n",
            None,
        ),
        (
            "Failed to start Hiera: NoMethodError: undefined method `downcase' for nil:NilClass\n\n  x.downcase\n   ^^^^^^^^^\n",
            "Failed to start Hiera: NoMethodError: undefined method `downcase' for nil:NilClass\n",
            None,
        ),
        (
            "/j.rb:216:in `parse': 859: unexpected token at '{\"k\":  (JSON::ParserError)\n'\n\tfrom /j.rb:216:in `parse'\n",
            "",
            exc("JSON::ParserError", "859: unexpected token at '{\"k\": \n'"),
        ),
    ];
    for (raw, before, exception) in table {
        let got = parse_ruby_stderr(raw.as_bytes());
        assert_eq!(
            (got.before.as_str(), &got.exception),
            (*before, exception),
            "{raw}"
        );
    }
}
