//! Tags: names of generations (`GET|POST /api/v1/tags`,
//! `GET|DELETE /api/v1/tags/{name}`). A tag pins its generation: reads
//! at it (`?tag=`) stay exact, and retention keeps what they need.
//! Making or deleting one changes no data and takes no generation.

use crate::api::impact::{NewTag, Tag};
use crate::api::paths;
use crate::auth::Principal;
use crate::server::http::body::LimitedBytes;
use crate::server::http::error::ApiError;
use crate::server::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

/// The tag routes, with their full paths.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(paths::TAGS, get(list).post(create))
        .route(paths::TAG, get(one).delete(delete))
}

async fn list(State(state): State<AppState>) -> Result<Json<Vec<Tag>>, ApiError> {
    let tags = state.read(|store| Ok(store.tags()?)).await?;
    Ok(Json(tags.into_iter().map(Tag::from).collect()))
}

async fn create(
    State(state): State<AppState>,
    who: Principal,
    LimitedBytes(body, _turn): LimitedBytes,
) -> Result<Response, ApiError> {
    let new: NewTag = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "invalid tag: {e} (send {{\"name\": \"deploy-42\", \"generation\": N}}, the generation optional)"
        ))
    })?;
    let tag = state
        .read(move |store| Ok(store.create_tag(&new.name, new.generation, Some(&who.name))?))
        .await?;
    Ok((StatusCode::CREATED, Json(Tag::from(tag))).into_response())
}

async fn one(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Tag>, ApiError> {
    let tag = state.read(move |store| Ok(store.tag(&name)?)).await?;
    Ok(Json(Tag::from(tag)))
}

async fn delete(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state
        .read(move |store| Ok(store.delete_tag(&name)?))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
