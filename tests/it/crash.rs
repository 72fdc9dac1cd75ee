//! Crash safety: a server killed with SIGKILL at random moments during
//! acknowledged writes loses none of them, and the database stays sound.

use crate::server::{TestServer, one_shot};
use serde_json::{Value, json};
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;
use std::time::Duration;

const KILLS: usize = 5;
/// Bounds each round's writer; a round usually ends by the kill first.
const WRITES_PER_ROUND: u64 = 2_000;
const ROOT: &str = "/api/v1/config/environments/5/resources";

/// One request on a fresh connection; `None` when the server is gone.
fn request(url: &str, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    one_shot(url, method, path, body).map(|answer| (answer.status, answer.body))
}

fn ok(url: &str, method: &str, path: &str, body: &str) -> String {
    let (status, answer) = request(url, method, path, body).expect("the server answers");
    assert!(
        (200..300).contains(&status),
        "{method} {path}: {status} {answer}"
    );
    answer
}

/// What the writers had acknowledged: every key-path write, and the last
/// whole-document write of `b`.
#[derive(Default)]
struct Acked {
    keys: Vec<(String, u64)>,
    last_b: Option<u64>,
}

/// Every acknowledged write reads back, through GET and through a lookup.
fn verify(url: &str, acked: &Acked) {
    let a: Value = serde_json::from_str(&ok(url, "GET", &format!("{ROOT}/a/values"), "")).unwrap();
    for (key, value) in &acked.keys {
        assert_eq!(
            a[key],
            json!(value),
            "acknowledged write {key}={value} lost"
        );
    }
    if let Some((key, value)) = acked.keys.last() {
        let answer = ok(
            url,
            "POST",
            "/api/v1/lookup",
            &json!({"environment": 5, "key": key, "hierarchy": ["a"]}).to_string(),
        );
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer, json!({"found": true, "value": value}));
    }
    if let Some(last) = acked.last_b {
        let b: Value =
            serde_json::from_str(&ok(url, "GET", &format!("{ROOT}/b/values"), "")).unwrap();
        // A write sent but cut off by the kill may have committed too.
        let i = b["i"].as_u64().expect("b holds a write");
        assert!(
            i >= last,
            "b holds write {i}, older than acknowledged {last}"
        );
    }
}

/// Writes until the server dies or the round's bound; records each write
/// the server acknowledged.
fn write_until_killed(url: &str, round: usize, acked: &Mutex<Acked>) {
    for i in 0..WRITES_PER_ROUND {
        let n = round as u64 * WRITES_PER_ROUND + i;
        if i % 2 == 0 {
            let key = format!("r{round}_{i}");
            match request(
                url,
                "PUT",
                &format!("{ROOT}/a/values/keys/{key}"),
                &n.to_string(),
            ) {
                Some((204, _)) => acked.lock().unwrap().keys.push((key, n)),
                Some((status, body)) => panic!("key-path PUT: {status} {body}"),
                None => break,
            }
        } else {
            match request(
                url,
                "PUT",
                &format!("{ROOT}/b/values"),
                &json!({"i": n}).to_string(),
            ) {
                Some((204, _)) => acked.lock().unwrap().last_b = Some(n),
                Some((status, body)) => panic!("PUT: {status} {body}"),
                None => break,
            }
        }
    }
}

#[test]
fn sigkill_during_writes_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    let seed = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let mut rng = seed;
    let acked = Mutex::new(Acked::default());
    for round in 0..KILLS {
        let server = TestServer::start_on(&db, &["--no-sample"]);
        if round == 0 {
            ok(
                &server.url,
                "POST",
                "/api/v1/config/components",
                r#"{"name": "app", "resource_definitions": [{"name": "a"}, {"name": "b"}]}"#,
            );
            ok(
                &server.url,
                "POST",
                "/api/v1/config/environments",
                r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#,
            );
        }
        verify(&server.url, &acked.lock().unwrap());
        // xorshift: a kill 50..550 ms into the round.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let delay = Duration::from_millis(50 + rng % 500);
        std::thread::scope(|s| {
            let url = server.url.clone();
            let acked = &acked;
            s.spawn(move || write_until_killed(&url, round, acked));
            std::thread::sleep(delay);
            // SIGKILL (TestServer's drop), mid-write unless the writer
            // already finished its bounded round.
            drop(server);
        });
        let conn = rusqlite::Connection::open(&db).unwrap();
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok", "seed {seed}, round {round}");
    }
    let server = TestServer::start_on(&db, &["--no-sample"]);
    let acked = acked.into_inner().unwrap();
    // Not vacuous: writes were acknowledged before the kills.
    assert!(
        acked.keys.len() >= KILLS,
        "only {} writes acknowledged",
        acked.keys.len()
    );
    verify(&server.url, &acked);
    eprintln!(
        "crash test (seed {seed}): {} key-path writes and the last whole-document write acknowledged over {KILLS} SIGKILLs, none lost",
        acked.keys.len()
    );
}
