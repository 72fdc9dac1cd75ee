//! Keystone v3 tokens when Keystone misbehaves or is asked a
//! lot: hung, slow, the same new token sent many times at once. Against
//! the stand-in Keystone of tests/common/keystone.rs, over plain HTTP on
//! loopback (tests/it/security.rs covers the way in over TLS).

use crate::keystone::FakeKeystone;
use crate::server::TestServer;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A server whose auth file holds a read bearer token and a `[keystone]`
/// section for `keystone` with the `settings` lines added.
struct Setup {
    server: TestServer,
    keystone: FakeKeystone,
    /// The bearer token (read), another way in than Keystone.
    token: String,
    dir: tempfile::TempDir,
}

fn setup(settings: &str, flags: &[&str]) -> Setup {
    setup_with_password("svc-pw-Qq77", settings, flags)
}

/// [`setup`], with `password` in the service account's password file.
fn setup_with_password(password: &str, settings: &str, flags: &[&str]) -> Setup {
    let keystone = FakeKeystone::start("svc-pw-Qq77");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("auth.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .args(["auth", "add-token", "--role", "read", "--file"])
        .arg(&file)
        .arg("ci")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let token = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    std::fs::write(d.join("ks.pw"), format!("{password}\n")).unwrap();
    // Readable by others, as a careless operator leaves it (the server
    // warns: a_keystone_timeout_beyond_the_request_limit_is_warned_of).
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(d.join("ks.pw"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&format!(
        "\n[keystone]\nurl = \"{}\"\nuser = \"hierad\"\npassword_file = \"{}\"\nproject = \"service\"\n{settings}\n\
         [keystone.roles]\nreader = \"read\"\nmember = \"write\"\n",
        keystone.url,
        d.join("ks.pw").display()
    ));
    std::fs::write(&file, text).unwrap();
    let mut args = vec!["--auth", file.to_str().unwrap()];
    args.extend_from_slice(flags);
    let server = TestServer::start_on(&d.join("hierad.db"), &args);
    Setup {
        server,
        keystone,
        token,
        dir,
    }
}

/// The status and body of `GET /api/v1/config/environments` with
/// `header`; a minute at most (a guard against a hang, not a measure).
fn list(url: &str, header: (&str, &str)) -> (u16, String) {
    let (status, body, _) = get(url, "/api/v1/config/environments", header);
    (status, body)
}

/// The status, body and `Retry-After` (seconds) of `GET path` with
/// `header`, over a connection of its own.
fn get(url: &str, path: &str, header: (&str, &str)) -> (u16, String, Option<u64>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let mut response = agent
        .get(format!("{url}{path}"))
        .header(header.0, header.1)
        .call()
        .expect("hierad answered within a minute");
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.parse().ok());
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap_or_default();
    (status, body, retry_after)
}

/// A Keystone that accepts the service login and never answers holds
/// each request no longer than one call's `timeout_secs`: requests
/// with other tokens do not queue behind one login each (they did, one
/// after the other, for a lock held across the call: the fifth waited
/// five timeouts, past the request timeout, and got the server's 408
/// instead of this 503). And bearer tokens are answered meanwhile. (Five
/// new tokens: the sixth sent at once from the same address would wait
/// for its turn, as a guess would: server/throttle.rs.)
#[test]
fn a_hung_keystone_is_503_within_one_timeout_for_every_waiting_request() {
    let s = setup("timeout_secs = 2", &["--request-timeout", "7s"]);
    s.keystone.hang();
    let url = s.server.url.clone();
    let waiting: Vec<_> = (0..5)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || list(&url, ("x-auth-token", &format!("ks-new-{i}"))))
        })
        .collect();
    let bearer = format!("Bearer {}", s.token);
    assert_eq!(list(&url, ("authorization", &bearer)).0, 200);
    for request in waiting {
        let (status, body) = request.join().unwrap();
        assert_eq!(status, 503, "{body}");
        assert!(
            body.contains("did not answer within keystone.timeout_secs (2 s)"),
            "{body}"
        );
        assert!(!body.contains("svc-pw-Qq77"), "{body}");
    }
}

/// The same token, not validated yet, in many requests at once: one
/// validation by Keystone, the others wait for its answer (each asked
/// Keystone itself).
#[test]
fn concurrent_requests_with_a_new_token_ask_keystone_once() {
    let s = setup("", &[]);
    s.keystone.slow_validations(Duration::from_millis(300));
    let url = s.server.url.clone();
    let requests: Vec<_> = (0..8)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || list(&url, ("x-auth-token", "ks-reader")))
        })
        .collect();
    for request in requests {
        let (status, body) = request.join().unwrap();
        assert_eq!(status, 200, "{body}");
    }
    assert_eq!(s.keystone.validations.load(Ordering::Relaxed), 1);
    assert_eq!(s.keystone.logins.load(Ordering::Relaxed), 1);
}

/// Requests with Keystone tokens, each to a hung Keystone, take at most
/// a few of the blocking threads: a store read by a bearer token's
/// request still gets one. (Each took one; 600 of them took all 512 of
/// tokio's, and the read waited for a Keystone timeout or got 408.)
#[test]
fn requests_held_by_a_hung_keystone_leave_blocking_threads_for_the_store() {
    use std::io::Write;
    let s = setup("timeout_secs = 300", &["--request-timeout", "45s"]);
    s.keystone.hang();
    let addr = s.server.url.trim_start_matches("http://").to_owned();
    let held: Vec<std::net::TcpStream> = (0..600)
        .map(|i| {
            let mut stream = std::net::TcpStream::connect(&addr).unwrap();
            let request = format!(
                "GET /api/v1/config/environments HTTP/1.1\r\nhost: localhost\r\nx-auth-token: ks-held-{i}\r\nconnection: close\r\n\r\n"
            );
            stream.write_all(request.as_bytes()).unwrap();
            stream
        })
        .collect();
    // Read from the store, off the async workers.
    let bearer = format!("Bearer {}", s.token);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let mut retention = agent
        .get(format!(
            "{}/api/v1/config/environments/1/retention",
            s.server.url
        ))
        .header("authorization", &bearer)
        .call()
        .expect("hierad answered within a minute");
    let body = retention.body_mut().read_to_string().unwrap_or_default();
    assert_eq!(retention.status(), 200, "{body}");
    assert!(body.contains("effective"), "{body}");
    drop(held);
}

/// A token revoked in Keystone is refused once its validation is
/// `cache_secs` old, though it has not expired (an hour ahead: it was
/// let in until then).
#[test]
fn a_revoked_token_is_refused_once_its_validation_is_cache_secs_old() {
    let s = setup("cache_secs = 1", &[]);
    let url = &s.server.url;
    assert_eq!(list(url, ("x-auth-token", "ks-member")).0, 200);
    s.keystone.revoke("ks-member");
    let mut refused = None;
    // 10 s at most.
    for _ in 0..100 {
        let (status, body) = list(url, ("x-auth-token", "ks-member"));
        if status != 200 {
            refused = Some((status, body));
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, body) = refused.expect("the revoked token was let in for 10 s");
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("unknown or expired token"), "{body}");
}

/// Keystone refusing the service token (401) is answered by one new
/// login and the validation asked again with it; a Keystone that refuses
/// every service token is 503, one new login per request, never a loop.
#[test]
fn a_refused_service_token_is_renewed_once() {
    let s = setup("", &[]);
    let url = &s.server.url;
    let logins = || s.keystone.logins.load(Ordering::Relaxed);
    assert_eq!(list(url, ("x-auth-token", "ks-reader")).0, 200);
    assert_eq!(logins(), 1);
    s.keystone.revoke_service_token();
    assert_eq!(list(url, ("x-auth-token", "ks-member")).0, 200);
    assert_eq!(logins(), 2);
    // The new one is kept.
    let (status, body) = list(url, ("x-auth-token", "ks-nobody"));
    assert_eq!(status, 401, "{body}");
    assert_eq!(logins(), 2);
    s.keystone.refuse_service_tokens();
    for i in 1..=3 {
        let (status, body) = list(url, ("x-auth-token", &format!("ks-other-{i}")));
        assert_eq!(status, 503, "{body}");
        assert!(
            body.contains("Keystone answered 401 to the service account"),
            "{body}"
        );
        assert_eq!(logins(), 2 + i);
    }
}

/// Answers of Keystone that hierad cannot use are 503 saying why, never
/// a pass; a token Keystone says expired is 401. A byte at a time is cut
/// at `timeout_secs` (the whole call, body included), not held for the
/// answer's 40 s.
#[test]
fn keystone_answers_that_cannot_be_used_are_503_and_an_expired_token_401() {
    let s = setup("timeout_secs = 2", &["--request-timeout", "20s"]);
    for (token, status, says) in [
        ("ks-past", 401, "the token has expired"),
        ("ks-no-expiry", 503, "missing field `expires_at`"),
        ("ks-garbage", 503, "unreadable validation answer"),
        ("ks-huge", 503, "sent an answer over 1048576 bytes"),
        ("ks-500", 503, "Keystone answered HTTP 500"),
        (
            "ks-trickle",
            503,
            "did not answer within keystone.timeout_secs (2 s)",
        ),
    ] {
        let (got, body) = list(&s.server.url, ("x-auth-token", token));
        assert_eq!(got, status, "{token}: {body}");
        assert!(body.contains(says), "{token}: {body}");
    }
}

/// Made-up Keystone tokens from one address are failed authentications
/// like wrong passwords: past five, that network's checks take turns a
/// second apart, however many connections they come over, and a request
/// whose turn is more than 5 s away is refused (429, `Retry-After`)
/// without asking Keystone; so one client cannot have hierad ask Keystone
/// at full speed, nor guess faster by opening connections. Keystone down
/// is not the client's failure.
#[test]
fn made_up_keystone_tokens_slow_their_sender_down() {
    let s = setup("", &[]);
    let url = &s.server.url;
    for i in 0..7 {
        let (status, body) = list(url, ("x-auth-token", &format!("ks-made-up-{i}")));
        assert_eq!(status, 401, "{body}");
    }
    let bearer = format!("Bearer {}", s.token);
    let metrics = || {
        let (status, body, _) = get(url, "/metrics", ("authorization", &bearer));
        assert_eq!(status, 200, "{body}");
        move |name: &str| {
            body.lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no {name}:\n{body}"))
        }
    };
    // The sixth and seventh made-up token waited; the bearer token that
    // asks for the metrics did not (no guess reaches its space).
    let value = metrics();
    assert_eq!(value("hierad_auth_throttled_total{outcome=\"waited\"}"), 2);
    assert_eq!(value("hierad_auth_failures_total{reason=\"keystone\"}"), 7);

    // Eight at once: five turns, 1 to 5 s away; three refused unchecked,
    // told to come back once a turn is free again (6 s).
    let asked = s.keystone.validations.load(Ordering::Relaxed);
    let answers: Vec<_> = std::thread::scope(|scope| {
        let sent: Vec<_> = (0..8)
            .map(|i| {
                let token = format!("ks-at-once-{i}");
                scope.spawn(move || {
                    get(url, "/api/v1/config/environments", ("x-auth-token", &token))
                })
            })
            .collect();
        sent.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let statuses = |code: u16| answers.iter().filter(|(s, ..)| *s == code).count();
    assert_eq!((statuses(401), statuses(429)), (5, 3), "{answers:?}");
    for (_, body, retry_after) in answers.iter().filter(|(s, ..)| *s == 429) {
        assert!(body.contains("too many failed authentications"), "{body}");
        assert!(matches!(retry_after, Some(5..=6)), "{retry_after:?}");
    }
    assert_eq!(s.keystone.validations.load(Ordering::Relaxed) - asked, 5);

    s.keystone.stop();
    assert_eq!(list(url, ("x-auth-token", "ks-made-up-7")).0, 503);
    let value = metrics();
    assert_eq!(value("hierad_auth_throttled_total{outcome=\"refused\"}"), 3);
    assert_eq!(value("hierad_auth_failures_total{reason=\"keystone\"}"), 12);
    // Keystone down added no failure to the count.
    assert_eq!(
        value("hierad_auth_failures_total{reason=\"keystone_down\"}"),
        1
    );
}

/// A service account Keystone refuses (a wrong password_file) is 503
/// saying so, and Keystone is not asked again for every request: it may
/// lock an account after a few failed logins, and made-up tokens would
/// each have made one (four requests made four logins).
#[test]
fn a_refused_service_login_is_not_tried_again_for_every_request() {
    let s = setup_with_password("not-the-pw-Ww2", "", &[]);
    for i in 0..4 {
        let (status, body) = list(&s.server.url, ("x-auth-token", &format!("ks-any-{i}")));
        assert_eq!(status, 503, "{body}");
        assert!(
            body.contains("Keystone refused the service account") && body.contains("HTTP 401"),
            "{body}"
        );
        assert!(!body.contains("not-the-pw-Ww2"), "{body}");
    }
    assert_eq!(s.keystone.logins.load(Ordering::Relaxed), 1);
}

/// A wrong service password mended on disk is taken without a signal: the
/// server looks at the password file the auth file names, and its next
/// login uses the new one.
#[test]
fn a_mended_service_password_is_taken_without_a_signal() {
    let s = setup_with_password("not-the-pw-Ww2", "", &[]);
    let (status, body) = list(&s.server.url, ("x-auth-token", "ks-reader"));
    assert_eq!(status, 503, "{body}");
    std::fs::write(s.dir.path().join("ks.pw"), "svc-pw-Qq77\n").unwrap();
    let start = std::time::Instant::now();
    loop {
        let (status, body) = list(&s.server.url, ("x-auth-token", "ks-reader"));
        if status == 200 {
            break;
        }
        assert_eq!(status, 503, "{body}");
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the mended password was not taken: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A Keystone timeout that lets a validation outlast the request limit
/// is named at start, and again when an edit of the auth file brings it
/// back: its clients would get 408 instead of the 503 naming Keystone.
#[test]
fn a_keystone_timeout_beyond_the_request_limit_is_warned_of() {
    let s = setup("timeout_secs = 2", &["--request-timeout", "8s"]);
    let warning = "a Keystone validation may take up to 4 × keystone.timeout_secs = 8 s";
    let count = |needle: &str| s.server.log().matches(needle).count();
    assert_eq!(count(warning), 1, "{}", s.server.log());
    // The password file is readable by others; the auth file, made by
    // `hierad auth`, is not.
    assert_eq!(
        count("the Keystone password file is readable by other users; chmod 600 it"),
        1,
        "{}",
        s.server.log()
    );
    assert_eq!(count("the auth file is readable"), 0, "{}", s.server.log());
    let file = s.dir.path().join("auth.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("timeout_secs = 2", "timeout_secs = 3")).unwrap();
    let again = "4 × keystone.timeout_secs = 12 s";
    let start = std::time::Instant::now();
    while count(again) == 0 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(count(again), 1, "{}", s.server.log());
}

/// Keystone over https under a private CA: refused (503 naming Keystone)
/// until the auth file names the CA in `keystone.ca_file`, then trusted,
/// with no signal; `hierad auth list` shows the CA.
#[test]
fn a_keystone_under_a_private_ca_is_trusted_through_its_ca_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pki = crate::pki::Pki::new(d);
    let (cert, key) = pki.issue("keystone", "127.0.0.1", &["127.0.0.1"], false);
    let keystone = FakeKeystone::start_with("svc-pw-Ca11", Some((&cert, &key)));
    assert!(keystone.url.starts_with("https://"), "{}", keystone.url);
    std::fs::write(d.join("ks.pw"), "svc-pw-Ca11\n").unwrap();
    let file = d.join("auth.toml");
    let section = format!(
        "[keystone]\nurl = \"{}\"\nuser = \"hierad\"\npassword_file = \"{}\"\nproject = \"service\"\n",
        keystone.url,
        d.join("ks.pw").display()
    );
    let roles = "[keystone.roles]\nreader = \"read\"\n";
    std::fs::write(&file, format!("{section}{roles}")).unwrap();
    let server = TestServer::start_on(&d.join("hierad.db"), &["--auth", file.to_str().unwrap()]);
    let (status, body) = list(&server.url, ("x-auth-token", "ks-reader"));
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("Keystone"), "{body}");
    assert_eq!(
        keystone.logins.load(Ordering::Relaxed),
        0,
        "no login got through"
    );

    let ca = d.join("ca.pem");
    let named = format!("{section}ca_file = \"{}\"\n{roles}", ca.display());
    std::fs::write(&file, named).unwrap();
    let start = std::time::Instant::now();
    loop {
        let (status, body) = list(&server.url, ("x-auth-token", "ks-reader"));
        if status == 200 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{status} {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .args(["auth", "list", "--file"])
        .arg(&file)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains(&format!("; its CA {}", ca.display())),
        "{listed}"
    );
}
