//! Every safety step of a request's fixed path still runs on the fast
//! path (bench/LOG.md "Where a cached lookup's instructions go"): on a
//! connection whose last answer came from the answer cache, with the
//! client's credentials remembered, a request over a limit is still
//! refused, logged and counted; a cross-site one still refused; one
//! without credentials still refused; one framed two ways still refused.
//! Against the real binary with `--auth`, over raw keep-alive
//! connections.

use crate::binary::ok;
use crate::server::TestServer;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const LOOKUP: &str = r#"{"environment": 1, "key": "keystone_auth_uri"}"#;
/// `--lookup-body-limit`, and `--max-header-bytes`.
const BODY_LIMIT: usize = 2048;
const HEAD_LIMIT: usize = 4096;

/// One answer: its status, its head (lowercased), its body.
struct Answer {
    status: u16,
    head: String,
    body: String,
}

/// Sends `request` (a whole raw request) on a new connection to the
/// server at `url` and reads its answer.
fn sent(url: &str, request: &[u8]) -> Answer {
    let mut stream = BufReader::new(TcpStream::connect(url.trim_start_matches("http://")).unwrap());
    stream
        .get_mut()
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.get_mut().write_all(request).unwrap();
    answer(&mut stream)
}

/// Reads one answer from `stream` (its body by Content-Length).
fn answer(stream: &mut BufReader<TcpStream>) -> Answer {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the connection closed mid-answer: {head}");
        if line == "\r\n" {
            break;
        }
        head.push_str(&line.to_ascii_lowercase());
    }
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    let mut body = vec![0; length];
    stream.read_exact(&mut body).unwrap();
    Answer {
        status: head[9..12].parse().unwrap(),
        head,
        body: String::from_utf8(body).unwrap(),
    }
}

/// A lookup's request as sent, with `extra` header lines (each ending
/// `\r\n`) and `host`.
fn lookup(host: &str, extra: &str, body: &str) -> String {
    format!(
        "POST /api/v1/lookup HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n\
         {extra}content-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The answer to `request`, sent on a connection that was first answered
/// the same lookup three times with `authorization`, the last from the
/// answer cache.
fn after_a_cached_answer(url: &str, authorization: &str, request: &str) -> Answer {
    let stream = TcpStream::connect(url.strip_prefix("http://").unwrap()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut stream = BufReader::new(stream);
    let warm = lookup("127.0.0.1", &format!("{authorization}\r\n"), LOOKUP);
    let mut last = String::new();
    for _ in 0..3 {
        stream.get_mut().write_all(warm.as_bytes()).unwrap();
        let warmed = answer(&mut stream);
        assert_eq!(warmed.status, 200, "{}", warmed.body);
        last = warmed.head;
    }
    // An answer is cached on its second miss (src/cache/answers.rs).
    assert!(last.contains("x-cache: hit"), "{last}");
    stream.get_mut().write_all(request.as_bytes()).unwrap();
    answer(&mut stream)
}

#[test]
fn every_safety_step_runs_after_a_cached_answer() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auth.toml");
    let f = file.to_str().unwrap();
    let token = ok(&format!("auth add-token --file {f} --role admin ops"));
    let authorization = format!("authorization: Bearer {}", token.trim());
    let mut server = TestServer::start_logging(
        &dir.path().join("hierad.db"),
        &format!("--auth {f} --lookup-body-limit {BODY_LIMIT} --max-header-bytes {HEAD_LIMIT}"),
        "warn,hierad::access=info",
    );
    let url = &server.url.clone();
    let with_auth = format!("{authorization}\r\n");
    let padded = format!(
        r#"{{"environment": 1, "key": "keystone_auth_uri", "pad": "{}"}}"#,
        "x".repeat(BODY_LIMIT)
    );
    let filler = format!("x-filler: {}\r\n", "v".repeat(HEAD_LIMIT));
    let cases = [
        (
            "over the body limit",
            lookup("127.0.0.1", &with_auth, &padded),
            413,
        ),
        (
            "over the head limit",
            lookup("127.0.0.1", &format!("{with_auth}{filler}"), LOOKUP),
            431,
        ),
        (
            "a rebound host",
            lookup("evil.example", &with_auth, LOOKUP),
            421,
        ),
        (
            "another origin",
            lookup(
                "127.0.0.1",
                &format!("{with_auth}origin: http://evil.example\r\n"),
                LOOKUP,
            ),
            403,
        ),
        (
            "a form's body",
            lookup("127.0.0.1", &with_auth, LOOKUP).replace("application/json", "text/plain"),
            415,
        ),
        ("no credentials", lookup("127.0.0.1", "", LOOKUP), 401),
        (
            "a wrong token",
            lookup("127.0.0.1", "authorization: Bearer nope\r\n", LOOKUP),
            401,
        ),
        (
            "two framings",
            lookup(
                "127.0.0.1",
                &format!("{with_auth}transfer-encoding: chunked\r\n"),
                LOOKUP,
            ),
            400,
        ),
        (
            "a coding before chunked",
            format!(
                "POST /api/v1/lookup HTTP/1.1\r\nhost: 127.0.0.1\r\n\
                 content-type: application/json\r\n{with_auth}\
                 transfer-encoding: gzip, chunked\r\n\r\n{:x}\r\n{LOOKUP}\r\n0\r\n\r\n",
                LOOKUP.len()
            ),
            400,
        ),
    ];
    let framings = cases.iter().filter(|(_, _, status)| *status == 400).count();
    for (what, request, status) in &cases {
        let refused = after_a_cached_answer(url, &authorization, request);
        assert_eq!(refused.status, *status, "{what}: {}", refused.body);
        assert!(
            !refused.body.contains("keystone"),
            "{what}: the refusal carries the answer: {}",
            refused.body
        );
    }

    // And counted.
    let metrics = after_a_cached_answer(
        url,
        &authorization,
        &format!("GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n{with_auth}\r\n"),
    );
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    for (what, _, status) in &cases {
        let series = format!(
            "hierad_http_requests_total{{method=\"POST\",route=\"/api/v1/lookup\",status=\"{status}\"}}"
        );
        assert!(
            metrics.body.lines().any(|l| l.starts_with(&series)),
            "{what}: no {series} in\n{}",
            metrics.body
        );
    }
    // Both framing refusals, under the route they asked for.
    let refused = metrics
        .body
        .lines()
        .find_map(|l| {
            l.strip_prefix(
                r#"hierad_http_requests_total{method="POST",route="/api/v1/lookup",status="400"} "#,
            )
        })
        .and_then(|n| n.parse::<usize>().ok());
    assert_eq!(refused, Some(framings), "{}", metrics.body);
    let failures: u64 = metrics
        .body
        .lines()
        .filter(|l| l.starts_with("hierad_auth_failures_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert!(failures >= 2, "{}", metrics.body);

    // Each refusal was logged, with its status, as was each answer.
    server.stop();
    let log = server.log();
    let access: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("hierad::access"))
        .collect();
    for (what, _, status) in &cases {
        assert!(
            access
                .iter()
                .any(|l| l.contains(&format!("status={status}"))),
            "{what}: no access line with status {status} in\n{log}"
        );
    }
    let logged = access.iter().filter(|l| l.contains("status=400")).count();
    assert_eq!(logged, framings, "{log}");
    // Never a header's value, though every refused request carried one.
    assert!(!log.contains(token.trim()), "the token was logged:\n{log}");
    // Three warm-ups before each case and before /metrics, and /metrics.
    let answered = access.iter().filter(|l| l.contains("status=200")).count();
    assert_eq!(answered, 3 * cases.len() + 4, "{log}");
}

/// A head hyper refuses itself (one it cannot parse: 400; more headers
/// than it reads: 431) never reaches the router, yet it is logged and
/// counted as every other refusal is.
#[test]
fn heads_refused_before_routing_are_logged_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_logging(
        &dir.path().join("hierad.db"),
        "",
        "warn,hierad::access=info",
    );
    let many: String = (0..120).map(|i| format!("x-h{i}: v\r\n")).collect();
    for (request, status) in [
        (
            "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nno colon here\r\n\r\n".to_owned(),
            400,
        ),
        (
            format!("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n{many}\r\n"),
            431,
        ),
    ] {
        assert_eq!(
            sent(&server.url, request.as_bytes()).status,
            status,
            "{request}"
        );
    }
    // Counted when hyper's connection ends with the refusal, which is
    // after the answer was written: the client can read its 431 and ask
    // for /metrics before that; read them until both show (5 s at most).
    let series = ["malformed", "too_large"]
        .map(|reason| format!("hierad_refused_heads_total{{reason=\"{reason}\"}} 1"));
    let mut metrics = String::new();
    for _ in 0..250 {
        metrics = sent(
            &server.url,
            b"GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
        )
        .body;
        if series.iter().all(|s| metrics.lines().any(|l| l == s)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for series in &series {
        assert!(
            metrics.lines().any(|l| l == series),
            "no {series} in\n{metrics}"
        );
    }
    server.stop();
    let log = server.log();
    for (status, outcome) in [(400, "malformed"), (431, "too_large")] {
        assert!(
            log.lines().any(|l| l.contains("hierad::access")
                && l.contains(&format!("status={status}"))
                && l.contains(&format!("outcome=\"{outcome}\""))),
            "no access line for the {outcome} head in\n{log}"
        );
    }
    assert!(
        !log.contains("no colon here"),
        "a header's text was logged:\n{log}"
    );
}

/// Access lines are written in batches (src/cli/logging/batched.rs), yet
/// a running server's log gets them without anything else being logged
/// or the server stopping; the last ones before a SIGTERM are there too.
#[test]
fn access_lines_reach_the_log_of_a_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_logging(
        &dir.path().join("hierad.db"),
        "",
        "warn,hierad::access=info",
    );
    let ask = |path: &str| {
        let request = format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
        sent(&server.url, request.as_bytes()).status
    };
    assert_eq!(ask("/healthz"), 200);
    let logged = |log: &str, route: &str| {
        log.lines()
            .any(|l| l.contains("hierad::access") && l.contains(&format!("route=\"{route}\"")))
    };
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while !logged(&server.log(), "/healthz") && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let log = server.log();
    assert!(logged(&log, "/healthz"), "no access line yet in\n{log}");
    assert_eq!(ask("/api/v1/lookup"), 405);
    server.stop();
    let log = server.log();
    assert!(
        logged(&log, "/api/v1/lookup"),
        "the last access line is not in\n{log}"
    );
}
