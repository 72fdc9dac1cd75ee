//! A keep-alive connection's proved credentials are remembered (the
//! check's cost per request), and that memory never outlasts what it
//! stands for: a token revoked by a reloaded auth file, a token that
//! expired, other credentials on the same connection. The real binary,
//! one TCP connection per client, requests written by hand so the test
//! decides which connection each goes on.
use crate::binary::ok;
use crate::server::TestServer;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

/// One HTTP/1.1 connection, kept open between requests.
pub(crate) struct KeepAlive(BufReader<TcpStream>);

impl KeepAlive {
    pub(crate) fn open(url: &str) -> KeepAlive {
        let stream = TcpStream::connect(url.strip_prefix("http://").unwrap()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        KeepAlive(BufReader::new(stream))
    }

    /// `GET path` with `authorization`: the status and the body. Panics
    /// when the server closed the connection (the test needs it open).
    pub(crate) fn get(&mut self, path: &str, authorization: &str) -> (u16, String) {
        let request = format!(
            "GET {path} HTTP/1.1\r\nhost: localhost\r\nauthorization: {authorization}\r\n\r\n"
        );
        self.0.get_mut().write_all(request.as_bytes()).unwrap();
        let mut status = String::new();
        self.0.read_line(&mut status).unwrap();
        assert!(
            status.starts_with("HTTP/1.1 "),
            "connection closed: {status:?}"
        );
        let mut length = None;
        loop {
            let mut line = String::new();
            self.0.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = Some(value.trim().parse::<usize>().unwrap());
            }
            assert_ne!(
                lower.trim(),
                "connection: close",
                "the server ends the connection"
            );
        }
        let mut body = vec![0; length.expect("a content-length")];
        self.0.read_exact(&mut body).unwrap();
        (
            status[9..12].parse().unwrap(),
            String::from_utf8(body).unwrap(),
        )
    }
}

const ROUTE: &str = "/api/v1/config/environments";

/// A server whose auth file holds user ann and, made in this order, the
/// read tokens `tokens` (`NAME [--expires D]`): their secrets.
fn started(tokens: &[&str]) -> (tempfile::TempDir, TestServer, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auth.toml");
    let f = file.to_str().unwrap();
    let secrets = tokens
        .iter()
        .map(|t| ok(&format!("auth add-token --file {f} --role read {t}")))
        .collect();
    let password = dir.path().join("pw");
    std::fs::write(&password, "Pw-0f-ann\n").unwrap();
    ok(&format!(
        "auth add-user --file {f} --role read --password-file {} ann",
        password.display()
    ));
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &["--auth", f]);
    (dir, server, secrets)
}

fn bearer(token: &str) -> String {
    format!("Bearer {}", token.trim())
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    let pair = format!("{user}:{password}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// Proved once, then the same header again on the same connection;
/// other credentials on it are checked, and do not replace a good
/// memory with a bad one.
#[test]
fn a_connection_checks_other_credentials_and_keeps_the_good_one() {
    let (_dir, server, tokens) = started(&["kept"]);
    let kept = &tokens[0];
    let mut a = KeepAlive::open(&server.url);
    for _ in 0..3 {
        assert_eq!(a.get(ROUTE, &bearer(kept)).0, 200);
    }
    let (status, body) = a.get(ROUTE, &bearer("hierad_never-issued"));
    assert_eq!(status, 401, "{body}");
    let mut cut = bearer(kept);
    cut.pop();
    assert_eq!(
        a.get(ROUTE, &cut).0,
        401,
        "a prefix of the remembered token"
    );
    assert_eq!(
        a.get(ROUTE, &format!("{}x", bearer(kept))).0,
        401,
        "the remembered token and more"
    );
    assert_eq!(a.get(ROUTE, &bearer(kept)).0, 200);
    assert_eq!(a.get(ROUTE, &basic("ann", "Pw-0f-ann")).0, 200);
    assert_eq!(
        a.get(ROUTE, &basic("ann", "Pw-0f-anm")).0,
        401,
        "a wrong password after a right one"
    );
    assert_eq!(a.get(ROUTE, &basic("ann", "Pw-0f-ann")).0, 200);
}

/// Revoked and reloaded: the connection that proved it is refused too.
#[test]
fn a_token_revoked_and_reloaded_is_refused_on_the_connection_that_proved_it() {
    let (dir, server, tokens) = started(&["kept", "revoked"]);
    let (kept, revoked) = (&tokens[0], &tokens[1]);
    let file = dir.path().join("auth.toml");
    let f = file.to_str().unwrap();
    let mut b = KeepAlive::open(&server.url);
    assert_eq!(b.get(ROUTE, &bearer(revoked)).0, 200);
    ok(&["auth", "revoke-token", "--file", f, "revoked"]);
    Command::new("kill")
        .args(["-HUP", &server.pid().to_string()])
        .status()
        .unwrap();
    let mut refused = None;
    for _ in 0..200 {
        let (status, body) = b.get(ROUTE, &bearer(revoked));
        if status != 200 {
            refused = Some((status, body));
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let (status, body) =
        refused.expect("a revoked token still served on its connection after a reload");
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("unknown token"), "{body}");
    // The reload did not forget the others.
    assert_eq!(b.get(ROUTE, &bearer(kept)).0, 200);
}

/// Expired while remembered: refused on the connection that proved it.
#[test]
fn a_token_that_expires_while_remembered_is_refused_on_its_connection() {
    let (_dir, server, tokens) = started(&["brief --expires 4s"]);
    // Measured after the token was made: later than its expiry, if anything.
    let expires_at = Instant::now() + Duration::from_secs(4);
    let expiring = &tokens[0];
    let mut c = KeepAlive::open(&server.url);
    let (status, body) = c.get(ROUTE, &bearer(expiring));
    assert_eq!(
        status, 200,
        "the 4 s token expired before its first use: {body}"
    );
    std::thread::sleep(
        expires_at.saturating_duration_since(Instant::now()) + Duration::from_millis(500),
    );
    let (status, body) = c.get(ROUTE, &bearer(expiring));
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("expired"), "{body}");
}
