//! Reads at an exact generation: `?generation=N` or `?tag=NAME` on
//! effective reads and the data route (a lookup's `"generation"` and
//! `"tag"` fields: `lookup.rs`), answered from that generation's own
//! snapshot (`state/pinned.rs`), so a whole deployment reads one view.

use super::params::Query;
use crate::configdb::tags::check_tag_name;
use crate::configdb::{DocAddress, DocKind, Encoded, KeyPath, LevelPath, Snapshot, keypath};
use crate::server::http::error::ApiError;
use crate::server::secrets::Reveal;
use crate::server::state::AppState;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use memchr::memmem::Finder;
use std::sync::{Arc, LazyLock};

/// A generation, by number or by a tag's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pin {
    Generation(u64),
    Tag(String),
}

impl Pin {
    /// A lookup body's `generation` (an Integer) and `tag` (a String).
    ///
    /// # Errors
    ///
    /// Both given, either of another type, a bad tag name.
    pub(crate) fn of_lookup(
        generation: Option<crate::hiera::Value>,
        tag: Option<crate::hiera::Value>,
    ) -> Result<Option<Pin>, ApiError> {
        use crate::hiera::Value;
        let bad = |m: &str| Err(ApiError::BadRequest(m.to_owned()));
        match (generation, tag) {
            (Some(Value::Int(g)), None) if g >= 0 => Ok(Some(Pin::Generation(g.unsigned_abs()))),
            (None, Some(Value::String(t))) => Pin::of(None, Some(&t)),
            (None, None) => Ok(None),
            (Some(_), Some(_)) => bad("give either generation or tag, not both"),
            (Some(_), None) => bad("generation is a generation number"),
            (None, Some(_)) => bad("tag is a tag's name (a string)"),
        }
    }

    /// A lookup body's `generation` (a number) or `tag` (a name).
    ///
    /// # Errors
    ///
    /// Both given, a generation that is no number, a bad tag name.
    pub(crate) fn of(generation: Option<&str>, tag: Option<&str>) -> Result<Option<Pin>, ApiError> {
        match (generation, tag) {
            (Some(_), Some(_)) => Err(ApiError::BadRequest(
                "give either generation or tag, not both".to_owned(),
            )),
            (Some(g), None) => g.parse().map(|g| Some(Pin::Generation(g))).map_err(|_| {
                ApiError::BadRequest(format!(
                    "generation must be a generation number, not {:?}",
                    crate::configdb::Truncated(g, 64).to_string()
                ))
            }),
            (None, Some(t)) => {
                check_tag_name(t)?;
                Ok(Some(Pin::Tag(t.to_owned())))
            }
            (None, None) => Ok(None),
        }
    }
}

/// Whether a lookup body may name a generation or a tag, for a body the
/// async worker does not parse (one over the inline size, or naming a
/// node): only those are parsed there (to learn which snapshot answers)
/// and kept out of the answer cache. A body the async worker parses has
/// its pin read from the parse (searching cost a full lookup 424
/// instructions). A scope that merely holds these words takes the slower
/// path, exactly.
pub(crate) fn names_a_pin(bytes: &[u8]) -> bool {
    GENERATION.find(bytes).is_some() || TAG.find(bytes).is_some()
}

/// The searchers of [`names_a_pin`], made once: `memmem::find` makes one
/// per call, and on a small lookup making them cost more than searching.
static GENERATION: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"generation\""));
static TAG: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"tag\""));

/// The pin of a request's query (`generation=`, `tag=`), if any.
///
/// # Errors
///
/// As [`Pin::of`].
pub(crate) fn pin_of(query: &Query) -> Result<Option<Pin>, ApiError> {
    Pin::of(
        query.get("generation").map(String::as_str),
        query.get("tag").map(String::as_str),
    )
}

/// Environment `env` as of `pin`, with the generation it is at.
///
/// # Errors
///
/// An unknown tag (404), a generation not written yet (400), one
/// retention pruned (410).
pub(crate) async fn snapshot_at(
    state: &AppState,
    pin: Pin,
    env: i64,
) -> Result<(u64, Arc<Snapshot>), ApiError> {
    // A kept snapshot is answered from memory, not from a store task.
    if let Pin::Generation(g) = pin {
        if let Some(kept) = state.pinned().kept(g, env) {
            return Ok((g, kept));
        }
    }
    let reader = state.clone();
    state
        .read(move |store| {
            let generation = match pin {
                Pin::Generation(g) => g,
                Pin::Tag(name) => store.tag(&name)?.generation,
            };
            let snapshot = reader.pinned().get(store, generation, env)?;
            Ok((generation, snapshot))
        })
        .await
}

/// A body as it is, marked with the generation it was read at.
fn pinned_body(generation: u64, body: bytes::Bytes) -> Response {
    let mut response = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response();
    response
        .headers_mut()
        .insert(PINNED, header::HeaderValue::from(generation));
    response
}

/// The generation a pinned read answered at.
pub(crate) const PINNED: header::HeaderName =
    header::HeaderName::from_static("x-hierad-read-generation");

/// The effective document at `at` (or its key `key`) as of `pin`.
///
/// # Errors
///
/// As [`snapshot_at`]; overrides (effective reads fold values), an
/// unknown level, resource or key.
pub(crate) async fn effective(
    state: &AppState,
    pin: Pin,
    at: &DocAddress,
    key: Option<KeyPath>,
    reveal: &Reveal,
) -> Result<Response, ApiError> {
    if at.kind != DocKind::Values {
        return Err(ApiError::BadRequest(
            "generation= and tag= read effective values (they fold values and overrides)"
                .to_owned(),
        ));
    }
    let (generation, snapshot) = snapshot_at(state, pin, at.env).await?;
    let Some(key) = key else {
        // Encoded once per kept snapshot, as the newest's is.
        let doc = snapshot.try_encoded(at.env, &at.path, &at.resource)?;
        return revealed(reveal, generation, &doc, None);
    };
    let doc = snapshot.try_effective(at.env, &at.path, &at.resource)?;
    let encoded = keypath::get(&doc, &key)
        .map_err(|e| ApiError::NotFound(e.to_string()))?
        .map(Encoded::of_value)
        .ok_or_else(|| {
            ApiError::NotFound(format!("key {} is not in the document", key.as_str()))
        })?;
    revealed(reveal, generation, &encoded, Some(key.as_str()))
}

/// The data route's whole effective datasource as of `pin`.
///
/// # Errors
///
/// As [`effective`].
pub(crate) async fn datasource(
    state: &AppState,
    pin: Pin,
    env: i64,
    level: &LevelPath,
    resource: &str,
    reveal: &Reveal,
) -> Result<Response, ApiError> {
    let (generation, snapshot) = snapshot_at(state, pin, env).await?;
    let doc = snapshot.try_encoded(env, level, resource)?;
    revealed(reveal, generation, &doc, None)
}

/// `doc` as read at `generation`, its blocks decrypted for a principal
/// that may read them, as the newest generation's reads answer.
fn revealed(
    reveal: &Reveal,
    generation: u64,
    doc: &Encoded,
    key: Option<&str>,
) -> Result<Response, ApiError> {
    let mut response = match reveal.effective(doc, key)? {
        Some(plain) => plain,
        None => return Ok(pinned_body(generation, doc.body.clone())),
    };
    response
        .headers_mut()
        .insert(PINNED, header::HeaderValue::from(generation));
    Ok(response)
}

#[cfg(test)]
mod tests;
