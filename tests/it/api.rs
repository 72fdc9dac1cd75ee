//! The HTTP API in process: `server::app` driven with tower's `oneshot`,
//! over an in-memory store. No socket and no process, so these cover
//! routes and status codes cheaply; tests/it/http.rs runs the real server.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hierad::server::{AppState, app};
use hierad::settings::Settings;
use serde_json::{Value, json};
use tower::ServiceExt as _;

/// The application over a fresh in-memory store.
fn state() -> AppState {
    AppState::in_memory(Settings::default()).expect("state")
}

/// One request through the whole router: status and body text.
pub(crate) async fn call(
    state: &AppState,
    method: &str,
    path: &str,
    body: &str,
) -> (StatusCode, String) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// Environment 5, levels [nodes], component "app" defining resource "a".
async fn setup(state: &AppState) {
    let component = r#"{"name": "app", "resource_definitions": [{"name": "a"}]}"#;
    let (status, body) = call(state, "POST", "/api/v1/config/components", component).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let environment = r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#;
    let (status, body) = call(state, "POST", "/api/v1/config/environments", environment).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn health() {
    let (status, body) = call(&state(), "GET", "/healthz", "").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok\n"));
}

#[tokio::test]
async fn documents_put_then_get_stored_and_effective() {
    let state = state();
    setup(&state).await;
    let root = "/api/v1/config/environments/5/resources/a/values";
    let node = "/api/v1/config/environments/5/nodes/n1/resources/a/values";
    let (status, _) = call(&state, "PUT", root, r#"{"k": {"x": 1}, "r": 1}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = call(&state, "PUT", node, r#"{"k": {"y": 2}}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = call(&state, "GET", node, "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json(&body), json!({"k": {"y": 2}}));
    let (_, body) = call(&state, "GET", &format!("{node}?effective"), "").await;
    assert_eq!(json(&body), json!({"k": {"x": 1, "y": 2}, "r": 1}));
    let (_, body) = call(&state, "GET", &format!("{root}/history"), "").await;
    assert_eq!(json(&body).as_array().map(Vec::len), Some(1), "{body}");
}

#[tokio::test]
async fn lookup_finds_and_misses() {
    let state = state();
    setup(&state).await;
    let node = "/api/v1/config/environments/5/nodes/n1/resources/a/values";
    call(&state, "PUT", node, r#"{"k": "v", "n": null}"#).await;
    let ask = |key: &str| {
        json!({"environment": 5, "level": "nodes=n1", "hierarchy": ["a"], "key": key}).to_string()
    };
    let lookup = "/api/v1/lookup";
    let (status, body) = call(&state, "POST", lookup, &ask("k")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(json(&body), json!({"found": true, "value": "v"}));
    let (_, body) = call(&state, "POST", lookup, &ask("n")).await;
    assert_eq!(json(&body), json!({"found": true, "value": null}));
    let (_, body) = call(&state, "POST", lookup, &ask("missing")).await;
    assert_eq!(json(&body), json!({"found": false}));
}

#[tokio::test]
async fn errors_name_the_problem_and_change_nothing() {
    let state = state();
    setup(&state).await;
    let root = "/api/v1/config/environments/5/resources/a/values";
    call(&state, "PUT", root, r#"{"keep": 1}"#).await;
    let cases: &[(&str, &str, &str, StatusCode)] = &[
        ("PUT", root, "{", StatusCode::BAD_REQUEST),
        ("PUT", root, "[1]", StatusCode::BAD_REQUEST),
        (
            "PUT",
            "/api/v1/config/environments/6/resources/a/values",
            "{}",
            StatusCode::NOT_FOUND,
        ),
        (
            "PUT",
            "/api/v1/config/environments/5/resources/nope/values",
            "{}",
            StatusCode::NOT_FOUND,
        ),
        (
            "GET",
            "/api/v1/config/environments/5/resources/a/values?version=x",
            "",
            StatusCode::BAD_REQUEST,
        ),
        (
            "POST",
            "/api/v1/lookup",
            r#"{"environment": 9, "key": "x"}"#,
            StatusCode::NOT_FOUND,
        ),
        (
            "POST",
            "/api/v1/lookup",
            r#"{"environment": 5}"#,
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (method, path, body, want) in cases {
        let (status, reply) = call(&state, method, path, body).await;
        assert_eq!(status, *want, "{method} {path} {body}: {reply}");
        let message = json(&reply)["message"].as_str().map(str::to_owned);
        assert!(message.is_some_and(|m| !m.is_empty()), "{reply}");
    }
    let (_, body) = call(&state, "GET", root, "").await;
    assert_eq!(json(&body), json!({"keep": 1}));
}

/// A hash merge's explain names, for each top-level key of the merged
/// Hash, the datasource that supplied it (docs/api.md, "explain").
#[tokio::test]
async fn explain_of_a_hash_merge_names_the_source_of_each_key() {
    let state = state();
    let component = r#"{"name": "two", "resource_definitions": [{"name": "a"}, {"name": "b"}]}"#;
    let (status, body) = call(&state, "POST", "/api/v1/config/components", component).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let environment = r#"{"id": 6, "components": ["two"], "hierarchy_levels": ["nodes"]}"#;
    let (status, body) = call(&state, "POST", "/api/v1/config/environments", environment).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let docs = "/api/v1/config/environments/6/resources";
    let a = r#"{"k": {"x": 1}}"#;
    let b = r#"{"k": {"x": 2, "y": 3}}"#;
    for (resource, doc) in [("a", a), ("b", b)] {
        let (status, body) = call(&state, "PUT", &format!("{docs}/{resource}/values"), doc).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    }
    let lookup = r#"{"environment": 6, "key": "k", "resolution": "hash", "hierarchy": ["a", "b"], "explain": true}"#;
    let (status, body) = call(&state, "POST", "/api/v1/lookup", lookup).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answer = json(&body);
    assert_eq!(answer["value"], json!({"x": 1, "y": 3}));
    let steps = answer["explain"].as_array().unwrap();
    assert_eq!(
        steps.last().unwrap()["keys"],
        json!({"x": "a", "y": "b"}),
        "{body}"
    );
    assert!(
        steps[..steps.len() - 1]
            .iter()
            .all(|s| s.get("keys").is_none()),
        "{body}"
    );
}
