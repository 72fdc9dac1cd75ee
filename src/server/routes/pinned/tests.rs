//! A read at a generation retention pruned: 410, naming the oldest
//! readable generation (the store's own tests cover what is pruned).

use crate::configdb::Retention;
use crate::server::AppState;
use crate::settings::Settings;
use crate::store::{SqliteStore, Store};
use axum::http::StatusCode;
use std::sync::Arc;

async fn send(state: &AppState, method: &str, path: &str, body: &str) -> (StatusCode, String) {
    let (status, _, body) = super::super::oneshot(state, method, path, body).await;
    (status, body)
}

#[tokio::test]
async fn a_pruned_generation_is_gone_naming_the_oldest_readable() {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open_in_memory().unwrap());
    let state = AppState::new(Arc::clone(&store), Settings::default()).unwrap();
    let component = r#"{"name": "app", "resource_definitions": [{"name": "a"}]}"#;
    send(&state, "POST", "/api/v1/config/components", component).await;
    let environment = r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#;
    send(&state, "POST", "/api/v1/config/environments", environment).await;
    let url = "/api/v1/config/environments/5/resources/a/values";
    let mut first = 0;
    for i in 0..3 {
        let (status, body) = send(&state, "PUT", url, &format!(r#"{{"k": {i}}}"#)).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        if i == 0 {
            first = state.generation();
        }
    }
    let keep_one = Retention {
        keep_versions: Some(1),
        keep_days: Some(0),
    };
    assert!(store.prune(&keep_one, 4_000_000_000, 1000).unwrap().pruned > 0);
    let oldest = store.oldest_readable(Some(5)).unwrap();
    assert!(oldest > first);
    let (status, body) = send(
        &state,
        "GET",
        &format!("{url}?effective&generation={first}"),
        "",
    )
    .await;
    assert_eq!(status, StatusCode::GONE, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"], "gone");
    assert_eq!(body["oldest_readable"], serde_json::json!(oldest));
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("the oldest readable generation is {oldest}")),
        "{message}"
    );
    let (status, body) = send(
        &state,
        "GET",
        &format!("{url}?effective&generation={oldest}"),
        "",
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, r#"{"k":2}"#));
}
