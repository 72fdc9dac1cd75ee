//! The server on 127.0.0.1:0: every route and error status, concurrent
//! writers, the lookup API against the local `hierad lookup` on the same
//! data, caching, in this process (tests/common/in_process.rs); versions
//! across restarts and shutdown by the real binary.

use crate::in_process::InProcess;
use crate::server::{Reply, Served, TestServer, call};
use serde_json::{Value, json};
use std::process::Command;

fn get(server: &impl Served, path: &str) -> Reply {
    call("GET", &format!("{}{path}", server.url()), None, &[])
}

fn send(server: &impl Served, method: &str, path: &str, body: &str) -> Reply {
    call(
        method,
        &format!("{}{path}", server.url()),
        Some(body),
        &[("content-type", "application/json")],
    )
}

fn lookup(server: &impl Served, request: Value) -> Reply {
    send(server, "POST", "/api/v1/lookup", &request.to_string())
}

/// An environment 5 with levels [nodes], component "app" defining a, b.
fn setup(server: &impl Served) {
    let r = send(
        server,
        "POST",
        "/api/v1/config/components",
        r#"{"name": "app", "resource_definitions": [{"name": "a"}, {"name": "override/node/n1.d"}]}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let r = send(
        server,
        "POST",
        "/api/v1/config/environments",
        r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
}

#[test]
fn health_and_metrics() {
    let server = InProcess::empty();
    let r = get(&server, "/healthz");
    assert_eq!((r.status, r.body.as_str()), (200, "ok\n"));
    get(&server, "/api/v1/config/environments");
    let r = get(&server, "/metrics");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("hierad_http_requests_total{method=\"GET\",route=\"/api/v1/config/environments\",status=\"200\"} 1"), "{}", r.body);
    assert!(
        r.body
            .contains("hierad_http_request_duration_seconds_bucket"),
        "{}",
        r.body
    );
}

#[test]
fn components_and_environments_are_listed_and_read_by_id() {
    let server = InProcess::empty();
    setup(&server);
    let r = get(&server, "/api/v1/config/components");
    assert_eq!(r.json()[0]["name"], "app");
    assert_eq!(
        r.json()[0]["resource_definitions"][1]["name"],
        "override/node/n1.d"
    );
    let id = r.json()[0]["id"].as_i64().unwrap();
    assert_eq!(
        get(&server, &format!("/api/v1/config/components/{id}")).status,
        200
    );
    assert_eq!(
        get(&server, "/api/v1/config/environments/5").json(),
        json!({"id": 5, "components": [id], "hierarchy_levels": ["nodes"]})
    );
    assert_eq!(
        get(&server, "/api/v1/config/environments/5/hierarchy_levels").json(),
        json!([{"name": "nodes", "parent": null}])
    );
}

/// The errors: duplicate (409), unknown (404), malformed (400).
#[test]
fn a_duplicate_unknown_or_malformed_creation_is_refused() {
    let server = InProcess::empty();
    setup(&server);
    let dup = send(
        &server,
        "POST",
        "/api/v1/config/components",
        r#"{"name": "app"}"#,
    );
    assert_eq!(dup.status, 409, "{}", dup.body);
    assert_eq!(dup.json()["error"], "conflict");
    let dup_env = send(
        &server,
        "POST",
        "/api/v1/config/environments",
        r#"{"id": 5, "components": [], "hierarchy_levels": []}"#,
    );
    assert_eq!(dup_env.status, 409);
    let unknown = send(
        &server,
        "POST",
        "/api/v1/config/environments",
        r#"{"components": ["nope"], "hierarchy_levels": []}"#,
    );
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert!(unknown.json()["message"].as_str().unwrap().contains("nope"));
    assert_eq!(
        send(&server, "POST", "/api/v1/config/components", "{").status,
        400
    );
    assert_eq!(
        send(
            &server,
            "POST",
            "/api/v1/config/components",
            r#"{"nom": "x"}"#
        )
        .status,
        400
    );
    assert_eq!(get(&server, "/api/v1/config/environments/99").status, 404);
    assert_eq!(get(&server, "/api/v1/config/components/99").status, 404);
}

/// A component in use (409) is deleted once its environment is purged.
#[test]
fn a_component_in_use_is_deleted_only_after_its_environment() {
    let server = InProcess::empty();
    setup(&server);
    let id = get(&server, "/api/v1/config/components").json()[0]["id"]
        .as_i64()
        .unwrap();
    assert_eq!(
        call(
            "DELETE",
            &format!("{}/api/v1/config/components/{id}", server.url),
            None,
            &[]
        )
        .status,
        409
    );
    assert_eq!(
        call(
            "DELETE",
            &format!("{}/api/v1/config/environments/5?purge=true", server.url),
            None,
            &[]
        )
        .status,
        204
    );
    assert_eq!(
        call(
            "DELETE",
            &format!("{}/api/v1/config/components/{id}", server.url),
            None,
            &[]
        )
        .status,
        204
    );
    assert_eq!(get(&server, "/api/v1/config/environments/5").status, 404);
}

fn delete(server: &impl Served, path: &str) -> Reply {
    call("DELETE", &format!("{}{path}", server.url()), None, &[])
}

/// Once, `DELETE /environments/N` destroyed every version.
/// Environment 5 of [`setup`] with two versions of a document at
/// nodes=n1: its path, and a lookup that answers its value, 2.
fn two_versions_at_n1(server: &impl Served) -> (&'static str, Value) {
    setup(server);
    let doc = "/api/v1/config/environments/5/nodes/n1/resources/a/values";
    assert_eq!(send(server, "PUT", doc, r#"{"k": 1}"#).status, 204);
    assert_eq!(send(server, "PUT", doc, r#"{"k": 2}"#).status, 204);
    let ask = json!({"environment": 5, "level": "nodes=n1", "key": "k", "hierarchy": ["a"]});
    assert_eq!(lookup(server, ask.clone()).json()["value"], 2);

    (doc, ask)
}

/// Deleted: gone from lists, GETs and lookups, as an unknown environment
/// is, listed as deleted, and its id not reused.
#[test]
fn a_deleted_environment_is_gone_and_its_id_not_reused() {
    let server = InProcess::empty();
    let (doc, ask) = two_versions_at_n1(&server);
    assert_eq!(delete(&server, "/api/v1/config/environments/5").status, 204);
    assert_eq!(
        get(&server, "/api/v1/config/environments").json(),
        json!([])
    );
    for r in [
        get(&server, "/api/v1/config/environments/5"),
        get(&server, doc),
        get(&server, &format!("{doc}/history")),
        lookup(&server, ask.clone()),
        send(&server, "PUT", doc, r#"{"k": 3}"#),
        delete(&server, "/api/v1/config/environments/5"),
    ] {
        assert_eq!(r.status, 404, "{}", r.body);
        assert!(r.body.contains("environment 5"), "{}", r.body);
    }
    let deleted = get(&server, "/api/v1/config/environments?deleted=true").json();
    assert_eq!(deleted[0]["id"], 5);
    assert!(deleted[0]["deleted_at"].as_i64().unwrap() > 1_600_000_000);
    // Its id is not reused: 409 saying how to restore or purge it.
    let again = send(
        &server,
        "POST",
        "/api/v1/config/environments",
        r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#,
    );
    assert_eq!(again.status, 409, "{}", again.body);
    let message = again.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("environments/5/restore") && message.contains("?purge=true"),
        "{message}"
    );
}

/// Restore: documents, history and lookups are back; once.
#[test]
fn a_deleted_environment_is_restored_whole() {
    let server = InProcess::empty();
    let (doc, ask) = two_versions_at_n1(&server);
    assert_eq!(delete(&server, "/api/v1/config/environments/5").status, 204);
    let r = send(&server, "POST", "/api/v1/config/environments/5/restore", "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["id"], 5);
    assert_eq!(get(&server, doc).json(), json!({"k": 2}));
    assert_eq!(
        get(&server, &format!("{doc}?version=1")).json(),
        json!({"k": 1})
    );
    assert_eq!(lookup(&server, ask.clone()).json()["value"], 2);
    let r = send(&server, "POST", "/api/v1/config/environments/5/restore", "");
    assert_eq!(r.status, 409, "{}", r.body);
}

/// Purge removes it for good, and only when asked plainly; then the id
/// is free.
#[test]
fn purging_is_explicit_and_frees_the_id() {
    let server = InProcess::empty();
    let (doc, _) = two_versions_at_n1(&server);
    assert_eq!(
        delete(&server, "/api/v1/config/environments/5?purge=maybe").status,
        400
    );
    assert_eq!(
        delete(&server, "/api/v1/config/environments/5?purge=true").status,
        204
    );
    assert_eq!(
        get(&server, "/api/v1/config/environments?deleted=true").json(),
        json!([])
    );
    let r = send(&server, "POST", "/api/v1/config/environments/5/restore", "");
    assert_eq!(r.status, 404, "{}", r.body);
    let r = send(
        &server,
        "POST",
        "/api/v1/config/environments",
        r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"], "retention": {"keep_versions": 2}}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(get(&server, &format!("{doc}/history")).json(), json!([]));
}

// Retention per environment and by default, pruned in the background,
// measured in /metrics.

/// A server pruning every second to 4 versions by default, with
/// environment 5 of [`setup`].
fn pruning() -> (tempfile::TempDir, InProcess) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    let server = InProcess::start_on(
        &db,
        &["--no-sample", "--keep-versions", "4", "--prune-every", "1s"],
    );
    setup(&server);
    (dir, server)
}

#[test]
fn retention_is_set_per_environment_and_a_bad_one_is_refused() {
    let (_dir, server) = pruning();
    let retention = "/api/v1/config/environments/5/retention";
    assert_eq!(
        get(&server, retention).json(),
        json!({"keep_versions": null, "keep_days": null, "effective": {"keep_versions": 4, "keep_days": 0}})
    );
    for (body, status) in [
        (r#"{"keep_versions": -1}"#, 400),
        (r#"{"keep_versions": "many"}"#, 400),
        (r#"{"keep_weeks": 1}"#, 400),
        (r#"{"keep_versions": 2, "keep_days": 0}"#, 200),
    ] {
        let r = send(&server, "PUT", retention, body);
        assert_eq!(r.status, status, "{body}: {}", r.body);
    }
    assert_eq!(
        get(&server, retention).json()["effective"],
        json!({"keep_versions": 2, "keep_days": 0})
    );
    assert_eq!(
        get(&server, "/api/v1/config/environments/9/retention").status,
        404
    );
}

#[test]
fn old_versions_are_pruned_counted_and_the_size_is_measured() {
    let (_dir, server) = pruning();
    let retention = "/api/v1/config/environments/5/retention";
    let r = send(
        &server,
        "PUT",
        retention,
        r#"{"keep_versions": 2, "keep_days": 0}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let doc = "/api/v1/config/environments/5/nodes/n1/resources/a/values";
    for i in 1..=10 {
        assert_eq!(
            send(&server, "PUT", doc, &format!(r#"{{"k": {i}}}"#)).status,
            204
        );
    }
    // Pruning runs every second: wait for it, boundedly.
    let mut history = Value::Null;
    for _ in 0..200 {
        history = get(&server, &format!("{doc}/history")).json();
        if history.as_array().unwrap().len() == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let kept: Vec<i64> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(kept, [9, 10]);
    assert_eq!(
        get(&server, &format!("{doc}?version=9")).json(),
        json!({"k": 9})
    );
    // A pruned version answers as one that never existed.
    let pruned = get(&server, &format!("{doc}?version=3"));
    let never = get(&server, &format!("{doc}?version=30"));
    assert_eq!((pruned.status, never.status), (404, 404));
    assert_eq!(
        pruned.json()["message"]
            .as_str()
            .unwrap()
            .replace("version 3 ", "version N "),
        never.json()["message"]
            .as_str()
            .unwrap()
            .replace("version 30 ", "version N ")
    );
    let r = send(&server, "POST", &format!("{doc}/restore?version=3"), "");
    assert_eq!(r.status, 404, "{}", r.body);
    let metrics = get(&server, "/metrics").body;
    assert!(
        metrics.contains("hierad_versions_pruned_total 8"),
        "{metrics}"
    );
    let bytes: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("hierad_database_bytes "))
        .unwrap_or_else(|| panic!("{metrics}"))
        .parse()
        .unwrap();
    assert!(bytes >= 4096, "{bytes}");
}

/// Environment 5 of [`setup`] with resource "a" written at its root.
fn resource_a_at_the_root(server: &impl Served) -> &'static str {
    setup(server);
    let root = "/api/v1/config/environments/5/resources/a";
    assert_eq!(
        send(
            server,
            "PUT",
            &format!("{root}/values"),
            r#"{"k": {"x": 1, "y": 2}, "l": [1, 2], "f": 1.0}"#
        )
        .status,
        204
    );
    root
}

/// Stored vs effective at a node: a deep fold (k merged, l replaced,
/// null kept), read whole or one key at a time.
#[test]
fn a_nodes_effective_document_folds_its_levels_deeply() {
    let server = InProcess::empty();
    resource_a_at_the_root(&server);
    let node = "/api/v1/config/environments/5/nodes/n1/resources/a";
    assert_eq!(
        send(
            &server,
            "PUT",
            &format!("{node}/values"),
            r#"{"k": {"x": 10}, "l": [3]}"#
        )
        .status,
        204
    );
    assert_eq!(
        send(
            &server,
            "PUT",
            &format!("{node}/override"),
            r#"{"k": {"z": null}}"#
        )
        .status,
        204
    );
    assert_eq!(
        get(&server, &format!("{node}/values")).json(),
        json!({"k": {"x": 10}, "l": [3]})
    );
    assert_eq!(
        get(&server, &format!("{node}/values?effective")).body,
        r#"{"k":{"x":10,"y":2,"z":null},"l":[3],"f":1.0}"#
    );
    assert_eq!(
        get(&server, &format!("{node}/values?effective&key=k.y")).body,
        "2"
    );
    assert_eq!(
        get(&server, &format!("{node}/values?effective&key=l.0")).body,
        "3"
    );
    assert_eq!(
        get(&server, &format!("{node}/values?effective&key=k.nope")).status,
        404
    );
    assert_eq!(
        get(&server, &format!("{node}/overrides")).json(),
        json!({"k": {"z": null}})
    );
}

#[test]
fn percent_encoded_slashes_name_the_same_resource() {
    let server = InProcess::empty();
    setup(&server);
    assert_eq!(
        send(
            &server,
            "PUT",
            "/api/v1/config/environments/5/resources/override%2Fnode%2Fn1.d/values",
            r#"{"n": 1}"#
        )
        .status,
        204
    );
    assert_eq!(
        get(
            &server,
            "/api/v1/config/environments/5/resources/override/node/n1.d/values"
        )
        .json(),
        json!({"n": 1})
    );
}

/// One key at a time, siblings kept; versions: history, old version,
/// restore as a new write, delete marker.
#[test]
fn a_key_write_keeps_its_siblings_and_versions_restore_and_delete() {
    let server = InProcess::empty();
    let root = resource_a_at_the_root(&server);
    assert_eq!(
        send(&server, "PUT", &format!("{root}/values/keys/k.w"), "5").status,
        204
    );
    assert_eq!(
        get(&server, &format!("{root}/values/keys/k")).json(),
        json!({"x": 1, "y": 2, "w": 5})
    );
    // Versions: history, old version, restore as a new write, delete marker.
    let history = get(&server, &format!("{root}/values/history")).json();
    assert_eq!(history.as_array().unwrap().len(), 2);
    assert_eq!(history[0]["version"], 1);
    assert_eq!(
        get(&server, &format!("{root}/values?version=1")).json(),
        json!({"k": {"x": 1, "y": 2}, "l": [1, 2], "f": 1.0})
    );
    let restored = send(
        &server,
        "POST",
        &format!("{root}/values/restore?version=1"),
        "",
    );
    assert_eq!(restored.status, 201, "{}", restored.body);
    assert_eq!(restored.json()["version"], 3);
    assert_eq!(
        get(&server, &format!("{root}/values/keys/k")).json(),
        json!({"x": 1, "y": 2})
    );
    assert_eq!(
        call("DELETE", &format!("{}{root}/values", server.url), None, &[]).status,
        204
    );
    assert_eq!(get(&server, &format!("{root}/values")).json(), json!({}));
    assert_eq!(
        get(&server, &format!("{root}/values/history"))
            .json()
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn a_yaml_body_is_read_as_yaml() {
    let server = InProcess::empty();
    setup(&server);
    let root = "/api/v1/config/environments/5/resources/a";
    let r = call(
        "PUT",
        &format!("{}{root}/values", server.url),
        Some("k: yes\n"),
        &[("content-type", "application/yaml")],
    );
    assert_eq!(r.status, 204);
    assert_eq!(
        get(&server, &format!("{root}/values")).json(),
        json!({"k": true})
    );
}

#[test]
fn document_errors_change_nothing() {
    let server = InProcess::empty();
    setup(&server);
    let root = "/api/v1/config/environments/5/resources/a/values";
    assert_eq!(send(&server, "PUT", root, r#"{"keep": 1}"#).status, 204);
    let cases: &[(&str, &str, &str, u16)] = &[
        ("PUT", root, "{", 400),
        ("PUT", root, "[1, 2]", 400),
        ("PUT", root, "42", 400),
        (
            "PUT",
            "/api/v1/config/environments/5/resources/nope/values",
            "{}",
            404,
        ),
        (
            "PUT",
            "/api/v1/config/environments/6/resources/a/values",
            "{}",
            404,
        ),
        (
            "PUT",
            "/api/v1/config/environments/5/racks/r1/resources/a/values",
            "{}",
            404,
        ),
        (
            "PUT",
            "/api/v1/config/environments/5/resources/a/values/keys/a..b",
            "1",
            400,
        ),
        (
            "GET",
            "/api/v1/config/environments/5/resources/a/values?version=9",
            "",
            404,
        ),
        (
            "GET",
            "/api/v1/config/environments/5/resources/a/values?version=x",
            "",
            400,
        ),
        (
            "GET",
            "/api/v1/config/environments/5/resources/a/nothing",
            "",
            404,
        ),
        (
            "POST",
            "/api/v1/config/environments/5/resources/a/values/restore?version=9",
            "",
            404,
        ),
    ];
    for (method, path, body, status) in cases {
        let r = send(&server, method, path, body);
        assert_eq!(r.status, *status, "{method} {path} {body}: {}", r.body);
        assert!(
            r.json()["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{}",
            r.body
        );
    }
    let big = format!(r#"{{"x": "{}"}}"#, "y".repeat(17 * 1024 * 1024));
    let r = send(&server, "PUT", root, &big);
    assert_eq!(r.status, 413, "{}", &r.body[..r.body.len().min(200)]);
    assert_eq!(get(&server, root).json(), json!({"keep": 1}));
    assert_eq!(
        get(&server, &format!("{root}/history"))
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn data_and_versions_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut server = TestServer::start_on(&db, &["--no-sample"]);
    setup(&server);
    let root = "/api/v1/config/environments/5/resources/a/values";
    send(&server, "PUT", root, r#"{"v": 1}"#);
    send(&server, "PUT", root, r#"{"v": 2}"#);
    assert!(server.stop().success());
    let server = TestServer::start_on(&db, &["--no-sample"]);
    assert_eq!(get(&server, root).json(), json!({"v": 2}));
    assert_eq!(
        get(&server, &format!("{root}?version=1")).json(),
        json!({"v": 1})
    );
    let r = lookup(
        &server,
        json!({"environment": 5, "key": "v", "hierarchy": ["a"]}),
    );
    assert_eq!(r.json(), json!({"found": true, "value": 2}));
}

#[test]
fn concurrent_writers_lose_nothing() {
    let server = InProcess::empty();
    setup(&server);
    std::thread::scope(|s| {
        for t in 0..4 {
            let server = &server;
            s.spawn(move || {
                for i in 0..25 {
                    let r = send(
                        server,
                        "PUT",
                        &format!("/api/v1/config/environments/5/resources/a/values/keys/t{t}"),
                        &i.to_string(),
                    );
                    assert_eq!(r.status, 204, "{}", r.body);
                }
            });
        }
    });
    let doc = get(&server, "/api/v1/config/environments/5/resources/a/values").json();
    assert_eq!(
        doc,
        json!({"t0": 24, "t1": 24, "t2": 24, "t3": 24})
            .as_object()
            .map(|_| doc.clone())
            .unwrap()
    );
    for t in 0..4 {
        assert_eq!(doc[format!("t{t}")], 24, "{doc}");
    }
    let history = get(
        &server,
        "/api/v1/config/environments/5/resources/a/values/history",
    )
    .json();
    assert_eq!(history.as_array().unwrap().len(), 100);
}

/// The local `hierad lookup` over data/, in JSON, for comparison.
fn local_lookup(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .args(["lookup", "-c", "data/hiera.yaml", "-f", "json"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn lookups_answer_like_hiera_over_the_sample() {
    let server = InProcess::with_sample();
    let scope = json!({"::fqdn": "node-126.test.domain.local"});
    for (resolution, key, flag) in [
        ("priority", "keystone_auth_uri", None),
        ("priority", "nova_db_password", None),
        ("hash", "nova", Some("-h")),
        ("array", "dns_nameservers", Some("-a")),
        ("hash", "configuration", Some("-h")),
        ("priority", "network_scheme", None),
    ] {
        let r = lookup(
            &server,
            json!({"environment": 1, "key": key, "resolution": resolution, "scope": scope}),
        );
        assert_eq!(r.status, 200, "{key}: {}", r.body);
        assert_eq!(r.json()["found"], true, "{key}");
        let mut args = vec![key, "::fqdn=node-126.test.domain.local"];
        args.extend(flag);
        let local: Value = serde_json::from_str(&local_lookup(&args)).unwrap();
        assert_eq!(r.json()["value"], local, "{resolution} {key}");
    }
}

/// Found null, false, missing, default: all distinct; Hiera's errors
/// carry Hiera's class.
#[test]
fn misses_defaults_and_hiera_errors_answer_distinctly() {
    let server = InProcess::with_sample();
    let r = lookup(&server, json!({"environment": 1, "key": "no_such_key"}));
    assert_eq!(r.json(), json!({"found": false}));
    let r = lookup(
        &server,
        json!({"environment": 1, "key": "no_such_key", "default": "d"}),
    );
    assert_eq!(
        r.json(),
        json!({"found": false, "default": true, "value": "d"})
    );
    let r = lookup(
        &server,
        json!({"environment": 1, "key": "nova", "resolution": "array"}),
    );
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["class"], "Exception");
    assert_eq!(
        r.json()["message"],
        "Hiera type mismatch for key 'nova': expected Array and got Hash"
    );
}

/// Many keys in one request; explain names the levels.
#[test]
fn many_keys_answer_in_one_request_and_explain_names_the_levels() {
    let server = InProcess::with_sample();
    let r = lookup(
        &server,
        json!({"environment": 1, "keys": ["uid", "nope", "nova.db_password"]}),
    );
    assert_eq!(
        r.json()["answers"][0],
        json!({"key": "uid", "found": true, "value": "126"})
    );
    assert_eq!(
        r.json()["answers"][1],
        json!({"key": "nope", "found": false})
    );
    let r = lookup(
        &server,
        json!({"environment": 1, "key": "uid", "explain": true}),
    );
    let steps = r.json()["explain"].as_array().unwrap().clone();
    assert!(
        steps
            .iter()
            .any(|s| s["source"] == "astute" && s["outcome"] == "found"),
        "{steps:?}"
    );
}

#[test]
fn a_bad_lookup_request_is_refused() {
    let server = InProcess::with_sample();
    for bad in [
        json!({"key": "x"}),
        json!({"environment": 1}),
        json!({"environment": 1, "key": "x", "bogus": 1}),
        json!({"environment": 1, "key": "x", "level": "racks=1"}),
    ] {
        let r = lookup(&server, bad.clone());
        assert!(
            r.status == 400 || r.status == 404,
            "{bad}: {} {}",
            r.status,
            r.body
        );
    }
    assert_eq!(
        lookup(&server, json!({"environment": 9, "key": "x"})).status,
        404
    );
}

#[test]
fn answers_are_cached_until_a_write() {
    let server = InProcess::empty();
    setup(&server);
    send(
        &server,
        "PUT",
        "/api/v1/config/environments/5/resources/a/values",
        r#"{"k": "one"}"#,
    );
    let request = json!({"environment": 5, "key": "k", "hierarchy": ["a"]});
    // Admitted on the second miss: the first answer of a one-off request
    // is not worth its memory.
    for _ in 0..2 {
        let miss = lookup(&server, request.clone());
        assert_eq!(miss.x_cache.as_deref(), Some("MISS"));
        assert_eq!(miss.json(), json!({"found": true, "value": "one"}));
    }
    let hit = lookup(&server, request.clone());
    assert_eq!(hit.x_cache.as_deref(), Some("HIT"));
    assert_eq!(hit.json(), json!({"found": true, "value": "one"}));
    send(
        &server,
        "PUT",
        "/api/v1/config/environments/5/resources/a/values",
        r#"{"k": "two"}"#,
    );
    let after_write = lookup(&server, request);
    assert_eq!(after_write.x_cache.as_deref(), Some("MISS"));
    assert_eq!(after_write.json(), json!({"found": true, "value": "two"}));
    // Found null, false and not found stay distinct on the wire.
    send(
        &server,
        "PUT",
        "/api/v1/config/environments/5/resources/a/values",
        r#"{"n": null, "f": false}"#,
    );
    for (key, want) in [
        ("n", json!({"found": true, "value": null})),
        ("f", json!({"found": true, "value": false})),
        ("k", json!({"found": false})),
    ] {
        let r = lookup(
            &server,
            json!({"environment": 5, "key": key, "hierarchy": ["a"]}),
        );
        assert_eq!(r.json(), want, "{key}");
    }
    let metrics = get(&server, "/metrics").body;
    assert!(
        metrics.contains("hierad_lookup_cache_total{result=\"hit\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("hierad_lookup_cache_total{result=\"miss\"} 6"),
        "{metrics}"
    );
}

/// `X-Hierad-Tagged` says whether an answer holds tagged values (the shim
/// skips its search of the text), on a miss and on a cached hit alike.
#[test]
fn lookup_answers_say_whether_they_hold_tagged_values() {
    let server = InProcess::empty();
    setup(&server);
    let symbol_key = r#"{"__hierad__":"hash","pairs":[[{"__hierad__":"sym","name":"s"},1]]}"#;
    let put = send(
        &server,
        "PUT",
        "/api/v1/config/environments/5/resources/a/values",
        &format!(r#"{{"plain": {{"text": "x\"__hierad__\"y"}}, "symbol_key": {symbol_key}}}"#),
    );
    assert!(put.status < 300, "{}", put.body);
    for (key, tagged, body) in [
        (
            "plain",
            "false",
            r#"{"found":true,"value":{"text":"x\"__hierad__\"y"}}"#.to_owned(),
        ),
        (
            "symbol_key",
            "true",
            format!(r#"{{"found":true,"value":{symbol_key}}}"#),
        ),
        ("missing", "false", r#"{"found":false}"#.to_owned()),
    ] {
        let request = json!({"environment": 5, "key": key, "hierarchy": ["a"]}).to_string();
        // A miss, a miss that is cached, then a hit.
        for _ in 0..3 {
            let answer = crate::server::one_shot(&server.url, "POST", "/api/v1/lookup", &request)
                .expect("an answer");
            assert_eq!(answer.body, body, "{key}");
            let header = answer.head.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("x-hierad-tagged")
                    .then(|| value.trim().to_owned())
            });
            assert_eq!(header.as_deref(), Some(tagged), "{key}: {}", answer.head);
        }
    }
}

/// An environment's `hiera` resource (Symbol keys, in the wire form).
fn hiera_config(levels: &[&str]) -> String {
    json!({"__hierad__": "hash", "pairs": [
        [{"__hierad__": "sym", "name": "hierarchy"}, levels],
        [{"__hierad__": "sym", "name": "merge_behavior"}, "deeper"],
    ]})
    .to_string()
}

#[test]
fn the_hiera_resource_applies_from_the_next_write() {
    let server = InProcess::empty();
    let r = send(
        &server,
        "POST",
        "/api/v1/config/components",
        r#"{"name": "h", "resource_definitions": [{"name": "hiera"}, {"name": "a"}, {"name": "b"}]}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let r = send(
        &server,
        "POST",
        "/api/v1/config/environments",
        r#"{"id": 6, "components": ["h"], "hierarchy_levels": []}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let root = "/api/v1/config/environments/6/resources";
    for (resource, body) in [
        ("a", r#"{"k": "a", "n": {"x": {"p": 1}}}"#),
        ("b", r#"{"k": "b", "n": {"x": {"q": 2}}}"#),
        ("hiera", &hiera_config(&["a", "b"])),
    ] {
        let r = send(&server, "PUT", &format!("{root}/{resource}/values"), body);
        assert_eq!(r.status, 204, "{}", r.body);
    }
    let value = |request: Value| lookup(&server, request).json()["value"].clone();
    let deep = json!({"x": {"p": 1, "q": 2}});
    for _ in 0..2 {
        assert_eq!(value(json!({"environment": 6, "key": "k"})), "a");
        assert_eq!(
            value(json!({"environment": 6, "key": "k", "hierarchy": ["b", "a"]})),
            "b"
        );
        assert_eq!(
            value(json!({"environment": 6, "key": "n", "resolution": "hash"})),
            deep
        );
        assert_eq!(
            value(json!({"environment": 6, "key": "n", "resolution": "hash",
                         "hierarchy": ["b", "a"], "merge_behavior": "native"})),
            json!({"x": {"q": 2}})
        );
    }
    let r = send(
        &server,
        "PUT",
        &format!("{root}/hiera/values"),
        &hiera_config(&["b", "a"]),
    );
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(value(json!({"environment": 6, "key": "k"})), "b");
    assert_eq!(
        value(json!({"environment": 6, "key": "k", "hierarchy": ["a"]})),
        "a"
    );
}

#[test]
fn whole_datasources_with_etags_and_scope_variables() {
    let server = InProcess::with_sample();
    let r = get(&server, "/api/v1/data/1/override/plugins");
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["plugins"][0]["name"], "contrail");
    let etag = r.etag.clone().expect("an ETag");
    let again = call(
        "GET",
        &format!("{}/api/v1/data/1/override/plugins", server.url),
        None,
        &[("if-none-match", &etag)],
    );
    assert_eq!(again.status, 304);
    // Both answers name the ETag and the generation.
    assert_eq!(again.etag.as_deref(), Some(etag.as_str()));
    assert!(r.generation.is_some() && again.generation.is_some());
    assert_eq!(get(&server, "/api/v1/data/1/nope").status, 404);
    let vars = get(&server, "/api/v1/environments/1/scope").json();
    let vars: Vec<&str> = vars["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for expected in [
        "::fqdn",
        "calling_class",
        "calling_module",
        "disable_globals_yaml",
    ] {
        assert!(vars.contains(&expected), "{vars:?}");
    }
}

/// The config route's whole latest effective document is the data
/// route's bytes under the same ETag, revalidated the same way; its other
/// reads (stored, one key) offer no revalidation.
#[test]
fn the_effective_document_is_revalidated_with_its_etag() {
    let server = InProcess::with_sample();
    let effective = "/api/v1/config/environments/1/resources/override/plugins/values?effective";
    let first = get(&server, effective);
    assert_eq!(first.status, 200, "{}", first.body);
    let etag = first.etag.clone().expect("an ETag");
    let data = get(&server, "/api/v1/data/1/override/plugins");
    assert_eq!(
        (data.etag.as_deref(), &data.body),
        (Some(etag.as_str()), &first.body)
    );
    let with = |held: &str| {
        call(
            "GET",
            &format!("{}{effective}", server.url),
            None,
            &[("if-none-match", held)],
        )
    };
    let held = [
        etag.clone(),
        "*".to_owned(),
        format!("\"other\", {etag}"),
        // Weak comparison, as `If-None-Match` takes: a proxy that
        // compresses passes the ETag on as weak.
        format!("W/{etag}"),
    ];
    for held in held {
        let again = with(&held);
        assert_eq!((again.status, again.body.as_str()), (304, ""), "{held}");
        assert_eq!(again.etag.as_deref(), Some(etag.as_str()), "{held}");
    }
    for stale in ["\"other\"", "W/\"other\"", "", "W/"] {
        assert_eq!(with(stale).status, 200, "{stale}");
    }
    for other in [
        "/api/v1/config/environments/1/resources/override/plugins/values",
        "/api/v1/config/environments/1/resources/override/plugins/values?effective&key=plugins",
    ] {
        let r = get(&server, other);
        assert_eq!((r.status, r.etag.as_deref()), (200, None), "{other}");
    }
    // A write makes new bytes: the old ETag no longer matches.
    let r = send(
        &server,
        "PUT",
        "/api/v1/config/environments/1/resources/override/plugins/values",
        r#"{"plugins": []}"#,
    );
    assert_eq!(r.status, 204, "{}", r.body);
    let changed = with(&etag);
    assert_eq!(changed.status, 200, "{}", changed.body);
    assert_eq!(changed.json()["plugins"], json!([]));
    let new = changed.etag.expect("an ETag");
    assert_ne!(new, etag);
    assert_eq!(with(&new).status, 304);
}

#[test]
fn sigterm_stops_gracefully() {
    let mut server = TestServer::empty();
    assert_eq!(get(&server, "/healthz").status, 200);
    assert!(server.stop().success());
}

/// A query that does not decode, or names a parameter twice, is refused
/// before anything is done: `?key=%zz` looked for a key `%zz`, and
/// `?version=1&version=2` restored version 2.
#[test]
fn queries_that_do_not_decode_or_repeat_a_parameter_are_refused() {
    let server = InProcess::empty();
    setup(&server);
    let values = "/api/v1/config/environments/5/resources/a/values";
    for version in 1..=2 {
        let put = send(&server, "PUT", values, &format!(r#"{{"v": {version}}}"#));
        assert!(put.status < 300, "{}", put.body);
    }
    let r = get(&server, &format!("{values}?key=%zz"));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("is not a percent-escape"), "{}", r.body);
    let r = send(
        &server,
        "POST",
        &format!("{values}/restore?version=1&version=2"),
        "",
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body.contains("\\\"version\\\" is given twice"),
        "{}",
        r.body
    );
    // Nothing was restored: still version 2's content.
    let r = get(&server, values);
    assert_eq!((r.status, r.body.as_str()), (200, r#"{"v":2}"#));
}
