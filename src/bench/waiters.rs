//! `hierad bench waiters` (bench/changes.sh): holds N change-feed long
//! polls (`GET /api/v1/changes?since=G&wait=25`) on a running server,
//! makes one write, and records when each waiter's answer arrives against
//! the write's own answer (its acknowledgement). One thread, one event
//! loop, raw HTTP/1.1 on non-blocking sockets, nothing parsed past the
//! status line: the client costs little beside the server, which the
//! script runs on another core (`taskset`).
//!
//! It prints one line: the server's RSS the waiters added, the wake
//! percentiles, and the CPU seconds, user and kernel apart, the server and
//! this client spent from the write to the last answer.

use super::BenchError;
use std::io::{Read as _, Write as _};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

/// What to measure.
pub(crate) struct Waiters {
    /// `host:port` of a plain-HTTP server.
    pub(crate) server: String,
    pub(crate) waiters: usize,
    /// The server's process: its RSS and CPU are read from `/proc`.
    pub(crate) pid: u32,
    /// The write that wakes them: a PUT of `body` to `path`.
    pub(crate) path: String,
    pub(crate) body: String,
}

/// CPU seconds, (user, kernel).
type Cpu = (f64, f64);

/// A process's CPU seconds from `/proc/PID/stat` (`self`: this one); the
/// clock ticks are 1/100 s on Linux.
fn cpu(pid: &str) -> Result<Cpu, BenchError> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).map_err(BenchError::io(path.clone()))?;
    // utime and stime: fields 14 and 15 of proc(5), 12 and 13 past the
    // name, which may hold spaces and ends at the last ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    match (tick(11), tick(12)) {
        (Some(user), Some(kernel)) => Ok((user / 100.0, kernel / 100.0)),
        _ => Err(BenchError::Invalid(format!("{path} has no CPU times"))),
    }
}

/// A process's resident memory in KiB, and how much of it is in
/// transparent huge pages (counted whole, touched or not).
fn rss_kib(pid: &str) -> Result<(u64, u64), BenchError> {
    let kib = |file: &str, field: &str| {
        let path = format!("/proc/{pid}/{file}");
        let text = std::fs::read_to_string(&path).map_err(BenchError::io(path.clone()))?;
        text.lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .ok_or_else(|| BenchError::Invalid(format!("{path} has no {field} line")))
    };
    Ok((
        kib("status", "VmRSS:")?,
        kib("smaps_rollup", "AnonHugePages:")?,
    ))
}

/// The generation the server is at: `X-Hierad-Generation` of a feed read.
fn generation(server: &str) -> Result<u64, BenchError> {
    let io = || BenchError::io(format!("reading the change feed of {server}"));
    let mut s = std::net::TcpStream::connect(server).map_err(io())?;
    let ask = format!(
        "GET /api/v1/changes?since=0 HTTP/1.1\r\nhost: {server}\r\nconnection: close\r\n\r\n"
    );
    s.write_all(ask.as_bytes()).map_err(io())?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).map_err(io())?;
    answer
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("x-hierad-generation")
                .then(|| value.trim().parse().ok())?
        })
        .ok_or_else(|| BenchError::Invalid(format!("{server} answered no generation: {answer}")))
}

/// Sends `request` on `stream` and reads the first bytes of the answer:
/// its status (0: none that reads).
async fn exchange(stream: &TcpStream, request: &[u8]) -> std::io::Result<u16> {
    let mut sent = 0;
    while sent < request.len() {
        stream.writable().await?;
        match stream.try_write(&request[sent..]) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    let mut buf = [0u8; 512];
    loop {
        stream.readable().await?;
        match stream.try_read(&mut buf) {
            Ok(n) => {
                let status = buf[..n].strip_prefix(b"HTTP/1.1 ").and_then(|s| s.get(..3));
                let status = status.and_then(|s| std::str::from_utf8(s).ok()?.parse().ok());
                return Ok(status.unwrap_or(0));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
}

/// The value at quantile `q` of sorted, non-empty `ms`.
fn pick(ms: &[f64], q: f64) -> f64 {
    ms[((q * ms.len() as f64) as usize).min(ms.len() - 1)]
}

/// Runs the measurement on a one-thread runtime and prints its line.
///
/// # Errors
///
/// The server cannot be reached, a connection fails, the write is
/// refused, or `/proc` has no such process.
pub(crate) fn run(w: &Waiters) -> Result<(), BenchError> {
    if w.waiters == 0 {
        return Err(BenchError::Invalid("--waiters must be at least 1".into()));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(BenchError::io("starting the bench's runtime"))?;
    let local = tokio::task::LocalSet::new();
    println!("{}", local.block_on(&runtime, measure(w))?);
    Ok(())
}

/// The waiters connected, sent and waiting; the RSS they added, and the
/// huge pages' part of it.
async fn connect(
    w: &Waiters,
) -> Result<(Vec<tokio::task::JoinHandle<Waited>>, (u64, u64)), BenchError> {
    let pid = w.pid.to_string();
    let since = generation(&w.server)?;
    let poll = format!(
        "GET /api/v1/changes?since={since}&wait=25 HTTP/1.1\r\nhost: {}\r\n\r\n",
        w.server
    );
    let before = rss_kib(&pid)?;
    let mut waiters = Vec::with_capacity(w.waiters);
    for _ in 0..w.waiters {
        let stream = TcpStream::connect(&w.server)
            .await
            .map_err(BenchError::io(format!("connecting to {}", w.server)))?;
        let poll = poll.clone();
        waiters.push(tokio::task::spawn_local(async move {
            let ok = exchange(&stream, poll.as_bytes()).await;
            (Instant::now(), ok, stream)
        }));
    }
    // Every request sent, read by the server and waiting.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let held = rss_kib(&pid)?;
    let added = (
        held.0.saturating_sub(before.0),
        held.1.saturating_sub(before.1),
    );
    Ok((waiters, added))
}

/// When a waiter's answer came, its status, and its connection, kept
/// open until every waiter has its answer: a long-poll client asks again
/// on the same connection, and closing each as it is answered put the
/// server's close path (a read of the end, the half-close, the socket's
/// release) into the time and CPU measured for the wake.
type Waited = (Instant, std::io::Result<u16>, TcpStream);

async fn measure(w: &Waiters) -> Result<String, BenchError> {
    let pid = w.pid.to_string();
    let (waiters, added) = connect(w).await?;
    let (server0, client0) = (cpu(&pid)?, cpu("self")?);
    let write = format!(
        "PUT {} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
        w.path,
        w.server,
        w.body.len(),
        w.body
    );
    let writer = TcpStream::connect(&w.server)
        .await
        .map_err(BenchError::io(format!("connecting to {}", w.server)))?;
    let sent = Instant::now();
    let written = exchange(&writer, write.as_bytes())
        .await
        .map_err(BenchError::io("the write"))?;
    let acked = Instant::now();
    if !(200..300).contains(&written) {
        return Err(BenchError::Invalid(format!(
            "PUT {} answered {written}",
            w.path
        )));
    }
    let (mut ms, mut bad) = (Vec::with_capacity(waiters.len()), 0);
    let mut answered = Vec::with_capacity(waiters.len());
    for waiter in waiters {
        let (at, ok, stream) = waiter.await?;
        bad += usize::from(!matches!(ok, Ok(200)));
        ms.push(at.saturating_duration_since(acked).as_secs_f64() * 1000.0);
        answered.push(stream);
    }
    let (server1, client1) = (cpu(&pid)?, cpu("self")?);
    drop(answered);
    ms.sort_by(f64::total_cmp);
    Ok(format!(
        "{} waiters: +{:.1} MiB RSS ({:.1} MiB of it huge pages); write acknowledged in {:.1} ms; woken after the \
         acknowledgement: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {bad} not 200; CPU from \
         the write to the last answer: server {:.2} s user + {:.2} s kernel, client {:.2} s \
         user + {:.2} s kernel",
        ms.len(),
        added.0 as f64 / 1024.0,
        added.1 as f64 / 1024.0,
        acked.duration_since(sent).as_secs_f64() * 1000.0,
        pick(&ms, 0.5),
        pick(&ms, 0.99),
        pick(&ms, 1.0),
        server1.0 - server0.0,
        server1.1 - server0.1,
        client1.0 - client0.0,
        client1.1 - client0.1,
    ))
}
