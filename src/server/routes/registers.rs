//! Level registers over HTTP: an environment may list the
//! values a level takes (its nodes); a document URL at a value the
//! register does not list is answered with docs/spec/configdb-api.md's 404s, for reads
//! and writes alike. A level without a register takes any value.
//!
//! `/environments/{env}/hierarchy_levels/{level}/register`: GET (404 when
//! there is none), PUT a JSON list (replaces), POST a JSON list (adds),
//! DELETE (removes the register); `…/register/{value}`: DELETE one value.
//! A register write takes a generation and is published in the snapshot
//! before it is answered, as a document write is: the next read on this
//! server sees it, and other servers on the database once they reach its
//! generation.

use crate::api;
use crate::auth::Principal;
use crate::configdb::{ConfigError, LevelPath, NotFound, Snapshot};
use crate::server::http::body::LimitedBytes;
use crate::server::http::error::ApiError;
use crate::server::routes::env::Env;
use crate::server::state::AppState;
use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get};

/// The register routes, under `/api/v1/config` with the others.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(
            crate::api::paths::REGISTER,
            get(get_register)
                .put(put_register)
                .post(add_values)
                .delete(delete_register),
        )
        .route(crate::api::paths::REGISTER_VALUE, delete(remove_value))
}

/// Refuses a path with a level value that a register of the environment
/// does not list (404), for a read: from the registers of the snapshot
/// it answers from, with no store access. The root and unregistered levels pass. The snapshot
/// holds every register write it holds the generation of (register
/// writes take generations like document writes), so a read sees the
/// registers of the same data it answers from.
///
/// # Errors
///
/// [`NotFound::Unregistered`] or [`NotFound::NotAssigned`].
pub(crate) fn check_read(
    snapshot: &Snapshot,
    who: &Principal,
    env: i64,
    path: &LevelPath,
) -> Result<(), ApiError> {
    if path.is_root() {
        return Ok(());
    }
    snapshot
        .check_registered(env, path)
        .map_err(|e| crate::ops::writes::seen_by(ConfigError::from(e), who).into())
}

/// A register route's `{level}`.
#[derive(serde::Deserialize)]
struct LevelParam {
    level: String,
}

/// `…/register/{value}`'s `{level}` and `{value}`.
#[derive(serde::Deserialize)]
struct ValueParam {
    level: String,
    value: String,
}

fn values(bytes: &[u8]) -> Result<Vec<String>, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::BadRequest(format!(
            "a register is a JSON list of level values, e.g. [\"node-1.domain.tld\"]: {e}"
        ))
    })
}

async fn listed(state: &AppState, env: i64, level: String) -> Result<api::Register, ApiError> {
    let shown = level.clone();
    let values = state
        .read(move |store| Ok(store.register(env, &level)?))
        .await?
        .ok_or_else(|| {
            ApiError::from(crate::configdb::ConfigError::from(NotFound::Register {
                env,
                level: shown.clone(),
            }))
        })?;
    Ok(api::Register {
        level: shown,
        values,
    })
}

async fn get_register(
    State(state): State<AppState>,
    Env(env): Env,
    Path(LevelParam { level }): Path<LevelParam>,
) -> Result<Json<api::Register>, ApiError> {
    Ok(Json(listed(&state, env, level).await?))
}

async fn put_register(
    State(state): State<AppState>,
    Env(env): Env,
    Path(LevelParam { level }): Path<LevelParam>,
    LimitedBytes(bytes, _turn): LimitedBytes,
) -> Result<Json<api::Register>, ApiError> {
    let new = values(&bytes)?;
    let at = level.clone();
    // Through the write path: the register takes a generation and the
    // snapshot this server publishes holds it before the answer goes out.
    state
        .write(move |store| Ok(store.set_register(env, &at, Some(&new))?))
        .await?;
    Ok(Json(listed(&state, env, level).await?))
}

async fn add_values(
    State(state): State<AppState>,
    Env(env): Env,
    Path(LevelParam { level }): Path<LevelParam>,
    LimitedBytes(bytes, _turn): LimitedBytes,
) -> Result<Json<api::RegisterChange>, ApiError> {
    let new = values(&bytes)?;
    let at = level.clone();
    let changed = state
        .write(move |store| Ok(store.add_to_register(env, &at, &new)?))
        .await?;
    let register = listed(&state, env, level).await?;
    Ok(Json(api::RegisterChange {
        level: register.level,
        values: register.values,
        changed,
    }))
}

async fn delete_register(
    State(state): State<AppState>,
    Env(env): Env,
    Path(LevelParam { level }): Path<LevelParam>,
) -> Result<StatusCode, ApiError> {
    // 404 when there is no register to delete.
    listed(&state, env, level.clone()).await?;
    state
        .write(move |store| Ok(store.set_register(env, &level, None)?))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn remove_value(
    State(state): State<AppState>,
    Env(env): Env,
    Path(ValueParam { level, value }): Path<ValueParam>,
) -> Result<Json<api::RegisterChange>, ApiError> {
    let (at, gone) = (level.clone(), value.clone());
    let changed = state
        .write(move |store| Ok(store.remove_from_register(env, &at, &[gone])?))
        .await?;
    if changed == 0 {
        return Err(ApiError::NotFound(format!(
            "{value:?} is not in the register of level \"{level}\" of environment {env}"
        )));
    }
    let register = listed(&state, env, level).await?;
    Ok(Json(api::RegisterChange {
        level: register.level,
        values: register.values,
        changed,
    }))
}

#[cfg(test)]
mod tests;
