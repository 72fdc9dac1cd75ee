//! Data files that do not parse, kept as Hiera keeps them (docs/api.md,
//! "Files that do not parse"): the import API keeps and lists them, the
//! server judges each file itself, reads of one answer 422 naming it and
//! Hiera's error, lookups fail only on the level that reads one, and a
//! write repairs it. `hierad import DIR` keeps and lists them too. The
//! comparison with the real `hiera` is tests/oracle/shim/broken.rs.

use crate::binary::{ok, refused};
use axum::http::StatusCode;
use hierad::server::AppState;
use hierad::settings::Settings;
use serde_json::{Value, json};

/// [`crate::api::call`], its body read as JSON (`null` when empty).
async fn call(state: &AppState, method: &str, path: &str, body: &str) -> (StatusCode, Value) {
    let (status, text) = crate::api::call(state, method, path, body).await;
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"))
    };
    (status, body)
}

const IMPORT: &str = "/api/v1/config/environments/5/import";
const BROKEN: &str = "/api/v1/config/environments/5/nodes/n1/resources/broken/values";
const SYNTAX: &str = "(<unknown>): did not find expected ',' or ']' while parsing a flow sequence at line 1 column 6";

/// Environment 5 (levels [nodes], component "app"), with `good` and a
/// `broken` file at nodes=n1 and `good` at the root, imported.
async fn imported() -> (AppState, Value) {
    let state = AppState::in_memory(Settings::default()).expect("state");
    let component = r#"{"name": "app", "resource_definitions": []}"#;
    let (status, _) = call(&state, "POST", "/api/v1/config/components", component).await;
    assert_eq!(status, StatusCode::CREATED);
    let environment = r#"{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}"#;
    let (status, _) = call(&state, "POST", "/api/v1/config/environments", environment).await;
    assert_eq!(status, StatusCode::CREATED);
    let root = json!({"documents": {"good": {"k": "root"}}});
    let (status, body) = call(&state, "POST", IMPORT, &root.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let node = json!({
        "level": "nodes=n1",
        "register": true,
        "documents": {"good": {"k": "n1"}},
        "unparsed": {
            "broken": {"path": "data/broken.yaml", "text": "key: [1\nother: 2\n"},
            // It parses: the server stores it as data, whatever the client thought.
            "fine": {"path": "data/fine.yaml", "text": "f: 1\n"},
        },
    });
    let (status, body) = call(&state, "POST", IMPORT, &node.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (state, body)
}

#[tokio::test]
async fn an_import_keeps_a_broken_file_and_lists_it() {
    let (state, answer) = imported().await;
    assert_eq!(answer["written"], 3, "{answer}");
    assert_eq!(
        answer["unparsed"],
        json!([{
            "resource": "broken",
            "path": "data/broken.yaml",
            "class": "Psych::SyntaxError",
            "message": SYNTAX,
        }])
    );
    let fine = "/api/v1/config/environments/5/nodes/n1/resources/fine/values";
    let (status, body) = call(&state, "GET", fine, "").await;
    assert_eq!((status, body), (StatusCode::OK, json!({"f": 1})));
}

#[tokio::test]
async fn reads_of_a_broken_file_answer_its_error_not_a_500() {
    let (state, _) = imported().await;
    for path in [
        BROKEN.to_owned(),
        format!("{BROKEN}?effective"),
        format!("{BROKEN}?version=1"),
        "/api/v1/data/5/broken?level=nodes%3Dn1".to_owned(),
    ] {
        let (status, body) = call(&state, "GET", &path, "").await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {body}");
        assert_eq!(body["error"], "unparsed_document", "{path}");
        assert_eq!(body["hiera_class"], "Psych::SyntaxError");
        assert_eq!(body["hiera_message"], SYNTAX);
        assert_eq!(body["path"], "data/broken.yaml");
        // What Puppet's yaml_data says of it, which the Hiera 5 functions raise.
        assert_eq!(
            body["puppet_error"],
            "Unable to parse (data/broken.yaml): did not find expected ',' or ']' while parsing a flow sequence at line 1 column 6"
        );
        assert_eq!(body.get("puppet_warning"), None);
        let message = body["message"].as_str().unwrap();
        assert!(
            message.starts_with("the values of resource \"broken\" at nodes=n1 of environment 5 (version 1) holds data/broken.yaml as imported, which does not parse"),
            "{message}"
        );
    }
    // The document at the root, and other resources, read as ever.
    let (status, _) = call(&state, "GET", "/api/v1/data/5/broken", "").await;
    assert_eq!(status, StatusCode::OK);
}

async fn lookup(
    state: &AppState,
    node: &str,
    hierarchy: &[&str],
    key: &str,
) -> (StatusCode, Value) {
    let body = json!({"environment": 5, "level": format!("nodes={node}"), "hierarchy": hierarchy, "key": key});
    call(state, "POST", "/api/v1/lookup", &body.to_string()).await
}

#[tokio::test]
async fn lookups_fail_only_where_they_read_the_broken_file() {
    let (state, _) = imported().await;
    let hiera_error =
        json!({"error": "hiera_error", "class": "Psych::SyntaxError", "message": SYNTAX});
    // Hiera reads levels in order and stops at the first answer.
    let cases: &[(&str, &[&str], &str, StatusCode, Value)] = &[
        (
            "n1",
            &["broken", "good"],
            "k",
            StatusCode::UNPROCESSABLE_ENTITY,
            hiera_error.clone(),
        ),
        (
            "n1",
            &["good", "broken"],
            "k",
            StatusCode::OK,
            json!({"found": true, "value": "n1"}),
        ),
        (
            "n1",
            &["good", "broken"],
            "nope",
            StatusCode::UNPROCESSABLE_ENTITY,
            hiera_error,
        ),
        (
            "n2",
            &["broken", "good"],
            "k",
            StatusCode::OK,
            json!({"found": true, "value": "root"}),
        ),
    ];
    call(
        &state,
        "PUT",
        "/api/v1/config/environments/5/hierarchy_levels/nodes/register",
        r#"{"level": "nodes", "values": ["n1", "n2"]}"#,
    )
    .await;
    for (node, hierarchy, key, status, want) in cases {
        let got = lookup(&state, node, hierarchy, key).await;
        assert_eq!(got, (*status, want.clone()), "{node} {hierarchy:?} {key}");
    }
}

/// The environment's own hiera.yaml (the resource `hiera`) kept
/// unparsed fails every lookup, naming the file, as Hiera fails to load
/// a broken configuration; nothing answers from defaults.
#[tokio::test]
async fn a_broken_hiera_yaml_fails_every_lookup() {
    let (state, _) = imported().await;
    let config = json!({"documents": {}, "unparsed": {"hiera": {"path": "/etc/hiera/hiera.yaml", "text": ":hierarchy: [x\n"}}});
    let (status, body) = call(&state, "POST", IMPORT, &config.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = lookup(&state, "n1", &["good"], "k").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["class"], "Psych::SyntaxError");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with("(/etc/hiera/hiera.yaml): did not find expected ',' or ']'"),
        "{message}"
    );
}

#[tokio::test]
async fn a_write_over_the_broken_file_repairs_it() {
    let (state, _) = imported().await;
    let (status, _) = call(&state, "PUT", BROKEN, r#"{"key": [1]}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = call(&state, "GET", BROKEN, "").await;
    assert_eq!((status, body), (StatusCode::OK, json!({"key": [1]})));
    let got = lookup(&state, "n1", &["broken", "good"], "k").await;
    assert_eq!(got, (StatusCode::OK, json!({"found": true, "value": "n1"})));
}

#[tokio::test]
async fn a_malformed_unparsed_file_is_refused_and_nothing_written() {
    let (state, _) = imported().await;
    for (file, want) in [
        (
            json!({"path": "x.yaml"}),
            "give exactly one of text and base64",
        ),
        (
            json!({"path": "x.yaml", "text": "a", "base64": "YQ=="}),
            "give exactly one of text and base64",
        ),
        (
            json!({"path": "x.yaml", "base64": "!!"}),
            "base64 does not decode",
        ),
        (json!({"path": "", "text": "a: [\n"}), "path is empty"),
        (
            json!({"path": "x.yaml", "text": "a", "size": 1}),
            "unknown field `size`",
        ),
    ] {
        let body = json!({"level": "nodes=n1", "documents": {}, "unparsed": {"other": file}});
        let (status, answer) = call(&state, "POST", IMPORT, &body.to_string()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(want),
            "{answer}"
        );
    }
    let twice =
        json!({"documents": {"good": {}}, "unparsed": {"good": {"path": "g.yaml", "text": "["}}});
    let (status, answer) = call(&state, "POST", IMPORT, &twice.to_string()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let other = "/api/v1/config/environments/5/nodes/n1/resources/other/values";
    assert_eq!(
        call(&state, "GET", other, "").await.0,
        StatusCode::NOT_FOUND
    );
}

/// `hierad import DIR --db`: the broken file is kept and listed, the rest
/// imported; reads name the file; the fixed file imported again repairs it.
#[test]
fn the_import_command_keeps_and_lists_a_broken_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("override")).unwrap();
    std::fs::write(tree.join("astute.yaml"), "deployment_id: 15\n").unwrap();
    std::fs::write(tree.join("override/plugins.yaml"), "- a list\n").unwrap();
    let out = ok(&format!(
        "import {} --env 3 --db {}",
        tree.display(),
        db.display()
    ));
    let shown = tree.join("override/plugins.yaml");
    assert!(
        out.contains(&format!(
            "kept unparsed (Hiera cannot read it; lookups that read it fail): override/plugins from {}: Data retrieved from {} is Array not Hash (TypeError)",
            shown.display(),
            shown.display()
        )),
        "{out}"
    );
    let get = |resource: &str| {
        format!(
            "config get --env 3 --resource {resource} --db {}",
            db.display()
        )
    };
    assert_eq!(
        ok(&format!(
            "{} --key deployment_id --format plain",
            get("astute")
        )),
        "15\n"
    );
    let err = refused(&get("override/plugins"));
    assert!(
        err.contains("which does not parse: TypeError: Data retrieved from")
            && err.contains("is Array not Hash"),
        "{err}"
    );
    std::fs::write(tree.join("override/plugins.yaml"), "plugins: []\n").unwrap();
    let out = ok(&format!(
        "import {} --env 3 --db {}",
        tree.display(),
        db.display()
    ));
    assert!(!out.contains("kept unparsed"), "{out}");
    assert_eq!(
        ok(&format!("{} --format json", get("override/plugins"))).trim(),
        "{\n  \"plugins\": []\n}"
    );
}

/// A tree with a file that is not a Hash and one that is not UTF-8.
fn broken_tree(dir: &std::path::Path) -> std::path::PathBuf {
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("override")).unwrap();
    std::fs::write(tree.join("astute.yaml"), "deployment_id: 15\n").unwrap();
    std::fs::write(tree.join("override/plugins.yaml"), "- a list\n").unwrap();
    std::fs::write(tree.join("latin1.yaml"), b"k: caf\xe9\n").unwrap();
    tree
}

/// `hierad export` writes a kept file back byte for byte, so `hiera` over
/// the exported tree fails where the server fails; locally and over a
/// server (the file travels as base64 when it is not UTF-8).
#[test]
fn export_writes_kept_files_back_as_they_were_imported() {
    let dir = tempfile::tempdir().unwrap();
    let tree = broken_tree(dir.path());
    let server = crate::server::TestServer::empty();
    let db = dir.path().join("h.db");
    for (n, at) in [
        format!("--db {}", db.display()),
        format!("--server {}", server.url),
    ]
    .iter()
    .enumerate()
    {
        ok(&format!("import {} --env 3 {at}", tree.display()));
        let out_dir = dir.path().join(format!("out{n}"));
        let out = ok(&format!("export --env 3 {} {at}", out_dir.display()));
        assert!(
            out.contains("2 file(s) kept unparsed written back as imported"),
            "{out}"
        );
        let astute = std::fs::read_to_string(out_dir.join("astute.yaml")).unwrap();
        assert_eq!(astute, "---\ndeployment_id: 15\n");
        for rel in ["override/plugins.yaml", "latin1.yaml"] {
            assert_eq!(
                std::fs::read(out_dir.join(rel)).unwrap(),
                std::fs::read(tree.join(rel)).unwrap(),
                "{at}: {rel}"
            );
        }
    }
}
