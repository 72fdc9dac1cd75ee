//! Memory a client can pin, against a real `hierad serve`: connections
//! that ask for large documents and never read, answers made per request
//! and left unread, and many large lookups at once. Each checks the
//! server's resident memory (from /proc) or counts refusals; none times
//! anything.

use crate::server::{TestServer, call};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

const MIB: u64 = 1024;

fn addr(server: &TestServer) -> SocketAddr {
    server
        .url
        .trim_start_matches("http://")
        .parse()
        .expect("the server's address")
}

fn send(server: &TestServer, method: &str, path: &str, body: &str) -> u16 {
    call(
        method,
        &format!("{}{path}", server.url),
        Some(body),
        &[("content-type", "application/json")],
    )
    .status
}

/// Environment 5 (levels [nodes]) whose component defines `big`.
fn setup(server: &TestServer) {
    let component = json!({"name": "app", "resource_definitions": [{"name": "big"}]});
    assert_eq!(
        send(
            server,
            "POST",
            "/api/v1/config/components",
            &component.to_string()
        ),
        201
    );
    let environment = r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#;
    assert_eq!(
        send(server, "POST", "/api/v1/config/environments", environment),
        201
    );
}

const DOCUMENT: &str = "/api/v1/config/environments/5/resources/big/values";

/// The server's resident memory in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// The highest RSS seen over about four seconds (stopping early once it
/// passes `over`): the server takes the pipelined requests as fast as it
/// can make their answers.
fn peak_rss(pid: u32, over: u64) -> u64 {
    let mut peak = 0;
    for _ in 0..40 {
        peak = peak.max(rss_kib(pid));
        if peak > over {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    peak
}

/// A connection that sends `requests` and never reads: its receive
/// buffer is made small first, so the kernel takes little of the answers
/// and the server holds the rest.
fn never_reading(addr: SocketAddr, requests: &str) -> TcpStream {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&addr.into()).unwrap();
    let mut stream: TcpStream = socket.into();
    stream.write_all(requests.as_bytes()).unwrap();
    stream
}

fn pipelined(path: &str, times: usize) -> String {
    format!("GET {path} HTTP/1.1\r\nhost: localhost\r\n\r\n").repeat(times)
}

/// A whole raw exchange on a new connection: status line and headers,
/// body.
fn exchange(addr: SocketAddr, request: &[u8]) -> (String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    match answer.split_once("\r\n\r\n") {
        Some((head, body)) => (head.to_owned(), body.to_owned()),
        None => (answer, String::new()),
    }
}

fn get(addr: SocketAddr, path: &str) -> (String, String) {
    exchange(
        addr,
        format!("GET {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n").as_bytes(),
    )
}

fn healthy(addr: SocketAddr) {
    let (head, _) = get(addr, "/healthz");
    assert!(head.starts_with("HTTP/1.1 200"), "/healthz: {head}");
}

/// A 503 of a full memory bound: `Retry-After: 1`, error `busy`.
fn assert_busy(head: &str, body: &str) {
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("\r\nretry-after: 1"),
        "{head}"
    );
    let body: Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["error"], "busy", "{body}");
}

/// Connections pipelining GETs of a 12 MiB stored document (its latest
/// version and an older one) and reading nothing share one body per
/// version: before, each request encoded a copy that its connection held
/// (48 connections: several hundred MiB).
#[test]
fn never_reading_clients_share_stored_documents() {
    const CONNECTIONS: usize = 24;
    let server = TestServer::empty();
    let addr = addr(&server);
    setup(&server);
    for fill in ["x", "y"] {
        let document = json!({"big": fill.repeat(12 * 1024 * 1024)}).to_string();
        assert_eq!(send(&server, "PUT", DOCUMENT, &document), 204);
    }
    let old = format!("{DOCUMENT}?version=1");
    for path in [DOCUMENT, &old] {
        let (head, body) = get(addr, path);
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(
            body.len() > 12 * 1024 * 1024,
            "{path}: {} bytes",
            body.len()
        );
    }
    let before = rss_kib(server.pid());
    let bound = before + 128 * MIB;
    let mut held = Vec::new();
    for path in [DOCUMENT, &old] {
        for _ in 0..CONNECTIONS {
            held.push(never_reading(addr, &pipelined(path, 3)));
        }
    }
    let peak = peak_rss(server.pid(), bound);
    eprintln!(
        "RSS {before} KiB before, peak {peak} KiB with {} never-reading connections",
        held.len()
    );
    assert!(peak <= bound, "RSS grew from {before} KiB to {peak} KiB");
    healthy(addr);
    drop(held);
}

/// Connections pipelining GETs of answers made from a 12 MiB document (a
/// key, an old version's effective document) and reading nothing share
/// one body per answer, made once off the async workers: before, each
/// request made and held its own copy (48 connections: gigabytes), and
/// /healthz waited behind their making.
#[test]
fn never_reading_clients_share_keys_and_effective_versions() {
    const CONNECTIONS: usize = 24;
    let server = TestServer::empty();
    let addr = addr(&server);
    setup(&server);
    for fill in ["x", "y"] {
        let document = json!({"big": fill.repeat(12 * 1024 * 1024)}).to_string();
        assert_eq!(send(&server, "PUT", DOCUMENT, &document), 204);
    }
    let key = format!("{DOCUMENT}?key=big");
    let effective = format!("{DOCUMENT}?effective&version=1");
    for path in [&key, &effective] {
        let (head, body) = get(addr, path);
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(
            body.len() > 12 * 1024 * 1024,
            "{path}: {} bytes",
            body.len()
        );
    }
    let before = rss_kib(server.pid());
    let bound = before + 128 * MIB;
    let mut held = Vec::new();
    for path in [&key, &effective] {
        for _ in 0..CONNECTIONS {
            held.push(never_reading(addr, &pipelined(path, 3)));
        }
    }
    let peak = peak_rss(server.pid(), bound);
    eprintln!(
        "RSS {before} KiB before, peak {peak} KiB with {} never-reading connections",
        held.len()
    );
    assert!(peak <= bound, "RSS grew from {before} KiB to {peak} KiB");
    healthy(addr);
    drop(held);
}

/// The value of `hierad_busy_refusals_total{bound="BOUND"}` in /metrics.
fn busy_refusals(addr: SocketAddr, bound: &str) -> u64 {
    let (head, body) = get(addr, "/metrics");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let series = format!("hierad_busy_refusals_total{{bound=\"{bound}\"}} ");
    body.lines()
        .find_map(|l| l.strip_prefix(series.as_str()))
        .map_or(0, |n| n.trim().parse().expect("a counter"))
}

/// An explained lookup of `big` in environment 6 (whose `common` holds
/// it), told apart by `n`: an answer made for this request alone.
fn explained(n: usize) -> String {
    let body =
        json!({"environment": 6, "key": "big", "scope": {"n": n.to_string()}, "explain": true})
            .to_string();
    format!(
        "POST /api/v1/lookup HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Answers made per request (explained lookups of a 15 MiB value) that
/// their clients leave unread are bounded by --unread-answers-mib: beyond
/// it the request is refused (503, Retry-After) and counted in
/// `hierad_busy_refusals_total`, and connections that read nothing for a
/// second are closed to make room, so a client that reads gets its
/// answer.
#[test]
fn unread_answers_are_bounded_and_stalled_readers_make_room() {
    const CONNECTIONS: usize = 32;
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_on(
        &dir.path().join("hierad.db"),
        &["--no-sample", "--unread-answers-mib", "16"],
    );
    let addr = addr(&server);
    let component = json!({"name": "base", "resource_definitions": [{"name": "common"}]});
    assert_eq!(
        send(
            &server,
            "POST",
            "/api/v1/config/components",
            &component.to_string()
        ),
        201
    );
    let environment = r#"{"id": 6, "components": ["base"], "hierarchy_levels": ["nodes"]}"#;
    assert_eq!(
        send(&server, "POST", "/api/v1/config/environments", environment),
        201
    );
    let document = json!({"big": "x".repeat(15 * 1024 * 1024)}).to_string();
    let common = "/api/v1/config/environments/6/resources/common/values";
    assert_eq!(send(&server, "PUT", common, &document), 204);
    let before = rss_kib(server.pid());
    // The budget counts an answer once made: the few being made at once
    // (one per async and lookup worker, some 40 MiB each) come on top.
    // Unbounded, the 64 answers held would be some 2 GiB.
    let bound = before + 256 * MIB;
    let held: Vec<TcpStream> = (0..CONNECTIONS)
        .map(|n| never_reading(addr, &(explained(2 * n) + &explained(2 * n + 1))))
        .collect();
    let peak = peak_rss(server.pid(), bound);
    eprintln!(
        "RSS {before} KiB before, peak {peak} KiB with {CONNECTIONS} never-reading connections"
    );
    assert!(peak <= bound, "RSS grew from {before} KiB to {peak} KiB");
    healthy(addr);
    assert!(
        busy_refusals(addr, "unread_answers") > 0,
        "no refusal counted"
    );
    // A client that reads: refused while the budget is full, served once
    // the stalled connections are closed.
    let mut served = false;
    for n in 0..10 {
        let (head, body) = exchange(
            addr,
            explained(1000 + n)
                .replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n")
                .as_bytes(),
        );
        if head.starts_with("HTTP/1.1 200") {
            assert!(body.len() > 15 * 1024 * 1024, "{} bytes", body.len());
            served = true;
            break;
        }
        assert_busy(&head, &body);
        std::thread::sleep(Duration::from_secs(1));
    }
    assert!(served, "a reading client was never served");
    drop(held);
}

/// Lookups of nearly 1 MiB sent all at once beyond --lookup-queue-mib
/// are refused with 503 and Retry-After instead of waiting, parsed, for
/// a lookup worker; /healthz answers.
#[test]
fn lookups_beyond_the_queue_are_refused_with_retry_after() {
    const CLIENTS: usize = 24;
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_on(
        &dir.path().join("hierad.db"),
        "--no-sample --lookup-queue-mib 2 --lookup-workers 1",
    );
    let addr = addr(&server);
    setup(&server);
    let scope: serde_json::Map<String, Value> = (0..40_000)
        .map(|i| (format!("v{i:06}"), json!("abcdefghij")))
        .collect();
    let body = json!({"environment": 5, "key": "k", "scope": scope}).to_string();
    assert!(body.len() < 1024 * 1024 && body.len() > 800 * 1024);
    let request = format!(
        "POST /api/v1/lookup HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut busy = 0;
    let mut answered = 0;
    for _round in 0..3 {
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(CLIENTS));
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let barrier = std::sync::Arc::clone(&barrier);
                let request = request.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    exchange(addr, request.as_bytes())
                })
            })
            .collect();
        for client in clients {
            let (head, body) = client.join().unwrap();
            if head.starts_with("HTTP/1.1 503") {
                assert_busy(&head, &body);
                busy += 1;
            } else {
                assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
                answered += 1;
            }
        }
        healthy(addr);
        if busy > 0 {
            break;
        }
    }
    eprintln!("{answered} lookups answered, {busy} refused");
    assert!(busy > 0, "no lookup was refused: {answered} answered");
    assert_eq!(
        busy_refusals(addr, "lookup_queue"),
        busy,
        "refusals counted"
    );
    assert!(answered > 0, "every lookup was refused");
}

/// The bytes the kernel holds in the send queue of each of the server's
/// connections to `clients` (by the clients' ports), from
/// /proc/net/tcp's `tx_queue`.
fn send_queues(server: SocketAddr, clients: &[TcpStream]) -> Vec<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let port =
        |address: &str| u16::from_str_radix(address.rsplit(':').next().unwrap(), 16).unwrap();
    clients
        .iter()
        .map(|client| {
            let client = client.local_addr().unwrap().port();
            table
                .lines()
                .skip(1)
                .map(|line| line.split_whitespace().collect::<Vec<_>>())
                .find(|f| port(f[1]) == server.port() && port(f[2]) == client)
                .map_or(0, |f| {
                    u64::from_str_radix(f[4].split(':').next().unwrap(), 16).unwrap()
                })
        })
        .collect()
}

/// The largest send queue of 4 connections that each ask for a 12 MiB
/// document and read nothing, once the server has filled them (the queues
/// stop growing; at most 10 s).
fn largest_unread_send_queue(flags: &[&str]) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["--no-sample"];
    args.extend_from_slice(flags);
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &args[..]);
    let addr = addr(&server);
    setup(&server);
    let document = json!({"big": "x".repeat(12 * 1024 * 1024)}).to_string();
    assert_eq!(send(&server, "PUT", DOCUMENT, &document), 204);
    let held: Vec<_> = (0..4)
        .map(|_| never_reading(addr, &pipelined(DOCUMENT, 1)))
        .collect();
    let mut last = Vec::new();
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
        let now = send_queues(addr, &held);
        if now == last && now.iter().all(|&q| q > 0) {
            break;
        }
        last = now;
    }
    healthy(addr);
    last.into_iter().max().unwrap_or(0)
}

/// `--socket-send-buffer-kib` bounds what the kernel holds for a client
/// that reads nothing (SO_SNDBUF; Linux doubles it for its bookkeeping):
/// autotuned, each such connection took up to `tcp_wmem`'s 4 MiB, and 250
/// of them stalled /healthz for 100-230 ms while the copies were made.
#[test]
fn a_client_that_reads_nothing_gets_a_bounded_kernel_send_buffer() {
    let bounded = largest_unread_send_queue(&["--socket-send-buffer-kib", "64"]);
    eprintln!("largest send queue with 64 KiB: {bounded} bytes");
    assert!(bounded > 0, "the answers never reached the kernel");
    assert!(bounded <= 2 * 64 * 1024, "{bounded} bytes queued");
    // The guard: without the bound this kernel would queue more, so the
    // assertion above measured the setting, not a small default.
    let autotuned = largest_unread_send_queue(&["--socket-send-buffer-kib", "0"]);
    eprintln!("largest send queue autotuned: {autotuned} bytes");
    assert!(autotuned > 2 * 64 * 1024, "{autotuned} bytes queued");
}

/// The kernel's transparent huge page mode, as
/// /sys/kernel/mm/transparent_hugepage/enabled marks it (`[madvise]`).
fn huge_page_mode() -> Option<String> {
    let modes = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    let (_, rest) = modes.split_once('[')?;
    Some(rest.split_once(']')?.0.to_owned())
}

/// A process's anonymous memory in transparent huge pages, in KiB.
fn huge_pages_kib(pid: u32) -> u64 {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap();
    rollup
        .lines()
        .find_map(|l| l.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("AnonHugePages in /proc/PID/smaps_rollup")
}

/// mimalloc asks the kernel for huge pages (`madvise`) unless built
/// without (Cargo.toml, its `no_thp` feature); a huge page counts whole
/// in RSS however little of it is used: 5,000 change-feed waiters took
/// +166–172 MiB with them and +113.5 MiB without (bench/LOG.md). Under
/// `madvise`, the common default, nothing else asks for them, so a
/// server holding a few hundred connections has none.
#[test]
fn the_server_asks_for_no_huge_pages() {
    let Some(mode) = huge_page_mode().filter(|m| m == "madvise") else {
        // `never`: none can appear; `always`: the kernel gives them
        // unasked. Neither tells whether the server asks.
        eprintln!(
            "transparent huge pages are {:?} here, not madvise: nothing to tell",
            huge_page_mode()
        );
        return;
    };
    let server = TestServer::empty();
    let addr = addr(&server);
    // Enough connections, each with its task and buffers, for the
    // allocator to map fresh memory.
    let held: Vec<_> = (0..300)
        .map(|_| never_reading(addr, &pipelined("/healthz", 1)))
        .collect();
    healthy(addr);
    let huge = huge_pages_kib(server.pid());
    drop(held);
    assert_eq!(huge, 0, "{huge} KiB in huge pages under THP mode {mode}");
}
