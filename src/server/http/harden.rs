//! What every request gets around the router, in one tower service
//! ([`Harden`]) whose future runs the steps in order (bench/LOG.md,
//! "Second pass: the lookup path"). It wraps the whole router once, with
//! the request's route template found first ([`Templates`]): applied
//! with `Router::layer`, axum boxed it into every route and cloned and
//! boxed it again for each request (bench/LOG.md, "One layer around the
//! router; direct calls past it").
//!
//! Outermost first:
//! 1. the access log (`access`), which sees the final status and the
//!    principal, whatever refused the request;
//! 2. the metrics, which count and time every answer;
//! 3. JSON bodies for the errors the router and extractors make;
//! 4. the connection's framing refusal (400, `conn::Unframed`), the head
//!    limits (414, 431), then the refusals of what a web page
//!    could make a browser send (`cross_site`: 421, 403, 415), before
//!    anyone is authenticated;
//! 5. the time limit (408), over everything below;
//! 6. authentication and authorization (`guard`);
//! 7. the generation wait and stamp (`consistency`);
//! 8. the handler, called directly for the hot routes
//!    (`Templates::direct`) or through the router; a panic in it answers
//!    500 ([`error::panicked`]).

use crate::server::http::conn::Unframed;
use crate::server::http::error::{self, ApiError};
use crate::server::http::templates::{Route, Templates};
use crate::server::routes::env::Named;
use crate::server::state::AppState;
use crate::server::{
    http::access, http::cross_site, http::guard, state::consistency, state::metrics,
};
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tower::{Service, ServiceExt};

/// The application as connections call it: the router, and the steps
/// of the module's documentation around it.
#[derive(Clone)]
pub struct Harden {
    router: Router,
    state: AppState,
    templates: Arc<Templates>,
}

impl std::fmt::Debug for Harden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harden").finish_non_exhaustive()
    }
}

impl Harden {
    /// `router` (its state given) behind the steps, its requests' route
    /// templates found by `templates`, which must be the router's own
    /// table.
    pub(crate) fn new(state: &AppState, router: Router, templates: Templates) -> Harden {
        Harden {
            router,
            state: state.clone(),
            templates: Arc::new(templates),
        }
    }
}

impl<B> Service<axum::http::Request<B>> for Harden
where
    B: axum::body::HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    /// Always ready: the router is (axum's always is).
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::http::Request<B>) -> Self::Future {
        let answer = self.answer(request);
        Box::pin(async move { Ok(answer.await) })
    }
}

impl Harden {
    /// The answer to `request`: what [`Service::call`] boxes, for a
    /// caller that holds its future inline (the connection's service,
    /// whose own future is boxed already: one allocation a request fewer).
    pub(crate) fn answer<B>(
        &self,
        request: axum::http::Request<B>,
    ) -> impl Future<Output = Response> + Send + 'static
    where
        B: axum::body::HttpBody<Data = bytes::Bytes> + Send + 'static,
        B::Error: Into<axum::BoxError>,
    {
        let request = request.map(Body::new);
        let route = self.templates.of(request.method(), request.uri().path());
        run(self.state.clone(), self.router.clone(), route, request)
    }
}

/// The steps, in order, around `router`, for a request routed to
/// `route`.
async fn run(state: AppState, router: Router, route: Route, request: Request) -> Response {
    let start = Instant::now();
    let log = access::AccessLog::of(&request, route.template);
    let track = metrics::Track::of(&request, route.template);
    // Filled by `guard::authorize` once the principal is known, read by
    // the access log even when the time limit cut the request short.
    let who: OnceLock<Arc<str>> = OnceLock::new();
    let settings = state.settings();
    let refused = (request.extensions().get::<Unframed>().copied())
        .map(Unframed::refusal)
        .or_else(|| head_limits(&request, settings.max_header_bytes))
        .or_else(|| cross_site::refusal(&request, &settings.allowed_hosts));
    let response = match refused {
        Some(refused) => refused,
        None => {
            let limit = settings.request_timeout;
            // Boxed: these steps hold the handler's future, and each move
            // of it (into `time_limit`, into tokio's `Timeout`) copied all
            // of it; a pointer moves instead (-900 instructions a lookup).
            let answer = checked(&state, router, route, request, &who);
            time_limit(limit, Box::pin(answer)).await
        }
    };
    let response = error::json_bodies(response).await;
    let elapsed = start.elapsed();
    track.done(state.metrics(), &response, elapsed);
    log.done(&response, who.get(), elapsed);
    response
}

/// Authorization, then the generation the request waits for, then the
/// handler: called directly on a direct route, through the router
/// otherwise.
async fn checked(
    state: &AppState,
    router: Router,
    route: Route,
    request: Request,
    who: &OnceLock<Arc<str>>,
) -> Response {
    let Route {
        template,
        direct,
        params,
    } = route;
    let mut request = match guard::authorize(state, request, template, &params.env, who).await {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    let stamp = match consistency::Stamp::asked(&request) {
        Ok(stamp) => stamp.wait(state).await,
        Err(e) => Err(e),
    };
    let stamp = match stamp {
        Ok(stamp) => stamp,
        Err(e) => return e.into_response(),
    };
    // A direct route's parameters, for its handler: axum's router, which
    // would store its own, is skipped.
    if direct.is_some() && (params.rest.is_some() || params.env != Named::Nothing) {
        guard::Asker::set_matched(request.extensions_mut(), params);
    }
    // The handler's future, unwinding included: a handler's panic ends
    // its request, not the connection's task.
    let answer = match direct {
        Some(handler) => AssertUnwindSafe(handler(request, state.clone())).left_future(),
        None => {
            AssertUnwindSafe(router.oneshot(request).map(|Ok(response)| response)).right_future()
        }
    };
    let mut response = match answer.catch_unwind().await {
        Ok(response) => response,
        Err(panic) => error::panicked(panic),
    };
    stamp.put(state, &mut response);
    response
}

/// The longest request target answered (414 beyond).
pub(crate) const MAX_URI_BYTES: usize = 8 * 1024;

/// 414 for a target over [`MAX_URI_BYTES`], 431 for a head over `max`
/// bytes, with JSON bodies (hyper's own refusals, for heads over twice
/// the size, have none); `None` for a request within them.
fn head_limits(request: &Request, max: usize) -> Option<Response> {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if target > MAX_URI_BYTES {
        return Some(error::error_response(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("the request target is {target} bytes, over the limit of {MAX_URI_BYTES}"),
        ));
    }
    // The request line and `name: value\r\n` per header, as sent.
    let head = request.method().as_str().len()
        + target
        + 12
        + request
            .headers()
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + 4)
            .sum::<usize>();
    if head > max {
        return Some(error::error_response(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "header_fields_too_large",
            format!(
                "the request head is {head} bytes, over the limit of {max} (hierad serve --max-header-bytes)"
            ),
        ));
    }
    None
}

/// 408 for a request not answered within `limit`. The timer is armed
/// only once the request waits (tokio's `timeout` polls it first): most
/// lookups are answered in their first poll, and arming one for every
/// request (tower-http's `TimeoutLayer`) woke the timer driver with a
/// syscall each time.
async fn time_limit(limit: Duration, answer: impl Future<Output = Response>) -> Response {
    tokio::time::timeout(limit, answer)
        .await
        .unwrap_or_else(|_| ApiError::TimedOut(limit).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;
    use crate::store::SqliteStore;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// The status line of the answer to `request`, sent as is.
    async fn status_of(addr: std::net::SocketAddr, request: String) -> String {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = [0; 12];
        stream.read_exact(&mut answer).await.unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    /// What the access log and the metrics say of each answer, whichever
    /// step made it: a 431 from the head limits, a 408 from the time
    /// limit (after the principal was known), a 404 from the router.
    #[test]
    fn the_access_log_and_the_metrics_see_every_final_answer() {
        let lines = crate::cli::logging::Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(lines.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .finish();
        let settings = Settings {
            request_timeout: Duration::from_millis(100),
            max_header_bytes: 4096,
            ..Settings::default()
        };
        let store = Arc::new(SqliteStore::open_in_memory().unwrap());
        let state = AppState::new(store, settings).unwrap();
        // One thread: the server's tasks log to this thread's subscriber.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let statuses = tracing::subscriber::with_default(subscriber, || {
            // Other tests' threads may have registered the access log's
            // callsites while this subscriber was being installed, with an
            // interest computed without it ("never"): tracing keeps that
            // until the next rebuild. With one subscriber in the process,
            // tracing computes an interest from the registering thread's
            // own, so a thread without one may also register the
            // callsite after a rebuild, and make it "never" again. So the
            // access log's check is registered here first (`of` logs
            // nothing), then rebuilt: a registered callsite's interest
            // changes only at a rebuild, and none follows.
            let _ = access::AccessLog::of(&Request::new(axum::body::Body::empty()), None);
            tracing::callsite::rebuild_interest_cache();
            runtime.block_on(async {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr = listener.local_addr().unwrap();
                tokio::spawn(crate::server::serve(
                    listener,
                    state.clone(),
                    None,
                    std::future::pending(),
                ));
                let big = format!(
                    "GET /healthz HTTP/1.1\r\nhost: localhost\r\nx-filler: {}\r\n\r\n",
                    "v".repeat(5000)
                );
                // Half a body, then nothing: the time limit answers.
                let slow = "POST /api/v1/lookup HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"key\":";
                let nowhere = "GET /nowhere HTTP/1.1\r\nhost: localhost\r\n\r\n";
                let mut statuses = Vec::new();
                for request in [big, slow.to_owned(), nowhere.to_owned()] {
                    statuses.push(status_of(addr, request).await);
                }
                statuses
            })
        });
        assert_eq!(statuses, ["HTTP/1.1 431", "HTTP/1.1 408", "HTTP/1.1 404"]);
        let text = lines.text();
        let logged: Vec<String> = text
            .lines()
            .filter(|l| l.contains("hierad::access"))
            .map(|l| l.replace('"', ""))
            .collect();
        assert_eq!(logged.len(), 3, "{text}");
        for (line, want) in logged.iter().zip([
            ["route=/healthz", "status=431", "principal=-"],
            ["route=/api/v1/lookup", "status=408", "principal=anonymous"],
            ["route=unmatched", "status=404", "principal=anonymous"],
        ]) {
            for part in want {
                assert!(line.contains(part), "{part} in {line}");
            }
        }
        let metrics = state.metrics().render();
        for line in [
            r#"hierad_http_requests_total{method="GET",route="/healthz",status="431"} 1"#,
            r#"hierad_http_requests_total{method="POST",route="/api/v1/lookup",status="408"} 1"#,
            r#"hierad_http_requests_total{method="GET",route="unmatched",status="404"} 1"#,
        ] {
            assert!(metrics.contains(line), "{line} in {metrics}");
        }
    }
}
