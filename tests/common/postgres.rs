//! A throwaway PostgreSQL server for tests: one per test binary,
//! started on first use, each test in a fresh database of its own.
//!
//! The server runs from Debian's `postgresql` package (`.ci/run` installs
//! it) in a temporary data folder, on a free port of 127.0.0.1 with its
//! unix socket in that folder, with `trust` authentication for its one
//! user. PostgreSQL refuses to run as root, so as root (CI) the folder
//! belongs to `nobody` and the server runs with `runuser -u nobody`.
//! A statics' destructor never runs, so a guardian shell started with the
//! server waits for the test process to end, then stops the server and
//! removes the folder. A missing PostgreSQL fails the test naming the tool,
//! never a skip.
//!
//! Shared by the crate's own store tests (src/store/tests, through a
//! `#[path]` module) and the integration suites (tests/it).

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The database user every test connects as.
pub const USER: &str = "hierad";

/// How long the server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running server: the one this test binary shares ([`server`]), or a
/// private one ([`private`]) a test may stop and start again (a database
/// outage), stopped and removed when dropped.
#[derive(Debug)]
pub struct PgServer {
    /// 127.0.0.1's port the server listens on.
    pub port: u16,
    /// The folder holding `data/` and the unix socket.
    pub dir: PathBuf,
    bin: PathBuf,
    /// Whether dropping it stops it (a private server).
    private: bool,
}

static SERVER: OnceLock<Result<PgServer, String>> = OnceLock::new();
static NEXT_DB: AtomicU32 = AtomicU32::new(0);

/// The server, started on first use.
///
/// # Panics
///
/// PostgreSQL is not installed or does not start (the message says why).
pub fn server() -> &'static PgServer {
    match SERVER.get_or_init(start) {
        Ok(server) => server,
        Err(message) => panic!("{message}"),
    }
}

/// A server of the caller's own, e.g. to stop and start again.
///
/// # Panics
///
/// As [`server`].
pub fn private() -> PgServer {
    let mut server = start().unwrap_or_else(|message| panic!("{message}"));
    server.private = true;
    server
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if self.private {
            self.stop();
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl PgServer {
    /// Stops the server (fast shutdown: open connections are closed), and
    /// waits until it is down.
    pub fn stop(&self) {
        let mut pg_ctl = as_server_user(&self.bin.join("pg_ctl"));
        pg_ctl
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["stop", "-m", "fast", "-w", "-t", "30"]);
        let _ = run(pg_ctl, "pg_ctl stop");
    }

    /// Starts the stopped server again on its port, and waits until it
    /// accepts connections.
    ///
    /// # Panics
    ///
    /// It does not come back.
    pub fn start_again(&self) {
        launch(&self.bin, &self.dir, self.port)
            .and_then(|mut child| wait_ready(self, &mut child))
            .unwrap_or_else(|message| panic!("{message}"));
    }

    /// From now on, TCP connections must use TLS with `cert` and `key`
    /// (PEM files): `ssl = on`, and pg_hba.conf allows `hostssl` only (the
    /// unix socket stays open for [`PgServer::admin`]'s kind of set-up).
    /// Waits (bounded) until a plain TCP connection is refused.
    ///
    /// # Panics
    ///
    /// The files cannot be installed, or the server keeps taking plain text.
    pub fn require_tls(&self, cert: &Path, key: &Path) {
        let data = self.dir.join("data");
        for (from, to) in [(cert, "server.crt"), (key, "server.key")] {
            std::fs::copy(from, data.join(to)).unwrap_or_else(|e| panic!("{to}: {e}"));
        }
        let mut chmod = Command::new("chmod");
        chmod.arg("600").arg(data.join("server.key"));
        run(chmod, "chmod of the server key").unwrap_or_else(|m| panic!("{m}"));
        if is_root() {
            let mut chown = Command::new("chown");
            chown
                .arg("nobody:")
                .arg(data.join("server.crt"))
                .arg(data.join("server.key"));
            run(chown, "chown of the server certificate").unwrap_or_else(|m| panic!("{m}"));
        }
        let append = |file: &str, text: &str| {
            use std::io::Write;
            std::fs::OpenOptions::new()
                .append(true)
                .open(data.join(file))
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
        };
        append("postgresql.conf", "\nssl = on\n");
        std::fs::write(
            data.join("pg_hba.conf"),
            "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
        )
        .unwrap_or_else(|e| panic!("pg_hba.conf: {e}"));
        let mut reload = as_server_user(&self.bin.join("pg_ctl"));
        reload.arg("-D").arg(&data).arg("reload");
        run(reload, "pg_ctl reload").unwrap_or_else(|m| panic!("{m}"));
        let started = Instant::now();
        while postgres::Client::connect(&self.url("postgres"), postgres::NoTls).is_ok() {
            assert!(
                started.elapsed() < START_TIMEOUT,
                "the test PostgreSQL still takes plain TCP connections after a reload"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The URL of database `db` on this server.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs SQL on the `postgres` maintenance database.
    ///
    /// # Panics
    ///
    /// The statement fails.
    pub fn admin(&self, sql: &str) {
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to the test PostgreSQL: {e}"));
        client
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// A new, empty database on the shared server; its URL.
pub fn fresh_database() -> String {
    let server = server();
    let name = format!(
        "t{}_{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::Relaxed)
    );
    server.admin(&format!("CREATE DATABASE {name}"));
    server.url(&name)
}

/// The folder of PostgreSQL's server programs: Debian's newest, or PATH.
fn bin_dir() -> Result<PathBuf, String> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Ok(bin);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .find(|dir| dir.join("initdb").exists() && dir.join("postgres").exists())
        .ok_or_else(|| {
            "the PostgreSQL store tests start a throwaway server and cannot find PostgreSQL's \
             `initdb` and `postgres` (looked in /usr/lib/postgresql/*/bin and on PATH). \
             Install Debian's `postgresql` package (`bash .ci/run` does), or run only the \
             SQLite tests with a filter."
                .to_owned()
        })
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `program args…`, as `nobody` when this process is root.
fn as_server_user(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "nobody", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn run(mut command: Command, what: &str) -> Result<(), String> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot find a free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

fn start() -> Result<PgServer, String> {
    let bin = bin_dir()?;
    let dir = tempfile::Builder::new()
        .prefix("hierad-pg-")
        .tempdir()
        .map_err(|e| format!("cannot make the server's folder: {e}"))?
        .keep();
    if is_root() {
        let mut chown = Command::new("chown");
        chown.arg("nobody:").arg(&dir);
        run(chown, "chown of the test PostgreSQL folder")?;
    }
    let data = dir.join("data");
    let mut initdb = as_server_user(&bin.join("initdb"));
    initdb
        .args([
            "-U",
            USER,
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
            "-D",
        ])
        .arg(&data);
    run(initdb, "PostgreSQL's initdb")?;
    guard(&dir, &data)?;
    let mut last = String::new();
    // A free port may be taken between the probe and the server's bind.
    for _ in 0..3 {
        let port = free_port()?;
        let server = PgServer {
            port,
            dir: dir.clone(),
            bin: bin.clone(),
            private: false,
        };
        let mut child = launch(&bin, &dir, port)?;
        match wait_ready(&server, &mut child) {
            Ok(()) => return Ok(server),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Spawns the server on `port` (its log in the folder).
fn launch(bin: &Path, dir: &Path, port: u16) -> Result<std::process::Child, String> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(format!("server-{port}.log")))
        .map_err(|e| e.to_string())?;
    let mut postgres = as_server_user(&bin.join("postgres"));
    postgres
        .arg("-D")
        .arg(dir.join("data"))
        .args(["-p", &port.to_string(), "-h", "127.0.0.1", "-k"])
        .arg(dir)
        // A throwaway server: durability buys nothing here.
        .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
        .args(["-c", "full_page_writes=off", "-c", "max_connections=300"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    postgres
        .spawn()
        .map_err(|e| format!("cannot start PostgreSQL: {e}"))
}

/// Waits (bounded) until `server` accepts connections; kills `child`
/// if it never does.
fn wait_ready(server: &PgServer, child: &mut std::process::Child) -> Result<(), String> {
    let mut last = String::new();
    let started = Instant::now();
    while started.elapsed() < START_TIMEOUT {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "the test PostgreSQL exited ({status}): {}",
                std::fs::read_to_string(server.dir.join(format!("server-{}.log", server.port)))
                    .unwrap_or_default()
            ));
        }
        match postgres::Client::connect(&server.url("postgres"), postgres::NoTls) {
            Ok(_) => return Ok(()),
            Err(e) => last = format!("the test PostgreSQL does not answer: {e}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    Err(last)
}

/// Starts the guardian: once this process is gone, it stops the server
/// (SIGINT: fast shutdown) and removes `dir`.
fn guard(dir: &Path, data: &Path) -> Result<(), String> {
    let script = r#"
        while kill -0 "$1" 2>/dev/null; do sleep 0.5; done
        pid=$(head -n 1 "$3/postmaster.pid" 2>/dev/null)
        [ -n "$pid" ] && kill -INT "$pid" 2>/dev/null
        i=0
        while [ -e "$3/postmaster.pid" ] && [ "$i" -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
        rm -rf "$2"
    "#;
    Command::new("sh")
        .args(["-c", script, "guardian"])
        .arg(std::process::id().to_string())
        .arg(dir)
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot start the test PostgreSQL's guardian: {e}"))
}
