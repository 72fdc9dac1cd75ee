//! In-process tests of who may do what, through the whole app (guard,
//! handlers, store): an auth file of tokens, two environments sharing a
//! component, and the principals the security tester used.

use crate::auth::verify::{hex, sha256};
use crate::auth::{AuthFile, Authenticator};
use crate::server::{AppState, app};
use crate::settings::Settings;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt as _;

const ADMIN: &str = "hierad_admin-token";
/// `write`, limited to environment 1.
const WRITER1: &str = "hierad_writer1-token";
/// `write`, every environment.
const WRITER: &str = "hierad_writer-token";

fn token_entry(name: &str, role: &str, token: &str, envs: &str) -> String {
    format!(
        "[[token]]\nname = \"{name}\"\nrole = \"{role}\"\nsha256 = \"{}\"\n{envs}\n",
        hex(&sha256(token.as_bytes()))
    )
}

/// Environments 1 and 2 (levels [nodes]) sharing the component `fuel`,
/// which defines `astute`; environment 2's astute holds a secret. The
/// id of astute's definition.
async fn shared() -> (AppState, i64) {
    let state = AppState::in_memory(Settings::default()).unwrap();
    let text = [
        token_entry("admin", "admin", ADMIN, ""),
        token_entry("w1", "write", WRITER1, "environments = [1]"),
        token_entry("w", "write", WRITER, ""),
    ]
    .concat();
    let file = AuthFile::parse(&text).unwrap();
    state.set_authenticator(Arc::new(Authenticator::new(&file).unwrap()));
    let (status, body) = create_component(&state, "fuel", "astute").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let astute = body["resource_definitions"][0]["id"].as_i64().unwrap();
    for id in [1, 2] {
        let env = json!({"id": id, "components": ["fuel"], "hierarchy_levels": ["nodes"]});
        let (status, body) = call(
            &state,
            ADMIN,
            "POST",
            "/api/v1/config/environments",
            &env.to_string(),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let url = "/api/v1/config/environments/2/resources/astute/values";
    let (status, body) = call(&state, ADMIN, "PUT", url, r#"{"secret": "s2"}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    (state, astute)
}

/// An admin creates component `name` defining `resource`.
async fn create_component(state: &AppState, name: &str, resource: &str) -> (StatusCode, Value) {
    let body = json!({"name": name, "resource_definitions": [{"name": resource}]});
    let path = "/api/v1/config/components";
    call(state, ADMIN, "POST", path, &body.to_string()).await
}

async fn call(
    state: &AppState,
    token: &str,
    method: &str,
    path: &str,
    body: &str,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    answer(state, request).await
}

async fn answer(state: &AppState, request: Request<Body>) -> (StatusCode, Value) {
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

/// The tester's bypass: a writer limited to environment 1 imported a
/// resource named "1" into its own environment; defined in the shared
/// component, the name won over the id 1 in environment 2's URLs.
#[tokio::test]
async fn a_limited_writer_cannot_redefine_what_another_environments_urls_name() {
    let (state, astute) = shared().await;
    let import = "/api/v1/config/environments/1/import";
    for name in [astute.to_string(), "decoy".to_owned()] {
        let body = json!({"kind": "values", "documents": {name.clone(): {"decoy": "x"}}});
        let (status, answer) = call(&state, WRITER1, "POST", import, &body.to_string()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{name}: {answer}");
        assert!(
            message(&answer).contains("token:w1 may not define resources"),
            "{answer}"
        );
    }
    // Resources the environment defines are only documents.
    let body = json!({"documents": {"astute": {"mine": 1}}});
    let (status, answer) = call(&state, WRITER1, "POST", import, &body.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    // Environment 2's id still names astute.
    let by_id = format!("/api/v1/config/environments/2/resources/{astute}/values");
    let (status, answer) = call(&state, ADMIN, "GET", &by_id, "").await;
    assert_eq!((status, answer), (StatusCode::OK, json!({"secret": "s2"})));
    // Nor may an admin give a resource a name that reads as an id.
    let body = json!({"documents": {"1": {"decoy": "x"}}});
    let (status, answer) = call(&state, ADMIN, "POST", import, &body.to_string()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        message(&answer),
        "resource \"1\" is not a valid name: it is all digits, which a URL reads as a resource definition's id"
    );
    let (status, answer) = create_component(&state, "digits", "007").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(message(&answer).contains("all digits"), "{answer}");
    // A writer or an admin with no limit defines in imports as before:
    // it may write every environment anyway.
    for (token, name) in [(WRITER, "decoy"), (ADMIN, "decoy2")] {
        let body = json!({"documents": {name: {"d": 1}}});
        let (status, answer) = call(&state, token, "POST", import, &body.to_string()).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["defined"], json!([name]));
    }
}

/// Two `Authorization` headers (or two `X-Auth-Token`): the first one won,
/// whatever the second said. Now the request is malformed, 401.
#[tokio::test]
async fn repeated_credential_headers_are_refused() {
    let (state, _) = shared().await;
    let url = "/api/v1/config/environments/1/resources/astute/values";
    for (name, first, second) in [
        (
            "authorization",
            format!("Bearer {ADMIN}"),
            "Bearer nope".to_owned(),
        ),
        ("x-auth-token", "a".to_owned(), "b".to_owned()),
    ] {
        let request = Request::builder()
            .uri(url)
            .header(name, first)
            .header(name, second)
            .body(Body::empty())
            .unwrap();
        let (status, answer) = answer(&state, request).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{name}: {answer}");
        assert_eq!(
            message(&answer),
            format!("malformed credentials: the request has 2 {name} headers; send one")
        );
    }
}

/// A limited principal's own environment percent-encoded (`%31`) was
/// judged undecoded, as no number: 403 "may not use environment
/// -9223372036854775808". The guard now judges what the route reads.
#[tokio::test]
async fn the_guard_judges_the_environment_the_route_reads() {
    let (state, _) = shared().await;
    let url = |env: &str| format!("/api/v1/config/environments/{env}/resources/astute/values");
    let (status, answer) = call(&state, WRITER1, "GET", &url("%31"), "").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, answer) = call(&state, WRITER1, "PUT", &url("%31"), r#"{"a": 1}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{answer}");
    let (status, answer) = call(&state, WRITER1, "GET", &url("%32"), "").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(message(&answer), "token:w1 may not use environment 2");
    let (status, answer) = call(&state, WRITER1, "GET", &url("x"), "").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(
        message(&answer),
        "token:w1 may use only its own environments, and \"x\" names none: environments are numbered"
    );
}

/// A principal limited to environment 1 asking for a node only
/// environment 2 registers was told "(it is registered in environment
/// 2)", and then "not assigned" (which says another environment holds
/// it). It gets the 404 of a node no environment registers, the same
/// body; an unlimited one is told where it is.
#[tokio::test]
async fn a_limited_principal_is_not_told_where_another_environments_nodes_are() {
    let (state, _) = shared().await;
    for env in [1, 2] {
        let url = format!("/api/v1/config/environments/{env}/hierarchy_levels/nodes/register");
        let nodes = if env == 1 { r#"["n1"]"# } else { r#"["n2"]"# };
        let (status, answer) = call(&state, ADMIN, "PUT", &url, nodes).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
    let url = "/api/v1/config/environments/1/nodes/n2/resources/astute/values";
    let said = "Node with the given ID not assigned to cluster with the given ID: \"n2\" is not in the register of level \"nodes\" of environment 1";
    let unknown = "/api/v1/config/environments/1/nodes/n9/resources/astute/values";
    for method in ["GET", "PUT"] {
        let (status, answer) = call(&state, WRITER1, method, url, "{}").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
        let (_, unknown) = call(&state, WRITER1, method, unknown, "{}").await;
        assert_eq!(
            answer.to_string().replace("n2", "n9"),
            unknown.to_string(),
            "{method}"
        );
        let (status, answer) = call(&state, WRITER, method, url, "{}").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
        assert_eq!(
            message(&answer),
            format!("{said} (it is registered in environment 2)"),
            "{method}"
        );
    }
}

/// A lookup's environment is in its body: a principal limited to some
/// environments is checked once the handler has parsed it, its only
/// parse (the guard used to parse it too); an answer another principal
/// had cached is not served outside the limits either.
#[tokio::test]
async fn a_limited_lookup_is_parsed_once_and_checked_after() {
    use crate::server::routes::lookup::PARSES;
    let (state, _) = shared().await;
    let lookup = |env: i64| json!({"environment": env, "key": "secret"}).to_string();
    let parses = || PARSES.with(std::cell::Cell::get);
    let before = parses();
    let (status, answer) = call(&state, WRITER1, "POST", "/api/v1/lookup", &lookup(1)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(parses() - before, 1);
    let before = parses();
    let (status, answer) = call(&state, WRITER1, "POST", "/api/v1/lookup", &lookup(2)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(message(&answer), "token:w1 may not use environment 2");
    assert_eq!(parses() - before, 1);
    // Cached (from its second miss on) for an admin, still refused.
    for _ in 0..3 {
        let (status, answer) = call(&state, ADMIN, "POST", "/api/v1/lookup", &lookup(2)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
    let (status, answer) = call(&state, WRITER1, "POST", "/api/v1/lookup", &lookup(2)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
}
