//! The environment a route's `{env}` names: parsed here and nowhere else,
//! with the one 404 wording of an environment that does not exist
//! ([`NotFound::Environment`], [`NotFound::EnvironmentText`]) and the
//! principal's environment limits applied. Handlers take an [`Env`]; the
//! guard judges the same text ([`named`]) to authorize the request.

use crate::auth::{Denied, Principal};
use crate::configdb::{ConfigError, NotFound};
use crate::server::http::error::ApiError;
use crate::server::http::guard::Asker;
use axum::extract::{FromRequestParts, Path, RawPathParams};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;

/// The environment of the request's `{env}`, which its principal may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Env(pub(crate) i64);

/// What a request's path says of its environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Named {
    /// The route has no `{env}`.
    Nothing,
    /// `{env}`, a number.
    Env(i64),
    /// `{env}` as sent (percent-decoded), not a number.
    NotANumber(String),
}

/// What a route's `{env}` names, percent-decoded as axum's `Path`
/// decodes it (`%31` is 1; `None`: not UTF-8 once decoded), judged as
/// the handler reads it: parsed as a number. The guard judges it before
/// routing, from the matcher's parameters (src/server/http/templates.rs).
pub(crate) fn named(decoded: Option<&str>) -> Named {
    let Some(text) = decoded else {
        return Named::NotANumber("(not UTF-8)".to_owned());
    };
    text.parse()
        .map_or_else(|_| Named::NotANumber(text.to_owned()), Named::Env)
}

/// `{env}` as sent, percent-decoded as `Path` decodes it; `None` when
/// the route names none. Read alone: deserializing every parameter into
/// a map cost 2,000 instructions a request (bench/LOG.md). A path that
/// does not decode gets `Path`'s own refusal.
async fn env_text(parts: &mut Parts) -> Result<Option<String>, Response> {
    let Ok(params) = RawPathParams::from_request_parts(parts, &()).await else {
        let refused = Path::<HashMap<String, String>>::from_request_parts(parts, &()).await;
        return Err(refused.err().map_or_else(
            || {
                ApiError::BadRequest("the request's path does not decode".to_owned())
                    .into_response()
            },
            IntoResponse::into_response,
        ));
    };
    Ok(params
        .iter()
        .find(|(name, _)| *name == "env")
        .map(|(_, text)| text.to_owned()))
}

/// `{env}`'s text as an environment id (the text back when it is no
/// number): the one parse of it.
fn parse(text: String) -> Result<i64, String> {
    text.parse().map_err(|_| text)
}

/// The 404 of environment `env`, which does not exist.
pub(crate) fn missing(env: i64) -> ApiError {
    ConfigError::from(NotFound::Environment(env)).into()
}

/// `env`, if `who` may use it; 403 otherwise.
///
/// # Errors
///
/// [`Denied::Environment`].
pub(crate) fn permitted(who: Option<&Principal>, env: i64) -> Result<i64, ApiError> {
    match who {
        Some(who) if !who.may_use(env) => Err(ApiError::Forbidden(
            Denied::Environment {
                name: who.name.clone(),
                env,
            }
            .to_string(),
        )),
        _ => Ok(env),
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Env {
    /// A path that does not decode keeps axum's answer (400, given a JSON
    /// body by `harden`); the others are [`ApiError`]s.
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Env, Response> {
        // A direct route's `{env}`, judged before routing (axum's router,
        // which would have stored it, was skipped).
        let direct = Asker::matched(&mut parts.extensions).map(|m| m.env.clone());
        // Otherwise `{env}` borrowed from the router's parameters and
        // parsed in place; the refusals (no `{env}`, a path that does not
        // decode) are rare, and made by `env_text` as `named` makes them.
        let parsed = match direct {
            Some(Named::Env(env)) => Ok(env),
            Some(Named::NotANumber(text)) => Err(text),
            Some(Named::Nothing) => {
                return Err(ApiError::Internal(
                    "a handler takes an environment its route does not name".to_owned(),
                )
                .into_response());
            }
            None => from_router(parts).await?,
        };
        let env = parsed
            .map_err(|text| ApiError::from(ConfigError::from(NotFound::EnvironmentText(text))))
            .and_then(|env| permitted(Asker::principal(&parts.extensions), env))
            .map_err(IntoResponse::into_response)?;
        Ok(Env(env))
    }
}

/// `{env}` from axum's router's parameters: its number, or its text.
async fn from_router(parts: &mut Parts) -> Result<Result<i64, String>, Response> {
    match Path::<EnvOnly>::from_request_parts(parts, &()).await {
        Ok(Path(EnvOnly { env })) => Ok(env.0),
        Err(_) => {
            let Some(text) = env_text(parts).await? else {
                return Err(ApiError::Internal(
                    "a handler takes an environment its route does not name".to_owned(),
                )
                .into_response());
            };
            Ok(parse(text))
        }
    }
}

/// The route's `{env}` alone, its other parameters left unread: through
/// `RawPathParams` every parameter was copied, and the text again, 2
/// allocations a request (bench/LOG.md, "Routing and
/// extensions").
#[derive(serde::Deserialize)]
struct EnvOnly {
    env: EnvNumber,
}

/// `{env}` as a number, or its text (the only case that copies it).
struct EnvNumber(Result<i64, String>);

impl<'de> serde::Deserialize<'de> for EnvNumber {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<EnvNumber, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = EnvNumber;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an environment id")
            }

            fn visit_str<E>(self, text: &str) -> Result<EnvNumber, E> {
                Ok(EnvNumber(text.parse().map_err(|_| text.to_owned())))
            }
        }
        deserializer.deserialize_str(Text)
    }
}
