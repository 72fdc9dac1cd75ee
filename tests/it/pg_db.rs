//! `--db postgres://…`: `hierad serve` and the CLI on one
//! PostgreSQL database (a throwaway server, tests/common/postgres.rs): the
//! sample loads, the CLI's writes reach the server without a restart (the
//! change log, polled), doctor reads it; a database that cannot be reached
//! is named in the error without its password. The waits are bounded.

use crate::binary::Args;
use crate::pg;
use crate::server::{TestServer, call};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hierad");
const PATIENCE: Duration = Duration::from_secs(10);

fn hierad(args: &(impl Args + ?Sized), db: &str) -> Output {
    Command::new(BIN)
        .args(args.words())
        .args(["--db", db])
        .env_remove("HIERAD_SERVER")
        .env_remove("PGPASSWORD")
        .output()
        .expect("run hierad")
}

fn lookup(url: &str, key: &str) -> Value {
    let body = json!({"environment": 1, "key": key, "hierarchy": ["astute"]}).to_string();
    call("POST", &format!("{url}/api/v1/lookup"), Some(&body), &[]).json()
}

#[test]
fn serve_and_the_cli_share_a_postgres_database() {
    let db = pg::fresh_database();
    let server = TestServer::start_on(Path::new(&db), &[]);
    let url = &server.url;
    assert_eq!(lookup(url, "deployment_id")["value"], json!(15));
    let out = hierad(
        "config override --env 1 --resource astute --key deployment_id --type int --value 77",
        &db,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = Instant::now();
    while lookup(url, "deployment_id")["value"] != json!(77) {
        assert!(
            start.elapsed() < PATIENCE,
            "the server never saw the CLI's write"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    eprintln!("visible after {:?}", start.elapsed());
    // A second server on the same database answers the same.
    let second = TestServer::start_on(Path::new(&db), &[]);
    assert_eq!(lookup(&second.url, "deployment_id")["value"], json!(77));
    let out = hierad(&["doctor"], &db);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("no unreadable documents in postgres://"),
        "{stdout}"
    );
}

#[test]
fn an_unreachable_database_is_named_without_its_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let db = format!("postgres://hierad:pa55-w0rd@127.0.0.1:{port}/configdb");
    for args in [
        &["config", "get", "--env", "1", "--resource", "astute"][..],
        &["serve", "--no-sample"][..],
    ] {
        let out = hierad(args, &db);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("127.0.0.1:{port}/configdb")),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("hierad:***@"), "{args:?}: {stderr}");
        assert!(!stderr.contains("pa55-w0rd"), "{args:?}: {stderr}");
    }
}

/// Servers starting together on a new PostgreSQL database migrate it once
/// (the others wait on the migration lock, then find it done) and log no
/// PostgreSQL NOTICE: the `CREATE TABLE IF NOT EXISTS schema_version` of
/// those that waited was logged as `NOTICE: relation "schema_version"
/// already exists, skipping`.
#[test]
fn servers_starting_together_log_no_postgres_notice() {
    let db = pg::fresh_database();
    let servers: Vec<TestServer> = std::thread::scope(|scope| {
        let starting: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| TestServer::start_logging(Path::new(&db), &["--no-sample"], "info"))
            })
            .collect();
        starting.into_iter().map(|s| s.join().unwrap()).collect()
    });
    for mut server in servers {
        server.stop();
        let log = server.log();
        assert!(
            !log.contains("NOTICE") && !log.contains("already exists"),
            "{log}"
        );
    }
}
