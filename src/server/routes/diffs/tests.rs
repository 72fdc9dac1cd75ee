//! Diffs, in process: a hand case (added, removed, changed), the patch
//! turning A into B, versions and generations and tags, 404 for a missing
//! version or tag, 410 for a generation no longer readable.

use crate::server::AppState;
use crate::settings::Settings;
use crate::store::{Store, SwitchedStore};
use axum::http::StatusCode;
use serde_json::{Value as Json, json};
use std::sync::Arc;

async fn call(state: &AppState, method: &str, path: &str, body: &str) -> (StatusCode, u64, Json) {
    let (status, generation, body) = super::super::oneshot(state, method, path, body).await;
    (
        status,
        generation,
        serde_json::from_str(&body).unwrap_or(Json::Null),
    )
}

const ROOT: &str = "/api/v1/config/environments/1/resources/astute/values";
const NODE: &str = "/api/v1/config/environments/1/nodes/n1/resources/astute/values";

async fn setup() -> (Arc<SwitchedStore>, AppState) {
    let store = Arc::new(SwitchedStore::in_memory().unwrap());
    let state = AppState::new(Arc::clone(&store) as Arc<dyn Store>, Settings::default()).unwrap();
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
            "PUT",
            "/api/v1/config/environments/1/hierarchy_levels/nodes/register",
            r#"["n1"]"#,
        ),
    ] {
        let (status, _, body) = call(&state, method, path, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {body}");
    }
    (store, state)
}

/// `patch` applied to `a` with the json-patch crate.
fn applied(a: &Json, patch: &Json) -> Json {
    let patch: json_patch::Patch = serde_json::from_value(patch.clone()).unwrap();
    let mut doc = a.clone();
    json_patch::patch(&mut doc, &patch).unwrap();
    doc
}

#[tokio::test]
async fn a_version_diff_lists_key_paths_and_a_patch_from_a_to_b() {
    let (_, state) = setup().await;
    let a = json!({"a": 1, "b": {"c": 1, "x": [1, 2]}, "d": [1], "s": "same"});
    let b = json!({"a": 2, "b": {"c": 1, "e": 3, "x": [1, 3]}, "s": "same", "f": null});
    call(&state, "PUT", ROOT, &a.to_string()).await;
    call(&state, "PUT", ROOT, &b.to_string()).await;
    // Default: the previous and the latest version.
    let (status, _, diff) = call(&state, "GET", &format!("{ROOT}/diff"), "").await;
    assert_eq!(status, StatusCode::OK, "{diff}");
    assert_eq!(
        (diff["from"].clone(), diff["to"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(diff["added"], json!(["b.e", "f"]));
    assert_eq!(diff["removed"], json!(["d"]));
    assert_eq!(
        diff["changed"],
        json!([
            {"path": "a", "old": 1, "new": 2},
            {"path": "b.x.1", "old": 2, "new": 3}
        ])
    );
    assert_eq!(applied(&a, &diff["patch"]), b);
    // Named versions, either way round; version 0 is the empty document.
    let (_, _, back) = call(&state, "GET", &format!("{ROOT}/diff?from=2&to=1"), "").await;
    assert_eq!(applied(&b, &back["patch"]), a);
    let (_, _, first) = call(&state, "GET", &format!("{ROOT}/diff?from=0&to=1"), "").await;
    assert_eq!(applied(&json!({}), &first["patch"]), a);
    // Missing versions: 404; a bad number: 400.
    let (status, _, body) = call(&state, "GET", &format!("{ROOT}/diff?to=9"), "").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("version 9"),
        "{body}"
    );
    let (status, _, _) = call(&state, "GET", &format!("{ROOT}/diff?from=x"), "").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn an_effective_diff_compares_generations_and_tags() {
    let (store, state) = setup().await;
    let (_, g1, _) = call(&state, "PUT", ROOT, r#"{"a": 1, "b": 1}"#).await;
    call(&state, "PUT", NODE, r#"{"b": 2}"#).await;
    let (_, g3, _) = call(&state, "PUT", ROOT, r#"{"a": 5, "b": 1, "c": 1}"#).await;
    let diff_url = format!("{NODE}/diff?effective&from_generation={g1}");
    let (status, _, diff) = call(&state, "GET", &diff_url, "").await;
    assert_eq!(status, StatusCode::OK, "{diff}");
    assert_eq!(
        (diff["from"].as_u64(), diff["to"].as_u64()),
        (Some(g1), Some(g3))
    );
    assert_eq!(diff["added"], json!(["c"]));
    assert_eq!(
        diff["changed"],
        json!([{"path": "a", "old": 1, "new": 5}, {"path": "b", "old": 1, "new": 2}])
    );
    assert_eq!(
        applied(&json!({"a": 1, "b": 1}), &diff["patch"]),
        json!({"a": 5, "b": 2, "c": 1})
    );
    // Tags name generations.
    store.create_tag("before", Some(g1), None).unwrap();
    store.create_tag("after", Some(g3), None).unwrap();
    let by_tag = format!("{NODE}/diff?effective&from_tag=before&to_tag=after");
    let (status, _, tagged) = call(&state, "GET", &by_tag, "").await;
    assert_eq!(status, StatusCode::OK, "{tagged}");
    assert_eq!(tagged, diff);
    let (status, _, _) = call(
        &state,
        "GET",
        &format!("{NODE}/diff?effective&from_tag=nope"),
        "",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Refusals: no `from`, versions mixed with generations, overrides.
    for bad in [
        format!("{NODE}/diff?effective"),
        format!("{NODE}/diff?effective&from=1"),
        format!("{NODE}/diff?from_generation=1"),
        format!("{NODE}/diff?effective&from_generation=1&from_tag=before"),
        format!("{NODE}/diff?effective&from_generation={}", g3 + 100),
        "/api/v1/config/environments/1/resources/astute/overrides/diff?effective&from_generation=1"
            .to_owned(),
    ] {
        let (status, _, body) = call(&state, "GET", &bad, "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}

#[tokio::test]
async fn a_generation_no_longer_readable_is_410_naming_the_oldest() {
    let (store, state) = setup().await;
    let (_, g1, _) = call(&state, "PUT", ROOT, r#"{"a": 1}"#).await;
    let (_, g2, _) = call(&state, "PUT", ROOT, r#"{"a": 2}"#).await;
    // As after a replay (`hierad migrate`): reads before g2 are not exact.
    store
        .execute_sql(
            &format!("UPDATE generation SET recorded_from = {g2} WHERE id = 1"),
            &[],
        )
        .unwrap();
    let url = format!("{ROOT}/diff?effective&from_generation={g1}");
    let (status, _, body) = call(&state, "GET", &url, "").await;
    assert_eq!(status, StatusCode::GONE, "{body}");
    assert_eq!(body["error"], "gone");
    assert_eq!(body["oldest_readable"].as_u64(), Some(g2), "{body}");
}
