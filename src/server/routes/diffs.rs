//! `GET …/resources/{r}/{values|overrides}/diff`: two versions of a
//! stored document (`from=`, `to=`; default the previous and the latest),
//! or with `effective`, the effective document at two generations or
//! tags (`from_generation=`/`from_tag=`, `to_generation=`/`to_tag=`;
//! `to` defaults to the newest). Thin: the work is [`ops::diffs`].

use super::params::{Query, flag};
use crate::configdb::DocAddress;
use crate::ops::diffs::{Point, Range};
use crate::ops::{self, OpsError};
use crate::server::http::error::ApiError;
use crate::server::state::AppState;
use crate::store::StoreError;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// The diff the query asks for, of the document at `at`.
///
/// # Errors
///
/// A malformed query (400); what [`ops::diffs::diff`] refuses: 404 for
/// a missing version or tag, 410 for a pruned generation (with
/// `oldest_readable`).
pub(super) async fn diff(
    state: &AppState,
    at: DocAddress,
    query: &Query,
) -> Result<Response, ApiError> {
    let range = range(query)?;
    let answer = state
        .read(move |store| Ok(ops::diffs::diff(store, &at, &range)))
        .await?;
    match answer {
        Ok(answer) => Ok(Json(answer).into_response()),
        Err(OpsError::Store(StoreError::Gone(gone))) => Ok(gone_response(&gone)),
        Err(e) => Err(api_error(e)),
    }
}

/// 410 naming the oldest generation still readable.
pub(crate) fn gone_response(gone: &crate::configdb::Gone) -> Response {
    // The shape of every error body (`http/error.rs`), plus the field a
    // client retries from.
    let body = serde_json::json!({
        "error": "gone",
        "message": gone.to_string(),
        "oldest_readable": gone.oldest,
    });
    (StatusCode::GONE, Json(body)).into_response()
}

fn api_error(e: OpsError) -> ApiError {
    match e {
        OpsError::Store(e) => e.into(),
        OpsError::Config(e) => e.into(),
        OpsError::Refused(m) => ApiError::BadRequest(m),
        OpsError::Remote(e) => ApiError::Internal(e.to_string()),
    }
}

/// The range a diff's query names.
fn range(query: &Query) -> Result<Range, ApiError> {
    let number = |name: &str| -> Result<Option<u64>, ApiError> {
        query
            .get(name)
            .map(|v| {
                v.parse().map_err(|_| {
                    ApiError::BadRequest(format!("{name} must be a number, not {v:?}"))
                })
            })
            .transpose()
    };
    let point = |side: &str| -> Result<Option<Point>, ApiError> {
        let generation = number(&format!("{side}_generation"))?;
        match (generation, query.get(&format!("{side}_tag"))) {
            (Some(_), Some(_)) => Err(ApiError::BadRequest(format!(
                "give {side}_generation or {side}_tag, not both"
            ))),
            (Some(g), None) => Ok(Some(Point::Generation(g))),
            (None, Some(tag)) => Ok(Some(Point::Tag(tag.clone()))),
            (None, None) => Ok(None),
        }
    };
    if flag(query, "effective")? {
        if query.contains_key("from") || query.contains_key("to") {
            return Err(ApiError::BadRequest(
                "an effective diff compares generations: from_generation= or from_tag=, not from=/to= (versions of one stored document)"
                    .to_owned(),
            ));
        }
        let from = point("from")?.ok_or_else(|| {
            ApiError::BadRequest(
                "an effective diff needs from_generation=G or from_tag=NAME".to_owned(),
            )
        })?;
        return Ok(Range::Effective {
            from,
            to: point("to")?,
        });
    }
    if ["from_generation", "to_generation", "from_tag", "to_tag"]
        .iter()
        .any(|k| query.contains_key(k))
    {
        return Err(ApiError::BadRequest(
            "generations and tags compare the effective document: add effective".to_owned(),
        ));
    }
    Ok(Range::Versions {
        from: number("from")?,
        to: number("to")?,
    })
}

#[cfg(test)]
mod tests;
