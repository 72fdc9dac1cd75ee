//! The server's request path against a real `hierad serve`: writes whose
//! client hangs up, bounded metric labels, connection limits and
//! timeouts, error bodies for what hyper and the router refuse, and the
//! resource-exhaustion run (idle, slow and junk connections).

use crate::server::{Reply, TestServer, call};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

fn addr(server: &TestServer) -> SocketAddr {
    server
        .url
        .trim_start_matches("http://")
        .parse()
        .expect("the server's address")
}

fn get(server: &TestServer, path: &str) -> Reply {
    call("GET", &format!("{}{path}", server.url), None, &[])
}

fn send(server: &TestServer, method: &str, path: &str, body: &str) -> Reply {
    call(
        method,
        &format!("{}{path}", server.url),
        Some(body),
        &[("content-type", "application/json")],
    )
}

/// Environment 5 (levels [nodes]) whose component defines `resources`.
fn setup(server: &TestServer, resources: &[String]) {
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

#[test]
fn writes_whose_client_hangs_up_are_published() {
    const WRITES: usize = 200;
    let server = TestServer::empty();
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
                        "PUT /api/v1/config/environments/5/resources/r{i}/values HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
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
    let server = TestServer::empty();
    let addr = addr(&server);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..500 {
        let method = rng.method(200);
        let answer = raw(
            addr,
            format!("{method} /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
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
