//! A stand-in Keystone for the tests of Keystone authentication: the fast
//! suite's tests/it/security.rs and the shim's end-to-end tests
//! (tests/oracle/shim/tls.rs). It answers `POST /v3/auth/tokens` (password
//! method) and `GET /v3/auth/tokens` (`X-Auth-Token` + `X-Subject-Token`) with
//! the statuses, headers and bodies the Keystone v3 API reference documents,
//! and fails on demand. The real Keystone's tokens are tested in
//! tests/oracle/keystone_real.rs.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A stand-in Keystone: `POST /v3/auth/tokens` (password method) and
/// `GET /v3/auth/tokens` (`X-Auth-Token` + `X-Subject-Token`), answered
/// with the statuses, headers and bodies the Keystone v3 API reference
/// documents. Known user tokens: `ks-reader` (role `reader`), `ks-member`
/// (role `member`), `ks-nobody` (role `other`); answers no client should
/// take: `ks-past` (expired), `ks-no-expiry`, `ks-garbage` (not JSON),
/// `ks-huge` (2 MiB), `ks-500`, `ks-trickle` (a byte every 100 ms). Each connection is
/// answered on its own thread, so one held answer holds no other.
#[derive(Debug)]
pub struct FakeKeystone {
    /// The Keystone URL (`http://127.0.0.1:PORT/v3`).
    pub url: String,
    /// How many token validations it answered.
    pub validations: Arc<AtomicUsize>,
    /// How many service logins (`POST /v3/auth/tokens`) it was sent.
    pub logins: Arc<AtomicUsize>,
    faults: Arc<Faults>,
}

/// How the stand-in misbehaves, switched by the test while it runs.
#[derive(Debug, Default)]
struct Faults {
    down: AtomicBool,
    /// Accept connections, read their requests, never answer (until
    /// stopped, and at most a minute).
    hung: AtomicBool,
    /// Milliseconds each validation waits before its answer.
    validation_delay_ms: AtomicU64,
    /// User tokens revoked: unknown from then on (404).
    revoked: Mutex<Vec<String>>,
    /// The service token in force is `svc-token-N`: each revocation of it
    /// makes the last one unknown (401) and the next login gets a new one.
    service_generation: AtomicUsize,
    /// Every service token is refused (401), new ones too: the service
    /// account lost its right to validate.
    refuse_service: AtomicBool,
}

impl FakeKeystone {
    /// Listens on 127.0.0.1; the service user `hierad` logs in with
    /// `service_password`.
    pub fn start(service_password: &'static str) -> FakeKeystone {
        FakeKeystone::start_with(service_password, None)
    }

    /// [`FakeKeystone::start`], over https with `tls` (a certificate for
    /// 127.0.0.1 and its key, PEM files) when given.
    pub fn start_with(service_password: &'static str, tls: Option<(&Path, &Path)>) -> FakeKeystone {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{}/v3", listener.local_addr().unwrap());
        let tls = tls.map(|(cert, key)| server_config(cert, key));
        let validations = Arc::new(AtomicUsize::new(0));
        let logins = Arc::new(AtomicUsize::new(0));
        let faults = Arc::new(Faults::default());
        let counts = (Arc::clone(&validations), Arc::clone(&logins));
        let shared = Arc::clone(&faults);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if shared.down.load(Ordering::Relaxed) {
                    return; // the listener closes: connections are refused
                }
                let Ok(tcp) = stream else { continue };
                let (faults, validations, logins) = (
                    Arc::clone(&shared),
                    Arc::clone(&counts.0),
                    Arc::clone(&counts.1),
                );
                let tls = tls.clone();
                std::thread::spawn(move || {
                    let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut stream = match tls {
                        None => Stream::Plain(tcp),
                        Some(config) => Stream::Tls(Box::new(rustls::StreamOwned::new(
                            rustls::ServerConnection::new(config).unwrap(),
                            tcp,
                        ))),
                    };
                    let (head, body) = read_request(&mut stream);
                    if head.starts_with("POST ") {
                        logins.fetch_add(1, Ordering::Relaxed);
                    }
                    if faults.hung.load(Ordering::Relaxed) {
                        let start = Instant::now();
                        while !faults.down.load(Ordering::Relaxed)
                            && start.elapsed() < Duration::from_secs(60)
                        {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        return;
                    }
                    if head.starts_with("GET ") {
                        let delay = faults.validation_delay_ms.load(Ordering::Relaxed);
                        std::thread::sleep(Duration::from_millis(delay));
                    }
                    let answer =
                        keystone_answer(&head, &body, service_password, &validations, &faults);
                    if header(&head, "x-subject-token") == Some("ks-trickle") {
                        // A byte every 100 ms, a minute at most.
                        for byte in answer.as_bytes().iter().take(600) {
                            if faults.down.load(Ordering::Relaxed)
                                || stream.write_all(&[*byte]).is_err()
                            {
                                return;
                            }
                            std::thread::sleep(Duration::from_millis(100));
                        }
                        return;
                    }
                    let _ = stream.write_all(answer.as_bytes());
                    stream.finish();
                });
            }
        });
        FakeKeystone {
            url,
            validations,
            logins,
            faults,
        }
    }

    /// Stops answering: connections are refused from then on (held ones
    /// are closed).
    pub fn stop(&self) {
        self.faults.down.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the flag.
        let _ = std::net::TcpStream::connect(
            self.url
                .trim_start_matches("http://")
                .trim_end_matches("/v3"),
        );
    }

    /// From now on accepts connections and reads their requests but
    /// never answers: a Keystone that hangs.
    pub fn hang(&self) {
        self.faults.hung.store(true, Ordering::Relaxed);
    }

    /// Each validation from now on waits `delay` before its answer.
    pub fn slow_validations(&self, delay: Duration) {
        let millis = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.faults
            .validation_delay_ms
            .store(millis, Ordering::Relaxed);
    }
}

impl FakeKeystone {
    /// Revokes the user token `token`: validations of it are 404 from
    /// now on.
    pub fn revoke(&self, token: &str) {
        self.faults.revoked.lock().unwrap().push(token.to_owned());
    }

    /// Revokes the service token handed out last: validations sent with
    /// it are 401 from now on, and the next login gets another.
    pub fn revoke_service_token(&self) {
        self.faults
            .service_generation
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Refuses every service token from now on, new ones too (401).
    pub fn refuse_service_tokens(&self) {
        self.faults.refuse_service.store(true, Ordering::Relaxed);
    }
}

impl Drop for FakeKeystone {
    /// Held connections are let go and the listener closes.
    fn drop(&mut self) {
        self.stop();
    }
}

/// A connection to the stand-in, plain or TLS.
enum Stream {
    Plain(std::net::TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, std::net::TcpStream>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

impl Stream {
    /// The answer is whole: a TLS connection says so (close_notify).
    fn finish(&mut self) {
        if let Stream::Tls(s) = self {
            s.conn.send_close_notify();
            let _ = s.flush();
        }
    }
}

fn server_config(cert: &Path, key: &Path) -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = CertificateDer::pem_file_iter(cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(key).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    Arc::new(config)
}

fn read_request(stream: &mut impl Read) -> (String, String) {
    let mut bytes = Vec::new();
    let mut buf = [0; 4096];
    while !bytes.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(bytes.len(), |p| p + 4);
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap_or(0))
        })
        .unwrap_or(0);
    let mut body = bytes[end..].to_vec();
    while body.len() < length {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&buf[..n]),
        }
    }
    (head, String::from_utf8_lossy(&body).into_owned())
}

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn keystone_answer(
    head: &str,
    body: &str,
    password: &str,
    validations: &AtomicUsize,
    faults: &Faults,
) -> String {
    let service_token = format!(
        "svc-token-{}",
        faults.service_generation.load(Ordering::Relaxed)
    );
    let expires = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1)).to_string();
    let respond = |status: &str, extra: &str, body: String| {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
            body.len()
        )
    };
    let not_found = || {
        respond(
            "404 Not Found",
            "",
            r#"{"error": {"code": 404, "message": "Could not find token.", "title": "Not Found"}}"#
                .to_owned(),
        )
    };
    let token = |user: &str, role: &str, project: &str| {
        serde_json::json!({"token": {
            "methods": ["password"], "expires_at": expires, "issued_at": jiff::Timestamp::now().to_string(),
            "user": {"id": format!("id-{user}"), "name": user, "domain": {"id": "default", "name": "Default"}, "password_expires_at": null},
            "roles": [{"id": format!("r-{role}"), "name": role}],
            "project": {"id": format!("id-{project}"), "name": project, "domain": {"id": "default", "name": "Default"}},
            "audit_ids": ["a1"], "is_domain": false
        }})
        .to_string()
    };
    if head.starts_with("POST /v3/auth/tokens ") {
        let request: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        let user = &request["auth"]["identity"]["password"]["user"];
        if user["name"] == "hierad" && user["password"] == password {
            return respond(
                "201 Created",
                &format!("X-Subject-Token: {service_token}\r\n"),
                token("hierad", "service", "service"),
            );
        }
        return respond(
            "401 Unauthorized",
            "",
            r#"{"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}}"#.to_owned(),
        );
    }
    if head.starts_with("GET /v3/auth/tokens ") {
        validations.fetch_add(1, Ordering::Relaxed);
        if faults.refuse_service.load(Ordering::Relaxed)
            || header(head, "x-auth-token") != Some(service_token.as_str())
        {
            return respond(
                "401 Unauthorized",
                "",
                r#"{"error": {"code": 401, "message": "x", "title": "Unauthorized"}}"#.to_owned(),
            );
        }
        let subject = header(head, "x-subject-token");
        if subject.is_some_and(|t| faults.revoked.lock().unwrap().iter().any(|r| r == t)) {
            return not_found();
        }
        let answer = match subject {
            Some("ks-reader") => token("kate", "reader", "ops"),
            Some("ks-member") => token("mel", "member", "ops"),
            Some("ks-nobody") => token("nobody", "other", "ops"),
            Some("ks-env2") => token("eve", "member", "env2-project"),
            Some("ks-stray") => token("sam", "member", "elsewhere"),
            // Answers a client cannot use, or must refuse.
            Some("ks-past") => {
                token("pat", "reader", "ops").replace(&expires, "2020-01-01T00:00:00Z")
            }
            Some("ks-no-expiry") => {
                token("nat", "reader", "ops").replace(&format!("\"expires_at\":\"{expires}\","), "")
            }
            Some("ks-garbage") => "<html>502 Bad Gateway</html>".to_owned(),
            Some("ks-huge") => format!(r#"{{"token": {{"pad": "{}"}}}}"#, "x".repeat(2 << 20)),
            Some("ks-500") => {
                return respond(
                    "500 Internal Server Error",
                    "",
                    r#"{"error": {"code": 500, "message": "An unexpected error occurred.", "title": "Internal Server Error"}}"#.to_owned(),
                );
            }
            // Sent a byte at a time (see `start`).
            Some("ks-trickle") => token("tess", "reader", "ops"),
            _ => return not_found(),
        };
        return respond("200 OK", "X-Subject-Token: x\r\n", answer);
    }
    not_found()
}
