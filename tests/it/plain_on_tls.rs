//! `http://` sent to a TLS port: the answer is a plain HTTP 400 saying the
//! server speaks TLS and to use `https://` (it was a TLS alert, which curl
//! shows as "invalid HTTP version" and hierad's client as an I/O error);
//! `https://` on the same port still works.

use crate::binary::{self, text};
use crate::pki::Pki;
use crate::server::TestServer;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

#[test]
fn http_to_a_tls_port_is_told_to_use_https() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    let (cert, key) = pki.issue("server", "localhost", &["localhost", "127.0.0.1"], false);
    let db = dir.path().join("hierad.db");
    let server = TestServer::start_on(
        &db,
        &format!("--tls-cert {} --tls-key {}", cert.display(), key.display()),
    );
    let https = server.url.clone();
    assert!(https.starts_with("https://"), "{https}");
    let http = https.replacen("https://", "http://", 1);
    let address = https.trim_start_matches("https://");

    // A raw plain-HTTP request: a plain answer, then the connection closes.
    let mut socket = TcpStream::connect(address).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    socket
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    assert!(
        answer.ends_with(
            "{\"error\":\"bad_request\",\"message\":\"this hierad server speaks TLS on this port: use https:// instead of http://\"}"
        ),
        "{answer}"
    );

    // hierad's own client given http:// says the same.
    let mut command = binary::command(&["config", "get", "--env", "1", "--resource", "astute"]);
    command.args(["--server", &http]);
    let out = binary::output(command, None);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "this hierad server speaks TLS on this port: use https:// instead of http://"
        ),
        "{stderr}"
    );

    // https:// on the same port is served as before.
    let ca = dir.path().join("ca.pem");
    let mut command = binary::command(&["config", "get", "--env", "1", "--resource", "astute"]);
    let by_name = https.replacen("127.0.0.1", "localhost", 1);
    command.args(["--server", &by_name, "--cacert", ca.to_str().unwrap()]);
    binary::succeeded(&"config get over https", binary::output(command, None));
}
