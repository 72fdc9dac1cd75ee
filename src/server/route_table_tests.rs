//! The route table is [`paths::ALL`]: the server registers each shared
//! template and no other, and each client URL builder's path is routed to
//! the template it was built from.

use crate::api::paths;
use crate::configdb::{DocAddress, DocKind, LevelPath};
use crate::ops::remote::urls;
use crate::server::http::templates::Templates;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::routing::any;
use std::path::Path;

/// The template `path` is routed to, `None` for no route: axum's router
/// over the shared templates (each route answering its own template) and
/// the server's matcher, which finds it before routing, must agree.
fn matched(path: &str) -> Option<String> {
    let mut router = axum::Router::new();
    for template in paths::ALL {
        router = router.route(template, any(move || async move { *template }));
    }
    let request = Request::get(path).body(Body::empty()).unwrap();
    // As `Harden` asks it: the target's path, not decoded.
    let found = Templates::server(true)
        .of(request.method(), request.uri().path())
        .template;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let response = runtime
        .block_on(tower::ServiceExt::oneshot(router, request))
        .unwrap();
    let routed = (response.status() == StatusCode::OK).then(|| {
        let body = runtime.block_on(axum::body::to_bytes(response.into_body(), 1024));
        String::from_utf8(body.unwrap().to_vec()).unwrap()
    });
    assert_eq!(routed.as_deref(), found, "axum and the matcher on {path}");
    routed
}

/// `template` filled with a sample value per placeholder: `1` for an
/// environment, `x` for anything else.
fn sample(template: &str) -> String {
    let names: Vec<&str> = template
        .split('{')
        .skip(1)
        .map(|rest| rest.split('}').next().unwrap())
        .collect();
    let values: Vec<&str> = names
        .iter()
        .map(|name| if *name == "env" { "1" } else { "x" })
        .collect();
    paths::fill(template, &values)
}

#[test]
fn every_shared_template_is_routed_to_itself() {
    for template in paths::ALL {
        let path = sample(template);
        assert_eq!(matched(&path).as_deref(), Some(*template), "{path}");
    }
    assert_eq!(matched("/api/v1/nothing"), None, "the check can fail");
}

/// Paths at the edges of the table: trailing and doubled slashes, encoded
/// slashes, a catch-all's empty rest, case, prefixes of templates, an
/// asterisk and an absolute target.
#[test]
fn axum_and_the_matcher_agree_at_the_edges() {
    for path in [
        "/",
        "*",
        "http://localhost/healthz",
        "/healthz/",
        "//healthz",
        "/HEALTHZ",
        "/api/v1/lookup/",
        "/api/v1/data/1",
        "/api/v1/data/1/",
        "/api/v1/data/1/a%2Fb",
        "/api/v1/data//x",
        "/api/v1/config/environments/1/",
        "/api/v1/config/environments//x",
        "/api/v1/config/environments/1/nodes/changed/",
        "/api/v1/config/environments/1/nodes/n/scope/history/x",
        "/api/v1/config/environments/1/hierarchy_levels/l/register/v/w",
        "/api/v1/config/components/c/resource_definitions/",
        "/api/v1/tags/",
        "/api/v1/tags/a/b",
        "/ui",
        "/ui/",
        "/ui/a/b",
        "/api/v1/config/environments/%7Benv%7D",
        "/api/v1/config/environments/{env}",
    ] {
        matched(path);
    }
}

#[test]
fn every_client_path_is_routed_to_its_template() {
    let node = LevelPath::parse_cli("roles=r%1,nodes=a b?c").unwrap();
    let address = DocAddress {
        env: 1,
        path: node.clone(),
        resource: "override/x?y#z%".to_owned(),
        kind: DocKind::Overrides,
    };
    let cases: Vec<(String, &str)> = vec![
        (urls::register_url(1, "nodes/é"), paths::REGISTER),
        (
            paths::fill(paths::REGISTER_VALUE, &["1", "nodes", "a b/c"]),
            paths::REGISTER_VALUE,
        ),
        (urls::definition_url("c d", "x/y?"), paths::DEFINITION),
        (urls::address_url(&address), paths::DOCUMENT),
        (
            urls::doc_url(1, &LevelPath::root(), "astute", DocKind::Values),
            paths::DOCUMENT,
        ),
        (
            paths::fill(paths::DATASOURCE, &["1", "override/node/n 1"]),
            paths::DATASOURCE,
        ),
        (paths::fill(paths::ENVIRONMENT, &["1"]), paths::ENVIRONMENT),
        (paths::fill(paths::IMPORT, &["1"]), paths::IMPORT),
    ];
    for (path, template) in cases {
        assert_eq!(matched(&path).as_deref(), Some(template), "{path}");
    }
}

/// axum cannot list a router's routes, so the server's code is read: every
/// route it registers names a shared template, one call per template, and
/// nothing is nested (a nest would prefix its routes' templates).
#[test]
fn the_server_registers_only_shared_templates() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server"),
        &mut files,
    );
    let mut routes = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // The code before its tests (and no test files): test routers
        // build their own routes.
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        for call in [".nest(", ".nest_service(", ".route_service("] {
            assert!(!code.contains(call), "{}: {call}", file.display());
        }
        for after in code.split(".route(").skip(1) {
            let argument = after.trim_start();
            let named = ["paths::", "api::paths::", "crate::api::paths::"]
                .iter()
                .any(|prefix| argument.starts_with(prefix));
            assert!(
                named,
                "{}: .route({}",
                file.display(),
                &argument[..40.min(argument.len())]
            );
            routes += 1;
        }
    }
    // One `.route` per template: a route whose template is missing from
    // `ALL` adds a call and fails here.
    assert_eq!(routes, paths::ALL.len(), "routes registered in src/server");
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && !path.to_string_lossy().contains("tests")
        {
            out.push(path);
        }
    }
}
