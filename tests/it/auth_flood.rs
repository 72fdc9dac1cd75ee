//! Password checks that outlive their request (docs/security.md,
//! "Password checks"), against the real binary: a client that sends a
//! password and resets the connection a few milliseconds later is
//! charged and counted as a failure, the server's threads stay few
//! however many do so, a right password whose client left is not
//! remembered, and a full password queue refuses passwords (503) while
//! tokens and remembered passwords are answered. And an auth file
//! truncated to nothing is not reloaded.
use crate::remembered::KeepAlive;
use crate::server::TestServer;
use crate::throttle::guarded;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

const ROUTE: &str = "/api/v1/config/environments";
const ROOT_PASSWORD: &str = "Adm1n-pw-Qq8";

fn root(password: &str) -> String {
    use base64::Engine;
    let pair = format!("root:{password}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

fn addr(url: &str) -> SocketAddr {
    url.strip_prefix("http://").unwrap().parse().unwrap()
}

/// A connection from `source` (any 127.0.0.0/8 address is this host's).
fn connect_from(source: [u8; 4], to: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::from((source, 0)).into()).unwrap();
    socket.connect(&to.into()).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    socket.into()
}

fn request(authorization: &str) -> String {
    format!(
        "GET {ROUTE} HTTP/1.1\r\nhost: localhost\r\nauthorization: {authorization}\r\nconnection: close\r\n\r\n"
    )
}

/// Sends `authorization` from `source`, and resets the connection (RST,
/// not FIN) after `ms` milliseconds, before an Argon2 check could end.
fn send_and_reset(source: [u8; 4], to: SocketAddr, authorization: &str, ms: u64) {
    let mut stream = connect_from(source, to);
    stream.write_all(request(authorization).as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(ms));
    socket2::SockRef::from(&stream)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
}

/// The status of `authorization` sent from `source`, and the answer's head.
fn status_from(source: [u8; 4], to: SocketAddr, authorization: &str) -> (u16, String) {
    let mut stream = connect_from(source, to);
    stream.write_all(request(authorization).as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let head = answer
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_owned();
    (answer[9..12].parse().unwrap(), head)
}

/// The value of the counter `name` (0 when it has no series yet).
fn counter(url: &str, reader: &str, name: &str) -> u64 {
    let (status, metrics) = KeepAlive::open(url).get("/metrics", reader);
    assert_eq!(status, 200, "{metrics}");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0)
}

/// Waits (at most 30 s) until `done` holds.
fn until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..300 {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("waited 30 s for {what}");
}

/// The server's threads (/proc/PID/status).
fn threads(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:")?.trim().parse().ok())
        .unwrap()
}

/// The attack: wrong passwords whose clients reset a few
/// milliseconds after sending. Before, each dropped request gave its
/// turn back and left its Argon2 run going on a thread of its own: none
/// was counted or logged, one address guessed as fast as it could
/// connect, and 291 such requests took 3.28 GB and 177 threads.
#[test]
fn wrong_passwords_whose_clients_reset_are_counted_and_run_on_few_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (file, reader) = guarded(dir.path());
    let f = file.to_str().unwrap();
    let mut server = TestServer::start_logging(
        &dir.path().join("hierad.db"),
        &["--auth", f],
        "warn,hierad::access=info",
    );
    let to = addr(&server.url);
    let pid = server.pid();
    assert_eq!(KeepAlive::open(&server.url).get(ROUTE, &reader).0, 200);
    let before = threads(pid);
    let mut most = before;
    // One address, one after another: five free failures, then each
    // guess waits its turn (1 s) and the client leaves first: refunded,
    // never checked.
    for i in 0..20 {
        send_and_reset([127, 0, 0, 1], to, &root(&format!("guess-{i}")), 5);
        most = most.max(threads(pid));
    }
    // Sixty addresses at once, one guess each: every one free, so the
    // pool's threads and queue are all that bound them.
    std::thread::scope(|scope| {
        for i in 0..60u8 {
            scope.spawn(move || {
                send_and_reset([127, 0, 3, i + 1], to, &root(&format!("spread-{i}")), 5);
            });
        }
        for _ in 0..20 {
            most = most.max(threads(pid));
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    for _ in 0..20 {
        most = most.max(threads(pid));
        std::thread::sleep(Duration::from_millis(20));
    }
    // The pool's threads (one per core, at least two) and tokio's
    // blocking threads for the store: a few, not one per guess.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    assert!(
        most <= before + cores as u64 + 4,
        "{most} threads at most, {before} before the guesses"
    );
    let counted = || {
        let abandoned = counter(
            &server.url,
            &reader,
            "hierad_auth_failures_total{reason=\"abandoned\"}",
        );
        let wrong = counter(
            &server.url,
            &reader,
            "hierad_auth_failures_total{reason=\"password\"}",
        );
        (abandoned, wrong)
    };
    // The first five of the one address at least (the checks its client
    // left are charged and counted: before, none was).
    until("the abandoned checks to be counted", || {
        let (abandoned, wrong) = counted();
        abandoned + wrong >= 5 && abandoned >= 1
    });
    // Each abandoned check is counted when its request ends: settled
    // once two reads a little apart agree.
    let mut abandoned = counted().0;
    until("the count to settle", || {
        std::thread::sleep(Duration::from_millis(500));
        let now = counted().0;
        std::mem::replace(&mut abandoned, now) == now
    });
    server.stop();
    let log = server.log();
    let lines = log
        .lines()
        .filter(|l| l.contains("counted as a failed authentication"))
        .count();
    assert_eq!(lines as u64, abandoned, "each logged once:\n{log}");
    assert!(!log.contains("guess-") && !log.contains("spread-"), "{log}");
}

/// A right password whose client left before its check ended is not
/// remembered: before, the orphaned check cached it, so a guesser that
/// resets each guess after a few milliseconds and replays them with a
/// shorter reset learned which one was right (answered before the reset)
/// without a failure counted. Here the replay comes from an address that
/// has just sent ten wrong passwords at once, all charged when admitted:
/// a password not remembered is a guess, whose turn is now too far away
/// (429); a remembered one would be answered at once (200).
#[test]
fn a_right_password_whose_client_left_is_not_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let (file, reader) = guarded(dir.path());
    let f = file.to_str().unwrap();
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &["--auth", f]);
    let to = addr(&server.url);
    let abandoned = "hierad_auth_failures_total{reason=\"abandoned\"}";
    // A reset that reaches the server before it has read the request
    // drops the request unread (no check, nothing counted): on a loaded
    // machine that takes a few tries.
    let mut tries = 0;
    while counter(&server.url, &reader, abandoned) == 0 {
        assert!(tries < 20, "no abandoned check in {tries} tries");
        tries += 1;
        send_and_reset([127, 0, 4, 1], to, &root(ROOT_PASSWORD), 2);
        for _ in 0..20 {
            if counter(&server.url, &reader, abandoned) > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let replayer = [127, 0, 4, 2];
    let mut guesses: Vec<TcpStream> = (0..10)
        .map(|i| {
            let mut stream = connect_from(replayer, to);
            stream
                .write_all(request(&root(&format!("w-{i}"))).as_bytes())
                .unwrap();
            stream
        })
        .collect();
    // Admitted (and charged) as they arrive; the last waits 5 s.
    until("the ten to be admitted", || {
        counter(
            &server.url,
            &reader,
            "hierad_auth_throttled_total{outcome=\"waited\"}",
        ) == 5
    });
    assert_eq!(status_from(replayer, to, &root(ROOT_PASSWORD)).0, 429);
    for stream in &mut guesses {
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    }
    // Checked in full from elsewhere, it is right.
    assert_eq!(status_from([127, 0, 4, 3], to, &root(ROOT_PASSWORD)).0, 200);
}

/// Many addresses' guesses at once, on one thread and a queue of one:
/// the guesses past them are refused unchecked (503, Retry-After), while
/// the token and a password verified before are answered.
#[test]
fn a_full_password_queue_refuses_guesses_not_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let (file, reader) = guarded(dir.path());
    let f = file.to_str().unwrap();
    let server = TestServer::start_on(
        &dir.path().join("hierad.db"),
        &format!("--auth {f} --password-threads 1 --password-queue 1"),
    );
    let to = addr(&server.url);
    assert_eq!(status_from([127, 0, 5, 1], to, &root(ROOT_PASSWORD)).0, 200);
    // Every connection open before any request is sent: they arrive
    // within a check's time of each other.
    let mut streams: Vec<TcpStream> = (0..20u8)
        .map(|i| connect_from([127, 0, 6, i + 1], to))
        .collect();
    for (i, stream) in streams.iter_mut().enumerate() {
        stream
            .write_all(request(&root(&format!("g-{i}"))).as_bytes())
            .unwrap();
    }
    let token = status_from([127, 0, 5, 2], to, &reader);
    let remembered = status_from([127, 0, 5, 3], to, &root(ROOT_PASSWORD));
    let mut heads = Vec::new();
    for mut stream in streams {
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        heads.push(answer.split("\r\n\r\n").next().unwrap().to_owned());
    }
    assert_eq!((token.0, remembered.0), (200, 200));
    let busy: Vec<&String> = heads
        .iter()
        .filter(|h| h.starts_with("HTTP/1.1 503"))
        .collect();
    assert!(!busy.is_empty(), "{heads:#?}");
    assert!(
        busy.iter()
            .all(|h| h.to_ascii_lowercase().contains("retry-after: 1")),
        "{busy:#?}"
    );
    assert!(
        heads
            .iter()
            .all(|h| h.starts_with("HTTP/1.1 503") || h.starts_with("HTTP/1.1 401")),
        "{heads:#?}"
    );
    let refused = counter(
        &server.url,
        &reader,
        "hierad_auth_failures_total{reason=\"busy\"}",
    );
    assert_eq!(refused, busy.len() as u64);
}

/// An auth file truncated to nothing (`> auth.toml`) would let nobody
/// in: the reload keeps the old one and says why, naming the file.
/// Before, everyone was locked out.
#[test]
fn an_empty_auth_file_is_not_reloaded() {
    let dir = tempfile::tempdir().unwrap();
    let (file, reader) = guarded(dir.path());
    let f = file.to_str().unwrap();
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &["--auth", f]);
    assert_eq!(KeepAlive::open(&server.url).get(ROUTE, &reader).0, 200);
    std::fs::write(&file, "").unwrap();
    until("the warning", || {
        server
            .log()
            .lines()
            .any(|l| l.contains("WARN") && l.contains("the auth file is empty") && l.contains(f))
    });
    assert_eq!(KeepAlive::open(&server.url).get(ROUTE, &reader).0, 200);
    let to = addr(&server.url);
    assert_eq!(status_from([127, 0, 7, 1], to, &root(ROOT_PASSWORD)).0, 200);
}
