//! Property tests of the request path: random methods, paths, headers and
//! bodies sent in process never panic the server, never answer 5xx, and
//! every error answer has the JSON body docs/api.md promises.
//! `PROPTEST_CASES=20000 cargo test --lib server::props` runs longer.

use crate::server::{AppState, app};
use crate::settings::Settings;
use crate::store::SqliteStore;
use axum::body::Body;
use axum::http::Request;
use proptest::prelude::*;
use std::sync::Arc;

/// A server state with environment 1 (levels [nodes]) defining `a` and
/// `hiera`, and a document in `a`, so requests reach real data.
fn state(runtime: &tokio::runtime::Runtime) -> AppState {
    let store = Arc::new(SqliteStore::open_in_memory().unwrap());
    let state = AppState::new(store, Settings::default()).unwrap();
    for (method, uri, body) in [
        (
            "POST",
            "/api/v1/config/components",
            r#"{"name": "app", "resource_definitions": [{"name": "a"}, {"name": "hiera"}]}"#,
        ),
        (
            "POST",
            "/api/v1/config/environments",
            r#"{"id": 1, "components": ["app"], "hierarchy_levels": ["nodes"]}"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/1/resources/a/values",
            r#"{"k": "v", "n": {"m": [1, 2.5, null]}, "i": "%{hiera('k')}"}"#,
        ),
    ] {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        let status = runtime
            .block_on(tower::ServiceExt::oneshot(app(state.clone()), request))
            .unwrap()
            .status();
        assert!(status.is_success(), "{method} {uri}: {status}");
    }
    state
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"])
            .prop_map(str::to_owned),
        1 => "[A-Z][A-Z_-]{0,30}",
    ]
}

/// Paths near the real routes: a known prefix, then segments of
/// plausible and hostile text (percent escapes, dots, Unicode).
fn path() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec![
        "/",
        "/healthz",
        "/metrics",
        "/api/v1/lookup",
        "/api/v1/config/components/",
        "/api/v1/config/environments/",
        "/api/v1/config/environments/1/",
        "/api/v1/config/environments/1/resources/a/",
        "/api/v1/config/environments/1/nodes/n1/resources/",
        "/api/v1/data/1/",
        "/api/v1/environments/1/scope",
    ]);
    let segment = prop_oneof![
        prop::sample::select(vec![
            "values",
            "overrides",
            "override",
            "history",
            "restore",
            "keys",
            "a",
            "hiera",
            "resources",
            "nodes",
            "1",
            "0",
            "-1",
            "99999999999999999999",
            "%FF",
            "%2F",
            "%00",
            "..",
            ".",
            "",
        ])
        .prop_map(str::to_owned),
        "[a-zA-Z0-9._~%-]{0,12}",
        "\\PC{0,6}".prop_map(|s| s
            .chars()
            .map(|c| format!("%{:02X}", u32::from(c) % 256))
            .collect()),
    ];
    let query = prop_oneof![
        Just(String::new()),
        prop::sample::select(vec![
            "?effective",
            "?version=1",
            "?version=x",
            "?key=k",
            "?key=a..b",
            "?level=nodes=n1",
            "?level=%FF",
            "?version=1&effective",
            "?key=n.m.1",
        ])
        .prop_map(str::to_owned),
        "\\?[a-z=&%0-9]{0,20}",
    ];
    (prefix, prop::collection::vec(segment, 0..5), query)
        .prop_map(|(prefix, segments, query)| format!("{prefix}{}{query}", segments.join("/")))
}

fn headers() -> impl Strategy<Value = Vec<(String, String)>> {
    let content_type = prop::sample::select(vec![
        "application/json",
        "application/yaml",
        "text/yaml",
        "text/plain",
        "application/json; charset=utf-8",
    ])
    .prop_map(|v| ("content-type".to_owned(), v.to_owned()));
    let other = ("x-[a-z]{1,10}", "[ -~]{0,40}");
    (
        prop::option::of(content_type),
        prop::collection::vec(other, 0..4),
    )
        .prop_map(|(content_type, mut others)| {
            others.extend(content_type);
            others
        })
}

/// Bodies: JSON lookups and documents with random parts, YAML, and bytes.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let scalar = prop_oneof![
        Just("null".to_owned()),
        Just("1e400".to_owned()),
        Just("-0".to_owned()),
        Just("\"%{hiera('k')}\"".to_owned()),
        Just("\"%{alias('n')}\"".to_owned()),
        Just("{\"__hierad__\": \"sym\"}".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        "\"[a-z%{}()':.]{0,12}\"",
    ];
    let json = prop_oneof![
        (scalar.clone(), prop::sample::select(vec!["k", "n", "i", "n.m.1", "missing", ""]))
            .prop_map(|(default, key)| format!(
                r#"{{"environment": 1, "key": "{key}", "level": "nodes=n1", "hierarchy": ["a"], "default": {default}}}"#
            )),
        (scalar.clone(), scalar).prop_map(|(a, b)| format!(r#"{{"a": {a}, "b": [{b}, {{"c": {a}}}]}}"#)),
        prop::sample::select(vec![
            r#"{"environment": 1, "key": "k", "resolution": "hash"}"#,
            r#"{"environment": 1, "keys": ["k", "i", "n"], "explain": true}"#,
            r#"{"environment": 1, "key": "i", "resolution": {"behavior": "deeper", "knockout_prefix": "--"}}"#,
            r#"{"level": "nodes=n1", "replace": true, "documents": {"a": {"x": 1}}}"#,
            "[1, 2", "{\"a\":", "{}", "[]", "\"text\"",
        ])
        .prop_map(str::to_owned),
    ];
    prop_oneof![
        3 => json.prop_map(String::into_bytes),
        1 => "(---\n)?[a-z]{1,5}: [\\[\\]{}a-z0-9 :!&*|>-]{0,30}\n".prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_requests_never_panic_or_answer_5xx(
        method in method(),
        path in path(),
        headers in headers(),
        body in body(),
    ) {
        thread_local! {
            static SETUP: (tokio::runtime::Runtime, AppState) = {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                let state = state(&runtime);
                (runtime, state)
            };
        }
        let mut request = Request::builder().method(method.as_str()).uri(path.as_str());
        for (name, value) in &headers {
            request = request.header(name, value);
        }
        // What the HTTP layer itself would refuse never reaches the router.
        let Ok(request) = request.body(Body::from(body)) else {
            return Ok(());
        };
        let (status, is_json, text) = SETUP.with(|(runtime, state)| {
            runtime.block_on(async {
                let response = tower::ServiceExt::oneshot(app(state.clone()), request).await.unwrap();
                let status = response.status();
                let is_json = response
                    .headers()
                    .get("content-type")
                    .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
                let body = axum::body::to_bytes(response.into_body(), 1 << 24).await.unwrap();
                (status, is_json, String::from_utf8_lossy(&body).into_owned())
            })
        });
        prop_assert!(!status.is_server_error(), "{} {}: {} {}", method, path, status, text);
        // A HEAD answer has no body.
        if status.is_client_error() && method != "HEAD" {
            prop_assert!(is_json, "{} {}: {} without a JSON body: {}", method, path, status, text);
            let body: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            prop_assert!(body["error"].is_string() && body["message"].is_string(), "{} {}: {}", method, path, text);
        }
    }
}
