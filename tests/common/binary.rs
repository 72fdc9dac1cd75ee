//! The `hierad` binary as the tests run it: one way to start it (in the
//! repository root, bounded in time, without what a developer's shell may
//! set) and the two outcomes a command-line test checks: it worked, or it
//! was refused with one line naming the problem.

use std::fmt::Debug;
use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_hierad");
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// How long one command may run: a regression that blocks (on a FIFO, a
/// server that never answers, `/dev/zero`) fails its test instead of
/// hanging the suite.
const LIMIT: Duration = Duration::from_secs(60);

/// A command line's arguments: a whole line as one string, split as a
/// shell splits it (quotes for an argument with spaces, never through a
/// real shell), or the arguments already apart.
///
/// `ok("config get --env 1 --resource astute")` reads as the command a
/// user types; a value from the test goes in with `format!`, quoted with
/// [`quote`] where it may hold spaces.
pub trait Args {
    fn words(&self) -> Vec<String>;
}

impl Args for str {
    fn words(&self) -> Vec<String> {
        shlex::split(self).unwrap_or_else(|| panic!("unbalanced quotes in {self:?}"))
    }
}

impl Args for String {
    fn words(&self) -> Vec<String> {
        self.as_str().words()
    }
}

impl<S: AsRef<str>> Args for [S] {
    fn words(&self) -> Vec<String> {
        self.iter().map(|s| s.as_ref().to_owned()).collect()
    }
}

// For `&str` only, so that `&[]` needs no annotation.
impl<const N: usize> Args for [&str; N] {
    fn words(&self) -> Vec<String> {
        self[..].words()
    }
}

impl<S: AsRef<str>> Args for Vec<S> {
    fn words(&self) -> Vec<String> {
        self[..].words()
    }
}

impl<A: Args + ?Sized> Args for &A {
    fn words(&self) -> Vec<String> {
        (**self).words()
    }
}

/// `value` as one word of a command line given as a string.
pub fn quote(value: &str) -> String {
    shlex::try_quote(value).expect("no NUL").into_owned()
}

/// `hierad args…` in the repository root, without the variables that
/// would change what it does on a developer's machine (`HIERAD_SERVER`,
/// `HIERAD_TOKEN`, `COLUMNS`).
pub fn command(args: &(impl Args + ?Sized)) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args.words())
        .env_remove("HIERAD_SERVER")
        .env_remove("HIERAD_TOKEN")
        .env_remove("COLUMNS")
        .current_dir(ROOT);
    command
}

/// Runs `command` with `stdin` on its standard input (empty if `None`),
/// killed past [`LIMIT`].
pub fn output(mut command: Command, stdin: Option<&str>) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hierad");
    let mut pipe = child.stdin.take().unwrap();
    // A command that exits without reading its input closes the pipe.
    let _ = pipe.write_all(stdin.unwrap_or_default().as_bytes());
    drop(pipe);
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(out) => out.expect("wait for hierad"),
        Err(_) => {
            // Not reaped yet (the waiting thread holds it): the pid is its.
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("{command:?} did not finish within {LIMIT:?}: it blocked");
        }
    }
}

/// `hierad args…` run to its end.
pub fn run(args: &(impl Args + ?Sized)) -> Output {
    output(command(args), None)
}

/// The standard output of `hierad args…`, which must succeed.
pub fn ok(args: &(impl Args + ?Sized)) -> String {
    succeeded(&args.words(), run(args))
}

/// The one line a refused `hierad args…` prints, without its `hierad: `
/// prefix; it must exit with status 1 and print nothing else.
pub fn refused(args: &(impl Args + ?Sized)) -> String {
    refusal(&args.words(), run(args))
}

/// The standard output of a run of `what`, which must have succeeded.
pub fn succeeded(what: &dyn Debug, out: Output) -> String {
    assert!(
        out.status.success(),
        "hierad {what:?} failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The error line of a run of `what`, as [`refused`] checks it.
pub fn refusal(what: &dyn Debug, out: Output) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "hierad {what:?} should be refused: {stderr}"
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "hierad {what:?}: one line: {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "hierad {what:?} printed: {}",
        text(&out.stdout)
    );
    stderr
        .trim_end()
        .strip_prefix("hierad: ")
        .unwrap_or_else(|| panic!("hierad {what:?}: no `hierad: ` prefix: {stderr}"))
        .to_owned()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
