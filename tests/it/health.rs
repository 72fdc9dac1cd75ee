//! `hierad health`, the Docker image's HEALTHCHECK: it finds a plain and a
//! TLS server on the port `--listen` / `HIERAD_LISTEN` names (a wildcard
//! address on loopback), and says so when nothing listens there.

use crate::binary;
use crate::pki::Pki;
use crate::server::TestServer;

fn port(url: &str) -> u16 {
    url.rsplit(':').next().unwrap().parse().unwrap()
}

/// `hierad health ARGS`'s report, which must be a success.
fn probe(args: &[&str]) -> String {
    binary::ok(args).trim_end().to_owned()
}

#[test]
fn health_finds_plain_and_tls_servers_and_says_when_none_listens() {
    let plain = TestServer::empty();
    let at = |port: u16, ip: &str| format!("{ip}:{port}");
    assert_eq!(
        probe(&["health", "--listen", &at(port(&plain.url), "127.0.0.1")]),
        "ok"
    );
    assert_eq!(
        probe(&["health", "--listen", &at(port(&plain.url), "0.0.0.0")]),
        "ok"
    );

    // TLS, the certificate for a name that is not 127.0.0.1's: the probe
    // sends nothing secret and does not verify it.
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    let (cert, key) = pki.issue("server", "hierad.example", &["hierad.example"], false);
    let tls = TestServer::start_on(
        &dir.path().join("tls.db"),
        &format!(
            "--no-sample --tls-cert {} --tls-key {}",
            cert.display(),
            key.display()
        ),
    );
    assert!(tls.url.starts_with("https://"), "{}", tls.url);
    let mut command = binary::command(&["health"]);
    command.env("HIERAD_LISTEN", at(port(&tls.url), "0.0.0.0"));
    let out = binary::output(command, None);
    assert_eq!(
        binary::succeeded(&"health (HIERAD_LISTEN)", out).trim_end(),
        "ok"
    );

    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let refused = binary::refused(&["health", "--listen", &at(free, "127.0.0.1")]);
    assert!(
        refused.contains("nothing answers at 127.0.0.1:"),
        "{refused}"
    );
}
