//! A route's catch-all parameter (`{*resource}`, `{*rest}`), decoded: from
//! the matcher's parameters on a direct route (src/server/http/templates.rs),
//! from axum's router's otherwise, the same text either way.

use crate::server::http::error::ApiError;
use crate::server::http::guard::Asker;
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

/// The text of the request's route's catch-all parameter, percent-decoded.
#[derive(Debug)]
pub(crate) struct Rest(pub(crate) String);

impl<S: Send + Sync> FromRequestParts<S> for Rest {
    /// axum's refusal of a path that does not decode (400, given a JSON
    /// body by `harden`).
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Rest, Response> {
        if let Some(rest) = Asker::matched(&mut parts.extensions).and_then(|m| m.rest.take()) {
            return Ok(Rest(rest));
        }
        // The router's parameters in their order: a catch-all is last.
        let Path(mut params) = Path::<Vec<(String, String)>>::from_request_parts(parts, &())
            .await
            .map_err(IntoResponse::into_response)?;
        match params.pop() {
            Some((_, value)) => Ok(Rest(value)),
            None => Err(ApiError::Internal(
                "a handler takes a path its route does not name".to_owned(),
            )
            .into_response()),
        }
    }
}
