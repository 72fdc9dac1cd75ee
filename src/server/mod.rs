//! The HTTP server: routes, limits, metrics, graceful shutdown. Handlers
//! stay thin; the ConfigDB rules live in `configdb`/`store`, the Hiera
//! answers in `lookup`.

mod body;
mod cache;
mod config_api;
mod error;
mod lookup_api;
pub mod metrics;
pub mod signal;
pub mod state;

pub use error::ApiError;
pub use state::AppState;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use std::future::Future;
use tokio::net::TcpListener;
use tower_http::timeout::TimeoutLayer;

/// The whole application over `state`.
pub fn app(state: AppState) -> Router {
    let timeout = state.settings().request_timeout;
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics_text))
        .nest("/api/v1/config", config_api::routes())
        .nest("/api/v1", lookup_api::routes())
        .layer(axum::middleware::from_fn_with_state(
            state.metrics().clone(),
            metrics::track,
        ))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .with_state(state)
}

async fn metrics_text(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics().render(),
    )
}

/// Serves `state` on `listener` until `shutdown` resolves, then stops
/// accepting and drains the requests in flight.
///
/// # Errors
///
/// The listener fails.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown)
        .await
}
