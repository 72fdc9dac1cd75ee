//! Resource schemas: a resource definition's content may hold a
//! JSON Schema; every write of the resource (PUT values and overrides, a
//! key-path write, an import, a restore) is checked against it, a
//! violation is a 400 naming the offending value's path and what was
//! expected, and nothing is stored. The sample's
//! `override/configuration/*` resources carry schemas/override_resources.json.

use crate::binary::Args;
use crate::in_process::InProcess;
use crate::server::{Served, call};
use serde_json::{Value as Json, json};
use std::io::Write as _;
use std::process::{Command, Output, Stdio};

const CLUSTER: &str = "/api/v1/config/environments/1/resources/override/configuration/cluster";
const DEFINITION: &str =
    "/api/v1/config/components/fuel/resource_definitions/override/configuration/cluster";

fn send(server: &impl Served, method: &str, path: &str, body: &Json) -> (u16, Json) {
    let reply = call(
        method,
        &format!("{}{path}", server.url()),
        Some(&body.to_string()),
        &[("content-type", "application/json")],
    );
    let json = if reply.body.is_empty() {
        Json::Null
    } else {
        reply.json()
    };
    (reply.status, json)
}

fn get(server: &impl Served, path: &str) -> Json {
    let reply = call("GET", &format!("{}{path}", server.url()), None, &[]);
    assert_eq!(reply.status, 200, "GET {path}: {}", reply.body);
    reply.json()
}

/// Data override_resources applies, which the schema accepts.
fn good() -> Json {
    json!({
        "configuration": {"file": {"/etc/motd": {"content": "hello\n", "mode": "0644"}}},
        "configuration_options": {"create": false, "types_filter": ["file"]},
        "defaults": {"file": {"owner": "root"}},
        "network_metadata": {"free": "other keys are not checked"},
    })
}

/// Each rule of schemas/override_resources.json: a document breaking it,
/// the path the refusal names, and what it says was expected.
fn violations() -> Vec<(Json, &'static str, &'static str)> {
    vec![
        (
            json!({"configuration_options": {"create": "maybe"}}),
            "/configuration_options/create",
            "the value is not of type \"boolean\"",
        ),
        (
            json!({"configuration": {"file": {"motd": ["content"]}}}),
            "/configuration/file/motd",
            "is not of type \"object\"",
        ),
        (
            json!({"configuration": {"file": "motd"}}),
            "/configuration/file",
            "the value is not of type \"object\"",
        ),
        (
            json!({"configuration": ["file"]}),
            "/configuration",
            "is not of type \"object\"",
        ),
        (
            json!({"configuration": {"File": {}}}),
            "/configuration",
            "\"File\" does not match",
        ),
        (
            json!({"configuration": {"file": {"": {}}}}),
            "/configuration/file",
            "\"\" is shorter than 1 character",
        ),
        (
            json!({"configuration": {"file": {"motd": {"Content": "x"}}}}),
            "/configuration/file/motd",
            "\"Content\" does not match",
        ),
        (
            json!({"configuration_options": {"types_create": ["file"]}}),
            "/configuration_options",
            "Additional properties are not allowed ('types_create' was unexpected)",
        ),
        (
            json!({"configuration_options": {"types_filter": "file"}}),
            "/configuration_options/types_filter",
            "the value is not of type \"array\"",
        ),
        (
            json!({"configuration_options": {"titles_create_exception": [1]}}),
            "/configuration_options/titles_create_exception/0",
            "the value is not of type \"string\"",
        ),
        (
            json!({"configuration_options": "create"}),
            "/configuration_options",
            "is not of type \"object\"",
        ),
        (
            json!({"defaults": {"file": "0644"}}),
            "/defaults/file",
            "the value is not of type \"object\"",
        ),
    ]
}

fn assert_refused(status: u16, body: &Json, path: &str, expected: &str, what: &str) {
    let message = body["message"].as_str().unwrap_or_default();
    assert_eq!(status, 400, "{what}: {body}");
    assert_eq!(body["error"], "bad_request", "{what}: {body}");
    assert!(
        message.contains(&format!("at {path}: ")) && message.contains(expected),
        "{what}: wanted {path} and {expected:?} in {message}"
    );
    assert!(message.contains("nothing was stored"), "{what}: {message}");
}

#[test]
fn the_samples_override_data_is_checked_on_every_write_and_a_refusal_stores_nothing() {
    let server = InProcess::with_sample();
    let definition = get(&server, DEFINITION);
    assert_eq!(
        definition["content"]["schema"]["title"], "override_resources data",
        "{definition}"
    );
    let (status, body) = send(&server, "PUT", &format!("{CLUSTER}/values"), &good());
    assert_eq!(status, 204, "{body}");
    let history = |s: &InProcess| get(s, &format!("{CLUSTER}/values/history"));
    let before = history(&server);
    for (doc, path, expected) in violations() {
        for kind in ["values", "overrides"] {
            let (status, body) = send(&server, "PUT", &format!("{CLUSTER}/{kind}"), &doc);
            assert_refused(status, &body, path, expected, &format!("PUT {kind} {doc}"));
        }
        // At a node's level too: every stored part is checked.
        let node = "/api/v1/config/environments/1/nodes/node-126.test.domain.local/resources/override/configuration/cluster/values";
        let (status, body) = send(&server, "PUT", node, &doc);
        assert_refused(
            status,
            &body,
            path,
            expected,
            &format!("PUT at a level {doc}"),
        );
    }
    // A key-path write whose result breaks the schema.
    let key = format!("{CLUSTER}/values/keys/configuration_options.create");
    let (status, body) = send(&server, "PUT", &key, &json!("maybe"));
    assert_refused(
        status,
        &body,
        "/configuration_options/create",
        "is not of type \"boolean\"",
        "key",
    );
    // An import is all or nothing: its valid document is not written either.
    let import = json!({
        "level": "",
        "documents": {
            "override/plugins": {"written": "no"},
            "override/configuration/cluster": {"configuration_options": {"create": "maybe"}},
        },
    });
    let (status, body) = send(
        &server,
        "POST",
        "/api/v1/config/environments/1/import",
        &import,
    );
    assert_refused(
        status,
        &body,
        "/configuration_options/create",
        "boolean",
        "import",
    );
    let plugins = get(
        &server,
        "/api/v1/config/environments/1/resources/override/plugins/values",
    );
    assert!(plugins.get("written").is_none(), "{plugins}");
    // The previous version is intact and the history did not grow.
    assert_eq!(get(&server, &format!("{CLUSTER}/values")), good());
    assert_eq!(history(&server), before);
    let (status, _) = send(
        &server,
        "PUT",
        &format!("{CLUSTER}/values/keys/configuration_options.create"),
        &json!(true),
    );
    assert_eq!(status, 204);
}

/// The schema the cases set on resource "checked" of component "app".
fn port_schema() -> Json {
    json!({"type": "object", "properties": {"port": {"type": "integer", "minimum": 1}}})
}

fn app_component() -> Json {
    json!({"name": "app", "resource_definitions": [
        {"name": "checked", "content": {"schema": port_schema(), "owner": "ops"}},
        {"name": "free"},
    ]})
}

/// Component "app" (resource "checked" under [`port_schema`], "free"
/// without one) in environment 5: the path of checked's document.
const APP_DOC: &str = "/api/v1/config/environments/5/resources/checked/values";
const APP_DEFINITION: &str = "/api/v1/config/components/app/resource_definitions/checked";

fn app_in_environment_5(server: &impl Served) {
    let (status, body) = send(
        server,
        "POST",
        "/api/v1/config/components",
        &app_component(),
    );
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        body["resource_definitions"][0]["content"]["owner"], "ops",
        "{body}"
    );
    assert!(
        body["resource_definitions"][1].get("content").is_none(),
        "{body}"
    );
    let env = json!({"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]});
    assert_eq!(
        send(server, "POST", "/api/v1/config/environments", &env).0,
        201
    );
}

/// A schema that is not one: 400, and no component is left behind.
#[test]
fn a_component_with_a_schema_that_is_not_one_is_refused_whole() {
    let server = InProcess::empty();
    let mut bad = app_component();
    bad["resource_definitions"][0]["content"]["schema"] = json!({"type": "integer-ish"});
    let (status, body) = send(&server, "POST", "/api/v1/config/components", &bad);
    assert_eq!(status, 400, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("resource definition \"checked\"")
            && message.contains("not a valid JSON Schema"),
        "{message}"
    );
    assert_eq!(
        call(
            "GET",
            &format!("{}/api/v1/config/components/app", server.url),
            None,
            &[]
        )
        .status,
        404
    );
}

#[test]
fn a_write_the_schema_refuses_is_refused_and_a_resource_without_one_takes_anything() {
    let server = InProcess::empty();
    app_in_environment_5(&server);
    assert_eq!(send(&server, "PUT", APP_DOC, &json!({"port": 80})).0, 204);
    let (status, body) = send(&server, "PUT", APP_DOC, &json!({"port": 0}));
    assert_refused(
        status,
        &body,
        "/port",
        "the value is less than the minimum of 1",
        "minimum",
    );
    let (status, body) = send(&server, "PUT", APP_DOC, &json!({"port": "80"}));
    assert_refused(
        status,
        &body,
        "/port",
        "the value is not of type \"integer\"",
        "type",
    );
    // The unchecked resource takes anything.
    assert_eq!(
        send(
            &server,
            "PUT",
            "/api/v1/config/environments/5/resources/free/values",
            &json!({"port": "x"})
        )
        .0,
        204
    );
}

/// A schema set later: a refused one changes nothing, and restoring a
/// version the schema refuses is refused too.
#[test]
fn a_schema_set_later_refuses_the_restore_of_a_version_it_refuses() {
    let server = InProcess::empty();
    app_in_environment_5(&server);
    assert_eq!(send(&server, "PUT", APP_DOC, &json!({"port": 80})).0, 204);
    assert_eq!(send(&server, "PUT", APP_DEFINITION, &json!({})).0, 200);
    assert_eq!(
        send(&server, "PUT", APP_DOC, &json!({"port": "eighty"})).0,
        204
    );
    let (status, body) = send(
        &server,
        "PUT",
        APP_DEFINITION,
        &json!({"schema": {"type": "array"}, "owner": 1}),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(
        &server,
        "PUT",
        APP_DEFINITION,
        &json!({"schema": {"minimum": "one"}}),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        get(&server, APP_DEFINITION)["content"]["owner"],
        1,
        "a refused content changed the old"
    );
    let (status, body) = send(
        &server,
        "PUT",
        APP_DEFINITION,
        &json!({"schema": port_schema()}),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(
        &server,
        "POST",
        &format!("{APP_DOC}/restore?version=2"),
        &json!(null),
    );
    assert_refused(
        status,
        &body,
        "/port",
        "is not of type \"integer\"",
        "restore",
    );
    assert_eq!(get(&server, APP_DOC), json!({"port": "eighty"}));
}

/// Unknown component or resource: 404; content that is not an object: 400.
#[test]
fn a_definition_of_an_unknown_resource_is_404_and_content_must_be_an_object() {
    let server = InProcess::empty();
    app_in_environment_5(&server);
    assert_eq!(
        send(
            &server,
            "PUT",
            "/api/v1/config/components/app/resource_definitions/nope",
            &json!({})
        )
        .0,
        404
    );
    assert_eq!(
        send(
            &server,
            "PUT",
            "/api/v1/config/components/nope/resource_definitions/checked",
            &json!({})
        )
        .0,
        404
    );
    assert_eq!(
        send(&server, "PUT", APP_DEFINITION, &json!(["schema"])).0,
        400
    );
}

fn hierad(server: &impl Served, args: &(impl Args + ?Sized), stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .args(args.words())
        .args(["--server", server.url()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_cli_shows_sets_and_removes_schemas_and_a_refused_upload_is_a_clear_error() {
    let server = InProcess::with_sample();
    let role_schema = "config schema --component fuel --resource override/configuration/role";
    let shown = hierad(&server, role_schema, "");
    assert!(shown.status.success(), "{shown:?}");
    let schema: Json = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(schema["title"], "override_resources data");
    let set = "config set --env 1 --resource override/configuration/role";
    let upload = "configuration:\n  notify:\n    hello:\n      message: hi\n";
    let out = hierad(&server, set, upload);
    assert!(out.status.success(), "{out:?}");
    for (yaml, path, expected) in [
        (
            "configuration_options:\n  create: maybe\n",
            "/configuration_options/create",
            "the value is not of type \"boolean\"",
        ),
        (
            "configuration:\n  notify:\n    hello: [message]\n",
            "/configuration/notify/hello",
            "is not of type \"object\"",
        ),
    ] {
        let out = hierad(&server, set, yaml);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("at {path}: "))
                && stderr.contains(expected)
                && stderr.contains("nothing was stored"),
            "{stderr}"
        );
        let kept = hierad(
            &server,
            "config get --env 1 --resource override/configuration/role \
             --key configuration.notify.hello.message --format plain",
            "",
        );
        assert_eq!(String::from_utf8_lossy(&kept.stdout), "hi\n", "{kept:?}");
    }
    // A schema of one's own from stdin, then none.
    let own = hierad(
        &server,
        &format!("{role_schema} --set -"),
        "type: object\nrequired: [configuration]\n",
    );
    assert!(own.status.success(), "{own:?}");
    let out = hierad(&server, set, "defaults: {}\n");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\"configuration\" is a required property"),
        "{out:?}"
    );
    let removed = hierad(&server, &format!("{role_schema} --remove"), "");
    assert!(removed.status.success(), "{removed:?}");
    let shown = hierad(&server, role_schema, "");
    assert_eq!(String::from_utf8_lossy(&shown.stdout), "null\n");
    let out = hierad(&server, set, "configuration_options:\n  create: maybe\n");
    assert!(out.status.success(), "no schema, no check: {out:?}");
    let bad = hierad(&server, &format!("{role_schema} --set -"), "[1, 2]\n");
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("must be a JSON Schema (an object), not an array"),
        "{bad:?}"
    );
}
