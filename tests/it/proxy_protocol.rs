//! The PROXY protocol from a named balancer (`--proxy-protocol-from`):
//! the client its header names is the one the access log and the
//! throttle of failed authentications see, over plain HTTP and over TLS
//! passed through; a connection from the balancer without a header is
//! closed and logged. The real binary; headers and requests written by
//! hand, as HAProxy's send-proxy and send-proxy-v2 write them.
use crate::pki::Pki;
use crate::server::TestServer;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

/// A v2 PROXY header for a TCP client `from` (IPv4 or IPv6) to `to`.
fn v2(from: std::net::SocketAddr, to: std::net::SocketAddr) -> Vec<u8> {
    let mut header = b"\r\n\r\n\0\r\nQUIT\n\x21".to_vec();
    let mut addresses = Vec::new();
    match (from, to) {
        (std::net::SocketAddr::V4(f), std::net::SocketAddr::V4(t)) => {
            header.push(0x11);
            addresses.extend(f.ip().octets());
            addresses.extend(t.ip().octets());
        }
        (std::net::SocketAddr::V6(f), std::net::SocketAddr::V6(t)) => {
            header.push(0x21);
            addresses.extend(f.ip().octets());
            addresses.extend(t.ip().octets());
        }
        _ => panic!("one family"),
    }
    addresses.extend(from.port().to_be_bytes());
    addresses.extend(to.port().to_be_bytes());
    header.extend(u16::try_from(addresses.len()).unwrap().to_be_bytes());
    header.extend(addresses);
    header
}

/// The status of `GET path` (with `authorization`, if any) sent on a new
/// connection after `header`.
fn get(url: &str, header: &[u8], path: &str, authorization: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(url.strip_prefix("http://").unwrap()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let auth = authorization.map_or(String::new(), |a| format!("authorization: {a}\r\n"));
    let request =
        format!("GET {path} HTTP/1.1\r\nhost: localhost\r\n{auth}connection: close\r\n\r\n");
    stream
        .write_all(&[header, request.as_bytes()].concat())
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer.get(9..12).map_or(0, |s| s.parse().unwrap_or(0));
    (status, answer)
}

#[test]
fn failed_logins_are_counted_per_client_behind_the_balancer() {
    let dir = tempfile::tempdir().unwrap();
    let (file, reader) = crate::throttle::guarded(dir.path());
    let f = file.to_str().unwrap();
    let mut server = TestServer::start_logging(
        &dir.path().join("hierad.db"),
        &["--auth", f, "--proxy-protocol-from", "127.0.0.1"],
        "info",
    );
    let url = server.url.clone();
    let v1 = |client: &str| format!("PROXY TCP4 {client} 10.0.0.1 51000 8750\r\n").into_bytes();
    let wrong = "Basic cm9vdDpndWVzcw=="; // root:guess
    let route = "/api/v1/config/environments";
    for _ in 0..6 {
        assert_eq!(get(&url, &v1("192.0.2.7"), route, Some(wrong)).0, 401);
    }
    // Another client behind the same balancer owes nothing: checked at
    // once (through the balancer's own address it would wait its turn).
    assert_eq!(get(&url, &v1("192.0.2.8"), route, Some(wrong)).0, 401);
    let (status, metrics) = get(&url, &v1("192.0.2.9"), "/metrics", Some(&reader));
    assert_eq!(status, 200, "{metrics}");
    assert!(
        metrics.contains("hierad_auth_throttled_total{outcome=\"waited\"} 1\n"),
        "only the sixth guess of 192.0.2.7 waited:\n{metrics}"
    );
    // Without a header, from the balancer: closed, unanswered, logged.
    assert_eq!(get(&url, b"", route, Some(&reader)).0, 0);
    let log = server.stop().success().then(|| server.log()).unwrap();
    assert!(log.contains("client=192.0.2.7"), "{log}");
    assert!(log.contains("client=192.0.2.8"), "{log}");
    assert!(!log.contains("client=127.0.0.1"), "{log}");
    assert!(
        log.contains("closed a connection from a balancer: no PROXY protocol header"),
        "{log}"
    );
    assert!(log.contains("balancers=127.0.0.1/32"), "{log}");
}

/// TLS passed through the balancer: the header comes before the
/// handshake.
#[test]
fn a_header_before_the_tls_handshake_names_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    let (cert, key) = pki.issue("server", "127.0.0.1", &["127.0.0.1"], false);
    let mut server = TestServer::start_logging(
        &dir.path().join("hierad.db"),
        &format!(
            "--tls-cert {} --tls-key {} --proxy-protocol-from 127.0.0.0/8,::1",
            cert.display(),
            key.display()
        ),
        "info",
    );
    let addr = server.url.strip_prefix("https://").unwrap().to_owned();
    let config = pki.rustls_client();
    // The status of GET /healthz over TLS after `header`, or the error.
    let healthz = |header: &[u8]| -> Result<u16, std::io::Error> {
        let mut tcp = TcpStream::connect(&addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        tcp.write_all(header).unwrap();
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let conn = rustls::ClientConnection::new(Arc::clone(&config), name).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        tls.write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")?;
        let mut answer = String::new();
        tls.read_to_string(&mut answer)?;
        Ok(answer.get(9..12).map_or(0, |s| s.parse().unwrap_or(0)))
    };
    let server_addr: std::net::SocketAddr = addr.parse().unwrap();
    let v1 = b"PROXY TCP4 192.0.2.7 10.0.0.1 51000 8750\r\n";
    assert_eq!(healthz(v1).unwrap(), 200);
    let v6 = v2(
        "[2001:db8::7]:51000".parse().unwrap(),
        "[2001:db8::1]:8750".parse().unwrap(),
    );
    assert_eq!(healthz(&v6).unwrap(), 200);
    let mut v4 = v2("192.0.2.9:51000".parse().unwrap(), server_addr);
    // A TLV the balancer adds (a unique id) is passed over.
    let len = u16::from_be_bytes([v4[14], v4[15]]) + 5;
    v4[14..16].copy_from_slice(&len.to_be_bytes());
    v4.extend([0x05, 0x00, 0x02, b'i', b'd']);
    assert_eq!(healthz(&v4).unwrap(), 200);
    // No header: the handshake meets a closed connection.
    assert!(healthz(b"").is_err());
    let log = server.stop().success().then(|| server.log()).unwrap();
    for client in ["192.0.2.7", "2001:db8::7", "192.0.2.9"] {
        assert!(
            log.contains(&format!("client={client} ")),
            "{client}: {log}"
        );
    }
    assert!(
        log.contains("closed a connection from a balancer: no PROXY protocol header"),
        "{log}"
    );
}
