//! TLS to PostgreSQL (`sslmode` and `sslrootcert` in `--db`, see
//! docs/deploy.md) against a throwaway server that takes TCP connections
//! over TLS only (tests/common/postgres.rs `require_tls`), its certificate
//! made at test time: hierad serves and writes through it, a second
//! replica learns of the writes by LISTEN over TLS, and plain text, an
//! untrusted certificate are refused with errors that
//! say why. The waits are bounded.

use crate::binary;
use crate::pg;
use crate::pki::Pki;
use crate::server::{TestServer, call};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

const PATIENCE: Duration = Duration::from_secs(10);
const GLOBALS: &str = "/api/v1/config/environments/1/resources/globals/values";

fn lookup(url: &str, key: &str) -> Value {
    let body = json!({"environment": 1, "key": key, "hierarchy": ["globals"]}).to_string();
    call("POST", &format!("{url}/api/v1/lookup"), Some(&body), &[]).json()
}

/// `hierad config get` of the globals from database `db`.
fn get_globals(db: &str) -> String {
    format!(
        "config get --env 1 --resource globals --db {}",
        binary::quote(db)
    )
}

#[test]
fn a_postgres_that_takes_tls_only_is_served_with_its_certificate_verified() {
    let server = pg::private();
    server.admin("CREATE DATABASE tls");
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    let (cert, key) = pki.issue("pg", "127.0.0.1", &["127.0.0.1", "localhost"], false);
    server.require_tls(&cert, &key);
    let ca = dir.path().join("ca.pem");
    let base = server.url("tls");
    let url = format!("{base}?sslmode=verify-full&sslrootcert={}", ca.display());

    let a = TestServer::start_on(Path::new(&url), &[]);
    let b = TestServer::start_on(Path::new(&url), &["--no-sample", "--sync-every", "3600s"]);
    let written = call(
        "PUT",
        &format!("{}{GLOBALS}", a.url),
        Some(r#"{"over": "tls"}"#),
        &[("content-type", "application/json")],
    );
    assert_eq!(written.status, 204, "{}", written.body);
    // B polls hourly: what it serves came by NOTIFY, on its TLS LISTEN.
    let start = Instant::now();
    while lookup(&b.url, "over") != json!({"found": true, "value": "tls"}) {
        assert!(start.elapsed() < PATIENCE, "B never saw A's write");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The CLI on the same URL, `sslmode=require` verifying as well.
    let require = format!("{base}?sslmode=require&sslrootcert={}", ca.display());
    let got = binary::ok(&get_globals(&require));
    assert!(got.contains("tls"), "{got}");

    // Plain text: PostgreSQL refuses it, and the error says so.
    let plain = binary::refused(&get_globals(&base));
    assert!(plain.contains("no encryption"), "{plain}");
    // A certificate no trusted CA signed.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    Pki::new(&other);
    let untrusted = format!(
        "{base}?sslmode=verify-full&sslrootcert={}",
        other.join("ca.pem").display()
    );
    let refused = binary::refused(&get_globals(&untrusted));
    assert!(refused.contains("invalid peer certificate"), "{refused}");
    assert_eq!(
        refused.matches("invalid peer certificate").count(),
        1,
        "said twice: {refused}"
    );
}
