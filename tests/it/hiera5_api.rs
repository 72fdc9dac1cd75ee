//! Hiera 5 environments through the HTTP API in process (`oneshot`, as
//! tests/it/api.rs): created with `"hiera": 5`, looked up with Puppet's
//! `lookup_options` honoured and reserved, and every field that does
//! not fit the environment's Hiera refused by name. (`puppet lookup`'s
//! own answers: tests/oracle/hiera5_server.rs.)

use crate::api::call;
use axum::http::StatusCode;
use hierad::server::AppState;
use hierad::settings::Settings;
use serde_json::{Value, json};

const ENVS: &str = "/api/v1/config/environments";

/// Environment 5 (Hiera 5: a hiera.yaml reading `nodes/%{trusted.certname}`
/// and `common`, the latter with lookup_options) and environment 3
/// (Hiera 3), both using component "app".
async fn setup() -> AppState {
    let state = AppState::in_memory(Settings::default()).expect("state");
    let component = r#"{"name": "app", "resource_definitions": [{"name": "hiera"}, {"name": "hiera-origin"}, {"name": "common"}, {"name": "nodes"}]}"#;
    let (status, body) = call(&state, "POST", "/api/v1/config/components", component).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let five =
        r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["trusted.certname"], "hiera": 5}"#;
    let (status, body) = call(&state, "POST", ENVS, five).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let three = r#"{"id": 3, "components": ["app"], "hierarchy_levels": []}"#;
    let (status, body) = call(&state, "POST", ENVS, three).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let hiera = json!({
        "version": 5,
        "defaults": {"data_hash": "yaml_data"},
        "hierarchy": [
            {"name": "Nodes", "path": "nodes/%{trusted.certname}.yaml"},
            {"name": "Common", "path": "common.yaml"}
        ]
    });
    let common = json!({
        "lookup_options": {"users": {"merge": "deep"}, "^list_.*": {"merge": "unique"}},
        "users": {"root": {"uid": 0}},
        "list_a": [1, 2],
        "plain": "common"
    });
    let node = json!({"users": {"alice": {"uid": 1}}, "list_a": [3], "plain": "node"});
    for (path, doc) in [
        ("resources/hiera/values", hiera),
        ("resources/common/values", common),
        ("trusted.certname/web1/resources/nodes/values", node),
    ] {
        let url = format!("{ENVS}/5/{path}");
        let (status, body) = call(&state, "PUT", &url, &doc.to_string()).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{url}: {body}");
    }
    state
}

async fn lookup(state: &AppState, body: Value) -> (StatusCode, Value) {
    let (status, text) = call(state, "POST", "/api/v1/lookup", &body.to_string()).await;
    let answer = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (status, answer)
}

const WEB1: &str = r#"{"clientcert": "web1", "fqdn": "web1", "hostname": "web1", "domain": ""}"#;

fn web1() -> Value {
    serde_json::from_str(WEB1).unwrap()
}

#[tokio::test]
async fn an_environment_says_which_hiera_it_speaks() {
    let state = setup().await;
    let (_, five) = call(&state, "GET", &format!("{ENVS}/5"), "").await;
    assert_eq!(serde_json::from_str::<Value>(&five).unwrap()["hiera"], 5);
    let (_, three) = call(&state, "GET", &format!("{ENVS}/3"), "").await;
    assert_eq!(
        serde_json::from_str::<Value>(&three).unwrap().get("hiera"),
        None
    );
    let (status, body) = call(&state, "POST", ENVS, r#"{"id": 9, "hiera": 4}"#).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body.contains("hiera is 3 (Hiera 3.10, the default) or 5 (Hiera 5), not 4"),
        "{body}"
    );
    let (status, _) = call(&state, "GET", &format!("{ENVS}/9"), "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn lookups_honour_lookup_options_stored_as_data() {
    let state = setup().await;
    let (status, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "users", "scope": web1()}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer,
        json!({"found": true, "value": {"root": {"uid": 0}, "alice": {"uid": 1}}})
    );
    let (_, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "list_a", "scope": web1()}),
    )
    .await;
    assert_eq!(answer["value"], json!([3, 1, 2]));
    // `merge` given overrides them; another node reads common only.
    let (_, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "users", "scope": web1(), "merge": "first"}),
    )
    .await;
    assert_eq!(answer["value"], json!({"alice": {"uid": 1}}));
    let other = json!({"clientcert": "db1", "fqdn": "db1", "hostname": "db1", "domain": ""});
    let (_, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "plain", "scope": other}),
    )
    .await;
    assert_eq!(answer["value"], "common");
    // `hiera`'s resolutions (what `hierad lookup --server` sends) read
    // as Puppet's merges.
    let (_, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "plain", "scope": web1(), "resolution": "array"}),
    )
    .await;
    assert_eq!(answer["value"], json!(["node", "common"]));
    let (_, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "users", "scope": web1(), "resolution": "priority"}),
    )
    .await;
    assert_eq!(
        answer["value"],
        json!({"root": {"uid": 0}, "alice": {"uid": 1}})
    );
    // Several keys, each answered; a default where nothing is found.
    let (_, answer) = lookup(
        &state,
        json!({"environment": 5, "keys": ["plain", "none"], "scope": web1()}),
    )
    .await;
    assert_eq!(answer["answers"][0]["value"], "node");
    assert_eq!(answer["answers"][1]["found"], false);
    let (_, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "none", "default": 7}),
    )
    .await;
    assert_eq!(answer, json!({"found": false, "default": true, "value": 7}));
}

/// A node's stored scope stands for its facts (the request's scope
/// layered over it).
#[tokio::test]
async fn a_nodes_stored_scope_is_its_facts() {
    let state = setup().await;
    let register = format!("{ENVS}/5/hierarchy_levels/trusted.certname/register");
    let (status, body) = call(&state, "PUT", &register, r#"["web1"]"#).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let scope = format!("{ENVS}/5/nodes/web1/scope");
    let (status, body) = call(&state, "PUT", &scope, WEB1).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (_, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "plain", "node": "web1"}),
    )
    .await;
    assert_eq!(answer, json!({"found": true, "value": "node"}));
    let over = json!({"clientcert": "db1"});
    let (_, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "plain", "node": "web1", "scope": over}),
    )
    .await;
    assert_eq!(answer, json!({"found": true, "value": "common"}));
}

#[tokio::test]
async fn lookup_options_is_reserved() {
    let state = setup().await;
    for key in ["lookup_options", "lookup_options.users"] {
        let (status, answer) = lookup(
            &state,
            json!({"environment": 5, "key": key, "scope": web1()}),
        )
        .await;
        assert_eq!(
            (status, answer),
            (StatusCode::OK, json!({"found": false})),
            "{key}"
        );
    }
    // A Hiera 3 environment keeps it an ordinary key.
    let url = format!("{ENVS}/3/resources/common/values");
    call(&state, "PUT", &url, r#"{"lookup_options": {"x": 1}}"#).await;
    let hiera = format!("{ENVS}/3/resources/hiera/values");
    call(&state, "PUT", &hiera, r#"{":hierarchy": ["common"]}"#).await;
    let (_, answer) = lookup(&state, json!({"environment": 3, "key": "lookup_options"})).await;
    assert_eq!(answer, json!({"found": true, "value": {"x": 1}}));
}

#[tokio::test]
async fn fields_of_the_other_hiera_are_refused_by_name() {
    let state = setup().await;
    for (body, said) in [
        (
            json!({"environment": 5, "key": "k", "hierarchy": ["common"]}),
            "not hierarchy",
        ),
        (
            json!({"environment": 5, "key": "k", "level": "trusted.certname=web1"}),
            "not level",
        ),
        (
            json!({"environment": 5, "key": "k", "resolution": {"behavior": "deeper"}}),
            "not resolution",
        ),
        (
            json!({"environment": 5, "key": "k", "order_override": "common"}),
            "merge, default and explain, not order_override",
        ),
        (
            json!({"environment": 3, "key": "k", "merge": "deep"}),
            "environment 3 is a Hiera 3 environment: merge is for Hiera 5 environments",
        ),
        (
            json!({"environment": 5, "key": "k", "merge": 3}),
            "merge is a strategy's name",
        ),
    ] {
        let (status, answer) = lookup(&state, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(message.contains(said), "{body}: {message}");
    }
}

#[tokio::test]
async fn puppets_errors_keep_their_classes() {
    let state = setup().await;
    let (status, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "users", "merge": "deeper"}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(answer["class"], "ArgumentError");
    let (status, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "users.root.uid.x", "scope": web1()}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(answer["class"], "Puppet::DataBinding::LookupError");
}

/// Ten `%{lookup('e{n-1}')}` in each `e{n}`: `e{n}` is 10^n times `e0`.
/// Puppet would build it (e7 is a gigabyte); the server refuses it on
/// its lookup budget, as a Hiera 3 environment's, and answers the rest.
#[tokio::test]
async fn interpolation_fan_out_is_refused_on_the_lookup_budget() {
    let state = setup().await;
    let mut common = serde_json::Map::new();
    common.insert("e0".into(), json!("x".repeat(100)));
    for n in 1..=7 {
        common.insert(
            format!("e{n}"),
            json!(format!("%{{lookup('e{}')}}", n - 1).repeat(10)),
        );
    }
    let url = format!("{ENVS}/5/resources/common/values");
    let (status, body) = call(&state, "PUT", &url, &Value::Object(common).to_string()).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, answer) = lookup(
        &state,
        json!({"environment": 5, "key": "e2", "scope": web1()}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["value"].as_str().map(str::len), Some(10_000));
    for key in ["e5", "e7"] {
        let (status, answer) = lookup(
            &state,
            json!({"environment": 5, "key": key, "scope": web1()}),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{key}: {answer}");
        assert_eq!(answer["error"], "budget_exceeded", "{key}: {answer}");
    }
    // Several keys share one budget: the refusal is the request's.
    let (status, answer) = lookup(
        &state,
        json!({"environment": 5, "keys": ["plain", "e7"], "scope": web1()}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(answer["error"], "budget_exceeded", "{answer}");
}

#[tokio::test]
async fn an_explanation_is_puppet_lookups_over_the_imported_directory() {
    let state = setup().await;
    let ask =
        json!({"environment": 5, "keys": ["nope", "users"], "scope": web1(), "explain": true});
    // No directory recorded: the files are named under the environment.
    let (status, answer) = lookup(&state, ask.clone()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["value"],
        json!({"root": {"uid": 0}, "alice": {"uid": 1}})
    );
    let text = answer["explanation"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Searching for \"nope\"\n")
            && text.contains("Using configuration \"hiera.yaml\"\n")
            && text.contains("Path \"data/nodes/web1.yaml\"\n")
            && text.contains("Original path: \"nodes/%{trusted.certname}.yaml\"\n"),
        "{text}"
    );
    // Recorded, as import-environment records it: under that directory.
    let origin = json!({"directory": "/srv/envs/production"});
    let url = format!("{ENVS}/5/resources/hiera-origin/values");
    let (status, body) = call(&state, "PUT", &url, &origin.to_string()).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (_, answer) = lookup(&state, ask).await;
    let text = answer["explanation"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Using configuration \"/srv/envs/production/hiera.yaml\"\n")
            && text.contains("Path \"/srv/envs/production/data/nodes/web1.yaml\"\n"),
        "{text}"
    );
    let tree = &answer["explanation"]["tree"];
    assert_eq!(tree["branches"][0]["type"], "root", "{tree}");
    // Found nowhere: the explanation's last line says so; a default is
    // the answer.
    let ask = json!({"environment": 5, "key": "nope", "scope": web1(), "explain": true});
    let (status, answer) = lookup(&state, ask).await;
    assert_eq!(
        (status, answer["found"].clone()),
        (StatusCode::OK, json!(false))
    );
    let text = answer["explanation"]["text"].as_str().unwrap_or_default();
    assert!(
        text.ends_with("Function lookup() did not find a value for the name 'nope'\n"),
        "{text}"
    );
    let ask =
        json!({"environment": 5, "key": "nope", "scope": web1(), "explain": true, "default": 7});
    let (_, answer) = lookup(&state, ask).await;
    assert_eq!(
        (answer["default"].clone(), answer["value"].clone()),
        (json!(true), json!(7))
    );
    // What `puppet lookup --explain` refuses is refused.
    let ask = json!({"environment": 5, "key": "users", "scope": web1(), "explain": true, "merge": "bogus"});
    let (status, answer) = lookup(&state, ask).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(answer["class"], "ArgumentError", "{answer}");
}
