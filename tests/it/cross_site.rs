//! What a web page open in the operator's browser could make it send, to
//! `hierad serve` (in process) without `--auth` (every request an admin's): a
//! cross-site import in a form's content type, and a DNS-rebound read.
//! The matrix of types, origins and hosts: `server::cross_site`'s tests.

use crate::in_process::InProcess;
use crate::server::{Served, call};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Sends `head` (without its end) and `body` on a new connection and
/// reads the whole answer: its status and JSON body.
fn raw(server: &impl Served, head: &str, body: &str) -> (u16, serde_json::Value) {
    let mut stream = TcpStream::connect(server.url().trim_start_matches("http://")).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "{head}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or_default())
}

const PWNED: &str = "/api/v1/config/environments/1/nodes/pwned/resources/astute/values";

/// The reproduction from the report: `curl -X POST -H 'Content-Type:
/// text/plain' -H 'Origin: https://evil.example' --data '…' …/import`
/// answered 200 and stored the document.
#[test]
fn a_cross_site_import_is_refused_and_stores_nothing() {
    let server = InProcess::with_sample();
    let import = format!("{}/api/v1/config/environments/1/import", server.url);
    let body = r#"{"level":"nodes=pwned","documents":{"astute":{"x":1}}}"#;
    for (headers, want, says) in [
        (
            &[
                ("content-type", "text/plain"),
                ("origin", "https://evil.example"),
            ][..],
            (403, "cross_origin"),
            "\"https://evil.example\"",
        ),
        // Without Origin (a page may have it stripped): its type.
        (
            &[("content-type", "text/plain")],
            (415, "unsupported_media_type"),
            "send `Content-Type: application/json`",
        ),
        (
            &[("content-type", "application/x-www-form-urlencoded")],
            (415, "unsupported_media_type"),
            "send `Content-Type: application/json`",
        ),
        // A JSON body from the page itself (after DNS rebinding, say)
        // still names another origin.
        (
            &[
                ("content-type", "application/json"),
                ("origin", "https://evil.example"),
            ],
            (403, "cross_origin"),
            "may not change anything",
        ),
    ] {
        let reply = call("POST", &import, Some(body), headers);
        let answer = reply.json();
        assert_eq!(
            (reply.status, answer["error"].as_str().unwrap_or_default()),
            want,
            "{headers:?}: {}",
            reply.body
        );
        assert!(
            answer["message"].as_str().unwrap().contains(says),
            "{says} in {}",
            reply.body
        );
        let stored = call("GET", &format!("{}{PWNED}", server.url), None, &[]);
        assert_eq!(
            stored.json(),
            serde_json::json!({}),
            "{headers:?} stored it"
        );
    }
    // curl as docs/api.md prints it, from no browser: taken.
    let reply = call(
        "POST",
        &import,
        Some(body),
        &[("content-type", "application/json")],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let stored = call("GET", &format!("{}{PWNED}", server.url), None, &[]);
    assert_eq!(stored.json(), serde_json::json!({"x": 1}));
}

/// A page at `evil.example:PORT`, whose name its attacker resolved to
/// 127.0.0.1 after loading it, is the same origin as its requests: its
/// reads and lookups name its own Host, which is refused.
#[test]
fn a_dns_rebound_page_reads_nothing() {
    let server = InProcess::with_sample();
    let port = server.url.rsplit(':').next().unwrap();
    let evil = format!("evil.example:{port}");
    let lookup = r#"{"environment": 1, "key": "nova", "resolution": "hash"}"#;
    let requests = [
        (
            format!("GET /api/v1/data/1/astute HTTP/1.1\r\nhost: {evil}"),
            "",
        ),
        (
            format!(
                "POST /api/v1/lookup HTTP/1.1\r\nhost: {evil}\r\norigin: http://{evil}\r\n\
                 content-type: application/json"
            ),
            lookup,
        ),
    ];
    for (head, body) in &requests {
        let (status, answer) = raw(&server, head, body);
        assert_eq!(
            (status, answer["error"].as_str()),
            (421, Some("unknown_host")),
            "{head}: {answer}"
        );
        let message = answer["message"].as_str().unwrap();
        assert!(message.contains(&evil), "{message}");
        assert!(message.contains("--allowed-host"), "{message}");
    }
    // The same requests naming the server by its address are answered.
    for (head, body) in &requests {
        let head = head.replace(&evil, &format!("127.0.0.1:{port}"));
        let (status, answer) = raw(&server, &head, body);
        assert_eq!(status, 200, "{head}: {answer}");
    }
}

/// A name given with `--allowed-host` (a proxy's) is answered, with its
/// own origin; any other name still is not.
#[test]
fn allowed_hosts_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    let server = InProcess::start_on(
        &dir.path().join("hierad.db"),
        &["--allowed-host", "hierad.example,other.example"],
    );
    let head = |host: &str, origin: &str| {
        format!(
            "POST /api/v1/config/environments HTTP/1.1\r\nhost: {host}\r\norigin: {origin}\r\n\
             content-type: application/json"
        )
    };
    let (status, answer) = raw(
        &server,
        &head("hierad.example", "https://hierad.example"),
        r#"{"id": 7, "components": [], "hierarchy_levels": []}"#,
    );
    assert_eq!(status, 201, "{answer}");
    let (status, answer) = raw(
        &server,
        &head("evil.example", "https://evil.example"),
        r#"{"id": 8, "components": [], "hierarchy_levels": []}"#,
    );
    assert_eq!(status, 421, "{answer}");
}

/// A value that is not a host name is refused at start, naming it.
#[test]
fn a_bad_allowed_host_is_refused_at_start() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hierad"))
        .args(crate::binary::Args::words(
            "serve --no-sample --allowed-host https://hierad.example",
        ))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("\"https://hierad.example\" is a URL; give the host name alone"),
        "{stderr}"
    );
}
