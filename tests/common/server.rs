//! A real `hierad serve` on 127.0.0.1:0 with a temporary database, for
//! integration tests; stopped (SIGTERM, then waited for) when dropped.

use crate::binary::Args;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug)]
pub struct TestServer {
    pub url: String,
    child: Option<Child>,
    _dir: Option<tempfile::TempDir>,
    /// Its stderr so far: the log, at `HIERAD_LOG=warn` unless started
    /// with [`TestServer::start_logging`].
    log: Arc<Mutex<String>>,
    /// Reads stderr into `log` until the server exits.
    drain: Option<std::thread::JoinHandle<()>>,
}

fn append(log: &Mutex<String>, line: &str) {
    let mut log = log.lock().unwrap();
    log.push_str(line);
    log.push('\n');
}

impl TestServer {
    /// A server over a fresh database holding the sample (`data/`).
    pub fn with_sample() -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("hierad.db");
        let mut server = TestServer::start_on(&db, &[]);
        server._dir = Some(dir);
        server
    }

    /// A server over a fresh, empty database.
    pub fn empty() -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("hierad.db");
        let mut server = TestServer::start_on(&db, &["--no-sample"]);
        server._dir = Some(dir);
        server
    }

    /// A server over `db` (kept by the caller), with extra flags.
    pub fn start_on(db: &Path, extra: &(impl Args + ?Sized)) -> TestServer {
        TestServer::start_at("127.0.0.1:0", db, extra)
    }

    /// A server listening on `listen` (a restart on the same port) over
    /// `db`, with extra flags.
    pub fn start_at(listen: &str, db: &Path, extra: &(impl Args + ?Sized)) -> TestServer {
        TestServer::launch(listen, db, extra, "warn")
    }

    /// A server over `db` with extra flags, logging as `HIERAD_LOG` =
    /// `directives` says (its log: [`TestServer::log`]).
    pub fn start_logging(db: &Path, extra: &(impl Args + ?Sized), directives: &str) -> TestServer {
        TestServer::launch("127.0.0.1:0", db, extra, directives)
    }

    fn launch(
        listen: &str,
        db: &Path,
        extra: &(impl Args + ?Sized),
        directives: &str,
    ) -> TestServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hierad"))
            .args(["serve", "--listen", listen, "--db"])
            .arg(db)
            .args(extra.words())
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("HIERAD_LOG", directives)
            .stderr(Stdio::piped())
            .spawn()
            .expect("start hierad serve");
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let log = Arc::new(Mutex::new(String::new()));
        let url = loop {
            let Some(line) = lines.next() else {
                panic!(
                    "hierad serve exited before listening:\n{}",
                    log.lock().unwrap()
                );
            };
            let line = line.unwrap();
            append(&log, &line);
            if let Some(url) = line.strip_prefix("listening on ") {
                break url.to_owned();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        let kept = Arc::clone(&log);
        let drain = std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                append(&kept, &line);
            }
        });
        TestServer {
            url,
            child: Some(child),
            _dir: None,
            log,
            drain: Some(drain),
        }
    }

    /// What the server has logged so far (all of it once
    /// [`TestServer::stop`] returned).
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// The database file of a server made by [`TestServer::with_sample`]
    /// or [`TestServer::empty`] (another server may open it too).
    pub fn db(&self) -> Option<std::path::PathBuf> {
        self._dir.as_ref().map(|d| d.path().join("hierad.db"))
    }

    /// The server's process id (for /proc/PID/status).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("stopped").id()
    }

    /// Sends SIGTERM and waits: the exit status of a graceful stop.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("already stopped");
        let pid = child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        for _ in 0..100 {
            if let Some(status) = child.try_wait().unwrap() {
                // stderr is closed: the log is whole once the reader ends.
                if let Some(drain) = self.drain.take() {
                    let _ = drain.join();
                }
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        child.kill().unwrap();
        panic!("hierad serve did not stop within 5 s of SIGTERM");
    }
}

/// A server a test talks to over HTTP: this one, or one in process
/// (tests/common/in_process.rs).
pub trait Served {
    /// Its base URL, `http://127.0.0.1:PORT`.
    fn url(&self) -> &str;

    /// `POST` of a JSON `body` to `path` on this server.
    fn post_json(&self, path: &str, body: &str) -> Reply {
        call(
            "POST",
            &format!("{}{path}", self.url()),
            Some(body),
            &[("content-type", "application/json")],
        )
    }
}

impl Served for TestServer {
    fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A response: status, headers of interest, body text.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub x_cache: Option<String>,
    pub etag: Option<String>,
    /// `X-Hierad-Generation` and `X-Hierad-Version`, as numbers.
    pub generation: Option<u64>,
    pub version: Option<u64>,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One HTTP request; any status is a reply, not an error.
pub fn call(method: &str, url: &str, body: Option<&str>, headers: &[(&str, &str)]) -> Reply {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    call_with(&agent, method, url, body, headers)
}

/// [`call`] through `agent` (one trusting a test CA, say).
pub fn call_with(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Reply {
    let mut builder = http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    // A body is JSON unless the headers say otherwise, as every client
    // declares it (the server refuses an undeclared one).
    let typed = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
    if body.is_some() && !typed {
        builder = builder.header("content-type", "application/json");
    }
    let request = builder.body(body.unwrap_or("").to_owned()).unwrap();
    let mut response = agent.run(request).expect("request failed");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (x_cache, etag) = (header("x-cache"), header("etag"));
    let number = |name: &str| header(name).map(|v| v.parse().expect("a number"));
    let (generation, version) = (number("x-hierad-generation"), number("x-hierad-version"));
    Reply {
        status: response.status().as_u16(),
        x_cache,
        etag,
        generation,
        version,
        body: response.body_mut().read_to_string().unwrap_or_default(),
    }
}

/// An answer read off the wire by [`one_shot`].
#[derive(Debug)]
pub struct RawAnswer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl RawAnswer {
    /// Its `X-Hierad-Generation`.
    pub fn generation(&self) -> Option<u64> {
        self.head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("x-hierad-generation")
                .then(|| value.trim().parse().ok())?
        })
    }
}

/// One request on a fresh connection (`connection: close`), bytes on the
/// wire; `None` when the server is gone (refused, reset, cut off
/// mid-answer), which a killed server is.
pub fn one_shot(url: &str, method: &str, path: &str, body: &str) -> Option<RawAnswer> {
    use std::io::{Read, Write};
    let addr = url.strip_prefix("http://")?;
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let status = answer.get(9..12)?.parse().ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    Some(RawAnswer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    })
}
