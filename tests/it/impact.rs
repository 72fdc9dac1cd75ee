//! `nodes/changed` and `?dry_run=true`, checked by brute force: every
//! registered node's effective documents and Hiera answers are read
//! with plain reads before and after each change (before: at a tag made
//! just before it), over generated environments with several levels'
//! values, registers and overrides that cancel a change, and compared
//! with what both routes answered.

use super::generations::{ROOT_A, call, call_full, generation, ok_json, put, setup, state};
use axum::http::StatusCode;
use hierad::server::AppState;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

const NODES: [&str; 5] = ["n1", "n2", "n3", "n4", "n5"];
const RESOURCES: [&str; 2] = ["a", "common"];
const KEYS: &str = "k0,k1,k2";

fn doc_url(node: Option<&str>, resource: &str, kind: &str) -> String {
    let level = node.map(|n| format!("nodes/{n}/")).unwrap_or_default();
    format!("/api/v1/config/environments/5/{level}resources/{resource}/{kind}")
}

/// Every node's effective document of every resource (at `pin`, a
/// query such as `tag=x`, or now).
async fn effective_all(state: &AppState, pin: Option<&str>) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for node in NODES {
        for resource in RESOURCES {
            let pin = pin.map(|p| format!("&{p}")).unwrap_or_default();
            let url = format!("{}?effective{pin}", doc_url(Some(node), resource, "values"));
            out.insert(
                (node.to_owned(), resource.to_owned()),
                ok_json(state, "GET", &url, "").await,
            );
        }
    }
    out
}

/// Every node's answer to each of [`KEYS`] (at `pin`, a lookup field).
async fn answers_all(
    state: &AppState,
    pin: Option<(&str, Value)>,
) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for node in NODES {
        for key in KEYS.split(',') {
            let mut body = json!({"environment": 5, "level": format!("nodes={node}"), "key": key});
            if let Some((field, value)) = &pin {
                body[*field] = value.clone();
            }
            let answer = ok_json(state, "POST", "/api/v1/lookup", &body.to_string()).await;
            // Found (a nil value too) or not: a change either way.
            out.insert(
                (node.to_owned(), key.to_owned()),
                json!([answer["found"], answer["value"]]),
            );
        }
    }
    out
}

/// The key paths whose values differ between `a` and `b`: descending
/// into objects on both sides, anything else one path.
fn leaf_diff(a: Option<&Value>, b: Option<&Value>, path: &str, out: &mut BTreeSet<String>) {
    if a == b {
        return;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let sub = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaf_diff(x.get(k), y.get(k), &sub, out);
            }
        }
        _ => {
            out.insert(path.to_owned());
        }
    }
}

fn at_path<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// By node: the (resource, path) pairs that changed, from plain reads.
type Changed = BTreeMap<String, BTreeSet<(String, String)>>;

fn brute(
    before: &BTreeMap<(String, String), Value>,
    after: &BTreeMap<(String, String), Value>,
) -> Changed {
    let mut out = Changed::new();
    for ((node, resource), old) in before {
        let mut paths = BTreeSet::new();
        leaf_diff(
            Some(old),
            after.get(&(node.clone(), resource.clone())),
            "",
            &mut paths,
        );
        for path in paths {
            out.entry(node.clone())
                .or_default()
                .insert((resource.clone(), path));
        }
    }
    out
}

/// What a dry-run answered, checking each old and new value against the
/// plain reads.
fn from_dry_run(
    answer: &Value,
    before: &BTreeMap<(String, String), Value>,
    after: &BTreeMap<(String, String), Value>,
) -> Changed {
    assert_eq!(answer["dry_run"], json!(true), "{answer}");
    let mut out = Changed::new();
    for node in answer["nodes"].as_array().unwrap() {
        let name = node["node"].as_str().unwrap().to_owned();
        assert_eq!(node["level"], json!(format!("nodes/{name}")));
        for c in node["changes"].as_array().unwrap() {
            let (resource, path) = (c["resource"].as_str().unwrap(), c["path"].as_str().unwrap());
            let key = (name.clone(), resource.to_owned());
            assert_eq!(
                c.get("old"),
                at_path(&before[&key], path),
                "{name} {resource} {path}"
            );
            assert_eq!(
                c.get("new"),
                at_path(&after[&key], path),
                "{name} {resource} {path}"
            );
            out.entry(name.clone())
                .or_default()
                .insert((resource.to_owned(), path.to_owned()));
        }
    }
    out
}

fn from_nodes_changed(answer: &Value) -> Changed {
    let mut out = Changed::new();
    for node in answer["nodes"].as_array().unwrap() {
        let name = node["node"].as_str().unwrap().to_owned();
        for (resource, paths) in node["resources"].as_object().unwrap() {
            for path in paths.as_array().unwrap() {
                let path = path.as_str().unwrap().to_owned();
                out.entry(name.clone())
                    .or_default()
                    .insert((resource.clone(), path));
            }
        }
    }
    out
}

/// By node: the keys whose answers changed, from plain lookups.
fn brute_keys(
    before: &BTreeMap<(String, String), Value>,
    after: &BTreeMap<(String, String), Value>,
) -> BTreeMap<String, BTreeMap<String, (Value, Value)>> {
    let mut out: BTreeMap<String, BTreeMap<String, (Value, Value)>> = BTreeMap::new();
    for ((node, key), old) in before {
        let new = &after[&(node.clone(), key.clone())];
        if old != new {
            out.entry(format!("nodes/{node}"))
                .or_default()
                .insert(key.clone(), (old.clone(), new.clone()));
        }
    }
    out
}

fn keys_answered(keys: &Value) -> BTreeMap<String, BTreeMap<String, (Value, Value)>> {
    let mut out: BTreeMap<String, BTreeMap<String, (Value, Value)>> = BTreeMap::new();
    for (node, changes) in keys.as_object().unwrap() {
        for (key, change) in changes.as_object().unwrap() {
            let side = |s: &str| match change.get(s) {
                Some(v) => json!([true, v]),
                None => json!([false, null]),
            };
            out.entry(node.clone())
                .or_default()
                .insert(key.clone(), (side("old"), side("new")));
        }
    }
    out
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn value(&mut self) -> Value {
        match self.below(4) {
            0 => json!(self.below(3)),
            1 => json!(format!("s{}", self.below(3))),
            2 => json!({"x": self.below(2), "y": {"z": self.below(2)}}),
            _ => json!(null),
        }
    }

    fn doc(&mut self) -> Value {
        let mut doc = serde_json::Map::new();
        for k in 0..4 {
            if self.below(3) > 0 {
                doc.insert(format!("k{k}"), self.value());
            }
        }
        Value::Object(doc)
    }
}

/// One write: method, URL (without the query) and body.
fn a_write(rng: &mut Rng) -> (&'static str, String, String) {
    let node = match rng.below(3) {
        0 => None,
        _ => Some(NODES[usize::try_from(rng.below(5)).unwrap()]),
    };
    let resource = RESOURCES[usize::try_from(rng.below(2)).unwrap()];
    let kind = if node.is_some() && rng.below(3) == 0 {
        "overrides"
    } else {
        "values"
    };
    let url = doc_url(node, resource, kind);
    match rng.below(6) {
        0 => ("DELETE", url, String::new()),
        1 => (
            "PUT",
            format!("{url}/keys/k{}", rng.below(4)),
            rng.value().to_string(),
        ),
        2 => ("POST", format!("{url}/restore"), String::new()),
        _ => ("PUT", url, rng.doc().to_string()),
    }
}

/// `write` with `dry_run=true` and the same then for real; `None` when
/// the write itself is refused (a DELETE of nothing, a restore of no
/// version), after checking that its dry-run was refused alike.
async fn dry_then_real(
    state: &AppState,
    (method, url, body): (&str, String, String),
    round: usize,
) -> Option<(Value, Value)> {
    let query = |extra: &str| {
        let restore = if url.ends_with("/restore") {
            "version=1&"
        } else {
            ""
        };
        format!("{url}?{restore}{extra}")
    };
    let g = generation(state).await;
    let (dry_status, dry) = call(
        state,
        method,
        &query(&format!("dry_run=true&keys={KEYS}")),
        &body,
    )
    .await;
    assert_eq!(generation(state).await, g, "a dry-run takes no generation");
    let tag = format!("before-{round}");
    ok_json(
        state,
        "POST",
        "/api/v1/tags",
        &json!({"name": tag}).to_string(),
    )
    .await;
    let (status, text) = call(state, method, &query(""), &body).await;
    if !status.is_success() {
        assert_eq!(
            dry_status, status,
            "{method} {url}: dry-run {dry} but the write {text}"
        );
        return None;
    }
    assert_eq!(dry_status, StatusCode::OK, "{method} {url}: {dry}");
    let changed = format!("/api/v1/config/environments/5/nodes/changed?since={tag}&keys={KEYS}");
    let nodes_changed = ok_json(state, "GET", &changed, "").await;
    Some((serde_json::from_str(&dry).unwrap(), nodes_changed))
}

/// One round; what it saw change: (nodes, nodes whose answers changed),
/// `None` when the write was refused.
async fn check_round(
    state: &AppState,
    write: (&'static str, String, String),
    round: usize,
) -> Option<(usize, usize)> {
    let before = effective_all(state, None).await;
    let answers_before = answers_all(state, None).await;
    let shown = format!("{} {} {}", write.0, write.1, write.2);
    let (dry, changed) = dry_then_real(state, write, round).await?;
    let after = effective_all(state, None).await;
    let tag = format!("tag=before-{round}");
    assert_eq!(
        effective_all(state, Some(&tag)).await,
        before,
        "{shown}: the read at the tag"
    );
    let answers_after = answers_all(state, None).await;
    let at_tag = answers_all(state, Some(("tag", json!(format!("before-{round}"))))).await;
    assert_eq!(at_tag, answers_before, "{shown}: lookups at the tag");
    let want = brute(&before, &after);
    assert_eq!(
        from_dry_run(&dry, &before, &after),
        want,
        "{shown}: dry-run {dry}"
    );
    assert_eq!(
        from_nodes_changed(&changed),
        want,
        "{shown}: nodes/changed {changed}"
    );
    let want_keys = brute_keys(&answers_before, &answers_after);
    assert_eq!(
        keys_answered(&dry["keys"]),
        want_keys,
        "{shown}: dry-run keys {dry}"
    );
    let mut changed_keys = BTreeMap::new();
    for node in changed["nodes"].as_array().unwrap() {
        if !node["keys"].as_object().unwrap().is_empty() {
            changed_keys.insert(
                node["level"].as_str().unwrap().to_owned(),
                node["keys"].clone(),
            );
        }
    }
    assert_eq!(
        keys_answered(&json!(changed_keys)),
        want_keys,
        "{shown}: nodes/changed keys {changed}"
    );
    Some((want.len(), want_keys.len()))
}

#[tokio::test]
async fn dry_runs_and_nodes_changed_match_plain_reads_over_generated_environments() {
    for seed in [7_u64, 1234, 99_991] {
        let state = state();
        setup(&state, &NODES).await;
        let mut rng = Rng(seed);
        // Guards: the rounds wrote, and changed nodes and answers.
        let (mut written, mut nodes, mut answers) = (0, 0, 0);
        for round in 0..24 {
            let write = a_write(&mut rng);
            if let Some((n, a)) = check_round(&state, write, round).await {
                (written, nodes, answers) = (written + 1, nodes + n, answers + a);
            }
        }
        assert!(
            written >= 10 && nodes >= 10 && answers >= 2,
            "seed {seed}: {written} writes, {nodes} nodes, {answers} answers changed"
        );
    }
}

#[tokio::test]
async fn a_root_change_every_node_overrides_changes_no_node() {
    let state = state();
    setup(&state, &NODES).await;
    put(&state, ROOT_A, json!({"k": 1, "other": 1})).await;
    for node in NODES {
        put(
            &state,
            &doc_url(Some(node), "a", "overrides"),
            json!({"k": "mine"}),
        )
        .await;
    }
    let dry = ok_json(
        &state,
        "PUT",
        &format!("{ROOT_A}?dry_run=true"),
        r#"{"k": 2, "other": 1}"#,
    )
    .await;
    assert_eq!(dry, json!({"dry_run": true, "nodes": []}));
    ok_json(&state, "POST", "/api/v1/tags", r#"{"name": "t"}"#).await;
    put(&state, ROOT_A, json!({"k": 2, "other": 1})).await;
    let changed = ok_json(
        &state,
        "GET",
        "/api/v1/config/environments/5/nodes/changed?since=t",
        "",
    )
    .await;
    assert_eq!(changed["nodes"], json!([]), "{changed}");
    assert_eq!(changed["generation"], json!(generation(&state).await));
    // A change the overrides leave through reaches every node.
    let dry = ok_json(
        &state,
        "PUT",
        &format!("{ROOT_A}?dry_run=true"),
        r#"{"k": 2, "other": 2}"#,
    )
    .await;
    assert_eq!(
        dry["nodes"].as_array().map(Vec::len),
        Some(NODES.len()),
        "{dry}"
    );
}

#[tokio::test]
async fn an_import_dry_run_lists_what_the_import_changes() {
    let state = state();
    setup(&state, &NODES).await;
    put(&state, ROOT_A, json!({"k": 1})).await;
    let import = json!({"level": "nodes=n2", "documents": {"a": {"k": 2}}}).to_string();
    let url = "/api/v1/config/environments/5/import";
    let g = generation(&state).await;
    let dry = ok_json(&state, "POST", &format!("{url}?dry_run=true"), &import).await;
    assert_eq!(generation(&state).await, g);
    let want = json!({"dry_run": true, "nodes": [{"node": "n2", "level": "nodes/n2", "changes": [{"resource": "a", "path": "k", "old": 1, "new": 2}]}]});
    assert_eq!(dry, want);
    ok_json(&state, "POST", url, &import).await;
    let read = ok_json(
        &state,
        "GET",
        &format!("{}?effective", doc_url(Some("n2"), "a", "values")),
        "",
    )
    .await;
    assert_eq!(read, json!({"k": 2}));
}

#[tokio::test]
async fn a_dry_run_is_refused_as_its_write_would_be() {
    let state = state();
    setup(&state, &NODES).await;
    for (method, url, body, status) in [
        (
            "PUT",
            doc_url(Some("stranger"), "a", "values"),
            "{}",
            StatusCode::NOT_FOUND,
        ),
        (
            "PUT",
            doc_url(None, "nope", "values"),
            "{}",
            StatusCode::NOT_FOUND,
        ),
        (
            "PUT",
            doc_url(None, "a", "values"),
            "[1]",
            StatusCode::BAD_REQUEST,
        ),
        (
            "DELETE",
            doc_url(None, "a", "values"),
            "",
            StatusCode::NOT_FOUND,
        ),
        (
            "POST",
            format!("{}/restore", doc_url(None, "a", "values")),
            "",
            StatusCode::NOT_FOUND,
        ),
    ] {
        let extra = if url.ends_with("restore") {
            "version=3&"
        } else {
            ""
        };
        let (got, _, text) =
            call_full(&state, method, &format!("{url}?{extra}dry_run=true"), body).await;
        assert_eq!(got, status, "{method} {url}: {text}");
        let (real, _) = call(&state, method, &format!("{url}?{extra}"), body).await;
        assert_eq!(real, status, "{method} {url}: the write itself");
    }
    let (got, text) = call(
        &state,
        "GET",
        "/api/v1/config/environments/5/nodes/changed",
        "",
    )
    .await;
    assert_eq!(got, StatusCode::BAD_REQUEST, "{text}");
    let (got, text) = call(
        &state,
        "GET",
        "/api/v1/config/environments/5/nodes/changed?since=0&resource=nope",
        "",
    )
    .await;
    assert_eq!(got, StatusCode::NOT_FOUND, "{text}");
}
