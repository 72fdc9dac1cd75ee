//! The routes `Harden` calls directly, past axum's router
//! (src/server/http/templates.rs, `Templates::direct`), answer every
//! request as the router would: the same requests, through [`app`] and
//! through [`app_routed`] (every route behind the router), get the same
//! status, headers and body, percent-encoded, malformed and refused
//! paths included.

use super::{AppState, Harden, app, app_routed};
use crate::settings::Settings;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use std::collections::BTreeSet;
use tower::ServiceExt;

/// The status, headers and body of `request` answered by `app`, less
/// `Content-Length`, which axum's router sets from the body's length (a
/// HEAD's too) and hyper sets on the wire when it is missing.
async fn answer(app: Harden, request: Request<Body>) -> (StatusCode, HeaderMap, String) {
    let response = app.oneshot(request).await.unwrap();
    let (mut parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    parts.headers.remove("content-length");
    (
        parts.status,
        parts.headers,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

fn request(method: &str, path: &str, etag: Option<&str>, body: &str) -> Request<Body> {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json");
    if let Some(etag) = etag {
        request = request.header("if-none-match", etag);
    }
    request.body(Body::from(body.to_owned())).unwrap()
}

#[tokio::test]
async fn direct_calls_answer_as_the_router_does() {
    let state = AppState::in_memory(Settings::default()).unwrap();
    let setup = [
        (
            "POST",
            "/api/v1/config/components",
            r#"{"name": "app", "resource_definitions": [{"name": "astute"}, {"name": "override/node/n 1"}]}"#,
        ),
        (
            "POST",
            "/api/v1/config/environments",
            r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/5/resources/astute/values",
            r#"{"a": 1, "b": {"c": [1, 2]}, "p": "%{::fqdn}"}"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/5/nodes/n%201/resources/astute/values",
            r#"{"a": 2}"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/5/resources/astute/overrides",
            r#"{"b": {"d": true}}"#,
        ),
        (
            "PUT",
            "/api/v1/config/environments/5/resources/override%2Fnode%2Fn%201/values",
            r#"{"o": "x"}"#,
        ),
    ];
    for (method, path, body) in setup {
        let (status, _, text) = answer(app(state.clone()), request(method, path, None, body)).await;
        assert!(status.is_success(), "{method} {path}: {status} {text}");
    }
    let (_, headers, _) = answer(
        app(state.clone()),
        request("GET", "/api/v1/data/5/astute", None, ""),
    )
    .await;
    let etag = headers["etag"].to_str().unwrap().to_owned();
    let asked: Vec<(&str, String, Option<&str>, &str)> = [
        "/api/v1/data/5/astute",
        "/api/v1/data/5/astute?level=nodes=n%201",
        "/api/v1/data/5/astute?level=nodes=%25%7Bfqdn%7D",
        "/api/v1/data/%35/astute",
        "/api/v1/data/5/override/node/n%201",
        "/api/v1/data/5/override%2Fnode%2Fn%201",
        "/api/v1/data/5/nothing",
        "/api/v1/data/6/astute",
        "/api/v1/data/x/astute",
        "/api/v1/data/%FF/astute",
        "/api/v1/data/5/%FF",
        "/api/v1/data/5/astute?level=bad",
        "/api/v1/data/5/astute?generation=1",
        "/api/v1/data/5/astute?decrypt=true",
        "/api/v1/config/environments/5/resources/astute/values",
        "/api/v1/config/environments/5/resources/astute/values?effective",
        "/api/v1/config/environments/5/resources/astute/values?effective&show_lookup",
        "/api/v1/config/environments/5/nodes/n%201/resources/astute/values?effective",
        "/api/v1/config/environments/5/resources/astute/values/keys/b.c",
        "/api/v1/config/environments/5/resources/astute/overrides",
        "/api/v1/config/environments/5/resources/astute/values/history",
        "/api/v1/config/environments/5/resources/astute/values?version=1",
        "/api/v1/config/environments/5/resources/override%2Fnode%2Fn%201/values",
        "/api/v1/config/environments/5/resources/nothing/values",
        "/api/v1/config/environments/5/nowhere",
        "/api/v1/config/environments/5/resources/astute/values/restore",
        "/api/v1/config/environments/%FF/resources/astute/values",
        "/api/v1/config/environments/5/resources/%FF/values",
        "/api/v1/config/environments/x/resources/astute/values",
    ]
    .into_iter()
    .flat_map(|path| {
        [
            ("GET", path.to_owned(), None, ""),
            ("HEAD", path.to_owned(), None, ""),
            ("GET", path.to_owned(), Some(etag.as_str()), ""),
        ]
    })
    .chain([
        (
            "POST",
            "/api/v1/lookup".to_owned(),
            None,
            r#"{"key": "a", "environment": 5}"#,
        ),
        ("POST", "/api/v1/lookup".to_owned(), None, r#"{"key": "#),
        ("GET", "/api/v1/lookup".to_owned(), None, ""),
    ])
    .collect();
    let mut statuses = BTreeSet::new();
    for (method, path, etag, body) in &asked {
        let direct = answer(app(state.clone()), request(method, path, *etag, body)).await;
        let routed = answer(app_routed(&state), request(method, path, *etag, body)).await;
        assert_eq!(direct, routed, "{method} {path} {etag:?}");
        statuses.insert(direct.0.as_u16());
    }
    // Not vacuous: answers, revalidations, refusals of each kind.
    for status in [200, 304, 400, 404, 405] {
        assert!(statuses.contains(&status), "{status} in {statuses:?}");
    }
}
