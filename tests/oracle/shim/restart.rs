//! The hierarchy sent by reference across a server restart: a Ruby process
//! whose hierad backend registered its hierarchy meets, at its next lookup,
//! a restarted server that does not hold the id (409); it registers again,
//! sends the lookup again, and answers as before.

use super::oracle::{shim_lib, support};
use crate::server::{TestServer, call};
use serde_json::{Value as Json, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Stdio};

const HIERARCHY: [&str; 7] = [
    "override/node/%{::fqdn}",
    "override/plugins",
    "override/configuration/%{::fqdn}",
    "override/configuration/role",
    "override/configuration/cluster",
    "globals%{disable_globals_yaml}",
    "astute",
];

const KEYS: [&str; 2] = ["deployment_id", "nova"];

/// Sends each key to the Ruby process and reads its answers.
fn look_up(
    stdin: &mut ChildStdin,
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
) -> Vec<Json> {
    KEYS.iter()
        .map(|key| {
            writeln!(stdin, "{key}").unwrap();
            let line = lines.next().expect("the Ruby process ended early").unwrap();
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
        })
        .collect()
}

/// The number of requests `server` answered on `route` so far.
fn requests(server: &TestServer, route: &str) -> u64 {
    let metrics = call("GET", &format!("{}/metrics", server.url), None, &[]).body;
    let prefix = format!("hierad_http_requests_total{{method=\"POST\",route=\"{route}\",");
    metrics
        .lines()
        .filter(|l| l.starts_with(&prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[test]
fn a_hiera_process_answers_across_a_server_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let mut server = TestServer::start_at(&listen, &db, &[]);
    let levels: String = HIERARCHY.iter().map(|l| format!("\n  - \"{l}\"")).collect();
    let config = dir.path().join("hiera.yaml");
    std::fs::write(
        &config,
        format!(
            "---\n:backends:\n  - hierad\n:hierarchy:{levels}\n:merge_behavior: deeper\n:logger: noop\n:hierad:\n  :url: {}\n  :environment: 1\n  :level: \"nodes=%{{::fqdn}}\"\n",
            server.url
        ),
    )
    .unwrap();
    let scope = json!({"::fqdn": "node-1.domain.tld"});
    let mut ruby = crate::tools::command("ruby")
        .arg(support("shim_steps.rb"))
        .arg(&config)
        .arg(scope.to_string())
        .env("RUBYLIB", shim_lib())
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start ruby");
    let mut stdin = ruby.stdin.take().unwrap();
    let mut lines = BufReader::new(ruby.stdout.take().unwrap()).lines();

    let before = look_up(&mut stdin, &mut lines);
    assert_eq!(requests(&server, "/api/v1/hierarchies"), 1);
    assert_eq!(requests(&server, "/api/v1/lookup"), 2);
    assert!(server.stop().success());
    let restarted = TestServer::start_at(&listen, &db, &[]);
    let after = look_up(&mut stdin, &mut lines);
    drop(stdin);
    assert!(ruby.wait().unwrap().success());

    // The first lookup met the 409, registered again and was sent again.
    assert_eq!(requests(&restarted, "/api/v1/hierarchies"), 1);
    assert_eq!(requests(&restarted, "/api/v1/lookup"), 3);
    assert_eq!(before, after);
    // And right: what the server answers the same lookups inline.
    for (key, answer) in KEYS.iter().zip(&after) {
        let inline = call(
            "POST",
            &format!("{}/api/v1/lookup", restarted.url),
            Some(
                &json!({"environment": 1, "level": "nodes=node-1.domain.tld", "key": key,
                        "hierarchy": HIERARCHY, "merge_behavior": "deeper", "scope": scope})
                .to_string(),
            ),
            &[("content-type", "application/json")],
        );
        assert_eq!(inline.status, 200, "{key}: {}", inline.body);
        assert_eq!(inline.json()["found"], true, "{key}");
        assert_eq!(
            Some(&inline.json()["value"]),
            answer.get("value"),
            "{key}: {answer}"
        );
    }
}
