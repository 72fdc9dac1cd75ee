//! What the log may hold: whatever `HIERAD_LOG` asks for, down
//! to `trace` of every crate, no password, token or document value reaches
//! it. The run covers each dependency that carries secrets: PostgreSQL
//! (documents written and read), the Keystone client (the service
//! account's login, token validations), TLS, Basic and bearer
//! credentials, right and wrong. `HIERAD_LOG` that cannot be read stops the start,
//! named.

use crate::binary;
use crate::keystone::FakeKeystone;
use crate::pg;
use crate::pki::Pki;
use crate::server::{Reply, TestServer, call_with};
use std::path::Path;
const SERVICE_PASSWORD: &str = "svc-pw-Tr4ce9";
const USER_PASSWORD: &str = "rdr-pw-Vb62kq";
const DOCUMENT_SECRET: &str = "db-pw-Qw8Zx3Lp0";

fn lookup(agent: &ureq::Agent, url: &str, key: &str, credentials: (&str, &str)) -> Reply {
    let body = format!(r#"{{"environment": 1, "key": "{key}", "hierarchy": ["astute"]}}"#);
    call_with(
        agent,
        "POST",
        &format!("{url}/api/v1/lookup"),
        Some(&body),
        &[("content-type", "application/json"), credentials],
    )
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    let pair = format!("{user}:{password}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

#[test]
fn a_trace_log_holds_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("auth.toml");
    let f = file.to_str().unwrap();
    let pw = d.join("rdr.pw");
    std::fs::write(&pw, format!("{USER_PASSWORD}\n")).unwrap();
    binary::ok(&format!(
        "auth add-user --file {f} --role read --password-file {} rhea",
        pw.display()
    ));
    let token = binary::ok(&format!("auth add-token --file {f} --role write writer"));
    let token = token.trim();
    let keystone = FakeKeystone::start(SERVICE_PASSWORD);
    std::fs::write(d.join("ks.pw"), format!("{SERVICE_PASSWORD}\n")).unwrap();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&format!(
        "\n[keystone]\nurl = \"{}\"\nuser = \"hierad\"\npassword_file = \"{}\"\nproject = \"service\"\n\
         [keystone.roles]\nreader = \"read\"\n[keystone.projects]\nops = [1]\n",
        keystone.url,
        d.join("ks.pw").display()
    ));
    std::fs::write(&file, text).unwrap();

    let pki = Pki::new(d);
    let (cert, key) = pki.issue("server", "localhost", &["localhost", "127.0.0.1"], false);
    let tls = format!("--tls-cert {} --tls-key {}", cert.display(), key.display());
    let db = pg::fresh_database();
    let mut server =
        TestServer::start_logging(Path::new(&db), &format!("--auth {f} {tls}"), "trace");
    let url = server.url.clone();
    assert!(url.starts_with("https://"), "{url}");
    let agent = pki.client(None);
    let bearer = format!("Bearer {token}");

    // A document holding a secret, written and read back.
    let put = call_with(
        &agent,
        "PUT",
        &format!("{url}/api/v1/config/environments/1/resources/astute/values"),
        Some(&format!(
            r#"{{"mysql": {{"root_password": "{DOCUMENT_SECRET}"}}}}"#
        )),
        &[
            ("content-type", "application/json"),
            ("authorization", &bearer),
        ],
    );
    assert_eq!(put.status, 204, "{}", put.body);
    let by_token = lookup(&agent, &url, "mysql", ("authorization", &bearer));
    assert!(by_token.body.contains(DOCUMENT_SECRET), "{}", by_token.body);
    // Keystone validates the token, with the service account's login.
    let by_keystone = lookup(&agent, &url, "mysql", ("x-auth-token", "ks-reader"));
    assert!(
        by_keystone.body.contains(DOCUMENT_SECRET),
        "{}",
        by_keystone.body
    );
    let by_user = lookup(
        &agent,
        &url,
        "mysql",
        ("authorization", &basic("rhea", USER_PASSWORD)),
    );
    assert!(by_user.body.contains(DOCUMENT_SECRET), "{}", by_user.body);
    // Wrong credentials of each kind.
    let wrong_password = basic("rhea", "not-the-pw-Hj7");
    for credentials in [
        ("authorization", wrong_password.as_str()),
        ("authorization", "Bearer hierad_notatokenatall0000"),
        ("x-auth-token", "ks-unknown-Zt5"),
    ] {
        assert_eq!(lookup(&agent, &url, "mysql", credentials).status, 401);
    }
    server.stop();
    let log = server.log();

    // The log is really the most verbose one: the dependencies' own lines
    // are there, up to their caps (rustls's at trace, ureq's redacted
    // request lines to Keystone at debug).
    assert!(
        log.contains(" TRACE rustls::") && log.contains(" DEBUG ureq"),
        "HIERAD_LOG=trace logged no dependency's trace or debug lines:\n{log}"
    );
    // And the server stopped cleanly: PostgreSQL's blocking client closed
    // its connections on a runtime worker, which panicked, at every stop.
    assert!(!log.contains("panicked"), "{log}");
    let secrets = [
        DOCUMENT_SECRET,
        SERVICE_PASSWORD,
        USER_PASSWORD,
        "not-the-pw-Hj7",
        token,
        token.trim_start_matches("hierad_"),
        "hierad_notatokenatall0000",
        "ks-reader",
        "ks-unknown-Zt5",
        "svc-token",
    ];
    for secret in secrets {
        assert!(!log.contains(secret), "{secret:?} is in the log:\n{log}");
    }
    // Nothing from the dependencies that carry data beyond their caps:
    // tokio-postgres writes statement parameters at debug (in whatever
    // encoding: a search for the value alone could miss them), ureq the
    // raw wire at trace.
    for line in log.lines() {
        for (level, target) in [
            ("DEBUG", "tokio_postgres"),
            ("TRACE", "tokio_postgres"),
            ("DEBUG", "postgres"),
            ("TRACE", "postgres"),
            ("TRACE", "ureq"),
        ] {
            assert!(
                !(line.contains(level) && line.contains(&format!(" {target}"))),
                "a {level} line of {target}: {line}"
            );
        }
    }
}

#[test]
fn unreadable_log_directives_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    let args = format!(
        "serve --listen 127.0.0.1:0 --no-sample --db {}",
        db.display()
    );
    let mut command = binary::command(&args);
    command.env("HIERAD_LOG", "hierad=loud");
    let refusal = binary::refusal(&args, binary::output(command, None));
    assert!(
        refusal.starts_with("HIERAD_LOG=\"hierad=loud\" cannot be read"),
        "{refusal}"
    );
    assert!(
        !db.exists(),
        "a database was made before the log's directives were read"
    );
}

/// The database holds every password of a cluster: one hierad creates is
/// readable by its owner only, and one other users can read is warned
/// of at start, as the auth file and the TLS key are.
#[test]
fn a_database_other_users_can_read_is_warned_of() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let warning = "the database (--db) is readable by other users; chmod 600 it";
    let new = dir.path().join("new.db");
    let mut server = TestServer::start_on(&new, &[]);
    let mode = std::fs::metadata(&new).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    assert!(!server.log().contains(warning), "{}", server.log());
    server.stop();
    std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o644)).unwrap();
    let server = TestServer::start_on(&new, &[]);
    assert_eq!(server.log().matches(warning).count(), 1, "{}", server.log());
}
