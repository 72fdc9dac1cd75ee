//! A document encoded once per snapshot (`configdb::Encoded`), answered
//! as it is: its shared bytes, with its ETag where the answer is the
//! whole latest effective document, and 304 to a request that already
//! holds those bytes (`If-None-Match`). The data route and the config
//! route's `?effective` answer the same bytes under the same ETag.

use crate::configdb::Encoded;
use crate::server::http::error::ApiError;
use crate::server::state::unread;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

/// `doc`'s bytes, without an ETag (a key, a stored version: no
/// revalidation is offered for them). Built in place: as a tuple, its
/// header was checked and converted per request.
pub(crate) fn body(doc: &Encoded) -> Response {
    let mut response = Response::new(axum::body::Body::from(doc.body.clone()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    unread::shared(response)
}

/// A whole effective document, revalidated with its ETag: 304 when
/// `asked` (the request's headers) names it or `*` in `If-None-Match`,
/// else its bytes with the ETag. The comparison is the weak one
/// `If-None-Match` takes (RFC 9110, section 13.1.2): `W/"…"`, as a
/// compressing proxy passes the ETag on, matches too.
///
/// # Errors
///
/// An ETag that is no header value (it is made of hex digits: never).
pub(crate) fn revalidated(doc: &Encoded, asked: &HeaderMap) -> Result<Response, ApiError> {
    let etag = etag_value(doc)?;
    let held = asked
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',').map(str::trim).any(|t| {
                let t = t.strip_prefix("W/").unwrap_or(t);
                t == doc.etag() || t == "*"
            })
        });
    if held {
        let mut response = Response::new(axum::body::Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response.headers_mut().insert(header::ETAG, etag);
        return Ok(response);
    }
    let mut response = body(doc);
    response.headers_mut().insert(header::ETAG, etag);
    Ok(response)
}

/// `doc`'s ETag as a header value: its shared bytes, not a copy (the
/// copy was an allocation a request).
fn etag_value(doc: &Encoded) -> Result<HeaderValue, ApiError> {
    HeaderValue::from_maybe_shared(doc.etag.clone())
        .map_err(|e| ApiError::Internal(format!("an ETag that is no header value: {e}")))
}
