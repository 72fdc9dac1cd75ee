//! The server's request path against a real `hierad serve`: writes whose
//! client hangs up, bounded metric labels, connection limits and
//! timeouts, error bodies for what hyper and the router refuse, and the
//! resource-exhaustion run (idle, slow and junk connections).

use crate::binary::Args;
use crate::in_process::InProcess;
use crate::server::{Reply, Served, TestServer, call};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

fn addr(server: &impl Served) -> SocketAddr {
    server
        .url()
        .trim_start_matches("http://")
        .parse()
        .expect("the server's address")
}

fn get(server: &impl Served, path: &str) -> Reply {
    call("GET", &format!("{}{path}", server.url()), None, &[])
}

fn send(server: &impl Served, method: &str, path: &str, body: &str) -> Reply {
    call(
        method,
        &format!("{}{path}", server.url()),
        Some(body),
        &[("content-type", "application/json")],
    )
}

/// Environment 5 (levels [nodes]) whose component defines `resources`.
fn setup(server: &impl Served, resources: &[String]) {
    let definitions: Vec<Value> = resources.iter().map(|r| json!({"name": r})).collect();
    let r = send(
        server,
        "POST",
        "/api/v1/config/components",
        &json!({"name": "app", "resource_definitions": definitions}).to_string(),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let r = send(
        server,
        "POST",
        "/api/v1/config/environments",
        r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
}

/// Sends `request` as is on a new connection and reads the whole answer
/// (the server closes, or 10 s pass).
fn raw(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The JSON body of a raw HTTP answer.
fn raw_json(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not a JSON body ({e}): {answer}"))
}

#[test]
fn writes_whose_client_hangs_up_are_published() {
    const WRITES: usize = 200;
    let server = InProcess::empty();
    let resources: Vec<String> = (0..WRITES).map(|i| format!("r{i}")).collect();
    setup(&server, &resources);
    let addr = addr(&server);
    // Four clients, each sending its PUTs and hanging up right after.
    std::thread::scope(|scope| {
        for client in 0..4 {
            scope.spawn(move || {
                for i in (client..WRITES).step_by(4) {
                    let body = json!({"n": i}).to_string();
                    let request = format!(
                        "PUT /api/v1/config/environments/5/resources/r{i}/values HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let mut stream = TcpStream::connect(addr).unwrap();
                    stream.write_all(request.as_bytes()).unwrap();
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                }
            });
        }
    });
    // Every version the store holds must be what GET and lookups answer;
    // writes still in flight get a bounded while to finish.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut committed = 0;
    for i in 0..WRITES {
        let path = format!("/api/v1/config/environments/5/resources/r{i}/values");
        loop {
            let history = get(&server, &format!("{path}/history")).json();
            let written = !history.as_array().unwrap().is_empty();
            let visible = get(&server, &path).json() == json!({"n": i});
            let looked_up = send(
                &server,
                "POST",
                "/api/v1/lookup",
                &json!({"environment": 5, "key": "n", "hierarchy": [format!("r{i}")]}).to_string(),
            )
            .json();
            let found = looked_up == json!({"found": true, "value": i});
            if written == visible && visible == found {
                committed += usize::from(written);
                break;
            }
            assert!(
                Instant::now() < deadline,
                "r{i}: committed {written}, visible to GET {visible}, to lookups {found}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    eprintln!("{committed} of {WRITES} hung-up writes were committed, all published");
}

/// A small deterministic generator (xorshift), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A method name no server knows: `len` letters.
    fn method(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from(b'A' + u8::try_from(self.next() % 26).unwrap()))
            .collect()
    }
}

#[test]
fn unknown_methods_do_not_grow_the_metrics() {
    let server = InProcess::empty();
    let addr = addr(&server);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..500 {
        let method = rng.method(200);
        let answer = raw(
            addr,
            format!("{method} /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
                .as_bytes(),
        );
        assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    }
    let metrics = get(&server, "/metrics").body;
    assert!(
        metrics.contains(
            r#"hierad_http_requests_total{method="other",route="/healthz",status="405"} 500"#
        ),
        "{metrics}"
    );
    assert!(
        metrics.len() < 16 * 1024,
        "{} bytes of metrics",
        metrics.len()
    );
}

/// A method of any length (hyper takes up to the head's bound) shows in
/// the access log cut to 32 bytes and marked, as in a 405 answer.
#[test]
fn the_access_log_cuts_long_methods() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_logging(
        &dir.path().join("hierad.db"),
        &["--no-sample"],
        "warn,hierad::access=info",
    );
    let method = "M".repeat(60_000);
    let answer = raw(
        addr(&server),
        format!("{method} /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
            .as_bytes(),
    );
    // Over --max-header-bytes: 431, logged all the same.
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer:.200}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = loop {
        if let Some(line) = server.log().lines().find(|l| l.contains("status=431")) {
            break line.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no access line:\n{:.2000}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let shown = format!("method={}… ", "M".repeat(32));
    assert!(line.contains(&shown) && line.len() < 512, "{line:.2000}");
}

/// A server over a fresh, empty database with `extra` flags.
fn started(extra: &(impl Args + ?Sized)) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut flags = vec!["--no-sample".to_owned()];
    flags.extend(extra.words());
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &flags);
    (server, dir)
}

/// Sends `request` and reads until the server closes (true) or 10 s
/// pass without it closing (false).
fn answer_and_close(addr: SocketAddr, request: &[u8]) -> (String, bool) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let closed = stream.read_to_end(&mut answer).is_ok();
    (String::from_utf8_lossy(&answer).into_owned(), closed)
}

/// Whether the server closes `stream` within 10 s, sending nothing more.
fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).is_ok()
}

#[test]
fn bad_framing_is_refused_with_json_errors() {
    let server = InProcess::empty();
    let addr = addr(&server);
    // A chunk size that is not hex: 400, not 413.
    let answer = raw(
        addr,
        b"POST /api/v1/lookup HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert_eq!(raw_json(&answer)["error"], "bad_request", "{answer}");
    // Both lengths, in either order: refused, and the connection closed.
    let body = r#"{"environment": 1, "key": "k"}"#;
    let chunked = format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    for headers in [
        "content-length: 3\r\ntransfer-encoding: chunked",
        "Transfer-Encoding: chunked\r\nContent-Length: 3",
    ] {
        let request = format!(
            "POST /api/v1/lookup HTTP/1.1\r\nhost: localhost\r\n{headers}\r\n\r\n{chunked}"
        );
        let (answer, closed) = answer_and_close(addr, request.as_bytes());
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        assert!(
            raw_json(&answer)["message"]
                .as_str()
                .unwrap()
                .contains("Content-Length and Transfer-Encoding"),
            "{answer}"
        );
        assert!(closed, "the connection stays open after {answer}");
    }
    // A head over twice --max-header-bytes: hyper's own 431.
    let huge = format!(
        "GET /healthz HTTP/1.1\r\nhost: localhost\r\nx-filler: {}\r\n\r\n",
        "a".repeat(80 * 1024)
    );
    let (answer, closed) = answer_and_close(addr, huge.as_bytes());
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert!(closed);
}

/// Empty lines before a request line (CRLF or LF, in the same packet or
/// one of their own) are skipped by hyper, so they must not hide a head
/// with both lengths from the refusal: plain and over TLS.
#[test]
fn both_lengths_are_refused_behind_leading_empty_lines() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let pki = crate::pki::Pki::new(dir.path());
    let (cert, key) = pki.issue("server", "127.0.0.1", &["127.0.0.1"], false);
    let plain = InProcess::empty();
    let (tls, _tls_dir) = started(&format!(
        "--tls-cert {} --tls-key {}",
        cert.display(),
        key.display()
    ));
    let config = pki.rustls_client();
    let body = r#"{"environment": 1, "key": "k"}"#;
    let head = format!(
        "POST /api/v1/lookup HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\n\
         Transfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    // Sends `pieces` (a pause between them, so they tend to arrive apart)
    // and reads until the server closes or 10 s pass.
    fn exchange(stream: &mut (impl Read + Write), pieces: &[&[u8]]) -> (String, bool) {
        for piece in pieces {
            stream.write_all(piece).unwrap();
            stream.flush().unwrap();
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut answer = Vec::new();
        let closed = stream.read_to_end(&mut answer).is_ok();
        (String::from_utf8_lossy(&answer).into_owned(), closed)
    }
    for lead in ["\r\n", "\n", "\r\n\n\r\n"] {
        let joined = format!("{lead}{head}");
        let cases: [&[&[u8]]; 2] = [&[joined.as_bytes()], &[lead.as_bytes(), head.as_bytes()]];
        for pieces in cases {
            let mut stream = TcpStream::connect(addr(&plain)).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let (answer, closed) = exchange(&mut stream, pieces);
            assert!(
                answer.starts_with("HTTP/1.1 400"),
                "plain {lead:?}: {answer}"
            );
            assert!(closed, "plain {lead:?}: the connection stays open");

            let tcp = TcpStream::connect(tls.url.trim_start_matches("https://")).unwrap();
            tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
            let client = rustls::ClientConnection::new(Arc::clone(&config), name).unwrap();
            let mut stream = rustls::StreamOwned::new(client, tcp);
            let (answer, closed) = exchange(&mut stream, pieces);
            assert!(answer.starts_with("HTTP/1.1 400"), "TLS {lead:?}: {answer}");
            assert!(closed, "TLS {lead:?}: the connection stays open");
        }
    }
}

/// `Transfer-Encoding: chunked` twice (two headers, or one listing it
/// twice), which hyper read as chunked while a proxy in front may frame it
/// otherwise, is refused as both lengths are, and the connection closed:
/// plain and over TLS.
#[test]
fn chunked_twice_is_refused() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let pki = crate::pki::Pki::new(dir.path());
    let (cert, key) = pki.issue("server", "127.0.0.1", &["127.0.0.1"], false);
    let plain = InProcess::with_sample();
    let (tls, _tls_dir) = started(&format!(
        "--tls-cert {} --tls-key {}",
        cert.display(),
        key.display()
    ));
    let config = pki.rustls_client();
    let body = r#"{"environment": 1, "key": "k"}"#;
    let chunked = format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    let request = |codings: &str| {
        format!(
            "POST /api/v1/lookup HTTP/1.1\r\nHost: localhost\r\n\
             Content-Type: application/json\r\n{codings}\r\n\r\n{chunked}"
        )
    };
    for codings in [
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked, chunked",
        "transfer-encoding: chunked,CHUNKED",
        "Transfer-Encoding: gzip, chunked",
    ] {
        let request = request(codings);
        let (answer, closed) = answer_and_close(addr(&plain), request.as_bytes());
        assert!(
            answer.starts_with("HTTP/1.1 400"),
            "plain {codings:?}: {answer}"
        );
        assert!(
            raw_json(&answer)["message"]
                .as_str()
                .unwrap()
                .contains("Transfer-Encoding"),
            "{answer}"
        );
        assert!(closed, "plain {codings:?}: the connection stays open");

        let tcp = TcpStream::connect(tls.url.trim_start_matches("https://")).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let client = rustls::ClientConnection::new(Arc::clone(&config), name).unwrap();
        let mut stream = rustls::StreamOwned::new(client, tcp);
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = Vec::new();
        let closed = stream.read_to_end(&mut answer).is_ok();
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with("HTTP/1.1 400"),
            "TLS {codings:?}: {answer}"
        );
        assert!(closed, "TLS {codings:?}: the connection stays open");
    }
    // Once is taken.
    let (answer, _) = answer_and_close(
        addr(&plain),
        request("Transfer-Encoding: chunked\r\nConnection: close").as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// A refusal sent before the body is read (413 from Content-Length, a
/// route that does not exist) reaches a client that writes its whole body
/// before reading: the server reads and drops the rest instead of
/// resetting the connection under the answer.
#[test]
fn refusals_before_the_body_reach_a_client_still_sending() {
    let (server, _dir) = started(&["--body-limit", "10000"]);
    let addr = addr(&server);
    let body = vec![b'x'; 8 * 1024 * 1024];
    for (path, status, error) in [
        (
            "/api/v1/config/environments/1/resources/a/values",
            413,
            "payload_too_large",
        ),
        ("/no/such/route", 404, "not_found"),
    ] {
        for round in 0..3 {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let head = format!(
                "PUT {path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
                 connection: close\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            let sent = stream.write_all(&body);
            let mut answer = Vec::new();
            let read = stream.read_to_end(&mut answer);
            let answer = String::from_utf8_lossy(&answer);
            assert!(
                sent.is_ok() && read.is_ok(),
                "{path}, round {round}: sending {sent:?}, reading {read:?}, got {answer:?}"
            );
            assert!(
                answer.starts_with(&format!("HTTP/1.1 {status}")),
                "{answer}"
            );
            assert_eq!(raw_json(&answer)["error"], error, "{answer}");
        }
    }
    healthy(addr);
}

#[test]
fn slow_heads_and_idle_connections_are_closed() {
    let (server, _dir) = started(&["--header-timeout", "500ms", "--idle-timeout", "1s"]);
    let addr = addr(&server);
    // Half a head, then nothing.
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nx-slow: ")
        .unwrap();
    // Nothing at all.
    let mut silent = TcpStream::connect(addr).unwrap();
    // One request, then idle.
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .unwrap();
    let mut first = [0; 12];
    idle.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    for (name, stream) in [
        ("slow", &mut slow),
        ("silent", &mut silent),
        ("idle", &mut idle),
    ] {
        assert!(closed_by_server(stream), "the {name} connection stays open");
    }
}

/// A client that pipelines requests for a large document and never reads
/// its answers: the write that makes no progress ends the connection
/// after the idle timeout, instead of holding it (and the answers hyper
/// buffered) until shutdown.
#[test]
fn a_client_that_never_reads_is_closed_after_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_logging(
        &dir.path().join("hierad.db"),
        &["--no-sample", "--idle-timeout", "1s"],
        "warn,hierad::server::conn=debug",
    );
    setup(&server, &["big".to_owned()]);
    let document = json!({"big": "x".repeat(4 * 1024 * 1024)}).to_string();
    let path = "/api/v1/config/environments/5/resources/big/values";
    assert_eq!(send(&server, "PUT", path, &document).status, 204);
    // 8 answers of 4 MiB: more than loopback's socket buffers hold.
    let mut stream = TcpStream::connect(addr(&server)).unwrap();
    let get = format!("GET {path} HTTP/1.1\r\nhost: localhost\r\n\r\n");
    stream.write_all(get.repeat(8).as_bytes()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !server.log().contains("the client read none of its answer") {
        assert!(
            Instant::now() < deadline,
            "the connection is still open:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        server.log().contains("client=127.0.0.1:"),
        "{}",
        server.log()
    );
    // What the kernel had buffered, then the end: no more answers.
    assert!(closed_by_server(&mut stream), "the connection stays open");
    healthy(addr(&server));
}

#[test]
fn at_the_connection_limit_idle_connections_make_room() {
    const LIMIT: usize = 20;
    let (server, _dir) = started(&["--max-connections", "20"]);
    let addr = addr(&server);
    let mut held: Vec<TcpStream> = (0..2 * LIMIT)
        .map(|i| {
            let mut stream = TcpStream::connect(addr).unwrap();
            if i % 2 == 0 {
                stream
                    .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
                    .unwrap();
            }
            stream
        })
        .collect();
    for _ in 0..5 {
        let answer = raw(
            addr,
            b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n",
        );
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    // The server holds at most LIMIT: the others were closed to make room.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut closed = 0;
        for stream in &mut held {
            stream.set_nonblocking(true).unwrap();
            let mut buf = [0; 4096];
            closed += loop {
                match stream.read(&mut buf) {
                    Ok(0) => break 1,
                    Ok(_) => {}
                    Err(_) => break 0,
                }
            };
        }
        if closed >= LIMIT {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {closed} of {} idle connections closed",
            2 * LIMIT
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// At `--max-connections`, connections whose requests wait for
/// something that cannot come soon do not lock out a new client: a
/// generation no write has made is refused at once, and a request whose
/// body stopped arriving (or never followed `Expect: 100-continue`) is
/// closed to make room like an idle connection. The waits are a minute,
/// so without that the new client's 10 s read times out.
#[test]
fn at_the_connection_limit_requests_waiting_on_their_clients_make_room() {
    let (server, _dir) =
        started("--max-connections 1 --min-generation-wait 1m --request-timeout 1m");
    let addr = addr(&server);
    // Pipelined waits for a generation far past the database's.
    let waiting =
        "GET /healthz HTTP/1.1\r\nhost: localhost\r\nx-hierad-min-generation: 999999999999\r\n\r\n";
    let mut held = TcpStream::connect(addr).unwrap();
    held.write_all(waiting.repeat(3).as_bytes()).unwrap();
    let answer = raw(
        addr,
        format!("{}\r\nconnection: close\r\n\r\n", waiting.trim_end()).as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        raw_json(&answer)["message"]
            .as_str()
            .unwrap()
            .contains("no write has made generation 999999999999"),
        "{answer}"
    );
    healthy(addr);
    drop(held);
    // Bodies that stop, once the server asked for them (so the request
    // is in progress): 5 of 100 bytes, and none.
    let lookup = "POST /api/v1/lookup HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
                  content-length: 100\r\nexpect: 100-continue\r\n\r\n";
    for sent in [&b"{\"env"[..], b""] {
        let mut stalled = TcpStream::connect(addr).unwrap();
        stalled
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stalled.write_all(lookup.as_bytes()).unwrap();
        let mut go_on = [0; 25];
        stalled.read_exact(&mut go_on).unwrap();
        assert_eq!(&go_on, b"HTTP/1.1 100 Continue\r\n\r\n");
        stalled.write_all(sent).unwrap();
        healthy(addr);
        // The end, or a reset if the server had unread bytes.
        let mut rest = Vec::new();
        let ended = match stalled.read_to_end(&mut rest) {
            Ok(_) => true,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        };
        assert!(ended, "a stalled request kept its slot ({sent:?} sent)");
    }
}

#[test]
fn sigterm_closes_unfinished_heads_by_the_shutdown_deadline() {
    let (mut server, _dir) = started(&["--header-timeout", "1m", "--shutdown-timeout", "500ms"]);
    let mut stream = TcpStream::connect(addr(&server)).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nx-unfinished: ")
        .unwrap();
    // The server has read the partial head once a later request answers.
    let answer = raw(
        addr(&server),
        b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // `stop` fails the test unless the server exits within 5 s.
    assert!(server.stop().success());
}

/// The server's resident memory, from /proc.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

fn healthy(addr: SocketAddr) {
    let answer = raw(
        addr,
        b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "/healthz: {answer:?}");
}

/// Idle connections, heads too large to finish, and a flood of unknown
/// methods, all bounded: /healthz answers throughout and memory stays
/// bounded; SIGTERM then stops the server while a head is unfinished.
#[test]
fn floods_leave_the_server_responsive_and_bounded() {
    const IDLE: usize = 1500;
    const SLOW: usize = 500;
    const METHODS: usize = 2000;
    let (mut server, _dir) = started(&["--max-connections", "512", "--shutdown-timeout", "1s"]);
    let addr = addr(&server);
    let before = rss_kib(server.pid());
    let started = Instant::now();
    let mut held = Vec::with_capacity(IDLE + SLOW);
    for i in 0..IDLE {
        held.push(TcpStream::connect(addr).unwrap());
        if i % 250 == 0 {
            healthy(addr);
        }
    }
    // Heads of 256 KiB that never end.
    let filler = format!(
        "GET /healthz HTTP/1.1\r\nhost: localhost\r\nx-filler: {}",
        "a".repeat(256 * 1024)
    );
    for i in 0..SLOW {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_write_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        // A refused head closes the socket mid-write; that is the point.
        let _ = stream.write_all(filler.as_bytes());
        held.push(stream);
        if i % 100 == 0 {
            healthy(addr);
        }
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for i in 0..METHODS {
        let method = rng.method(1000);
        let _ = raw(
            addr,
            format!("{method} /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
                .as_bytes(),
        );
        if i % 500 == 0 {
            healthy(addr);
        }
    }
    healthy(addr);
    let after = rss_kib(server.pid());
    eprintln!(
        "RSS {before} KiB before, {after} KiB after {IDLE} idle, {SLOW} slow and {METHODS} junk connections ({:?})",
        started.elapsed()
    );
    assert!(
        after < before + 128 * 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
    assert!(get(&server, "/metrics").body.len() < 16 * 1024);
    let mut unfinished = TcpStream::connect(addr).unwrap();
    unfinished
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n")
        .unwrap();
    assert!(server.stop().success());
    drop(held);
}
