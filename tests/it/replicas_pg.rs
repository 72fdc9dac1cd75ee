//! Three replicas on one PostgreSQL database (a throwaway server,
//! tests/common/postgres.rs). B and C poll only once an hour, so what they
//! serve of A's writes came by NOTIFY and the LISTEN task. The waits are
//! bounded; how long each took is printed.

use crate::pg;
use crate::server::{TestServer, call};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

const PATIENCE: Duration = Duration::from_secs(10);
const GLOBALS: &str = "/api/v1/config/environments/1/resources/globals/values";

fn lookup(url: &str, key: &str) -> Value {
    let body = json!({"environment": 1, "key": key, "hierarchy": ["globals"]}).to_string();
    call("POST", &format!("{url}/api/v1/lookup"), Some(&body), &[]).json()
}

fn put(url: &str, body: &Value, headers: &[(&str, &str)]) -> crate::server::Reply {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    call(
        "PUT",
        &format!("{url}{GLOBALS}"),
        Some(&body.to_string()),
        &all,
    )
}

#[test]
fn three_replicas_on_one_postgres_serve_each_others_writes() {
    let db = pg::fresh_database();
    let a = TestServer::start_on(Path::new(&db), &[]);
    let hourly = ["--no-sample", "--sync-every", "3600s"];
    let b = TestServer::start_on(Path::new(&db), &hourly);
    let c = TestServer::start_on(Path::new(&db), &hourly);
    for round in 0..3 {
        let written = put(&a.url, &json!({"round": round}), &[]);
        assert_eq!(written.status, 204, "{}", written.body);
        let start = Instant::now();
        for replica in [&b, &c] {
            loop {
                if lookup(&replica.url, "round") == json!({"found": true, "value": round}) {
                    break;
                }
                assert!(
                    start.elapsed() < PATIENCE,
                    "round {round}: {} still answers {}",
                    replica.url,
                    lookup(&replica.url, "round")
                );
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        eprintln!("round {round}: seen on B and C after {:?}", start.elapsed());
    }
    // A reader naming A's generation on C gets the new answer at once.
    let written = put(&a.url, &json!({"round": "last"}), &[]);
    let g = written.generation.unwrap().to_string();
    let body = json!({"environment": 1, "key": "round", "hierarchy": ["globals"]}).to_string();
    let answer = call(
        "POST",
        &format!("{}/api/v1/lookup?min_generation={g}", c.url),
        Some(&body),
        &[],
    );
    assert_eq!(answer.json(), json!({"found": true, "value": "last"}));
    // Conditional writes from two replicas: exactly one wins.
    let version = call(
        "GET",
        &format!("{}{GLOBALS}", b.url),
        None,
        &[("x-hierad-min-generation", &g)],
    )
    .version
    .unwrap()
    .to_string();
    let from_b = put(&b.url, &json!({"by": "b"}), &[("if-match", &version)]);
    let from_c = put(&c.url, &json!({"by": "c"}), &[("if-match", &version)]);
    let mut statuses = [from_b.status, from_c.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [204, 412], "{} / {}", from_b.body, from_c.body);
    let winner = if from_b.status == 204 { "b" } else { "c" };
    let g = [from_b.generation, from_c.generation]
        .into_iter()
        .flatten()
        .max()
        .unwrap()
        .to_string();
    for replica in [&a, &b, &c] {
        let doc = call(
            "GET",
            &format!("{}{GLOBALS}", replica.url),
            None,
            &[("x-hierad-min-generation", &g)],
        );
        assert_eq!(doc.json(), json!({"by": winner}));
    }
}

#[test]
fn register_writes_through_either_replica_are_seen_by_both() {
    let db = pg::fresh_database();
    let hourly = ["--no-sample", "--sync-every", "3600s"];
    let a = TestServer::start_on(Path::new(&db), &hourly);
    let b = TestServer::start_on(Path::new(&db), &hourly);
    crate::replicas::register_writes_are_seen_on_both(&a, &b);
    // And without naming a generation: LISTEN brings B a write on A.
    let url = |s: &TestServer, node: &str| {
        format!(
            "{}/api/v1/config/environments/1/nodes/{node}/resources/astute/values?effective",
            s.url
        )
    };
    let reply = call(
        "PUT",
        &format!(
            "{}/api/v1/config/environments/1/hierarchy_levels/nodes/register",
            a.url
        ),
        Some(r#"["n1"]"#),
        &[("content-type", "application/json")],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let start = Instant::now();
    while call("GET", &url(&b, "n2"), None, &[]).status != 404 {
        assert!(start.elapsed() < PATIENCE, "B never refused n2");
        std::thread::sleep(Duration::from_millis(2));
    }
    eprintln!("register write seen on B after {:?}", start.elapsed());
    assert_eq!(call("GET", &url(&b, "n1"), None, &[]).status, 200);
}
