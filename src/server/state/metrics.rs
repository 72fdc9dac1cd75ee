//! Prometheus metrics: requests and latency per route, answer-cache hits
//! and misses, the data generation, the database size and pruning.
//! Labels never carry data values.

use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::time::Duration;

// Labels are made for every request, so they borrow or share their text
// rather than allocating it; every one comes from a bounded set.

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: &'static str,
}

/// What the route label says of a request that matched no route.
const UNMATCHED: &str = "unmatched";

/// The standard methods by name; any other is `other`, so a client
/// cannot grow the label sets (each is kept for the process's life).
fn method_label(method: &Method) -> &'static str {
    const STANDARD: [(Method, &str); 9] = [
        (Method::GET, "GET"),
        (Method::POST, "POST"),
        (Method::PUT, "PUT"),
        (Method::DELETE, "DELETE"),
        (Method::HEAD, "HEAD"),
        (Method::OPTIONS, "OPTIONS"),
        (Method::PATCH, "PATCH"),
        (Method::TRACE, "TRACE"),
        (Method::CONNECT, "CONNECT"),
    ];
    STANDARD
        .iter()
        .find(|(m, _)| m == method)
        .map_or("other", |(_, name)| *name)
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    result: &'static str,
}

/// The server's metrics, registered once; cheap to share behind an `Arc`.
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    /// The answer cache's two series, held: found in their family for
    /// every lookup, they cost a hash and a lock each time.
    cache_hits: Counter,
    cache_misses: Counter,
    generation: Gauge,
    unreadable: Gauge,
    costly: Counter,
    costly_running: Gauge,
    refusals: Family<BudgetLabels, Counter>,
    busy: Family<BoundLabels, Counter>,
    heads: Family<HeadLabels, Counter>,
    database_bytes: Gauge,
    database_free_bytes: Gauge,
    versions_pruned: Counter,
    sync_age: Gauge<f64, std::sync::atomic::AtomicU64>,
    stale: Gauge,
    lag_generations: Gauge,
    database_up: Gauge,
    database_down_since: Gauge,
    auth_failures: Family<AuthLabels, Counter>,
    auth_throttled: Family<ThrottleLabels, Counter>,
    /// The series of the first [`HOT_SERIES`] (method, route, status)
    /// answered: handles to the families' own series, taken at the first
    /// request of each, so that the rest skip the families' lock and
    /// label hashing (about 1,200 instructions a request). Found by the
    /// route template's address, which each entry holds alive.
    hot: arc_swap::ArcSwap<Vec<Hot>>,
}

/// How many series [`Metrics::hot`] holds: every route's usual answers,
/// with room to spare. Those past it are counted through the families.
const HOT_SERIES: usize = 64;

/// One series of [`Metrics::hot`].
#[derive(Clone)]
struct Hot {
    method: &'static str,
    route: &'static str,
    status: u16,
    latency: Histogram,
    requests: Counter,
}

impl Hot {
    fn is(&self, method: &str, route: &str, status: u16) -> bool {
        self.status == status && self.method == method && self.route == route
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AuthLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ThrottleLabels {
    /// `waited` for its turn, or `refused` (429).
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HeadLabels {
    /// `malformed` (answered 400) or `too_large` (431).
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BoundLabels {
    /// `unread_answers` or `lookup_queue`.
    bound: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BudgetLabels {
    budget: &'static str,
}

/// 50 µs to ~1.6 s: lookups are sub-millisecond, imports take longer.
fn latency_buckets() -> Histogram {
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        0.00005, 2.0, 16,
    ))
}

/// Registers `metric` under `name` and gives it back, for the field that
/// updates it.
fn registered<M: prometheus_client::registry::Metric + Clone>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    metric: M,
) -> M {
    registry.register(name, help, metric.clone());
    metric
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("hierad");
        let r = &mut registry;
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(latency_buckets);
        let database_up = Gauge::default();
        database_up.set(1);
        let cache = registered(
            r,
            "lookup_cache",
            "Lookup answer cache hits and misses",
            Family::<CacheLabels, Counter>::default(),
        );
        // Each in its own statement: the family's guard lives to the end
        // of one, and a second series made under it waits for it forever.
        let cache_hits = cache.get_or_create(&CacheLabels { result: "hit" }).clone();
        let cache_misses = cache.get_or_create(&CacheLabels { result: "miss" }).clone();
        Metrics {
            hot: arc_swap::ArcSwap::from_pointee(Vec::new()),
            unreadable: registered(
                r,
                "unreadable_documents",
                "Stored documents that could not be read (see `hierad doctor`)",
                Gauge::default(),
            ),
            requests: registered(
                r,
                "http_requests",
                "HTTP requests by route and status",
                Family::<RequestLabels, Counter>::default(),
            ),
            latency: registered(
                r,
                "http_request_duration_seconds",
                "HTTP request latency by route",
                latency,
            ),
            cache_hits,
            cache_misses,
            generation: registered(
                r,
                "data_generation",
                "The database generation this server serves: every write that changes what it serves takes the next one, in every process",
                Gauge::default(),
            ),
            costly: registered(
                r,
                "lookups_costly",
                "Lookups that outgrew their inline attempt and ran on the blocking pool",
                Counter::default(),
            ),
            costly_running: registered(
                r,
                "lookups_costly_running",
                "Costly lookups running now (each holds one of --lookup-workers)",
                Gauge::default(),
            ),
            refusals: registered(
                r,
                "lookup_budget_refusals",
                "Lookups refused for exceeding their budget, by budget",
                Family::<BudgetLabels, Counter>::default(),
            ),
            busy: registered(
                r,
                "busy_refusals",
                "Requests refused with 503 busy because a memory bound was full, by bound (--unread-answers-mib, --lookup-queue-mib)",
                Family::<BoundLabels, Counter>::default(),
            ),
            heads: registered(
                r,
                "refused_heads",
                "Request heads refused before routing, answered by hyper and closed: malformed (400) or too large (431)",
                Family::<HeadLabels, Counter>::default(),
            ),
            database_bytes: registered(
                r,
                "database_bytes",
                "Size of the database file in bytes (measured with each pruning round)",
                Gauge::default(),
            ),
            database_free_bytes: registered(
                r,
                "database_free_bytes",
                "Of the database's bytes, those in free pages that later writes reuse",
                Gauge::default(),
            ),
            versions_pruned: registered(
                r,
                "versions_pruned",
                "Old document versions removed by the retention policy",
                Counter::default(),
            ),
            sync_age: registered(
                r,
                "sync_age_seconds",
                "Seconds since this server last confirmed it serves the database's newest generation",
                Gauge::<f64, std::sync::atomic::AtomicU64>::default(),
            ),
            stale: registered(
                r,
                "stale",
                "1 while this server is stale (sync age past --max-lag; /readyz answers 503)",
                Gauge::default(),
            ),
            lag_generations: registered(
                r,
                "sync_lag_generations",
                "Generations the database has that this server does not serve yet, as far as it knows",
                Gauge::default(),
            ),
            database_up: registered(
                r,
                "database_up",
                "1 while this server's last catch-up with the database worked, 0 while it fails",
                database_up,
            ),
            database_down_since: registered(
                r,
                "database_down_since_timestamp_seconds",
                "When (Unix seconds) the current run of failed catch-ups began; 0 while they work",
                Gauge::default(),
            ),
            auth_failures: registered(
                r,
                "auth_failures",
                "Requests refused for failed authentication (401, or 503 with Keystone down or the password queue full), and requests that left before their check ended (abandoned), by reason",
                Family::<AuthLabels, Counter>::default(),
            ),
            auth_throttled: registered(
                r,
                "auth_throttled",
                "Requests whose credentials waited for their turn, or were refused (429), because their client network failed to authenticate repeatedly",
                Family::<ThrottleLabels, Counter>::default(),
            ),
            registry,
        }
    }

    /// A request failed to authenticate, for `reason` (one of a fixed
    /// set: `missing`, `malformed`, `password`, `token`, `expired`,
    /// `cert`, `keystone`, `keystone_down`, `busy`, `abandoned`).
    pub(crate) fn auth_failure(&self, reason: &'static str) {
        self.auth_failures
            .get_or_create(&AuthLabels { reason })
            .inc();
    }

    /// A request's credentials waited for their turn, or were `refused`.
    pub(crate) fn auth_throttled(&self, refused: bool) {
        let outcome = if refused { "refused" } else { "waited" };
        self.auth_throttled
            .get_or_create(&ThrottleLabels { outcome })
            .inc();
    }

    pub(crate) fn set_unreadable(&self, count: usize) {
        self.unreadable
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// A costly lookup starts on the blocking pool; it is counted as
    /// running until the guard returned is dropped.
    pub(crate) fn costly_lookup(self: &Arc<Self>) -> CostlyRunning {
        self.costly.inc();
        self.costly_running.inc();
        CostlyRunning(Arc::clone(self))
    }

    /// A lookup refused for exceeding its `budget` (`steps`, `bytes`).
    pub(crate) fn budget_refusal(&self, budget: &'static str) {
        self.refusals.get_or_create(&BudgetLabels { budget }).inc();
    }

    /// The counter of request heads refused for `reason` (`malformed`,
    /// `too_large`) by hyper, before the router: a handle that shares the
    /// series.
    pub(crate) fn refused_heads(&self, reason: &'static str) -> Counter {
        self.heads.get_or_create(&HeadLabels { reason }).clone()
    }

    /// The counter of requests refused because `bound` (`unread_answers`,
    /// `lookup_queue`) was full: a handle that shares the series.
    pub(crate) fn busy_refusals(&self, bound: &'static str) -> Counter {
        self.busy.get_or_create(&BoundLabels { bound }).clone()
    }

    pub(crate) fn cache_hit(&self) {
        self.cache_hits.inc();
    }

    pub(crate) fn cache_miss(&self) {
        self.cache_misses.inc();
    }

    pub(crate) fn set_generation(&self, generation: u64) {
        self.generation
            .set(i64::try_from(generation).unwrap_or(i64::MAX));
    }

    /// How long since the server last caught up, and whether that is past
    /// `--max-lag` (set at each scrape).
    pub(crate) fn set_sync_age(&self, age: std::time::Duration, stale: bool, lag: u64) {
        self.sync_age.set(age.as_secs_f64());
        self.lag_generations
            .set(i64::try_from(lag).unwrap_or(i64::MAX));
        self.stale.set(i64::from(stale));
    }

    /// Whether catching up with the database works, and if not since when.
    pub(crate) fn set_database_down_since(&self, since: Option<jiff::Timestamp>) {
        self.database_up.set(i64::from(since.is_none()));
        self.database_down_since
            .set(since.map_or(0, |t| t.as_second()));
    }

    pub(crate) fn set_database_size(&self, size: &crate::store::DatabaseSize) {
        let gauge = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.database_bytes.set(gauge(size.bytes));
        self.database_free_bytes.set(gauge(size.free_bytes));
    }

    pub(crate) fn versions_pruned(&self, n: usize) {
        self.versions_pruned.inc_by(n as u64);
    }

    /// The Prometheus text exposition.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// A costly lookup running (see [`Metrics::costly_lookup`]).
pub(crate) struct CostlyRunning(Arc<Metrics>);

impl Metrics {
    /// Counts an answer through the families (see [`Metrics::hot`]).
    fn count(&self, method: &'static str, route: &'static str, status: u16, seconds: f64) {
        self.latency
            .get_or_create(&RouteLabels { method, route })
            .observe(seconds);
        self.requests
            .get_or_create(&RequestLabels {
                method,
                route,
                status,
            })
            .inc();
    }
}

impl Drop for CostlyRunning {
    fn drop(&mut self) {
        self.0.costly_running.dec();
    }
}

/// Counts and times every answer under its route template
/// (`/api/v1/config/environments/{env}`…), never its concrete path: taken
/// from the request ([`Track::of`]), counted with the final answer
/// ([`Track::done`]).
pub(crate) struct Track {
    method: &'static str,
    route: Option<&'static str>,
}

impl Track {
    /// The count of `request`, routed to `route` (`None`: no route).
    pub(crate) fn of(request: &Request, route: Option<&'static str>) -> Track {
        Track {
            method: method_label(request.method()),
            route,
        }
    }

    /// Counts `response`, answered in `elapsed`.
    pub(crate) fn done(self, metrics: &Metrics, response: &Response, elapsed: Duration) {
        let Track { method, route } = self;
        let status = response.status().as_u16();
        let seconds = elapsed.as_secs_f64();
        let Some(path) = route else {
            return metrics.count(method, UNMATCHED, status, seconds);
        };
        let hot = metrics.hot.load();
        if let Some(series) = hot.iter().find(|h| h.is(method, path, status)) {
            series.latency.observe(seconds);
            series.requests.inc();
            return;
        }
        if hot.len() >= HOT_SERIES {
            return metrics.count(method, path, status, seconds);
        }
        drop(hot);
        let series = Hot {
            method,
            route: path,
            status,
            latency: metrics
                .latency
                .get_or_create(&RouteLabels {
                    method,
                    route: path,
                })
                .clone(),
            requests: metrics
                .requests
                .get_or_create(&RequestLabels {
                    method,
                    route: path,
                    status,
                })
                .clone(),
        };
        series.latency.observe(seconds);
        series.requests.inc();
        metrics.hot.rcu(|held| {
            let mut more: Vec<Hot> = held.iter().map(Hot::clone).collect();
            if more.len() < HOT_SERIES && !more.iter().any(|h| h.is(method, path, status)) {
                more.push(series.clone());
            }
            more
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_render_as_their_text() {
        let metrics = Metrics::new();
        let odd = Method::from_bytes(b"PURGE").unwrap();
        for (method, status) in [(Method::POST, 404), (odd, 405)] {
            let method = method_label(&method);
            metrics
                .requests
                .get_or_create(&RequestLabels {
                    method,
                    route: UNMATCHED,
                    status,
                })
                .inc();
            metrics
                .latency
                .get_or_create(&RouteLabels {
                    method,
                    route: UNMATCHED,
                })
                .observe(0.001);
        }
        let text = metrics.render();
        for line in [
            r#"hierad_http_requests_total{method="POST",route="unmatched",status="404"} 1"#,
            r#"hierad_http_requests_total{method="other",route="unmatched",status="405"} 1"#,
            r#"hierad_http_request_duration_seconds_count{method="POST",route="unmatched"} 1"#,
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }

    /// Each answer is counted once under its route template and status,
    /// those past the first [`HOT_SERIES`] series through the families.
    #[test]
    fn each_answer_is_counted_under_its_route_and_status() {
        use axum::routing::get;
        let metrics = Arc::new(Metrics::new());
        let counting = Arc::clone(&metrics);
        let app = axum::Router::new()
            .route(
                "/status/{code}",
                get(
                    |axum::extract::Path(code): axum::extract::Path<u16>| async move {
                        axum::http::StatusCode::from_u16(code).unwrap()
                    },
                ),
            )
            // Counted as `server/http/harden.rs` counts, under the route's
            // template.
            .layer(axum::middleware::from_fn(
                move |request: Request, next: axum::middleware::Next| {
                    let metrics = Arc::clone(&counting);
                    async move {
                        let track = Track::of(&request, Some("/status/{code}"));
                        let response = next.run(request).await;
                        track.done(&metrics, &response, Duration::from_millis(1));
                        response
                    }
                },
            ));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let codes: Vec<u16> = (200..300).collect();
        assert!(codes.len() > HOT_SERIES);
        runtime.block_on(async {
            for _ in 0..2 {
                for code in &codes {
                    let request = Request::get(format!("/status/{code}"))
                        .body(axum::body::Body::empty())
                        .unwrap();
                    let response = tower::ServiceExt::oneshot(app.clone(), request)
                        .await
                        .unwrap();
                    assert_eq!(response.status().as_u16(), *code);
                }
            }
        });
        assert_eq!(metrics.hot.load().len(), HOT_SERIES);
        let text = metrics.render();
        for code in &codes {
            let line = format!(
                r#"hierad_http_requests_total{{method="GET",route="/status/{{code}}",status="{code}"}} 2"#
            );
            assert!(text.contains(&line), "{line} in {text}");
        }
        let count = r#"hierad_http_request_duration_seconds_count{method="GET",route="/status/{code}"} 200"#;
        assert!(text.contains(count), "{count} in {text}");
    }
}
