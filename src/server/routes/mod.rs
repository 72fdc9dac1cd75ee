//! The routes: each handler parses its request (the environment through
//! [`env::Env`]), calls the one operation (`ops`, `lookup`, the snapshot)
//! and encodes the answer. The ConfigDB API (`config.rs`: components,
//! environments, imports; `documents.rs`: the versioned documents, with
//! `datasource.rs` for addressing them by name or id; `registers.rs`;
//! `content.rs`: resource definitions' content), lookups (`lookup.rs`,
//! with `hierarchies.rs`: hierarchies registered for lookups to name by
//! id), and query parameters (`params.rs`).

pub(crate) mod changes;
pub(crate) mod config;
pub(crate) mod content;
pub(crate) mod datasource;
pub(crate) mod diffs;
pub(crate) mod documents;
pub(crate) mod encoded;
pub(crate) mod env;
pub(crate) mod hierarchies;
pub(crate) mod impact;
pub(crate) mod lookup;
pub(crate) mod params;
pub(crate) mod pinned;
pub(crate) mod provenance;
pub(crate) mod registers;
pub(crate) mod rest;
pub(crate) mod rotate;
pub(crate) mod scopes;
pub(crate) mod tags;
pub(crate) mod ui;

/// The route tests' one request through the whole application, in
/// process: status, `X-Hierad-Generation` (0 when absent) and body.
#[cfg(test)]
pub(crate) async fn oneshot(
    state: &crate::server::AppState,
    method: &str,
    path: &str,
    body: &str,
) -> (axum::http::StatusCode, u64, String) {
    use tower::ServiceExt as _;
    let request = axum::http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_owned()))
        .unwrap();
    let response = crate::server::app(state.clone())
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status();
    let generation = response
        .headers()
        .get("x-hierad-generation")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .unwrap_or(0);
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        generation,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}
