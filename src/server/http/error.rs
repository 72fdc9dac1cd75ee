//! API errors: every failure becomes `{"error": kind, "message": text}`
//! with its status; database failures are logged and answered 503 (the
//! database is unavailable) or 500 (anything else) without their details.

use crate::api::{BudgetErrorBody, ErrorBody, QuotaErrorBody, UnparsedErrorBody};
use crate::configdb::{ConfigError, OverQuota};
use crate::hiera::HieraError;
use crate::hiera::budget::Limit;
use crate::store::StoreError;
use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// An error answer.
#[derive(Debug)]
pub(crate) enum ApiError {
    /// 400: the request is malformed.
    BadRequest(String),
    /// 403: the principal may not do what the request would do (a rule
    /// the guard cannot apply before the handler reads the body).
    Forbidden(String),
    /// 403: a request that may change something, sent by a web page of
    /// another origin (`cross_site`).
    CrossOrigin(String),
    /// 415: a body not declared as a type the route reads (`cross_site`).
    UnsupportedMediaType(String),
    /// 421: a `Host` this server does not answer to (`cross_site`).
    UnknownHost(String),
    /// 404: something it names does not exist.
    NotFound(String),
    /// 409: it would break a uniqueness rule.
    Conflict(String),
    /// 413: the body is over the limit.
    TooLarge(crate::server::http::body::BodyLimit),
    /// 413: the write would store a document, or make its environment,
    /// larger than the server's quotas (nothing was written).
    OverQuota(OverQuota),
    /// 422: Hiera itself fails this lookup.
    Hiera(HieraError),
    /// 422: the request reads a document kept unparsed.
    Unparsed(Box<crate::configdb::unparsed::UnparsedDocument>),
    /// 408: not answered within the request time limit.
    TimedOut(std::time::Duration),
    /// 422: the lookup would spend more than the server's budget allows.
    OverBudget {
        limit: Limit,
        /// The budget's value.
        value: u64,
        error: HieraError,
    },
    /// 410: a read at a generation retention pruned; names the oldest
    /// readable one.
    Gone(crate::configdb::Gone),
    /// 412: a conditional write (`If-Match`) whose version is no longer
    /// the latest.
    PreconditionFailed(String),
    /// 503: the request named a minimum generation this replica did not
    /// reach within `--min-generation-wait`.
    Behind {
        /// The generation it has published.
        at: u64,
        wanted: u64,
        waited: std::time::Duration,
    },
    /// 503: the database failed (down, unreachable, locked past the busy
    /// timeout): the request may succeed once it is back. The text is the
    /// database's error, for the log only.
    Unavailable(String),
    /// 503: a memory bound is full (see [`Busy`]); the request may succeed
    /// in a moment.
    Busy(Busy),
    /// 500: the database accepts no writes (a read-only file, role or
    /// standby): unlike `Unavailable`, no retry helps, so no
    /// `Retry-After`. The text is the database's error, for the log only.
    ReadOnly(String),
    /// 500: the store failed.
    Internal(String),
    /// 500: a handler panicked (the server goes on).
    Panicked,
}

impl ApiError {
    /// What went wrong, for the log or a message on the server's own
    /// terminal: the database's error where there is one.
    pub(crate) fn detail(&self) -> String {
        match self {
            ApiError::Unavailable(m) | ApiError::ReadOnly(m) | ApiError::Internal(m) => m.clone(),
            other => format!("{other:?}"),
        }
    }
}

impl From<ConfigError> for ApiError {
    fn from(e: ConfigError) -> ApiError {
        match &e {
            ConfigError::NotFound(_) => ApiError::NotFound(e.to_string()),
            ConfigError::Conflict(_) => ApiError::Conflict(e.to_string()),
            ConfigError::Invalid(_) => ApiError::BadRequest(e.to_string()),
            ConfigError::Stale(_) => ApiError::PreconditionFailed(e.to_string()),
            ConfigError::OverQuota(over) => ApiError::OverQuota(over.clone()),
            // The server's fault, logged; it names the document, never
            // its content.
            ConfigError::Unreadable(_) => ApiError::Internal(e.to_string()),
            ConfigError::Unparsed(doc) => ApiError::Unparsed(doc.clone()),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Config(e) => e.into(),
            StoreError::Database(e) => ApiError::Unavailable(e.to_string()),
            StoreError::ReadOnly(why) => ApiError::ReadOnly(why),
            StoreError::Gone(gone) => ApiError::Gone(gone),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<HieraError> for ApiError {
    fn from(e: HieraError) -> ApiError {
        ApiError::Hiera(e)
    }
}

/// Which memory bound refused a request (503, `Retry-After: 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Busy {
    /// Answers made but not yet read by their clients fill
    /// `--unread-answers-mib` (this many bytes).
    UnreadAnswers(u64),
    /// Lookup bodies waiting for a `--lookup-workers` turn fill
    /// `--lookup-queue-mib` (this many bytes).
    LookupQueue(u64),
    /// This many clients already wait for changes
    /// (`--max-change-waiters`).
    ChangeWaiters(u64),
}

impl Busy {
    fn message(self) -> String {
        let mib = |bytes: u64| bytes / (1024 * 1024);
        match self {
            Busy::UnreadAnswers(limit) => format!(
                "the server holds {} MiB of answers its clients have not read yet (hierad serve --unread-answers-mib), \
                 so this answer was not sent; retry in a moment",
                mib(limit)
            ),
            Busy::ChangeWaiters(limit) => format!(
                "{limit} clients already wait for changes (hierad serve --max-change-waiters), \
                 so this one does not; retry in a moment, or ask without wait="
            ),
            Busy::LookupQueue(limit) => format!(
                "{} MiB of lookup requests already wait for a lookup worker (hierad serve --lookup-queue-mib), \
                 so this lookup was not queued; retry in a moment",
                mib(limit)
            ),
        }
    }
}

/// The `hierad serve` flags that set the lookup budget, named in refusals.
pub(crate) const BUDGET_STEPS_FLAG: &str = "--budget-steps";
pub(crate) const BUDGET_BYTES_FLAG: &str = "--budget-bytes";

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, kind, message) = match self {
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, "bad_request", m),
            ApiError::Forbidden(m) => (StatusCode::FORBIDDEN, "forbidden", m),
            ApiError::CrossOrigin(m) => (StatusCode::FORBIDDEN, "cross_origin", m),
            ApiError::UnsupportedMediaType(m) => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                m,
            ),
            ApiError::UnknownHost(m) => (StatusCode::MISDIRECTED_REQUEST, "unknown_host", m),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, "not_found", m),
            ApiError::Conflict(m) => (StatusCode::CONFLICT, "conflict", m),
            ApiError::TooLarge(limit) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                limit.to_string(),
            ),
            ApiError::OverQuota(over) => {
                let (doc, size, total, limit) = match &over {
                    OverQuota::Document { doc, size, limit } => (doc, *size, None, *limit),
                    OverQuota::Environment {
                        doc,
                        size,
                        total,
                        limit,
                    } => (doc, *size, Some(*total), *limit),
                };
                let body = QuotaErrorBody {
                    error: "quota_exceeded".to_owned(),
                    quota: match over {
                        OverQuota::Document { .. } => "document",
                        OverQuota::Environment { .. } => "environment",
                    }
                    .to_owned(),
                    environment: doc.env,
                    level: doc.path.to_string(),
                    resource: doc.resource.clone(),
                    kind: doc.kind.as_str().to_owned(),
                    size,
                    total,
                    limit,
                    flag: over.flag().to_owned(),
                    message: over.to_string(),
                };
                return (StatusCode::PAYLOAD_TOO_LARGE, Json(body)).into_response();
            }
            ApiError::Hiera(e) => {
                let body = ErrorBody {
                    error: "hiera_error".to_owned(),
                    class: Some(e.class.ruby_name().to_owned()),
                    message: e.message,
                };
                return (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response();
            }
            ApiError::Unparsed(doc) => {
                let body = UnparsedErrorBody::of(&doc);
                return (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response();
            }
            ApiError::TimedOut(limit) => (
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!(
                    "the request was not answered within the limit of {} ms (hierad serve --request-timeout); \
                     a write that had started is still completed",
                    limit.as_millis()
                ),
            ),
            ApiError::OverBudget {
                limit,
                value,
                error,
            } => {
                let budget = limit.name();
                let (flag, what) = match limit {
                    Limit::Steps => (
                        BUDGET_STEPS_FLAG,
                        "interpolation steps (%{} expansions, hiera() and alias() lookups)",
                    ),
                    Limit::Bytes => (BUDGET_BYTES_FLAG, "bytes of interpolated values"),
                };
                let body = BudgetErrorBody {
                    error: "budget_exceeded".to_owned(),
                    class: error.class.ruby_name().to_owned(),
                    budget: budget.to_owned(),
                    limit: value,
                    flag: flag.to_owned(),
                    message: format!(
                        "lookup refused: it needs more than {value} {what}, the server's {budget} budget; \
                         look for interpolation fan-out in the data, or raise the budget with `hierad serve {flag} N`"
                    ),
                };
                return (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response();
            }
            ApiError::Gone(gone) => {
                let body = crate::api::GoneBody {
                    error: "gone".to_owned(),
                    message: gone.to_string(),
                    oldest_readable: gone.oldest,
                };
                return (StatusCode::GONE, Json(body)).into_response();
            }
            ApiError::PreconditionFailed(m) => {
                (StatusCode::PRECONDITION_FAILED, "precondition_failed", m)
            }
            ApiError::Behind { at, wanted, waited } => {
                let message = format!(
                    "this replica has generation {at}, and the request asked for at least {wanted}; \
                     it did not catch up within {} ms (hierad serve --min-generation-wait): \
                     retry, or ask a replica that has it",
                    waited.as_millis()
                );
                let mut answer = error_response(StatusCode::SERVICE_UNAVAILABLE, "behind", message);
                answer
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                return answer;
            }
            ApiError::Unavailable(m) => {
                tracing::warn!(target: "hierad::server::error", error = %m, "request refused: the database is unavailable");
                let message = "the database is unavailable, so this request cannot be served now: \
                     writes are refused, lookups answer from the last snapshot (see /healthz); \
                     retry once the database is back (the server's log has the database's error)"
                    .to_owned();
                let mut answer =
                    error_response(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message);
                answer
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                return answer;
            }
            ApiError::Busy(busy) => {
                let mut answer =
                    error_response(StatusCode::SERVICE_UNAVAILABLE, "busy", busy.message());
                answer
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                return answer;
            }
            ApiError::ReadOnly(m) => {
                tracing::error!(target: "hierad::server::error", error = %m, "write refused: the database accepts no writes");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "read_only",
                    "the database accepts no writes, so nothing was written; \
                     writes fail until an operator makes it writable (the server's log has the database's error)"
                        .to_owned(),
                )
            }
            ApiError::Internal(m) => {
                tracing::error!(target: "hierad::server::error", error = %m, "request failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the server failed to complete the request; see its log".to_owned(),
                )
            }
            ApiError::Panicked => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the server failed to complete the request (a bug: see its log)".to_owned(),
            ),
        };
        error_response(status, kind, message)
    }
}

/// The one form of every error answer (docs/api.md).
pub(crate) fn error_response(status: StatusCode, kind: &str, message: String) -> Response {
    let body = ErrorBody {
        error: kind.to_owned(),
        class: None,
        message,
    };
    (status, Json(body)).into_response()
}

/// The error kind of a status no handler of ours chose.
fn kind_of(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::REQUEST_TIMEOUT => "request_timeout",
        StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        StatusCode::PRECONDITION_FAILED => "precondition_failed",
        StatusCode::URI_TOO_LONG => "uri_too_long",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => "header_fields_too_large",
        s if s.is_server_error() => "internal",
        _ => "bad_request",
    }
}

/// An error answer made outside our handlers (axum's extractor
/// rejections, the router's 405) gets the JSON body our own errors have,
/// keeping its status and headers (`Allow`…).
pub(crate) async fn json_bodies(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // Rejection texts are a line or two; a larger body is not one.
    let text = axum::body::to_bytes(body, 16 * 1024)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let message = match text.trim() {
        "" => status
            .canonical_reason()
            .unwrap_or("the request was refused")
            .to_lowercase(),
        text => text.to_owned(),
    };
    let mut answer = error_response(status, kind_of(status), message);
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::CONTENT_TYPE);
    for (name, value) in &parts.headers {
        answer.headers_mut().append(name, value.clone());
    }
    answer
}

/// The answer to a handler's panic: logged (without its payload, which
/// may quote data), answered 500.
pub(crate) fn panicked(_payload: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!(target: "hierad::server::error", "a request handler panicked; the server goes on");
    ApiError::Panicked.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database that is down for a while asks clients to retry; one
    /// that accepts no writes must not (they would retry for ever).
    #[test]
    fn only_a_passing_database_failure_asks_for_a_retry() {
        let answer = |e: StoreError| ApiError::from(e).into_response();
        let down = answer(StoreError::Database("connection refused".into()));
        assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(down.headers().contains_key(header::RETRY_AFTER));
        let read_only = answer(StoreError::ReadOnly(
            "attempt to write a readonly database".to_owned(),
        ));
        assert_eq!(read_only.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!read_only.headers().contains_key(header::RETRY_AFTER));
    }
}
