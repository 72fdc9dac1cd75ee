//! Replicas started together on an empty database: each saw it empty and
//! loaded the sample, and the others exited with "environment 1 already
//! exists" (PostgreSQL: 5 of 9 starts; one SQLite file: 2 of 9), so a new
//! deployment crash-looped. Exactly one loads it; the others start.

use crate::pg;
use crate::server::{TestServer, call};
use std::path::Path;

/// Four `hierad serve` at once on `db`, a few rounds on fresh databases
/// from `fresh`: all listen, exactly one loaded the sample, and the
/// database holds environment 1 with the sample, once.
fn four_at_once(fresh: impl Fn(usize) -> String) {
    for round in 0..3 {
        let db = fresh(round);
        let servers: Vec<TestServer> = std::thread::scope(|scope| {
            let started: Vec<_> = (0..4)
                .map(|_| {
                    let db = &db;
                    scope.spawn(move || TestServer::start_logging(Path::new(db), &[], "info"))
                })
                .collect();
            started.into_iter().map(|s| s.join().unwrap()).collect()
        });
        let loaded = servers
            .iter()
            .filter(|s| s.log().contains("empty database: loaded the sample"))
            .count();
        let logs: Vec<String> = servers.iter().map(TestServer::log).collect();
        assert_eq!(loaded, 1, "round {round}: {logs:#?}");
        for server in &servers {
            let envs = call(
                "GET",
                &format!("{}/api/v1/config/environments", server.url),
                None,
                &[],
            );
            assert_eq!(envs.status, 200, "{}", envs.body);
            let ids: Vec<i64> = envs
                .json()
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].as_i64().unwrap())
                .collect();
            assert_eq!(ids, [1], "round {round}");
        }
        let loader = servers
            .iter()
            .find(|s| s.log().contains("empty database: loaded the sample"))
            .unwrap();
        let astute = call(
            "GET",
            &format!(
                "{}/api/v1/config/environments/1/resources/astute/values",
                loader.url
            ),
            None,
            &[],
        );
        assert_eq!(astute.status, 200, "{}", astute.body);
    }
}

#[test]
fn four_servers_on_one_empty_sqlite_file_start_and_one_loads_the_sample() {
    let dir = tempfile::tempdir().unwrap();
    four_at_once(|round| {
        dir.path()
            .join(format!("h{round}.db"))
            .to_str()
            .unwrap()
            .to_owned()
    });
}

#[test]
fn four_servers_on_one_empty_postgres_database_start_and_one_loads_the_sample() {
    four_at_once(|_| pg::fresh_database());
}
