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
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;

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
        .layer(axum::middleware::from_fn_with_state(timeout, time_limit))
        .with_state(state)
}

/// Middleware: 408 for a request not answered within `limit`. The timer
/// is armed only once the request waits (tokio's `timeout` polls it
/// first): most lookups are answered in their first poll, and arming one
/// for every request (tower-http's `TimeoutLayer`) woke the timer driver
/// with a syscall each time.
async fn time_limit(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    tokio::time::timeout(limit, next.run(request))
        .await
        .unwrap_or_else(|_| StatusCode::REQUEST_TIMEOUT.into_response())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;
    use crate::store::SqliteStore;
    use std::io::{Read, Write};
    use std::sync::Arc;

    /// The status line of the answer to `request`, sent as is.
    fn status_of(addr: std::net::SocketAddr, request: &str) -> String {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = [0; 12];
        stream.read_exact(&mut answer).unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[test]
    fn a_request_that_waits_too_long_gets_408() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let settings = Settings {
            request_timeout: Duration::from_millis(200),
            ..Settings::default()
        };
        let store = Arc::new(SqliteStore::open_in_memory().unwrap());
        let state = AppState::new(store, settings).unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(serve(listener, state, std::future::pending()));
        assert_eq!(
            status_of(addr, "GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n"),
            "HTTP/1.1 200"
        );
        // Half a body, then nothing.
        let started = std::time::Instant::now();
        assert_eq!(
            status_of(
                addr,
                "POST /api/v1/lookup HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{\"key\":"
            ),
            "HTTP/1.1 408"
        );
        assert!(started.elapsed() >= Duration::from_millis(200));
    }
}
