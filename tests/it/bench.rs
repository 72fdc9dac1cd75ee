//! `hierad bench` against real servers, briefly (a few hundred requests):
//! the report's shape, the cache counters, a generated environment loaded
//! through the import API with writes while it runs, the chart, and the
//! baseline server. No assertion on speed.

use crate::binary::ok as hierad;
use crate::server::TestServer;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn report(args: &str) -> Value {
    serde_json::from_str(&hierad(&format!("bench --json {args}"))).expect("a JSON report")
}

fn check_shape(r: &Value, requests: u64) {
    assert_eq!(r["requests"], requests, "{r}");
    assert_eq!(r["errors"]["total"], 0, "{r}");
    let l = &r["latency_us"];
    let p: Vec<u64> = ["p50", "p90", "p99", "p99_9", "max"]
        .iter()
        .map(|k| l[k].as_u64().unwrap())
        .collect();
    assert!(p[0] > 0 && p.windows(2).all(|w| w[0] <= w[1]), "{l}");
    assert!(r["lookups_per_s"].as_f64().unwrap() > 0.0);
    let answers = &r["answers"];
    let answered = answers["found"].as_u64().unwrap()
        + answers["not_found"].as_u64().unwrap()
        + answers["other"].as_u64().unwrap();
    assert_eq!(answered, requests);
    let by_class: u64 = r["classes"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(by_class, requests);
    assert!(!r["timeline"].as_array().unwrap().is_empty());
    assert_eq!(r["curve"].as_array().unwrap().len(), 14);
}

#[test]
fn bench_the_sample_environment_by_discovery() {
    let server = TestServer::with_sample();
    let r = report(&format!("--server {} -n 300 -c 4 --warmup 0s", server.url));
    check_shape(&r, 300);
    // Every measured lookup went through the cache, hit or miss.
    let cache = &r["cache"];
    assert_eq!(
        cache["hits"].as_u64().unwrap() + cache["misses"].as_u64().unwrap(),
        300,
        "{cache}"
    );
    // The sample's real keys: some found, and the made-up misses not.
    assert!(r["answers"]["found"].as_u64().unwrap() > 0);
    assert!(r["answers"]["not_found"].as_u64().unwrap() > 0);
    assert!(r["classes"]["missing"]["requests"].as_u64().unwrap() > 0);
    // --unique defeats the cache: every lookup is a miss.
    let r = report(&format!(
        "--server {} -n 200 -c 2 --warmup 0s --unique",
        server.url
    ));
    check_shape(&r, 200);
    assert_eq!(r["cache"]["hits"], 0, "{}", r["cache"]);
}

/// `bench generate` of four nodes in `dir`, loaded by `bench load` into
/// an empty server: the server and the generated folder.
fn loaded(dir: &Path) -> (TestServer, PathBuf) {
    let env_dir = dir.join("env");
    let env_arg = env_dir.to_str().unwrap();
    hierad(&format!("bench generate --nodes 4 {env_arg}"));
    assert!(
        env_dir
            .join("nodes/node-4.test.domain.local/astute.yaml")
            .is_file()
    );
    let server = TestServer::empty();
    let loaded: Value = serde_json::from_str(&hierad(&format!(
        "bench load {env_arg} --server {} --json",
        server.url
    )))
    .unwrap();
    assert_eq!(loaded["levels"], 5, "{loaded}");
    (server, env_dir)
}

/// Node imports publish a derived snapshot: each node's own data
/// answers, and a re-import of one node is seen at once.
#[test]
fn a_generated_environment_loads_and_a_node_reimport_is_seen_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = loaded(dir.path());
    let lookup = |node: &str, key: &str| {
        let body = serde_json::json!({
            "environment": 1, "level": format!("nodes={node}"), "key": key,
            "scope": {"::fqdn": node},
        });
        crate::server::call(
            "POST",
            &format!("{}/api/v1/lookup", server.url),
            Some(&body.to_string()),
            &[],
        )
        .json()
    };
    for n in 1..=4 {
        let node = format!("node-{n}.test.domain.local");
        assert_eq!(lookup(&node, "fqdn")["value"], node.as_str());
        assert_eq!(lookup(&node, "uid")["value"], n.to_string());
    }
    assert_eq!(lookup("node-2.test.domain.local", "uid")["value"], "2");
    let reimport = serde_json::json!({
        "level": "nodes=node-2.test.domain.local", "replace": true,
        "documents": {"astute": {"uid": "two", "fqdn": "node-2.test.domain.local"}},
    });
    let r = crate::server::call(
        "POST",
        &format!("{}/api/v1/config/environments/1/import", server.url),
        Some(&reimport.to_string()),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(lookup("node-2.test.domain.local", "uid")["value"], "two");
    assert_eq!(
        lookup("node-2.test.domain.local", "network_scheme")["found"],
        false
    );
    assert_eq!(lookup("node-3.test.domain.local", "uid")["value"], "3");
    assert!(lookup("node-2.test.domain.local", "nodes")["value"].is_array());
}

#[test]
fn bench_with_writes_asks_every_class_and_charts_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (server, env_dir) = loaded(dir.path());
    let plan = env_dir.join("bench-plan.json");
    let chart = dir.path().join("chart.svg");
    let r = report(&format!(
        "--server {} --plan {} -d 1s --warmup 100ms -c 4 --write-every 200ms --label writes --chart {}",
        server.url,
        plan.display(),
        chart.display()
    ));
    let requests = r["requests"].as_u64().unwrap();
    assert!(requests > 0);
    check_shape(&r, requests);
    assert_eq!(r["label"], "writes");
    let writes = &r["writes"];
    assert!(writes["count"].as_u64().unwrap() >= 1, "{writes}");
    assert_eq!(writes["errors"], 0, "{writes}");
    // Every class of the plan was asked, the large hash among them.
    for class in ["priority", "interpolated", "hash", "array", "missing"] {
        assert!(
            r["classes"][class]["requests"].as_u64().unwrap() > 0,
            "{class}"
        );
    }
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("writes"));
}

/// The one-key mode, and a chart of saved reports.
#[test]
fn the_one_key_mode_and_a_chart_of_saved_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (server, env_dir) = loaded(dir.path());
    let plan = env_dir.join("bench-plan.json");
    let r = report(&format!(
        "--server {} --plan {} -n 50 --warmup 0s --key network_metadata --resolution hash",
        server.url,
        plan.display()
    ));
    check_shape(&r, 50);
    assert_eq!(r["answers"]["found"], 50);
    assert!(
        r["bytes_received"].as_u64().unwrap() > 50 * 40_000,
        "{}",
        r["bytes_received"]
    );
    let saved = dir.path().join("r.json");
    std::fs::write(&saved, r.to_string()).unwrap();
    let combined = dir.path().join("both.svg");
    hierad(&format!(
        "bench chart -o {} {} {}",
        combined.display(),
        saved.display(),
        saved.display()
    ));
    assert_eq!(
        std::fs::read_to_string(&combined)
            .unwrap()
            .matches("<polyline")
            .count(),
        6
    );
}

#[test]
fn baseline_server_answers_a_fixed_body() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .args(["bench", "baseline-server", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let line = BufReader::new(stderr).lines().next().unwrap().unwrap();
    let url = line.strip_prefix("listening on ").unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let env_dir = dir.path().join("env");
    hierad(&format!("bench generate --nodes 3 {}", env_dir.display()));
    let plan = env_dir.join("bench-plan.json");
    let r = report(&format!(
        "--server {url} --plan {} -n 200 --warmup 0s",
        plan.display()
    ));
    // Without a plan the client asks the server for one: the bare
    // server's body is no environment, and the refusal says what to do.
    let err = crate::binary::refused(&format!("bench --server {url} -n 1"));
    assert!(
        err.contains("the answer is not an environment")
            && err.contains(&format!("is {url} a hierad server?"))
            && err.contains("--plan FILE"),
        "{err}"
    );
    let _ = child.kill();
    let _ = child.wait();
    check_shape(&r, 200);
    assert_eq!(r["answers"]["found"], 200);
    assert!(r["cache"].is_null(), "the baseline has no cache metrics");
}

/// `hierad bench summary`: bench/run.sh's table from saved reports (the
/// figures themselves are checked against the old Ruby script's output in
/// src/bench/summary.rs), and its one line per run.
#[test]
fn summary_prints_the_table_and_a_line_per_run() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/bench-summary/two-rounds"
    );
    let want = std::fs::read_to_string(format!("{dir}/summary.txt")).unwrap();
    assert_eq!(hierad(&format!("bench summary {dir}")), want);
    let line = hierad(&format!("bench summary --run {dir}/large-r2.json"));
    assert!(
        line.starts_with("  large ") && line.contains("errors 0"),
        "{line}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .args(["bench", "summary", env!("CARGO_MANIFEST_DIR")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no baseline-r1.json"),
        "{stderr}"
    );
}

/// `hierad bench visible` between two replicas on one PostgreSQL database
/// (bench/replicas.sh), a few writes: the figures' shape only.
#[test]
fn visible_between_two_replicas_on_postgres() {
    let db = crate::pg::fresh_database();
    let a = TestServer::start_on(std::path::Path::new(&db), &[]);
    let b = TestServer::start_on(std::path::Path::new(&db), &["--no-sample"]);
    let out = hierad(&format!(
        "bench visible --write {} --read {} -n 5 --json",
        a.url, b.url
    ));
    let figures: Value = serde_json::from_str(&out).expect("JSON figures");
    assert_eq!(figures["writes"], 5, "{figures}");
    let us = |k: &str| {
        figures[k]
            .as_u64()
            .unwrap_or_else(|| panic!("{k}: {figures}"))
    };
    assert!(us("visible_p50_us") > 0, "{figures}");
    assert!(us("visible_p50_us") <= us("visible_p99_us"), "{figures}");
    assert!(us("visible_p99_us") <= us("visible_max_us"), "{figures}");
    assert!(
        us("ack_p50_us") > 0 && us("ack_p50_us") <= us("ack_p99_us"),
        "{figures}"
    );
    // Each write is read back at least once on B.
    assert!(
        figures["reads_per_write"].as_f64().unwrap() >= 1.0,
        "{figures}"
    );
}

/// `hierad bench waiters` (bench/changes.sh's client): a few long polls
/// on a real server, woken by its write, every one answered 200. No
/// assertion on speed.
#[test]
fn waiters_are_woken_by_the_write_and_measured() {
    let server = TestServer::with_sample();
    let out = hierad(&format!(
        "bench waiters --server {} --waiters 3 --pid {} \
         --path /api/v1/config/environments/1/resources/astute/values/keys/bench_round \
         --body 1",
        server.url.trim_start_matches("http://"),
        server.pid()
    ));
    assert!(out.starts_with("3 waiters: +"), "{out}");
    assert!(out.contains("; 0 not 200;"), "{out}");
    assert!(
        out.contains("CPU from the write to the last answer: server "),
        "{out}"
    );
    // A refused write is an error naming it, not a figure.
    let err = crate::binary::refused(&format!(
        "bench waiters --server {} --waiters 1 --pid {} --path /api/v1/nowhere --body 1",
        server.url.trim_start_matches("http://"),
        server.pid()
    ));
    assert_eq!(err, "PUT /api/v1/nowhere answered 404");
}
