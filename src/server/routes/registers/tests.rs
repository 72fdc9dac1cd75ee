//! Reads check their level path against the snapshot's registers, with
//! no store access; register writes are published before they answer.

use crate::server::AppState;
use crate::settings::Settings;
use crate::store::{Store, SwitchedStore};
use axum::http::StatusCode;
use std::sync::Arc;

async fn call(state: &AppState, method: &str, path: &str, body: &str) -> (StatusCode, String) {
    let (status, _, body) = super::super::oneshot(state, method, path, body).await;
    (status, body)
}

#[track_caller]
fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

const ENV: &str = "/api/v1/config/environments/1";

fn effective(node: &str) -> String {
    format!("{ENV}/nodes/{node}/resources/astute/values?effective")
}

/// Environments 1 and 2 (levels [nodes]); environment 1 registers n1 and
/// has a document there, environment 2 registers n2.
async fn setup(state: &AppState) {
    for (method, path, body) in [
        (
            "POST",
            "/api/v1/config/components",
            r#"{"name": "fuel", "resource_definitions": [{"name": "astute"}]}"#,
        ),
        (
            "POST",
            "/api/v1/config/environments",
            r#"{"id": 1, "components": ["fuel"], "hierarchy_levels": ["nodes"]}"#,
        ),
        (
            "POST",
            "/api/v1/config/environments",
            r#"{"id": 2, "components": ["fuel"], "hierarchy_levels": ["nodes"]}"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/1/hierarchy_levels/nodes/register",
            r#"["n1"]"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/2/hierarchy_levels/nodes/register",
            r#"["n2"]"#,
        ),
        (
            "PUT",
            &format!("{ENV}/resources/astute/values"),
            r#"{"a": 1, "b": 1}"#,
        ),
        (
            "PUT",
            &format!("{ENV}/nodes/n1/resources/astute/values"),
            r#"{"b": 2}"#,
        ),
    ] {
        let (status, body) = call(state, method, path, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {body}");
    }
}

/// What the store-side check (the one every read used before the
/// registers were in the snapshot) answers for a node of environment 1.
async fn store_answer(state: &AppState, node: &str) -> (StatusCode, String) {
    let path = crate::configdb::LevelPath::parse_cli(&format!("nodes={node}")).unwrap();
    let error = state
        .read(move |store| Ok(store.check_registered(1, &path)?))
        .await
        .unwrap_err();
    let response = axum::response::IntoResponse::into_response(error);
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

#[tokio::test]
async fn reads_check_registers_without_the_store_and_see_every_register_write() {
    let store = Arc::new(SwitchedStore::in_memory().unwrap());
    let state = AppState::new(Arc::clone(&store) as Arc<dyn Store>, Settings::default()).unwrap();
    setup(&state).await;
    // The refusals as the store-side check words them.
    let unregistered = store_answer(&state, "n9").await;
    let elsewhere = store_answer(&state, "n2").await;
    assert_eq!(unregistered.0, StatusCode::NOT_FOUND);
    assert!(
        json(&unregistered.1)["message"]
            .as_str()
            .unwrap()
            .starts_with("Cannot find a node with the given identifier"),
        "{}",
        unregistered.1
    );
    assert!(
        json(&elsewhere.1)["message"]
            .as_str()
            .unwrap()
            .contains("(it is registered in environment 2)"),
        "{}",
        elsewhere.1
    );

    // With the store down, and not asked at all: the registered node's
    // effective document, and the same refusals word for word.
    store.set_down(true);
    let asked = store.transactions();
    for _ in 0..3 {
        let (status, body) = call(&state, "GET", &effective("n1"), "").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(json(&body), serde_json::json!({"a": 1, "b": 2}));
        assert_eq!(
            call(&state, "GET", &effective("n9"), "").await,
            unregistered
        );
        assert_eq!(call(&state, "GET", &effective("n2"), "").await, elsewhere);
        // The root is never refused.
        let root = format!("{ENV}/resources/astute/values?effective");
        assert_eq!(call(&state, "GET", &root, "").await.0, StatusCode::OK);
    }
    assert_eq!(store.transactions(), asked, "a read asked the store");
    // A register write needs the store: refused, and nothing changes.
    let register = format!("{ENV}/hierarchy_levels/nodes/register");
    let (status, body) = call(&state, "POST", &register, r#"["n9"]"#).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(
        call(&state, "GET", &effective("n9"), "").await,
        unregistered
    );
    store.set_down(false);

    // Each register write is seen by the very next read.
    let generation = state.generation();
    let (status, body) = call(&state, "POST", &register, r#"["n9"]"#).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        state.generation() > generation,
        "a register write takes a generation"
    );
    let (status, body) = call(&state, "GET", &effective("n9"), "").await;
    assert_eq!(
        (status, json(&body)),
        (StatusCode::OK, serde_json::json!({"a": 1, "b": 1}))
    );
    let (status, body) = call(&state, "DELETE", &format!("{register}/n1"), "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = call(&state, "GET", &effective("n1"), "").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!((status, body), store_answer(&state, "n1").await);
    // Replacing the register, then removing it: every node is taken.
    let (status, body) = call(&state, "PUT", &register, r#"["n2"]"#).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        call(&state, "GET", &effective("n9"), "").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        call(&state, "GET", &effective("n2"), "").await.0,
        StatusCode::OK
    );
    let (status, body) = call(&state, "DELETE", &register, "").await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    for node in ["n1", "n9", "anything"] {
        assert_eq!(
            call(&state, "GET", &effective(node), "").await.0,
            StatusCode::OK,
            "{node}"
        );
    }
    // Environment 2's register still assigns n2 elsewhere for environment
    // 1 only while environment 1 has a register: now it has none.
    assert_eq!(
        call(&state, "GET", &effective("n2"), "").await.0,
        StatusCode::OK
    );
}

/// A document write is at most two store transactions (the write, with
/// its register check inside, and the catch-up that publishes it); a
/// refused one is its one transaction and writes nothing.
#[tokio::test]
async fn a_write_is_two_transactions_with_its_register_check_inside() {
    let store = Arc::new(SwitchedStore::in_memory().unwrap());
    let state = AppState::new(Arc::clone(&store) as Arc<dyn Store>, Settings::default()).unwrap();
    setup(&state).await;
    let doc = format!("{ENV}/nodes/n1/resources/astute/values");
    let key = format!("{doc}/keys/c.d");
    let import = format!("{ENV}/import");
    for (method, path, body) in [
        ("PUT", doc.as_str(), r#"{"b": 3}"#),
        ("PUT", key.as_str(), "4"),
        (
            "POST",
            import.as_str(),
            r#"{"level": "nodes=n3", "register": true, "documents": {"astute": {"x": 1}}}"#,
        ),
        (
            "POST",
            import.as_str(),
            r#"{"level": "nodes=n1", "documents": {"astute": {"x": 2}}}"#,
        ),
        ("DELETE", doc.as_str(), ""),
    ] {
        let before = store.transactions();
        let (status, answer) = call(&state, method, path, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {answer}");
        let used = store.transactions() - before;
        assert!(used <= 2, "{method} {path}: {used} transactions");
    }
    let refused = format!("{ENV}/nodes/n9/resources/astute/values/keys/a");
    let generation = store.generation().unwrap();
    let before = store.transactions();
    let (status, answer) = call(&state, "PUT", &refused, "1").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    assert_eq!(store.transactions() - before, 1);
    assert_eq!(store.generation().unwrap(), generation);
}
