//! Node scopes (see docs/api.md, "Node scopes"): the facts and scope
//! variables stored for a registered node, which a lookup naming the node
//! gets (`lookup.rs`). Thin: the store keeps them (`store/shared/scopes.rs`)
//! versioned like documents; a write takes a generation.

use crate::api;
use crate::auth::Principal;
use crate::configdb::{ConfigError, NotFound};
use crate::hiera::{Hash, Value};
use crate::server::http::body::LimitedBytes;
use crate::server::http::error::ApiError;
use crate::server::routes::env::Env;
use crate::server::state::AppState;
use crate::store::scope_from;
use crate::wire;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(
            api::paths::NODE_SCOPE,
            get(get_scope).put(put_scope).delete(delete_scope),
        )
        .route(api::paths::NODE_SCOPE_HISTORY, get(history))
}

/// The `{node}` of a scope route (`{env}` is read by [`Env`]).
#[derive(Deserialize)]
struct NodeParam {
    node: String,
}

async fn get_scope(
    State(state): State<AppState>,
    Env(env): Env,
    Path(NodeParam { node }): Path<NodeParam>,
) -> Result<Json<api::NodeScope>, ApiError> {
    let ((version, scope), node) = state
        .read(move |store| Ok((store.scope(env, &node, None)?, node)))
        .await?;
    Ok(Json(api::NodeScope {
        node,
        scope,
        version: version.number,
        author: version.author,
        created_at: version.created_at,
    }))
}

async fn put_scope(
    State(state): State<AppState>,
    who: Principal,
    Env(env): Env,
    Path(NodeParam { node }): Path<NodeParam>,
    LimitedBytes(body, _turn): LimitedBytes,
) -> Result<StatusCode, ApiError> {
    let json: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("malformed JSON: {e}")))?;
    let scope = scope_from(json).map_err(ConfigError::from)?;
    state
        .write(move |store| Ok(store.put_scope(env, &node, &scope, Some(&who.name))?))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn delete_scope(
    State(state): State<AppState>,
    who: Principal,
    Env(env): Env,
    Path(NodeParam { node }): Path<NodeParam>,
) -> Result<StatusCode, ApiError> {
    state
        .write(move |store| Ok(store.delete_scope(env, &node, Some(&who.name))?))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn history(
    State(state): State<AppState>,
    Env(env): Env,
    Path(NodeParam { node }): Path<NodeParam>,
) -> Result<Json<Vec<api::Version>>, ApiError> {
    let versions = state
        .read(move |store| Ok(store.scope_history(env, &node)?))
        .await?;
    Ok(Json(versions.iter().map(api::Version::from).collect()))
}

/// `node`'s stored scope in `env` as a lookup's scope, with `over` (the
/// request's own variables) layered over it: a variable the request
/// names wins. Reads the store: called off the async workers.
///
/// # Errors
///
/// NotFound naming the node when it has no stored scope.
pub(crate) fn layered(
    store: &dyn crate::store::Store,
    env: i64,
    node: &str,
    over: Hash,
) -> Result<Hash, ApiError> {
    let (_, stored) = store.scope(env, node, None).map_err(|e| match e.config() {
        Some(ConfigError::NotFound(NotFound::Scope { .. } | NotFound::Node { .. })) => {
            ApiError::NotFound(format!(
                "node {node:?} of environment {env} has no stored scope: PUT one at {}",
                api::paths::fill(api::paths::NODE_SCOPE, &[&env.to_string(), node])
            ))
        }
        _ => e.into(),
    })?;
    let Value::Hash(mut scope) = wire::from_wire(serde_json::Value::Object(stored))
        .map_err(|e| ApiError::Internal(format!("the scope of node {node}: {e}")))?
    else {
        return Err(ApiError::Internal(format!(
            "the scope of node {node} is not an object"
        )));
    };
    for (k, v) in over {
        scope.insert(k, v);
    }
    Ok(scope)
}

#[cfg(test)]
mod tests;
