//! `?effective&show_lookup` in process: each key's origin names the
//! level, kind, version, author and time of the document that last
//! supplied it.

use crate::server::AppState;
use crate::settings::Settings;
use crate::store::{Store, SwitchedStore};
use axum::http::StatusCode;
use serde_json::{Value as Json, json};
use std::sync::Arc;

async fn call(state: &AppState, method: &str, path: &str, body: &str) -> (StatusCode, Json) {
    let (status, _, body) = super::super::oneshot(state, method, path, body).await;
    (status, serde_json::from_str(&body).unwrap_or(Json::Null))
}

const ENV: &str = "/api/v1/config/environments/1";

#[tokio::test]
async fn each_key_names_the_document_that_last_supplied_it() {
    let store = Arc::new(SwitchedStore::in_memory().unwrap());
    let state = AppState::new(store as Arc<dyn Store>, Settings::default()).unwrap();
    for (method, path, body) in [
        (
            "POST",
            "/api/v1/config/components".to_owned(),
            r#"{"name": "fuel", "resource_definitions": [{"name": "astute"}]}"#,
        ),
        (
            "POST",
            "/api/v1/config/environments".to_owned(),
            r#"{"id": 1, "components": ["fuel"], "hierarchy_levels": ["nodes"]}"#,
        ),
        (
            "PUT",
            format!("{ENV}/hierarchy_levels/nodes/register"),
            r#"["node-12"]"#,
        ),
        (
            "PUT",
            format!("{ENV}/resources/astute/values"),
            r#"{"a": 1, "b": {"x": 1}, "c": 1}"#,
        ),
        (
            "PUT",
            format!("{ENV}/resources/astute/values"),
            r#"{"a": 1, "b": {"x": 1}, "c": 2}"#,
        ),
        (
            "PUT",
            format!("{ENV}/nodes/node-12/resources/astute/values"),
            r#"{"b": {"y": 2}}"#,
        ),
        (
            "PUT",
            format!("{ENV}/nodes/node-12/resources/astute/overrides"),
            r#"{"d": true}"#,
        ),
    ] {
        let (status, body) = call(&state, method, &path, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {body}");
    }
    let url = format!("{ENV}/nodes/node-12/resources/astute/values?effective&show_lookup");
    let (status, got) = call(&state, "GET", &url, "").await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(
        got["data"],
        json!({"a": 1, "b": {"x": 1, "y": 2}, "c": 2, "d": true})
    );
    let origin = |key: &str| {
        let o = &got["lookup"][key];
        (
            o["level"].as_str().unwrap().to_owned(),
            o["kind"].as_str().unwrap().to_owned(),
            o["version"].as_u64().unwrap(),
        )
    };
    assert_eq!(origin("a"), (String::new(), "values".into(), 2));
    assert_eq!(origin("b"), ("nodes/node-12".into(), "values".into(), 1));
    assert_eq!(origin("d"), ("nodes/node-12".into(), "overrides".into(), 1));
    assert!(got["lookup"]["a"]["created_at"].as_i64().unwrap() > 1_600_000_000);
    assert!(got["lookup"]["a"].get("author").is_some());
    // Without effective, or with a key or version: 400.
    for bad in [
        "?show_lookup",
        "?effective&show_lookup&key=a",
        "?effective&show_lookup&version=1",
    ] {
        let url = format!("{ENV}/nodes/node-12/resources/astute/values{bad}");
        let (status, body) = call(&state, "GET", &url, "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}
