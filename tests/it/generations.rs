//! Reads at an exact generation (`generation=`, `tag=`) and tags, in
//! process (`oneshot`): effective reads, the data route and lookups
//! answer as of the generation named, and never leave an old answer
//! where a read of the newest finds it.

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use hierad::server::{AppState, app};
use hierad::settings::Settings;
use serde_json::{Value, json};
use tower::ServiceExt as _;

pub(crate) fn state() -> AppState {
    AppState::in_memory(Settings::default()).expect("state")
}

/// One request through the whole router: status, headers and body.
pub(crate) async fn call_full(
    state: &AppState,
    method: &str,
    path: &str,
    body: &str,
) -> (StatusCode, HeaderMap, String) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, headers, String::from_utf8(bytes.to_vec()).unwrap())
}

pub(crate) async fn call(
    state: &AppState,
    method: &str,
    path: &str,
    body: &str,
) -> (StatusCode, String) {
    let (status, _, body) = call_full(state, method, path, body).await;
    (status, body)
}

/// `body` as JSON, after checking `status`.
pub(crate) async fn ok_json(state: &AppState, method: &str, path: &str, body: &str) -> Value {
    let (status, text) = call(state, method, path, body).await;
    assert!(status.is_success(), "{method} {path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The newest generation, as every answer's header says.
pub(crate) async fn generation(state: &AppState) -> u64 {
    let (_, headers, _) = call_full(state, "GET", "/api/v1/config/environments", "").await;
    headers["x-hierad-generation"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Environment 5: levels [nodes] with nodes `nodes` registered, and a
/// component defining resources `a` and `common` (Hiera's default
/// hierarchy reads `common`).
pub(crate) async fn setup(state: &AppState, nodes: &[&str]) {
    let component =
        r#"{"name": "app", "resource_definitions": [{"name": "a"}, {"name": "common"}]}"#;
    ok_json(state, "POST", "/api/v1/config/components", component).await;
    let environment = r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#;
    ok_json(state, "POST", "/api/v1/config/environments", environment).await;
    let register = "/api/v1/config/environments/5/hierarchy_levels/nodes/register";
    ok_json(state, "PUT", register, &json!(nodes).to_string()).await;
}

pub(crate) const ROOT_A: &str = "/api/v1/config/environments/5/resources/a/values";

pub(crate) async fn put(state: &AppState, path: &str, body: Value) {
    let (status, text) = call(state, "PUT", path, &body.to_string()).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "PUT {path}: {text}");
}

async fn tag(state: &AppState, name: &str) -> u64 {
    let tag = ok_json(
        state,
        "POST",
        "/api/v1/tags",
        &json!({"name": name}).to_string(),
    )
    .await;
    tag["generation"].as_u64().unwrap()
}

#[tokio::test]
async fn effective_reads_and_the_data_route_answer_as_of_a_generation_or_tag() {
    let state = state();
    setup(&state, &["n1"]).await;
    put(&state, ROOT_A, json!({"k": 1, "r": "x"})).await;
    let g1 = tag(&state, "first").await;
    assert_eq!(g1, generation(&state).await);
    put(&state, ROOT_A, json!({"k": 2})).await;
    let node = "/api/v1/config/environments/5/nodes/n1/resources/a/values";
    for pin in [format!("generation={g1}"), "tag=first".to_owned()] {
        let old = ok_json(&state, "GET", &format!("{node}?effective&{pin}"), "").await;
        assert_eq!(old, json!({"k": 1, "r": "x"}), "{pin}");
        let key = ok_json(&state, "GET", &format!("{node}?effective&key=r&{pin}"), "").await;
        assert_eq!(key, json!("x"), "{pin}");
        let data = ok_json(
            &state,
            "GET",
            &format!("/api/v1/data/5/a?level=nodes=n1&{pin}"),
            "",
        )
        .await;
        assert_eq!(data, json!({"k": 1, "r": "x"}), "{pin}");
    }
    let now = ok_json(&state, "GET", &format!("{node}?effective"), "").await;
    assert_eq!(now, json!({"k": 2}));
    let data = ok_json(&state, "GET", "/api/v1/data/5/a", "").await;
    assert_eq!(data, json!({"k": 2}));
}

/// A level value Puppet interpolated empty (`nodes=%{trusted.certname}`
/// for a node without one) names no document: empty data, now and at a
/// tag, as over the files. An unknown level or environment is still named.
#[tokio::test]
async fn the_data_route_answers_empty_data_for_an_empty_level_value() {
    let state = state();
    setup(&state, &["n1"]).await;
    put(&state, ROOT_A, json!({"k": 1})).await;
    tag(&state, "first").await;
    for query in ["level=nodes=", "level=nodes=&tag=first"] {
        let (status, headers, body) =
            call_full(&state, "GET", &format!("/api/v1/data/5/a?{query}"), "").await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "{}"), "{query}");
        assert!(headers.get("etag").is_none(), "{query}");
    }
    for (path, names) in [
        ("/api/v1/data/5/a?level=roles=", "roles"),
        ("/api/v1/data/9/a?level=nodes=", "9"),
    ] {
        let (status, body) = call(&state, "GET", path, "").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert!(body.contains(names), "{path}: {body}");
    }
    let (status, body) = call(&state, "GET", "/api/v1/data/5/a?level=nodes", "").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn a_lookup_at_a_tag_answers_as_then_and_leaves_the_newest_answers_alone() {
    let state = state();
    setup(&state, &["n1"]).await;
    put(&state, ROOT_A, json!({"k": "old"})).await;
    tag(&state, "deploy-1").await;
    put(&state, ROOT_A, json!({"k": "new"})).await;
    let ask = |extra: Value| {
        let mut body = json!({"environment": 5, "hierarchy": ["a"], "key": "k"});
        if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
            body.extend(extra);
        }
        body.to_string()
    };
    // Over the size the async worker parses: the pin is found by a
    // search of the body, not by its parse.
    let large = "x".repeat(70 * 1024);
    // Newest first (cached), pinned, then newest again (from the cache).
    for (extra, want) in [
        (json!({}), "new"),
        (json!({"tag": "deploy-1"}), "old"),
        (json!({}), "new"),
        (json!({"tag": "deploy-1"}), "old"),
        (json!({"generation": generation(&state).await}), "new"),
        (json!({"tag": "deploy-1", "scope": {"pad": large}}), "old"),
        (json!({"scope": {"pad": large}}), "new"),
        // The names in a scope, not the fields: the newest answer.
        (
            json!({"scope": {"tag": "deploy-1", "generation": 1}}),
            "new",
        ),
    ] {
        let answer = ok_json(&state, "POST", "/api/v1/lookup", &ask(extra.clone())).await;
        assert_eq!(answer["value"], json!(want), "{extra}");
    }
    let (status, body) = call(
        &state,
        "POST",
        "/api/v1/lookup",
        &ask(json!({"tag": "nope"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let both = json!({"tag": "deploy-1", "generation": 1});
    let (status, body) = call(&state, "POST", "/api/v1/lookup", &ask(both)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn a_generation_not_reached_is_refused_and_bad_pins_are_named() {
    let state = state();
    setup(&state, &["n1"]).await;
    put(&state, ROOT_A, json!({"k": 1})).await;
    let ahead = generation(&state).await + 100;
    for (query, status) in [
        (
            format!("effective&generation={ahead}"),
            StatusCode::BAD_REQUEST,
        ),
        ("effective&generation=x".to_owned(), StatusCode::BAD_REQUEST),
        ("effective&tag=42".to_owned(), StatusCode::BAD_REQUEST),
        ("effective&tag=nope".to_owned(), StatusCode::NOT_FOUND),
        (
            "effective&tag=a&generation=1".to_owned(),
            StatusCode::BAD_REQUEST,
        ),
        ("generation=1".to_owned(), StatusCode::BAD_REQUEST),
    ] {
        let (got, body) = call(&state, "GET", &format!("{ROOT_A}?{query}"), "").await;
        assert_eq!(got, status, "{query}: {body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{query}: {body}"
        );
    }
}

#[tokio::test]
async fn tags_are_made_listed_read_and_deleted() {
    let state = state();
    setup(&state, &["n1"]).await;
    put(&state, ROOT_A, json!({"k": 1})).await;
    let g = generation(&state).await;
    let made = ok_json(&state, "POST", "/api/v1/tags", r#"{"name": "deploy-42"}"#).await;
    assert_eq!(made["name"], "deploy-42");
    assert_eq!(made["generation"], json!(g));
    assert!(made["created_at"].as_i64().is_some_and(|t| t > 0), "{made}");
    let (status, body) = call(&state, "POST", "/api/v1/tags", r#"{"name": "deploy-42"}"#).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let older = json!({"name": "older", "generation": g - 1}).to_string();
    ok_json(&state, "POST", "/api/v1/tags", &older).await;
    for bad in [
        r#"{"name": "a b"}"#.to_owned(),
        r#"{"name": "7"}"#.to_owned(),
        r#"{"name": "x", "other": 1}"#.to_owned(),
        json!({"name": "ahead", "generation": g + 5}).to_string(),
    ] {
        let (status, body) = call(&state, "POST", "/api/v1/tags", &bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let listed = ok_json(&state, "GET", "/api/v1/tags", "").await;
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["older", "deploy-42"]);
    let one = ok_json(&state, "GET", "/api/v1/tags/deploy-42", "").await;
    assert_eq!(one, made);
    let (status, _) = call(&state, "DELETE", "/api/v1/tags/deploy-42", "").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = call(&state, "GET", "/api/v1/tags/deploy-42", "").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(generation(&state).await, g, "tags take no generation");
}
