//! `POST /api/v1/secrets/rotate[?env=N]` (`admin`): every eyaml block of
//! every latest document re-encrypted to the server's current public key,
//! with the keys the server holds ([`crate::ops::rotate`]), in one write;
//! answers `{"documents": N, "blocks": M}`.

use crate::api::paths;
use crate::auth::Principal;
use crate::configdb::{ConfigError, Invalid};
use crate::ops::rotate::{Rotated, rotate};
use crate::server::http::error::ApiError;
use crate::server::state::AppState;
use crate::store::StoreError;
use axum::extract::{Query, State};
use axum::http::Uri;
use axum::routing::post;
use axum::{Json, Router};

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route(paths::SECRETS_ROTATE, post(rotate_secrets))
}

/// The server has no keys to rotate with (409).
pub(crate) const NO_KEYS: &str = "secrets rotate: this server holds no eyaml private key to open \
    the blocks with (hierad serve --eyaml-private-key PEM --eyaml-public-key PEM, and \
    --eyaml-old-private-key PEM for the key pair being replaced)";

async fn rotate_secrets(
    State(state): State<AppState>,
    who: Principal,
    uri: Uri,
) -> Result<Json<Rotated>, ApiError> {
    let env = environment(&uri)?;
    let decrypter = state
        .secrets()
        .current()
        .filter(|d| d.keyring().can_decrypt())
        .ok_or_else(|| ApiError::Conflict(NO_KEYS.to_owned()))?;
    let rotated = state
        .write(move |store| {
            rotate(store, decrypter.keyring(), env, Some(&who.name)).map_err(|e| match e {
                // The data, not the request, is what cannot be rotated.
                StoreError::Config(ConfigError::Invalid(refused @ Invalid::Rewrite { .. })) => {
                    ApiError::Conflict(format!("secrets rotate: {refused}"))
                }
                other => other.into(),
            })
        })
        .await?;
    Ok(Json(rotated))
}

/// The `env` of the query, if any; nothing else is taken.
fn environment(uri: &Uri) -> Result<Option<i64>, ApiError> {
    let Query(query) = Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map_err(|e| ApiError::BadRequest(format!("the query: {e}")))?;
    let mut env = None;
    for (key, value) in query {
        match &*key {
            "env" => {
                env = Some(value.parse::<i64>().map_err(|_| {
                    ApiError::BadRequest(format!("env: {value:?} is not an environment id"))
                })?);
            }
            other => {
                return Err(ApiError::BadRequest(format!(
                    "{other}: {} takes only env=N",
                    paths::SECRETS_ROTATE
                )));
            }
        }
    }
    Ok(env)
}
