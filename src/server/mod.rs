//! The HTTP server: routes, limits, metrics, graceful shutdown. Handlers
//! stay thin; the ConfigDB rules live in `configdb`/`store`, the Hiera
//! answers in `lookup`.

#[cfg(test)]
mod direct_tests;
pub(crate) mod http;
#[cfg(test)]
mod props;
pub(crate) mod reload;
#[cfg(test)]
mod route_table_tests;
pub(crate) mod routes;
pub(crate) mod run;
pub(crate) mod secrets;
pub(crate) mod state;

pub(crate) use http::error::ApiError;
pub use http::harden::Harden;
pub(crate) use run::run;
pub use state::AppState;

use crate::api::paths;
use axum::Router;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::future::Future;
use tokio::net::TcpListener;

/// `ok`, or `degraded` with the number of unreadable documents (never
/// their content). Their names (a node's name is one) only to a request
/// that authenticated, and only those of environments its principal may
/// use: the probe itself needs no credentials. Without an auth file every
/// request is an admin, and sees them all.
/// Still 200: the replicas share one database, so a balancer
/// that pulled one for a bad document would pull them all, while every
/// other document is served.
/// A stale server (see /readyz) says so too, still 200: it answers
/// lookups from its last snapshot; while catching up with the database
/// fails, a `database:` line says since when and the latest error.
async fn health(
    axum::extract::State(state): axum::extract::State<AppState>,
    principal: Option<crate::auth::Principal>,
) -> String {
    let snapshot = state.snapshot();
    let bad = snapshot.unreadable();
    let mut text = if bad.is_empty() {
        "ok\n".to_owned()
    } else {
        format!("degraded: {} unreadable document(s)\n", bad.len())
    };
    if let Some(principal) = principal {
        for doc in bad.iter().filter(|doc| principal.may_use(doc.at.env)) {
            text.push_str(&format!("unreadable: {doc}\n"));
        }
    }
    if let Some(stale) = state.stale() {
        text.push_str(&stale);
        text.push('\n');
    }
    if let Some(failure) = state.failure() {
        text.push_str(&failing_line(&failure));
    }
    text
}

/// The `/healthz` line of a run of failed catch-ups: since when, and the
/// database's latest error (its first line, at most 300 bytes: a
/// database's error names what failed, never a document's content).
fn failing_line(failure: &state::Failure) -> String {
    let error = failure.error.lines().next().unwrap_or_default();
    let mut cut = error.len().min(300);
    while !error.is_char_boundary(cut) {
        cut -= 1;
    }
    let seconds = jiff::Timestamp::now()
        .duration_since(failure.since)
        .as_secs_f64()
        .max(0.0);
    format!(
        "database: catching up has failed since {} ({seconds:.1} s): {}\n",
        failure
            .since
            .round(jiff::Unit::Second)
            .unwrap_or(failure.since),
        &error[..cut]
    )
}

/// For a balancer: 200 `ready` while this server serves the database's
/// newest generation (confirmed within `--max-lag`), 503 `not_ready`
/// with the reason otherwise.
async fn ready(axum::extract::State(state): axum::extract::State<AppState>) -> Response {
    match state.stale() {
        None => "ready\n".into_response(),
        Some(reason) => {
            http::error::error_response(StatusCode::SERVICE_UNAVAILABLE, "not_ready", reason)
        }
    }
}

/// The whole application over `state`: the routes, behind what every
/// request gets around them ([`Harden`]: the access log, metrics, JSON
/// error bodies, head and time limits, authorization, generations,
/// panics answered 500), which finds each request's route template
/// before routing ([`http::templates`]).
pub fn app(state: AppState) -> Harden {
    let ui = state.settings().ui;
    // What every Puppet run asks (a lookup, a datasource, a document)
    // skips axum's router.
    let templates = http::templates::Templates::server(ui)
        .direct(paths::LOOKUP, Method::POST, routes::lookup::direct)
        .direct(
            paths::DATASOURCE,
            Method::GET,
            routes::lookup::datasource_direct,
        )
        .direct(paths::DOCUMENT, Method::GET, routes::documents::get_direct);
    Harden::new(&state, router(&state), templates)
}

/// Every route, with its handler, behind axum's router.
fn router(state: &AppState) -> Router {
    Router::new()
        .route(paths::HEALTHZ, get(health))
        .route(paths::READYZ, get(ready))
        .route(paths::METRICS, get(metrics_text))
        // Every route with its full path (crate::api::paths), merged, not
        // nested: a nested router adds a prefix strip to each request.
        .merge(routes::config::routes())
        .merge(routes::lookup::routes())
        .merge(routes::hierarchies::routes())
        .merge(routes::rotate::routes())
        .merge(routes::ui::routes(state.settings().ui))
        .merge(routes::tags::routes())
        .merge(routes::changes::routes())
        .fallback(no_route)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state.clone())
}

/// [`app`] with every route behind axum's router, none called directly:
/// what the direct calls must answer as (src/server/direct_tests.rs).
#[cfg(test)]
pub(crate) fn app_routed(state: &AppState) -> Harden {
    let templates = http::templates::Templates::server(state.settings().ui);
    Harden::new(state, router(state), templates)
}

async fn no_route(method: Method, uri: Uri) -> ApiError {
    ApiError::NotFound(format!(
        "no route for {method} {}; docs/api.md lists the API",
        uri.path()
    ))
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    let message = format!(
        "{} does not take {}; the Allow header lists what it takes",
        uri.path(),
        Truncated(method.as_str(), METHOD_SHOWN)
    );
    http::error::error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        message,
    )
}

/// How much of a request's method answers and logs show: a client may
/// send one as long as a head may be.
pub(crate) const METHOD_SHOWN: usize = 32;

pub(crate) use crate::configdb::Truncated;

async fn metrics_text(State(state): State<AppState>) -> impl IntoResponse {
    state.metrics().set_sync_age(
        state.sync_age(),
        state.stale().is_some(),
        state.lag_generations(),
    );
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics().render(),
    )
}

/// Serves `state` on `listener` (over TLS when `tls` is given) until
/// `shutdown` resolves, then stops accepting, drains the requests in
/// flight, and closes what is still open after the shutdown deadline (see
/// `conn`).
///
/// # Errors
///
/// The listener fails.
pub(crate) async fn serve(
    listener: TcpListener,
    state: AppState,
    tls: Option<std::sync::Arc<http::tls::Tls>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let settings = state.settings().clone();
    let unread = std::sync::Arc::clone(state.unread());
    let heads = http::conn::HeadRefusals::new(state.metrics());
    // Waiters for changes end with the accept loop, not the drain's deadline.
    let closing = state.clone();
    let shutdown = async move {
        shutdown.await;
        closing.close();
    };
    http::conn::serve(
        listener,
        app(state),
        &settings,
        (unread, heads),
        tls,
        shutdown,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::http::harden::MAX_URI_BYTES;
    use super::http::templates::Templates;
    use super::*;
    use crate::settings::Settings;
    use crate::store::SqliteStore;
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::time::Duration;

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
        runtime.spawn(serve(listener, state, None, std::future::pending()));
        assert_eq!(
            status_of(addr, "GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n"),
            "HTTP/1.1 200"
        );
        // Half a body, then nothing.
        let started = std::time::Instant::now();
        assert_eq!(
            status_of(
                addr,
                "POST /api/v1/lookup HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"key\":"
            ),
            "HTTP/1.1 408"
        );
        assert!(started.elapsed() >= Duration::from_millis(200));
    }

    fn state() -> AppState {
        let store = Arc::new(SqliteStore::open_in_memory().unwrap());
        AppState::new(store, Settings::default()).unwrap()
    }

    /// The status and JSON body of `request` answered in-process.
    fn answer(
        app: Harden,
        request: axum::http::Request<axum::body::Body>,
    ) -> (u16, serde_json::Value) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let response = tower::ServiceExt::oneshot(app, request).await.unwrap();
            let status = response.status().as_u16();
            let body = axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .unwrap();
            let body = serde_json::from_slice(&body)
                .unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {body:?}"));
            (status, body)
        })
    }

    fn request(method: &str, uri: &str) -> axum::http::Request<axum::body::Body> {
        axum::http::Request::builder()
            .method(method)
            .uri(uri)
            .body(axum::body::Body::empty())
            .unwrap()
    }

    #[test]
    fn errors_made_outside_the_handlers_have_json_bodies() {
        let long = format!("/api/v1/config/environments/{}", "x".repeat(MAX_URI_BYTES));
        let cases = [
            (
                request("GET", "/nowhere"),
                404,
                "not_found",
                "no route for GET /nowhere",
            ),
            (
                request("PATCH", "/healthz"),
                405,
                "method_not_allowed",
                "/healthz does not take PATCH",
            ),
            // The lookup route's other methods: its POSTs skip the router
            // (`Templates::direct`), these do not.
            (
                request("GET", "/api/v1/lookup"),
                405,
                "method_not_allowed",
                "/api/v1/lookup does not take GET",
            ),
            (
                request("GET", "/api/v1/config/environments/%FF/resources/a/values"),
                400,
                "bad_request",
                "Invalid URL",
            ),
            (
                request(
                    "GET",
                    "/api/v1/config/environments/5/resources/a/values?version=%FF",
                ),
                400,
                "bad_request",
                "version",
            ),
            (
                request("GET", &long),
                414,
                "uri_too_long",
                "over the limit of 8192",
            ),
        ];
        for (request, status, kind, message) in cases {
            let (got, body) = answer(app(state()), request);
            assert_eq!(
                (got, body["error"].as_str()),
                (status, Some(kind)),
                "{body}"
            );
            let text = body["message"].as_str().unwrap();
            assert!(text.contains(message), "{message} in {body}");
        }
        let mut big = request("GET", "/healthz");
        for i in 0..40 {
            big.headers_mut().insert(
                axum::http::HeaderName::from_bytes(format!("x-filler-{i}").as_bytes()).unwrap(),
                axum::http::HeaderValue::from_str(&"v".repeat(1000)).unwrap(),
            );
        }
        let (got, body) = answer(app(state()), big);
        assert_eq!(
            (got, body["error"].as_str()),
            (431, Some("header_fields_too_large")),
            "{body}"
        );
    }

    #[test]
    fn a_resource_404_names_the_resource_not_every_other() {
        let state = state();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let names: Vec<serde_json::Value> = (0..500)
            .map(|i| serde_json::json!({"name": format!("resource-{i}")}))
            .collect();
        let post = |uri: &str, body: serde_json::Value| {
            axum::http::Request::builder()
                .method("POST")
                .uri(uri)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(body.to_string()))
                .unwrap()
        };
        for (uri, body) in [
            (
                "/api/v1/config/components",
                serde_json::json!({"name": "app", "resource_definitions": names}),
            ),
            (
                "/api/v1/config/environments",
                serde_json::json!({"id": 1, "components": ["app"], "hierarchy_levels": []}),
            ),
        ] {
            let response = runtime
                .block_on(tower::ServiceExt::oneshot(
                    app(state.clone()),
                    post(uri, body),
                ))
                .unwrap();
            assert_eq!(response.status(), StatusCode::CREATED);
        }
        drop(runtime);
        let (status, body) = answer(
            app(state),
            request("GET", "/api/v1/config/environments/1/resources/nope/values"),
        );
        assert_eq!(status, 404);
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("\"nope\""), "{message}");
        assert!(message.contains("500"), "{message}");
        assert!(!message.contains("resource-1"), "{message}");
    }

    /// `router` behind the real connection layer, on a free port of
    /// 127.0.0.1, for as long as `runtime` lives.
    fn served(
        runtime: &tokio::runtime::Runtime,
        router: Harden,
        state: &AppState,
    ) -> std::net::SocketAddr {
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let settings = state.settings().clone();
        let shared = (
            Arc::clone(state.unread()),
            http::conn::HeadRefusals::new(state.metrics()),
        );
        runtime.spawn(async move {
            http::conn::serve(
                listener,
                router,
                &settings,
                shared,
                None,
                std::future::pending(),
            )
            .await
        });
        addr
    }

    /// The facts the server attaches to a request (its client, its
    /// principal) share one extension: with axum's URL parameters a
    /// routed request holds two (the route's template is found before
    /// routing, not kept in one), which the extension map's first table
    /// holds; a fourth grew it (bench/LOG.md, "Routing and extensions").
    #[test]
    fn a_routed_request_holds_two_extensions() {
        let state = state();
        let probe =
            |request: axum::extract::Request| async move { request.extensions().len().to_string() };
        const PROBE: &str = "/probe/{env}/{*rest}";
        let router = Router::new()
            .route(PROBE, get(probe))
            .with_state(state.clone());
        let router = Harden::new(&state, router, Templates::new([PROBE]));
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let addr = served(&runtime, router, &state);
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
            .write_all(b"GET /probe/1/a/b HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert_eq!(answer.rsplit("\r\n").next(), Some("2"), "{answer}");
    }

    async fn boom() -> &'static str {
        panic!("a bug")
    }

    #[test]
    fn a_handler_panic_answers_500_and_the_server_goes_on() {
        let state = state();
        let routes = Router::new()
            .route("/boom", get(boom).post(boom))
            .route("/fine", get(|| async { "fine" }));
        // `/boom`'s POSTs are called directly, past the router: the same
        // catch.
        fn boom_direct(
            request: axum::extract::Request,
            state: AppState,
        ) -> http::templates::Answering {
            axum::handler::Handler::call(boom, request, state)
        }
        let router = Harden::new(
            &state,
            routes.with_state(state.clone()),
            Templates::new(["/boom", "/fine"]).direct("/boom", Method::POST, boom_direct),
        );
        let (status, body) = answer(router.clone(), request("GET", "/boom"));
        assert_eq!(
            (status, body["error"].as_str()),
            (500, Some("internal")),
            "{body}"
        );
        // Over a socket: the connection's task survives the panic too.
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let addr = served(&runtime, router, &state);
        for _ in 0..3 {
            assert_eq!(
                status_of(addr, "GET /boom HTTP/1.1\r\nhost: localhost\r\n\r\n"),
                "HTTP/1.1 500"
            );
            assert_eq!(
                status_of(
                    addr,
                    "POST /boom HTTP/1.1\r\nhost: localhost\r\ncontent-length: 0\r\n\r\n"
                ),
                "HTTP/1.1 500"
            );
            assert_eq!(
                status_of(addr, "GET /fine HTTP/1.1\r\nhost: localhost\r\n\r\n"),
                "HTTP/1.1 200"
            );
        }
    }
}
