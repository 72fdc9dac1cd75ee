//! The command-line client as a tool in a shell:
//! a server that stops answering is a timeout naming the server and what
//! timed out, and a reader that stops reading (`| head -1`) is a normal
//! end.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::binary::{self, command as hierad};

/// Waits at most `limit` for the child, killing it past that.
fn wait_bounded(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("hierad still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server that accepts connections, reads the requests and never
/// answers; it lets go of them when dropped.
struct FrozenServer {
    url: String,
    stop: Arc<AtomicBool>,
}

impl FrozenServer {
    fn start() -> FrozenServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            // Bounded: a minute at most, then everything is let go.
            for _ in 0..3000 {
                if stopping.load(Ordering::Relaxed) {
                    break;
                }
                if let Ok((socket, _)) = listener.accept() {
                    held.push(socket);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        FrozenServer { url, stop }
    }
}

impl Drop for FrozenServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn run_bounded(command: Command) -> Output {
    run_bounded_for(command, Duration::from_secs(30))
}

/// Runs the command, killing it (and failing) past `limit`.
fn run_bounded_for(mut command: Command, limit: Duration) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        stderr.read_to_end(&mut text).unwrap();
        text
    });
    let status = wait_bounded(&mut child, limit);
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    Output {
        status,
        stdout,
        stderr: reader.join().unwrap(),
    }
}

/// A command that only reads gives up on a silent server after 30 s
/// (not the 120 s a write's server may spend on an import), saying so.
/// The test waits those 30 s: the point is the default.
#[test]
fn a_read_gives_up_on_a_silent_server_after_30_s_by_default() {
    let frozen = FrozenServer::start();
    let mut command = hierad(&["config", "get", "--env", "1", "--resource", "astute"]);
    command.args(["--server", &frozen.url]);
    let out = run_bounded_for(command, Duration::from_secs(55));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "hierad: timed out waiting for an answer from the hierad server at {} (no progress in 30 s; --timeout sets the limit)\n",
            frozen.url
        )
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_frozen_server_is_a_timeout_naming_the_server_and_the_phase() {
    let frozen = FrozenServer::start();
    let cases = [
        "config get --env 1 --resource astute",
        "config override --env 1 --resource astute --key a --value 1",
        "export --env 1 /nonexistent/never-written",
    ];
    for args in cases {
        let mut command = hierad(args);
        command.args(["--server", &frozen.url, "--timeout", "0.5"]);
        let out = run_bounded(command);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "hierad: timed out waiting for an answer from the hierad server at {} (no progress in 0.5 s; --timeout sets the limit)\n",
                frozen.url
            ),
            "{args:?}"
        );
        assert!(out.stdout.is_empty());
    }
    let mut command = hierad(&["config", "get", "--env", "1", "--resource", "a"]);
    command.args(["--server", &frozen.url, "--timeout", "0"]);
    let out = run_bounded(command);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\"0\" is not a number of seconds"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_reader_that_stops_reading_is_a_normal_end() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    let db = db.to_str().unwrap();
    let import = hierad(&["import", "data", "--env", "1", "--db", db])
        .output()
        .unwrap();
    assert!(import.status.success(), "{import:?}");
    // The sample's astute is about 87 KB, more than a pipe holds: the
    // writer is still writing when the reader goes, as with `| head -1`.
    for format in ["json", "yaml", "plain"] {
        let mut child = hierad(&format!(
            "config get --env 1 --resource astute --format {format} --db {db}"
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty(), "{format}");
        // The read end is closed here (the reader was dropped).
        let status = wait_bounded(&mut child, Duration::from_secs(30));
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!((status.code(), stderr.as_str()), (Some(0), ""), "{format}");
    }
}

/// A server URL naming a user (`USER:PASSWORD@HOST`) is refused by every
/// client command, without repeating it: hierad takes credentials from
/// --user with --password-file or --token, and its errors name the server.
#[test]
fn credentials_in_a_server_url_are_refused_unrepeated() {
    let url = "http://alice:Pw-in-url7@127.0.0.1:1";
    for args in [
        format!("config get --server {url} --env 1 --resource astute"),
        format!("lookup --server {url} --env 1 fqdn"),
        format!("bench --server {url} -n 1"),
    ] {
        let refusal = binary::refused(&args);
        assert!(refusal.contains("holds credentials"), "{args:?}: {refusal}");
        assert!(!refusal.contains("Pw-in-url7"), "{args:?}: {refusal}");
    }
}

/// --token-file: an empty or unreadable file is refused naming it, before
/// any connection; with --token as well, the command line is refused.
#[test]
fn a_token_file_that_gives_no_token_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.token");
    std::fs::write(&empty, "\n").unwrap();
    let absent = dir.path().join("absent.token");
    let get = |file: &std::path::Path| {
        binary::refused(&format!(
            "config get --server http://127.0.0.1:1 --token-file {} --env 1 --resource astute",
            file.display()
        ))
    };
    assert_eq!(
        get(&empty),
        format!("the token file {} is empty", empty.display())
    );
    let unreadable = get(&absent);
    assert!(
        unreadable.starts_with(&format!("cannot read the token file {}", absent.display())),
        "{unreadable}"
    );
    let both = binary::run(&format!(
        "config get --server http://127.0.0.1:1 --token t --token-file {} --env 1 --resource astute",
        empty.display()
    ));
    assert_eq!(both.status.code(), Some(2), "{both:?}");
    assert!(
        binary::text(&both.stderr).contains("cannot be used with"),
        "{both:?}"
    );
}

/// A server that reads each request whole and hangs up without an
/// answer, as one killed after committing a write would; bounded.
fn hang_up_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for socket in listener.incoming().take(8) {
            let Ok(mut socket) = socket else { continue };
            socket
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut request = Vec::new();
            let mut chunk = [0u8; 4096];
            // The head, then as many bytes as its Content-Length says.
            while let Ok(n @ 1..) = socket.read(&mut chunk) {
                request.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&request).to_lowercase();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |n| n.trim().parse().unwrap());
                    if body.len() >= length {
                        break;
                    }
                }
            }
        }
    });
    url
}

/// A connection lost once the request was sent is not "cannot reach":
/// a write may have been applied, and the message says how to check; a
/// read changed nothing. Nothing listening is still "cannot reach". (All
/// three said "cannot reach the hierad server …: io: Peer disconnected",
/// though the tester's write had committed.)
#[test]
fn a_connection_lost_after_sending_says_the_write_may_have_been_applied() {
    let url = hang_up_server();
    let run = |args: &str, server: &str| {
        let mut command = hierad(args);
        command.args(["--server", server, "--timeout", "10"]);
        let out = run_bounded(command);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let lost = format!(
        "hierad: the connection to the hierad server at {url} was lost after the request was sent, before an answer"
    );
    // A write whose first request writes (`set --key` reads the key's
    // old value first, a read that would change nothing).
    let write = "config restore --env 1 --resource a --version 1";
    let e = run(write, &url);
    assert!(e.starts_with(&lost), "{e}");
    assert!(
        e.contains("it may have been applied: check with `hierad config history`"),
        "{e}"
    );
    let e = run("config get --env 1 --resource a", &url);
    assert!(e.starts_with(&lost), "{e}");
    assert!(e.contains("it changed nothing: send it again"), "{e}");

    let closed = format!(
        "http://{}",
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    );
    let e = run(write, &closed);
    assert!(
        e.starts_with(&format!(
            "hierad: cannot reach the hierad server at {closed}"
        )),
        "{e}"
    );
}
