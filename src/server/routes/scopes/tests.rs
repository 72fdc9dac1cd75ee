//! The node scope routes, in process: versions with author and time,
//! the generation a write takes, the refusals, and a lookup naming a node.

use crate::server::AppState;
use crate::settings::Settings;
use crate::store::{Store, SwitchedStore};
use axum::http::StatusCode;
use std::sync::Arc;

/// Status, generation header and body of one request.
async fn call(state: &AppState, method: &str, path: &str, body: &str) -> (StatusCode, u64, String) {
    super::super::oneshot(state, method, path, body).await
}

#[track_caller]
fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

const SCOPE: &str = "/api/v1/config/environments/1/nodes/n1/scope";

/// Environment 1 (levels [nodes]) registering n1 and n2, with resources
/// `common` and `web` at the root.
async fn setup() -> AppState {
    let store = Arc::new(SwitchedStore::in_memory().unwrap());
    let state = AppState::new(store as Arc<dyn Store>, Settings::default()).unwrap();
    for (method, path, body) in [
        (
            "POST",
            "/api/v1/config/components",
            r#"{"name": "fuel", "resource_definitions": [{"name": "common"}, {"name": "web"}]}"#,
        ),
        (
            "POST",
            "/api/v1/config/environments",
            r#"{"id": 1, "components": ["fuel"], "hierarchy_levels": ["nodes"]}"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/1/hierarchy_levels/nodes/register",
            r#"["n1", "n2"]"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/1/resources/common/values",
            r#"{"greeting": "hello %{::role}", "tier": "common"}"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/1/resources/web/values",
            r#"{"tier": "web"}"#,
        ),
    ] {
        let (status, _, body) = call(&state, method, path, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {body}");
    }
    state
}

#[tokio::test]
async fn a_scope_is_kept_with_versions_authors_and_generations() {
    let state = setup().await;
    let (status, g1, body) = call(&state, "PUT", SCOPE, r#"{"role": "db", "fqdn": "n1"}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, g2, _) = call(&state, "PUT", SCOPE, r#"{"role": "web"}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(g2, g1 + 1, "each write takes a generation");
    let (status, _, body) = call(&state, "GET", SCOPE, "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let got = json(&body);
    assert_eq!(got["node"], "n1");
    assert_eq!(got["scope"], serde_json::json!({"role": "web"}));
    assert_eq!(got["version"], 2);
    assert!(got["created_at"].as_i64().unwrap() > 1_600_000_000);
    assert!(got.get("author").is_some());
    let (status, g3, _) = call(&state, "DELETE", SCOPE, "").await;
    assert_eq!((status, g3), (StatusCode::NO_CONTENT, g2 + 1));
    let (status, _, body) = call(&state, "GET", &format!("{SCOPE}/history"), "").await;
    assert_eq!(status, StatusCode::OK);
    let history = json(&body);
    let deleted: Vec<(u64, bool)> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["version"].as_u64().unwrap(),
                v["deleted"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(deleted, [(1, false), (2, false), (3, true)]);
    assert!(history[0].get("author").is_some() && history[0].get("created_at").is_some());
}

#[tokio::test]
async fn missing_scopes_unknown_nodes_and_bad_bodies_are_refused_clearly() {
    let state = setup().await;
    let (status, _, body) = call(&state, "GET", SCOPE, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("n1"), "{body}");
    let unknown = "/api/v1/config/environments/1/nodes/n9/scope";
    let (status, _, body) = call(&state, "PUT", unknown, "{}").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("n9"), "{body}");
    for bad in ["[1]", "\"x\"", "null", "{"] {
        let (status, _, body) = call(&state, "PUT", SCOPE, bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    // Nothing was written.
    let (status, _, body) = call(&state, "GET", &format!("{SCOPE}/history"), "").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "[]"));
    let (status, _, _) = call(&state, "DELETE", SCOPE, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_lookup_naming_a_node_layers_its_request_scope_over_the_stored_one() {
    let state = setup().await;
    let lookup = |extra: &str| {
        format!(
            r#"{{"environment": 1, "key": "greeting", "hierarchy": ["%{{::role}}", "common"], {extra}}}"#
        )
    };
    // No stored scope: 404 naming the node.
    let (status, _, body) =
        call(&state, "POST", "/api/v1/lookup", &lookup(r#""node": "n1""#)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body.contains("n1"), "{body}");
    call(&state, "PUT", SCOPE, r#"{"::role": "web"}"#).await;
    let (status, _, body) =
        call(&state, "POST", "/api/v1/lookup", &lookup(r#""node": "n1""#)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(json(&body)["value"], "hello web");
    // The request's own scope wins over the stored one.
    let over = r#""node": "n1", "scope": {"::role": "db"}"#;
    let (_, _, body) = call(&state, "POST", "/api/v1/lookup", &lookup(over)).await;
    assert_eq!(json(&body)["value"], "hello db");
    // The same body after a scope write answers from the new scope (the
    // write took a generation: no stale cached answer).
    call(&state, "PUT", SCOPE, r#"{"::role": "ops"}"#).await;
    let (_, _, body) = call(&state, "POST", "/api/v1/lookup", &lookup(r#""node": "n1""#)).await;
    assert_eq!(json(&body)["value"], "hello ops");
    // The stored scope picks the hierarchy's datasource too.
    call(&state, "PUT", SCOPE, r#"{"::role": "web"}"#).await;
    let tier =
        r#"{"environment": 1, "key": "tier", "hierarchy": ["%{::role}", "common"], "node": "n1"}"#;
    let (_, _, body) = call(&state, "POST", "/api/v1/lookup", tier).await;
    assert_eq!(json(&body)["value"], "web");
    for bad in [r#""node": 3"#, r#""node": """#] {
        let (status, _, body) = call(&state, "POST", "/api/v1/lookup", &lookup(bad)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}

/// Reads need the read role, writes the write role (auth::needed).
#[test]
fn roles_follow_the_method() {
    use crate::api::paths;
    use crate::auth::{Need, Role, needed};
    use axum::http::Method;
    for template in [paths::NODE_SCOPE, paths::NODE_SCOPE_HISTORY] {
        assert_eq!(needed(&Method::GET, Some(template)), Need::Role(Role::Read));
    }
    for method in [Method::PUT, Method::DELETE] {
        assert_eq!(
            needed(&method, Some(paths::NODE_SCOPE)),
            Need::Role(Role::Write)
        );
    }
}
