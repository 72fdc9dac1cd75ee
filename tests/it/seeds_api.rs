//! The document URLs as docs/spec/configdb-api.md writes them, in
//! process: a datasource named by its resource definition's
//! id, the opt-in 308 for writes by name, `?effective&version=N`, and
//! `?effective=false`.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hierad::server::{AppState, app};
use hierad::settings::Settings;
use serde_json::{Value, json};
use tower::ServiceExt as _;

fn state() -> AppState {
    AppState::in_memory(Settings::default()).expect("state")
}

struct Answer {
    status: StatusCode,
    location: Option<String>,
    body: String,
}

async fn send(state: &AppState, method: &str, path: &str, body: &str, prefer: bool) -> Answer {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json");
    if prefer {
        request = request.header("prefer", "redirect-to-id");
    }
    let request = request.body(Body::from(body.to_owned())).unwrap();
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        location,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

async fn call(state: &AppState, method: &str, path: &str, body: &str) -> (StatusCode, String) {
    let answer = send(state, method, path, body, false).await;
    (answer.status, answer.body)
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

const ENV: &str = "/api/v1/config/environments/1";

/// Environment 1, levels [nodes], component "fuel" defining astute and
/// override/plugins; the definitions' ids.
async fn setup(state: &AppState) -> (i64, i64) {
    let component = r#"{"name": "fuel", "resource_definitions": [{"name": "astute"}, {"name": "override/plugins"}]}"#;
    let (status, body) = call(state, "POST", "/api/v1/config/components", component).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let defs = json(&body)["resource_definitions"].clone();
    let id = |i: usize| defs[i]["id"].as_i64().unwrap();
    let environment = r#"{"id": 1, "components": ["fuel"], "hierarchy_levels": ["nodes"]}"#;
    let (status, body) = call(state, "POST", "/api/v1/config/environments", environment).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (id(0), id(1))
}

#[tokio::test]
async fn datasources_by_id_for_every_method() {
    let state = state();
    let (astute, plugins) = setup(&state).await;
    let by_id = format!("{ENV}/nodes/n1/resources/{astute}/values");
    let by_name = format!("{ENV}/nodes/n1/resources/astute/values");
    let (status, body) = call(&state, "PUT", &by_id, r#"{"a": 1, "b": {"c": 2}}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, body) = call(&state, "GET", &by_name, "").await;
    assert_eq!(
        (status, json(&body)),
        (StatusCode::OK, json!({"a": 1, "b": {"c": 2}}))
    );
    let (status, body) = call(&state, "GET", &by_id, "").await;
    assert_eq!(
        (status, json(&body)),
        (StatusCode::OK, json!({"a": 1, "b": {"c": 2}}))
    );
    let (status, _) = call(&state, "PUT", &format!("{by_id}/keys/b.c"), "3").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, body) = call(&state, "GET", &format!("{by_id}/keys/b"), "").await;
    assert_eq!(json(&body), json!({"c": 3}));
    let (_, body) = call(&state, "GET", &format!("{by_id}?effective"), "").await;
    assert_eq!(json(&body), json!({"a": 1, "b": {"c": 3}}));
    let (_, body) = call(&state, "GET", &format!("{by_id}/history"), "").await;
    assert_eq!(json(&body).as_array().map(Vec::len), Some(2), "{body}");
    let (status, body) = call(&state, "POST", &format!("{by_id}/restore?version=1"), "").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, body) = call(&state, "GET", &by_name, "").await;
    assert_eq!(json(&body), json!({"a": 1, "b": {"c": 2}}));
    // A name with a slash, by id, at the root; overrides too.
    let plugins_url = format!("{ENV}/resources/{plugins}/override");
    let (status, _) = call(&state, "PUT", &plugins_url, r#"{"p": true}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, body) = call(
        &state,
        "GET",
        &format!("{ENV}/resources/override/plugins/overrides"),
        "",
    )
    .await;
    assert_eq!(json(&body), json!({"p": true}));
    let (status, _) = call(&state, "DELETE", &by_id, "").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, body) = call(&state, "GET", &by_name, "").await;
    assert_eq!(json(&body), json!({}));
    // An id no definition of the environment has is an unknown resource.
    let (status, body) = call(&state, "GET", &format!("{ENV}/resources/9999/values"), "").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        json(&body)["message"]
            .as_str()
            .unwrap()
            .contains("\"9999\""),
        "{body}"
    );
}

/// Digits in a document URL are an id: a name that reads as one is refused
/// wherever a resource is defined, so no definition can change what an
/// id names (it used to win over the id).
#[tokio::test]
async fn a_name_made_of_digits_is_refused_and_digits_are_an_id() {
    let state = state();
    let (astute, _) = setup(&state).await;
    let digits = astute.to_string();
    let component = json!({"name": "digits", "resource_definitions": [{"name": digits}]});
    let (status, body) = call(
        &state,
        "POST",
        "/api/v1/config/components",
        &component.to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        json(&body)["message"]
            .as_str()
            .unwrap()
            .contains("it is all digits, which a URL reads as a resource definition's id"),
        "{body}"
    );
    let import = json!({"documents": {digits.clone(): {"named": "digits"}}});
    let (status, body) = call(
        &state,
        "POST",
        &format!("{ENV}/import"),
        &import.to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let url = format!("{ENV}/resources/{digits}/values");
    let (status, body) = call(&state, "PUT", &url, r#"{"by": "id"}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (_, body) = call(&state, "GET", &format!("{ENV}/resources/astute/values"), "").await;
    assert_eq!(json(&body), json!({"by": "id"}));
}

#[tokio::test]
async fn writes_by_name_redirect_only_clients_that_ask() {
    let state = state();
    let (astute, plugins) = setup(&state).await;
    // A client that does not follow redirects (hierad's CLI, the shim):
    // a write by name is written, 204, as before.
    let by_name = format!("{ENV}/nodes/n1/resources/astute/values");
    let plain = send(&state, "PUT", &by_name, r#"{"v": 1}"#, false).await;
    assert_eq!(
        (plain.status, plain.location),
        (StatusCode::NO_CONTENT, None)
    );
    // A client that asks (Prefer: redirect-to-id) is sent to the id-based
    // URL, writing nothing, and writes there.
    let cases = [
        (
            by_name.clone(),
            format!("{ENV}/nodes/n1/resources/{astute}/values"),
            r#"{"v": 2}"#,
        ),
        (
            format!("{ENV}/nodes/n1/resources/astute/values/keys/v?x=1"),
            format!("{ENV}/nodes/n1/resources/{astute}/values/keys/v?x=1"),
            "3",
        ),
        (
            format!("{ENV}/resources/override/plugins/override"),
            format!("{ENV}/resources/{plugins}/override"),
            r#"{"v": 4}"#,
        ),
    ];
    for (url, want, body) in cases {
        let redirected = send(&state, "PUT", &url, body, true).await;
        assert_eq!(
            redirected.status,
            StatusCode::PERMANENT_REDIRECT,
            "{url}: {}",
            redirected.body
        );
        assert_eq!(redirected.location.as_deref(), Some(want.as_str()), "{url}");
        assert_eq!(json(&redirected.body), json!({"location": want}));
        let followed = send(&state, "PUT", &want, body, true).await;
        assert_eq!(
            followed.status,
            StatusCode::NO_CONTENT,
            "{want}: {}",
            followed.body
        );
    }
    let (_, body) = call(&state, "GET", &by_name, "").await;
    assert_eq!(json(&body), json!({"v": 3}));
    let (_, body) = call(&state, "GET", &format!("{by_name}/history"), "").await;
    assert_eq!(json(&body).as_array().map(Vec::len), Some(3), "{body}");
    // Reads by name are never redirected; unknown names are 404 either way.
    let read = send(&state, "GET", &by_name, "", true).await;
    assert_eq!(read.status, StatusCode::OK);
    let unknown = send(
        &state,
        "PUT",
        &format!("{ENV}/resources/nope/values"),
        "{}",
        true,
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.body);
}

#[tokio::test]
async fn effective_flag_means_what_it_says() {
    let state = state();
    setup(&state).await;
    let root = format!("{ENV}/resources/astute/values");
    let node = format!("{ENV}/nodes/n1/resources/astute/values");
    call(&state, "PUT", &root, r#"{"r": 1}"#).await;
    call(&state, "PUT", &node, r#"{"n": 1}"#).await;
    let cases: &[(&str, StatusCode, Value)] = &[
        ("", StatusCode::OK, json!({"n": 1})),
        ("?effective", StatusCode::OK, json!({"n": 1, "r": 1})),
        ("?effective=true", StatusCode::OK, json!({"n": 1, "r": 1})),
        ("?effective=false", StatusCode::OK, json!({"n": 1})),
        (
            "?effective=false&version=1",
            StatusCode::OK,
            json!({"n": 1}),
        ),
    ];
    for (query, status, want) in cases {
        let (got, body) = call(&state, "GET", &format!("{node}{query}"), "").await;
        assert_eq!((got, json(&body)), (*status, want.clone()), "{query}");
    }
    let (status, body) = call(&state, "GET", &format!("{node}?effective=no"), "").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        json(&body)["message"],
        json!("effective must be true or false, not \"no\"")
    );
}

#[tokio::test]
async fn effective_at_a_version() {
    let state = state();
    setup(&state).await;
    let root = format!("{ENV}/resources/astute/values");
    let node = format!("{ENV}/nodes/n1/resources/astute/values");
    let node_override = format!("{ENV}/nodes/n1/resources/astute/overrides");
    call(&state, "PUT", &root, r#"{"r": 1, "deep": {"a": 1}}"#).await;
    call(&state, "PUT", &node, r#"{"uid": "1", "deep": {"b": 1}}"#).await;
    call(&state, "PUT", &node, r#"{"uid": "2"}"#).await;
    call(&state, "PUT", &node_override, r#"{"o": true}"#).await;
    call(&state, "DELETE", &node, "").await;
    // The node's values at version N, under the other layers as they are.
    let cases: &[(u64, Value)] = &[
        (
            1,
            json!({"r": 1, "deep": {"a": 1, "b": 1}, "uid": "1", "o": true}),
        ),
        (2, json!({"r": 1, "deep": {"a": 1}, "uid": "2", "o": true})),
        // Version 3 is the deletion: no values at the node then.
        (3, json!({"r": 1, "deep": {"a": 1}, "o": true})),
    ];
    for (version, want) in cases {
        let (status, body) = call(
            &state,
            "GET",
            &format!("{node}?effective&version={version}"),
            "",
        )
        .await;
        assert_eq!(
            (status, json(&body)),
            (StatusCode::OK, want.clone()),
            "version {version}"
        );
    }
    let (status, body) = call(&state, "GET", &format!("{node}?effective&version=4"), "").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let message = json(&body)["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with(
            "Cannot find a given version of data for the given cluster, node and data source: "
        ),
        "{message}"
    );
    assert!(message.ends_with("has no version 4"), "{message}");
    // By id, and with ?key.
    let (status, body) = call(
        &state,
        "GET",
        &format!("{node}?effective=true&version=1&key=deep"),
        "",
    )
    .await;
    assert_eq!(
        (status, json(&body)),
        (StatusCode::OK, json!({"a": 1, "b": 1}))
    );
    let (status, body) = call(
        &state,
        "GET",
        &format!("{node_override}?effective&version=1"),
        "",
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = call(
        &state,
        "GET",
        &format!("{ENV}/nodes/n1/resources/nope/values?effective&version=1"),
        "",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn registers_refuse_unknown_nodes_for_reads_and_writes() {
    let state = state();
    setup(&state).await;
    let environment = r#"{"id": 2, "components": ["fuel"], "hierarchy_levels": ["nodes"]}"#;
    call(&state, "POST", "/api/v1/config/environments", environment).await;
    let node = |env: i64, name: &str| {
        format!("/api/v1/config/environments/{env}/nodes/{name}/resources/astute/values")
    };
    // Without a register, any node is taken, as before.
    let (status, body) = call(&state, "GET", &node(1, "node-9"), "").await;
    assert_eq!((status, json(&body)), (StatusCode::OK, json!({})));
    let (status, _) = call(&state, "PUT", &node(1, "node-9"), r#"{"x": 1}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    let register = format!("{ENV}/hierarchy_levels/nodes/register");
    let (status, body) = call(&state, "GET", &register, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(
        json(&body)["message"],
        json!("environment 1 keeps no register of level \"nodes\"")
    );
    let (status, body) = call(&state, "PUT", &register, r#"["node-1", "node-2"]"#).await;
    assert_eq!(
        (status, json(&body)),
        (
            StatusCode::OK,
            json!({"level": "nodes", "values": ["node-1", "node-2"]})
        )
    );
    let (status, body) = call(&state, "POST", &register, r#"["node-3", "node-1"]"#).await;
    assert_eq!(
        (status, json(&body)),
        (
            StatusCode::OK,
            json!({"level": "nodes", "values": ["node-1", "node-2", "node-3"], "changed": 1})
        )
    );
    let (status, body) = call(&state, "DELETE", &format!("{register}/node-3"), "").await;
    assert_eq!(
        (status, json(&body)["changed"].clone()),
        (StatusCode::OK, json!(1))
    );
    let (status, _) = call(&state, "DELETE", &format!("{register}/node-3"), "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    call(
        &state,
        "PUT",
        "/api/v1/config/environments/2/hierarchy_levels/nodes/register",
        r#"["node-7"]"#,
    )
    .await;

    // Registered nodes: as before.
    let (status, _) = call(&state, "PUT", &node(1, "node-1"), r#"{"uid": "1"}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = call(
        &state,
        "GET",
        &format!("{}?effective", node(1, "node-1")),
        "",
    )
    .await;
    assert_eq!((status, json(&body)), (StatusCode::OK, json!({"uid": "1"})));
    // Others: the two 404s of docs/spec/configdb-api.md, for every
    // method, and nothing written.
    let unknown = "Cannot find a node with the given identifier";
    let elsewhere = "Node with the given ID not assigned to cluster with the given ID";
    let n9 = node(1, "node-9");
    let n7 = node(1, "node-7");
    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("GET", n9.clone(), "", unknown),
        ("GET", format!("{n9}?effective"), "", unknown),
        ("GET", format!("{n9}/history"), "", unknown),
        ("GET", format!("{n9}/keys/x"), "", unknown),
        ("PUT", n9.clone(), "{}", unknown),
        ("PUT", format!("{n9}/keys/x"), "2", unknown),
        ("DELETE", n9.clone(), "", unknown),
        ("POST", format!("{n9}/restore?version=1"), "", unknown),
        ("GET", n7.clone(), "", elsewhere),
        ("PUT", n7.clone(), "{}", elsewhere),
        (
            "POST",
            format!("{ENV}/import"),
            r#"{"level": "nodes=node-9", "documents": {"astute": {"a": 1}}}"#,
            unknown,
        ),
    ];
    for (method, url, body, want) in &cases {
        let (status, reply) = call(&state, method, url, body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {url}: {reply}");
        let message = json(&reply)["message"].as_str().unwrap().to_owned();
        assert!(message.starts_with(want), "{method} {url}: {message}");
    }
    let (_, body) = call(&state, "GET", &format!("{ENV}/resources/astute/values"), "").await;
    assert_eq!(json(&body), json!({}));
    // An import may register as it goes; the root is never refused.
    let import =
        r#"{"level": "nodes=node-9", "register": true, "documents": {"astute": {"a": 1}}}"#;
    let (status, body) = call(&state, "POST", &format!("{ENV}/import"), import).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = call(&state, "GET", &n9, "").await;
    assert_eq!((status, json(&body)), (StatusCode::OK, json!({"a": 1})));
    let (status, _) = call(
        &state,
        "PUT",
        &format!("{ENV}/resources/astute/values"),
        r#"{"r": 1}"#,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // Without the register, everything is taken again.
    let (status, _) = call(&state, "DELETE", &register, "").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = call(&state, "GET", &node(1, "node-42"), "").await;
    assert_eq!(status, StatusCode::OK);
    // Bad registers are refused with the reason.
    let (status, body) = call(&state, "PUT", &register, r#"{"nodes": []}"#).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = call(
        &state,
        "PUT",
        &format!("{ENV}/hierarchy_levels/racks/register"),
        "[]",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}
