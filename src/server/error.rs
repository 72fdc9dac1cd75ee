//! API errors: every failure becomes `{"error": kind, "message": text}`
//! with its status; database failures are logged and answered 500 without
//! their details.

use crate::api::ErrorBody;
use crate::configdb::{ConfigError, ErrorKind};
use crate::hiera::HieraError;
use crate::store::StoreError;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// An error answer.
#[derive(Debug)]
pub enum ApiError {
    /// 400: the request is malformed.
    BadRequest(String),
    /// 404: something it names does not exist.
    NotFound(String),
    /// 409: it would break a uniqueness rule.
    Conflict(String),
    /// 413: the body is over the limit.
    TooLarge(usize),
    /// 422: Hiera itself fails this lookup.
    Hiera(HieraError),
    /// 500: the store failed.
    Internal(String),
}

impl From<ConfigError> for ApiError {
    fn from(e: ConfigError) -> ApiError {
        match e.kind() {
            ErrorKind::NotFound => ApiError::NotFound(e.to_string()),
            ErrorKind::Conflict => ApiError::Conflict(e.to_string()),
            ErrorKind::Invalid => ApiError::BadRequest(e.to_string()),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Config(e) => e.into(),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<HieraError> for ApiError {
    fn from(e: HieraError) -> ApiError {
        ApiError::Hiera(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, kind, message) = match self {
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, "bad_request", m),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, "not_found", m),
            ApiError::Conflict(m) => (StatusCode::CONFLICT, "conflict", m),
            ApiError::TooLarge(limit) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!("the request body is larger than the limit of {limit} bytes"),
            ),
            ApiError::Hiera(e) => {
                let body = ErrorBody {
                    error: "hiera_error".to_owned(),
                    class: Some(e.class.ruby_name().to_owned()),
                    message: e.message,
                };
                return (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response();
            }
            ApiError::Internal(m) => {
                tracing::error!(error = %m, "request failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the server failed to complete the request; see its log".to_owned(),
                )
            }
        };
        let body = ErrorBody {
            error: kind.to_owned(),
            class: None,
            message,
        };
        (status, Json(body)).into_response()
    }
}
