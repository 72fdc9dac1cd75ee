//! Faults on PostgreSQL: the database restarted under
//! a replica serving writes, and a replica killed with SIGKILL while it
//! serves writes. Every write answered 204 must be in the store after.
//! Every loop is bounded in count and time; nothing is timed.

use crate::pg;
use crate::server::{TestServer, call, one_shot};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long any one phase may take before the test fails.
const PATIENCE: Duration = Duration::from_secs(60);
/// Bounds a writer's count of writes.
const MAX_WRITES: usize = 3_000;
const GLOBALS: &str = "/api/v1/config/environments/1/resources/globals/values";

/// One request on a fresh connection: status, body and
/// `X-Hierad-Generation`; `None` when the server is gone.
fn request(url: &str, method: &str, path: &str, body: &str) -> Option<(u16, String, Option<u64>)> {
    let answer = one_shot(url, method, path, body)?;
    let generation = answer.generation();
    Some((answer.status, answer.body, generation))
}

/// One write a writer made.
struct Written {
    key: String,
    number: usize,
    /// `None`: no answer.
    status: Option<u16>,
    generation: Option<u64>,
    /// From the request's connection to the end of its answer.
    took: Duration,
}

/// What a writer saw.
#[derive(Default)]
struct Log {
    writes: Vec<Written>,
}

impl Log {
    fn acked(&self) -> impl Iterator<Item = &Written> {
        self.writes.iter().filter(|w| w.status == Some(204))
    }

    fn count(&self, status: u16) -> usize {
        self.writes
            .iter()
            .filter(|w| w.status == Some(status))
            .count()
    }

    /// The median and the longest time to an answer of `status`, in ms.
    fn times(&self, status: u16) -> (f64, f64) {
        let mut ms: Vec<f64> = self
            .writes
            .iter()
            .filter(|w| w.status == Some(status))
            .map(|w| w.took.as_secs_f64() * 1000.0)
            .collect();
        ms.sort_by(f64::total_cmp);
        (
            ms.get(ms.len() / 2).copied().unwrap_or(0.0),
            ms.last().copied().unwrap_or(0.0),
        )
    }
}

/// Key-path writes `{prefix}{i}` = i until `stop`, the server's death, or
/// the bounds; every answer into `log`. Any status but 204 and 503 fails.
fn write_until(url: &str, prefix: &str, stop: &AtomicBool, log: &Mutex<Log>) {
    let start = Instant::now();
    for i in 0..MAX_WRITES {
        if stop.load(Ordering::SeqCst) || start.elapsed() > PATIENCE * 2 {
            break;
        }
        let key = format!("{prefix}{i}");
        let sent = Instant::now();
        let answer = request(url, "PUT", &format!("{GLOBALS}/keys/{key}"), &i.to_string());
        let (status, generation) = match &answer {
            Some((status @ (204 | 503), _, generation)) => (Some(*status), *generation),
            Some((status, body, _)) => panic!("PUT {key}: {status} {body}"),
            None => (None, None),
        };
        if let Some((503, body, _)) = &answer {
            assert!(
                body.contains("the database is unavailable"),
                "PUT {key}: 503 without the clear message: {body}"
            );
        }
        log.lock().unwrap().writes.push(Written {
            key,
            number: i,
            status,
            generation,
            took: sent.elapsed(),
        });
        if answer.is_none() {
            break;
        }
    }
}

/// Waits (bounded) until `done` holds; `what` names it in the failure.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "waited {PATIENCE:?} for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!("{what}: after {:?}", start.elapsed());
}

/// The globals document read through `url`, at least at `generation`.
fn globals(url: &str, generation: u64) -> Value {
    let doc = call(
        "GET",
        &format!("{url}{GLOBALS}"),
        None,
        &[("x-hierad-min-generation", &generation.to_string())],
    );
    assert_eq!(doc.status, 200, "{}", doc.body);
    doc.json()
}

/// Every acknowledged write of `log` is in `doc`.
fn assert_all_acked_present(doc: &Value, log: &Log) {
    for Written { key, number, .. } in log.acked() {
        assert_eq!(
            doc[key],
            json!(number),
            "acknowledged write {key}={number} lost"
        );
    }
}

#[test]
fn postgres_restart_during_writes_refuses_then_recovers_and_loses_nothing() {
    let server = pg::private();
    server.admin("CREATE DATABASE faults");
    let db = server.url("faults");
    let replica = TestServer::start_on(Path::new(&db), &[]);
    let lookup_body = json!({"environment": 1, "key": "before", "hierarchy": ["globals"]});
    let put_before = call(
        "PUT",
        &format!("{}{GLOBALS}/keys/before", replica.url),
        Some("\"snapshot\""),
        &[("content-type", "application/json")],
    );
    assert_eq!(put_before.status, 204, "{}", put_before.body);
    let stop = AtomicBool::new(false);
    let log = Mutex::new(Log::default());
    std::thread::scope(|s| {
        let writer = s.spawn(|| write_until(&replica.url, "w", &stop, &log));
        let stop_writer = || {
            stop.store(true, Ordering::SeqCst);
        };
        // Acknowledged writes before the outage.
        wait_for("5 writes acknowledged before the outage", || {
            log.lock().unwrap().count(204) >= 5
        });
        server.stop();
        let acked_before = log.lock().unwrap().count(204);
        wait_for("a write refused with 503", || {
            log.lock().unwrap().count(503) >= 1
        });
        // Lookups answer from the snapshot; /healthz names the database.
        let answer = call(
            "POST",
            &format!("{}/api/v1/lookup", replica.url),
            Some(&lookup_body.to_string()),
            &[],
        );
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(answer.json(), json!({"found": true, "value": "snapshot"}));
        wait_for("the database line in /healthz", || {
            let health = call("GET", &format!("{}/healthz", replica.url), None, &[]);
            assert_eq!(health.status, 200, "{}", health.body);
            health
                .body
                .contains("database: catching up has failed since")
        });
        let refused = log.lock().unwrap().count(503);
        server.start_again();
        // Writes succeed again, hierad not restarted.
        wait_for("5 writes acknowledged after the restart", || {
            log.lock().unwrap().count(204) >= acked_before + 5
        });
        stop_writer();
        writer.join().unwrap();
        let log = log.lock().unwrap();
        eprintln!(
            "PostgreSQL restart: {} writes, {} acknowledged ({acked_before} before the outage), {} refused (at least {refused} while down), {} unanswered",
            log.writes.len(),
            log.count(204),
            log.count(503),
            log.writes.iter().filter(|w| w.status.is_none()).count()
        );
        // A figure, not a check: an outage's 503 should come at once
        // (DOWN_WAIT in store/postgres), not after the connect timeout.
        let (median, longest) = log.times(503);
        eprintln!("503 while PostgreSQL was down: median {median:.0} ms, longest {longest:.0} ms");
        assert!(
            log.writes.iter().all(|w| w.status.is_some()),
            "the replica stopped answering"
        );
        // After a 503 a later write got 204: the replica recovered by itself.
        let first_refused = log
            .writes
            .iter()
            .position(|w| w.status == Some(503))
            .unwrap();
        assert!(
            log.writes[first_refused..]
                .iter()
                .any(|w| w.status == Some(204))
        );
        let newest = log.acked().filter_map(|w| w.generation).max().unwrap();
        assert_all_acked_present(&globals(&replica.url, newest), &log);
    });
    // Read back through a fresh replica too: from the database itself.
    let fresh = TestServer::start_on(Path::new(&db), &["--no-sample"]);
    let log = log.into_inner().unwrap();
    let newest = log.acked().filter_map(|w| w.generation).max().unwrap();
    let doc = globals(&fresh.url, newest);
    assert_all_acked_present(&doc, &log);
    assert_eq!(doc["before"], json!("snapshot"));
}

#[test]
fn sigkill_of_a_replica_during_writes_on_postgres_loses_no_acknowledged_write() {
    let db = pg::fresh_database();
    let a = TestServer::start_on(Path::new(&db), &[]);
    let b = TestServer::start_on(Path::new(&db), &["--no-sample"]);
    let stop = AtomicBool::new(false);
    let log = Mutex::new(Log::default());
    let url = a.url.clone();
    std::thread::scope(|s| {
        let writer = s.spawn(|| write_until(&url, "k", &stop, &log));
        wait_for("20 writes acknowledged before the kill", || {
            log.lock().unwrap().count(204) >= 20
        });
        // SIGKILL (TestServer's drop), mid-write: the writer is still going.
        drop(a);
        writer.join().unwrap();
    });
    let log = log.into_inner().unwrap();
    assert!(
        log.writes.last().is_some_and(|w| w.status.is_none()),
        "the writer ended before the kill"
    );
    assert_eq!(log.count(503), 0, "refused writes with PostgreSQL up");
    let newest = log.acked().filter_map(|w| w.generation).max().unwrap();
    let doc = globals(&b.url, newest);
    assert_all_acked_present(&doc, &log);
    eprintln!(
        "SIGKILL on PostgreSQL: {} writes acknowledged before the kill, none lost (read through a second replica at generation {newest})",
        log.count(204)
    );
}
