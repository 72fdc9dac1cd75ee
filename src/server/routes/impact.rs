//! What a change does to the registered nodes: `nodes/changed` (between
//! a past generation and now) and the dry-run of every write
//! (`?dry_run=true`), both answered by `ops::preview` over snapshots.
//! A dry-run writes nothing and takes no generation; it is sent as the
//! write itself, so it needs the write's role.

use super::env::{self, Env};
use super::params::{Params, Query, flag};
use super::pinned::{self, Pin};
use crate::api::impact::NodesChanged;
use crate::auth::Principal;
use crate::configdb::impact::DocChange;
use crate::configdb::{DocAddress, KeyPath, Snapshot};
use crate::hiera::Value;
use crate::ops::preview::{self, Asked, PreviewError};
use crate::server::http::error::ApiError;
use crate::server::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

/// The `nodes/changed` route, with its full path.
pub(crate) fn routes() -> Router<AppState> {
    Router::new().route(crate::api::paths::NODES_CHANGED, get(nodes_changed))
}

impl From<PreviewError> for ApiError {
    fn from(e: PreviewError) -> ApiError {
        match e {
            PreviewError::Config(e) => e.into(),
            PreviewError::Hiera(e) => ApiError::Hiera(e),
        }
    }
}

/// `resource=` and `keys=k1,k2` of a request over environment `env`.
///
/// # Errors
///
/// A resource the environment does not define, an empty key.
fn asked_of(
    state: &AppState,
    snapshot: &Snapshot,
    env: i64,
    query: &Query,
) -> Result<Asked, ApiError> {
    let resource = query.get("resource").cloned();
    if let Some(r) = &resource {
        let defined = snapshot
            .resource_names(env)
            .is_some_and(|mut names| names.any(|n| n == r));
        if !defined {
            return Err(ApiError::NotFound(format!(
                "environment {env} defines no resource {:?}",
                crate::configdb::Truncated(r, 64).to_string()
            )));
        }
    }
    let keys: Vec<String> = match query.get("keys") {
        None => Vec::new(),
        Some(list) => list.split(',').map(|k| k.trim().to_owned()).collect(),
    };
    if keys.iter().any(String::is_empty) {
        return Err(ApiError::BadRequest(
            "keys is a comma-separated list of Hiera keys, none empty".to_owned(),
        ));
    }
    Ok(Asked {
        resource,
        keys,
        budget: state.settings().lookup_budget,
    })
}

/// `since=G` (a generation, or a tag's name) or `tag=T`.
fn since_of(query: &Query) -> Result<Pin, ApiError> {
    let pin = match (query.get("since"), query.get("tag")) {
        (Some(_), Some(_)) => None,
        (Some(since), None) if since.bytes().all(|b| b.is_ascii_digit()) => {
            Pin::of(Some(since), None)?
        }
        (Some(tag), None) | (None, Some(tag)) => Pin::of(None, Some(tag))?,
        (None, None) => None,
    };
    pin.ok_or_else(|| {
        ApiError::BadRequest(
            "nodes/changed needs one of since=GENERATION (or a tag's name) and tag=NAME".to_owned(),
        )
    })
}

async fn nodes_changed(
    State(state): State<AppState>,
    Env(env): Env,
    Params(query): Params,
) -> Result<Json<NodesChanged>, ApiError> {
    let since = since_of(&query)?;
    // The generation first: a snapshot read after it is at least as new.
    let generation = state.generation();
    let after = state.snapshot();
    if after.environment(env).is_none() {
        return Err(env::missing(env));
    }
    let asked = asked_of(&state, &after, env, &query)?;
    let (since, before) = pinned::snapshot_at(&state, since, env).await?;
    let answer = tokio::task::spawn_blocking(move || {
        preview::nodes_changed((since, &before), (generation, &after), env, &asked)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("nodes/changed failed: {e}")))??;
    Ok(Json(answer))
}

/// Whether a write asks for a dry-run (`?dry_run=true`).
///
/// # Errors
///
/// A `dry_run` that is neither true nor false.
pub(crate) fn asked(query: &Query) -> Result<bool, ApiError> {
    flag(query, "dry_run")
}

/// The dry-run of `writes` to environment `env` by `who`: what each node
/// would see change (200), nothing written. `registered`: check each
/// written path against the registers, as the write would (an import
/// that registers its values does not).
///
/// # Errors
///
/// What the write would be refused for that a snapshot can tell (an
/// unknown environment, level, resource or register value); a named
/// key's lookup fails.
pub(crate) async fn dry_run(
    state: &AppState,
    who: &Principal,
    env: i64,
    writes: Vec<DocChange>,
    query: &Query,
    registered: bool,
) -> Result<Response, ApiError> {
    let snapshot = state.snapshot();
    if snapshot.environment(env).is_none() {
        return Err(env::missing(env));
    }
    if registered {
        for w in &writes {
            snapshot
                .check_registered(env, &w.path)
                .map_err(|e| crate::ops::writes::seen_by(e.into(), who))?;
        }
    }
    let asked = asked_of(state, &snapshot, env, query)?;
    let answer =
        tokio::task::spawn_blocking(move || preview::dry_run(&snapshot, env, &writes, &asked))
            .await
            .map_err(|e| ApiError::Internal(format!("the dry-run failed: {e}")))??;
    Ok((StatusCode::OK, Json(answer)).into_response())
}

/// The document a PUT of `body` at `at` (its key `key`, if given) would
/// write, from the published snapshot's latest version.
///
/// # Errors
///
/// A body that is no document; a key path the document cannot take.
pub(crate) fn put_writes(
    snapshot: &Snapshot,
    at: &DocAddress,
    key: Option<&KeyPath>,
    body: Value,
) -> Result<Vec<DocChange>, ApiError> {
    let content = match key {
        None => crate::server::http::body::document(body)?,
        Some(key) => return Ok(preview::key_writes(snapshot, at, key, body)?),
    };
    Ok(preview::one(&at.path, &at.resource, at.kind, Some(content)))
}

/// The deletion marker a DELETE of `at` would write.
///
/// # Errors
///
/// NotFound: the document has no live version, as the write says.
pub(crate) fn delete_writes(
    snapshot: &Snapshot,
    at: &DocAddress,
) -> Result<Vec<DocChange>, ApiError> {
    Ok(preview::delete_writes(snapshot, at)?)
}

/// The version a restore of `at` to `version` would write.
///
/// # Errors
///
/// NotFound: no such version; BadRequest: it is a deletion marker.
pub(crate) async fn restore_writes(
    state: &AppState,
    at: &DocAddress,
    version: u64,
) -> Result<Vec<DocChange>, ApiError> {
    let read = at.clone();
    let found = state
        .read(move |store| Ok(store.get(&read, Some(version))?))
        .await?;
    Ok(preview::restore_writes(at, version, found)?)
}

impl From<preview::Unwritable> for ApiError {
    fn from(e: preview::Unwritable) -> ApiError {
        match e {
            preview::Unwritable::Missing(m) => ApiError::NotFound(m),
            preview::Unwritable::Refused(m) => ApiError::BadRequest(m),
            preview::Unwritable::Config(e) => e.into(),
        }
    }
}
