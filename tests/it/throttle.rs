//! Failed authentications make their network's checks take turns
//! (docs/security.md "Failed authentications"): against the
//! real binary, a guesser who holds a valid low-privilege token cannot
//! reset the count with it, and right credentials are answered without
//! waiting.
use crate::binary::ok;
use crate::remembered::KeepAlive;
use crate::server::TestServer;

const ROUTE: &str = "/api/v1/config/environments";

/// An auth file in `dir` with a read token (its `Authorization` header
/// returned with the file) and an admin user `root`.
pub(crate) fn guarded(dir: &std::path::Path) -> (std::path::PathBuf, String) {
    let file = dir.join("auth.toml");
    let f = file.to_str().unwrap();
    let token = ok(&["auth", "add-token", "--file", f, "--role", "read", "ops"]);
    let password = dir.join("pw");
    std::fs::write(&password, "Adm1n-pw-Qq8\n").unwrap();
    let p = password.to_str().unwrap();
    ok(&format!(
        "auth add-user --file {f} --role admin --password-file {p} root"
    ));
    (file, format!("Bearer {}", token.trim()))
}

/// The `Authorization` header of user `root` with `password`.
fn root(password: &str) -> String {
    use base64::Engine;
    let pair = format!("root:{password}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

#[test]
fn a_valid_token_between_guesses_does_not_reset_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let (file, reader) = guarded(dir.path());
    let f = file.to_str().unwrap();
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &["--auth", f]);
    let guess = |i: usize| root(&format!("guess-{i}"));
    // Each request on a connection of its own, as a guesser's would be.
    let once = |authorization: &str| KeepAlive::open(&server.url).get(ROUTE, authorization).0;

    let mut proved = KeepAlive::open(&server.url);
    assert_eq!(proved.get(ROUTE, &reader).0, 200);
    for i in 0..5 {
        assert_eq!(once(&guess(i)), 401, "a free failure");
    }
    // Past five, each guess waits its turn; the valid token between
    // them is checked at once (no guess reaches a bearer token's space)
    // and pays nothing off ...
    for i in 5..8 {
        assert_eq!(once(&reader), 200);
        assert_eq!(once(&guess(i)), 401);
    }
    // ... so the guesses that follow wait too. Before, a success wiped
    // the count and these were free again.
    for i in 8..11 {
        assert_eq!(once(&guess(i)), 401);
    }
    // A wrong token is answered late (as long as a turn would take); the
    // right one right away.
    assert_eq!(once("Bearer hierad_never-issued"), 401);
    assert_eq!(once(&reader), 200);
    // The connection that proved the token before the guesses is
    // answered at once too (it would be the eighth wait).
    let (status, metrics) = proved.get("/metrics", &reader);
    assert_eq!(status, 200, "{metrics}");
    let value = |name: &str| {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no {name}:\n{metrics}"))
    };
    assert_eq!(value("hierad_auth_failures_total{reason=\"password\"}"), 11);
    assert_eq!(value("hierad_auth_failures_total{reason=\"token\"}"), 1);
    // Seven checks wait their turn (guesses 5 to 10 and the wrong token)
    // when each comes before the last one's second is paid off; on a
    // loaded machine a slow password check can outlast a turn, so one or
    // two go ahead at once. Before, the successes wiped the count and
    // none waited.
    let waited = value("hierad_auth_throttled_total{outcome=\"waited\"}");
    assert!((4..=7).contains(&waited), "{waited} checks waited");
}

/// Wrong tokens over many connections at once, from one network: a few
/// are answered late, one a second, and the rest at once, so a network
/// never holds more than a few connection slots waiting (a slot held is
/// one no one else is served on).
#[test]
fn wrong_tokens_over_many_connections_hold_few_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let (file, reader) = guarded(dir.path());
    let f = file.to_str().unwrap();
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &["--auth", f]);
    let wrong = |i: usize| format!("Bearer hierad_wrong-{i}");
    for i in 0..5 {
        assert_eq!(KeepAlive::open(&server.url).get(ROUTE, &wrong(i)).0, 401);
    }
    let url = &server.url;
    std::thread::scope(|scope| {
        let sent: Vec<_> = (5..25)
            .map(|i| scope.spawn(move || KeepAlive::open(url).get(ROUTE, &wrong(i)).0))
            .collect();
        for status in sent {
            assert_eq!(status.join().unwrap(), 401);
        }
    });
    let (status, metrics) = KeepAlive::open(url).get("/metrics", &reader);
    assert_eq!(status, 200, "{metrics}");
    assert!(
        metrics.contains("hierad_auth_failures_total{reason=\"token\"} 25\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("hierad_auth_throttled_total{outcome=\"waited\"} 5\n"),
        "five answered late (1 to 5 s), fifteen at once:\n{metrics}"
    );
}

/// Wrong passwords sent at once over many connections, before any has
/// failed: five are checked at once, five take turns, the rest are
/// refused unchecked (429). Charged only once they had failed, all of
/// them were checked: 116 of 120 from one address, each an Argon2 run
/// the network's other clients queued behind. A password the server
/// verified lately is no guess: it is answered at once, guesses or not.
#[test]
fn wrong_passwords_sent_at_once_take_turns_before_any_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = guarded(dir.path());
    let f = file.to_str().unwrap();
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &["--auth", f]);
    let right = root("Adm1n-pw-Qq8");
    let url = &server.url;
    assert_eq!(KeepAlive::open(url).get(ROUTE, &right).0, 200);
    let mut statuses: Vec<u16> = std::thread::scope(|scope| {
        let sent: Vec<_> = (0..20)
            .map(|i| {
                let guess = root(&format!("guess-{i}"));
                scope.spawn(move || KeepAlive::open(url).get(ROUTE, &guess).0)
            })
            .collect();
        sent.into_iter().map(|s| s.join().unwrap()).collect()
    });
    statuses.sort_unstable();
    assert_eq!(statuses, [[401; 10], [429; 10]].concat());
    // The admin's own password, verified before the guesses, on a new
    // connection: at once, not refused with its network.
    assert_eq!(KeepAlive::open(url).get(ROUTE, &right).0, 200);
}
