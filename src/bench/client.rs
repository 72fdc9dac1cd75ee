//! The load loop: N keep-alive HTTP/1.1 connections (hyper), each sending
//! one lookup after another (a closed loop, as N Puppet masters' threads
//! do), for a duration or a number of requests after a warm-up. Every
//! request is timed; the server's cache counters are read from `/metrics`
//! around the measurement; an optional writer publishes new versions of a
//! document meanwhile.

use super::BenchError;
pub(crate) use super::connect::Target;
use super::connect::{self, Conn};
use super::plan::{Bodies, Plan, Sampler};
use super::rng::Rng;
use super::stats::{self, Cache, Measured, Report, Sample, Writes};
use crate::configdb::{DocKind, LevelPath};
use bytes::Bytes;
use hyper::{Method, StatusCode};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When the measurement stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Limit {
    Duration(Duration),
    Requests(u64),
}

/// How to run.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) target: Target,
    pub(crate) label: String,
    pub(crate) connections: usize,
    pub(crate) limit: Limit,
    pub(crate) warmup: Duration,
    /// Every request distinct (a scope variable no data reads), so no
    /// answer comes from the server's cache.
    pub(crate) unique: bool,
    pub(crate) seed: u64,
    /// Publish a new version of the plan's write resource this often.
    pub(crate) write_every: Option<Duration>,
    pub(crate) progress: bool,
    /// GET this path instead of sending lookups (whole documents);
    /// `{node}` in it becomes a node of the plan, drawn at random.
    pub(crate) get: Option<String>,
    /// Extra request headers (`If-None-Match`, for revalidations).
    pub(crate) headers: Vec<(String, String)>,
}

/// One GET on a fresh connection: (status, body).
///
/// # Errors
///
/// The server cannot be reached (a TLS failure says what to do).
pub(crate) async fn get(target: &Target, path: &str) -> Result<(StatusCode, Bytes), BenchError> {
    connect::request(target, Method::GET, path, Vec::new()).await
}

/// The server's cache counters (hits, misses), if it exports them.
pub(crate) async fn cache_counters(target: &Target) -> Option<(u64, u64)> {
    let (status, body) = get(target, crate::api::paths::METRICS).await.ok()?;
    if !status.is_success() {
        return None;
    }
    parse_cache_counters(std::str::from_utf8(&body).ok()?)
}

/// `hierad_lookup_cache_total{result="hit"|"miss"}` from Prometheus text.
pub(crate) fn parse_cache_counters(text: &str) -> Option<(u64, u64)> {
    let mut hits = None;
    let mut misses = None;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("hierad_lookup_cache_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.split_once('}') else {
            continue;
        };
        let value = value.trim().parse::<f64>().ok()? as u64;
        if labels.contains("result=\"hit\"") {
            hits = Some(value);
        } else if labels.contains("result=\"miss\"") {
            misses = Some(value);
        }
    }
    // A fresh hierad has no counter yet for what never happened.
    match (hits, misses) {
        (None, None) if !text.contains("hierad_") => None,
        (h, m) => Some((h.unwrap_or(0), m.unwrap_or(0))),
    }
}

/// What the connections (and the writer) share: the run's settings, what
/// the requests are made of, and the flags and counters between them.
struct Shared {
    addr: SocketAddr,
    target: Target,
    plan: Arc<Plan>,
    bodies: Bodies,
    sampler: Sampler,
    /// Every request distinct (`--unique`).
    unique: bool,
    seed: u64,
    measure_from: Instant,
    stop: AtomicBool,
    /// Measured requests issued (for `Limit::Requests`).
    issued: AtomicU64,
    /// Measured requests completed (for the progress bar).
    done: AtomicU64,
    limit: Limit,
    /// `--get`: the path template, and the extra headers.
    get: Option<Box<str>>,
    headers: Vec<(String, String)>,
}

impl Shared {
    /// The next request: (method, path, body).
    fn request(&self, rng: &mut Rng, sequence: u64, id: usize) -> (Method, String, Vec<u8>, usize) {
        if let Some(template) = &self.get {
            let path = match self.plan.nodes.as_slice() {
                [] => template.to_string(),
                nodes => template.replace("{node}", rng.pick(nodes).as_str()),
            };
            return (Method::GET, path, Vec::new(), 0);
        }
        let pick = self.sampler.pick(&self.plan, rng);
        let unique = self.unique.then_some(sequence * 1024 + id as u64);
        let body = self.bodies.body(&pick, unique);
        (
            Method::POST,
            crate::api::paths::LOOKUP.to_owned(),
            body,
            pick.class,
        )
    }
}

struct Worker {
    measured: Measured,
}

/// Connection `id`: one lookup after another until stopped.
async fn worker(id: usize, shared: Arc<Shared>) -> Worker {
    let mut rng = Rng::new(shared.seed ^ (id as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut measured = Measured::default();
    let mut conn: Option<Conn> = None;
    let mut sequence = 0u64;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let start = Instant::now();
        let measuring = start >= shared.measure_from;
        // Nested, not a let chain: those need Rust 1.88, and the crate
        // builds with its rust-version, 1.85.
        if measuring {
            if let Limit::Requests(n) = shared.limit {
                if shared.issued.fetch_add(1, Ordering::Relaxed) >= n {
                    break;
                }
            }
        }
        if conn.is_none() {
            match Conn::open(&shared.target, shared.addr).await {
                Ok(c) => conn = Some(c),
                Err(_) => {
                    if measuring {
                        measured.errors.transport += 1;
                        measured.errors.total += 1;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            }
        }
        sequence += 1;
        let (method, path, body, class) = shared.request(&mut rng, sequence, id);
        let start = Instant::now();
        let result = conn
            .as_mut()
            .expect("connected above")
            .send(method, &shared.target, &path, body, &shared.headers)
            .await;
        let latency = start.elapsed();
        if !measuring {
            if result.is_err() {
                conn = None;
            }
            continue;
        }
        shared.done.fetch_add(1, Ordering::Relaxed);
        match result {
            Ok((status, body)) => {
                measured.samples.push(Sample {
                    at_us: u32::try_from((start - shared.measure_from).as_micros())
                        .unwrap_or(u32::MAX),
                    latency_us: u32::try_from(latency.as_micros()).unwrap_or(u32::MAX),
                    class: u8::try_from(class).unwrap_or(u8::MAX),
                });
                measured.bytes_received += body.len() as u64;
                // A 304 is a revalidation's answer (`--header If-None-Match`).
                if status.is_success() || status == StatusCode::NOT_MODIFIED {
                    if body.starts_with(b"{\"found\":true") {
                        measured.answers.found += 1;
                    } else if body.starts_with(b"{\"found\":false") {
                        measured.answers.not_found += 1;
                    } else {
                        measured.answers.other += 1;
                    }
                } else {
                    measured.errors.total += 1;
                    *measured
                        .errors
                        .status
                        .entry(status.as_u16().to_string())
                        .or_default() += 1;
                }
            }
            Err(_) => {
                measured.errors.transport += 1;
                measured.errors.total += 1;
                conn = None;
            }
        }
    }
    Worker { measured }
}

/// The document the writer rewrites: `resource`'s values at the root.
fn values_path(env: i64, resource: &str) -> String {
    crate::ops::remote::doc_url(env, &LevelPath::root(), resource, DocKind::Values)
}

/// A JSON object, the writer's document.
type Object = serde_json::Map<String, serde_json::Value>;

/// Publishes a new version of `resource` at the root every `every`,
/// until `stop`: the `original` content plus a counter.
async fn writer(
    target: Target,
    (env, resource): (i64, String),
    original: Object,
    every: Duration,
    shared: Arc<Shared>,
) -> Writes {
    let path = values_path(env, &resource);
    let mut writes = Writes::default();
    let mut latencies = stats::histogram();
    let addr = shared.addr;
    let mut conn: Option<Conn> = None;
    tokio::time::sleep_until(shared.measure_from.into()).await;
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut n = 0u64;
    while !shared.stop.load(Ordering::Relaxed) {
        tick.tick().await;
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        n += 1;
        let mut doc = original.clone();
        doc.insert("bench_write".to_owned(), n.into());
        let body = serde_json::to_vec(&doc).unwrap_or_default();
        if conn.is_none() {
            conn = Conn::open(&target, addr).await.ok();
        }
        let start = Instant::now();
        let ok = match conn.as_mut() {
            Some(c) => match c.send(Method::PUT, &target, &path, body, &[]).await {
                Ok((status, _)) => status.is_success(),
                Err(_) => {
                    conn = None;
                    false
                }
            },
            None => false,
        };
        stats::record(&mut latencies, start.elapsed().as_micros() as u64);
        writes.count += 1;
        writes.errors += u64::from(!ok);
        writes
            .at_s
            .push(((start - shared.measure_from).as_secs_f64() * 1000.0).round() / 1000.0);
    }
    writes.latency_us = stats::latency(&latencies);
    writes
}

/// The plan's hierarchy registered as the shim registers its own, for
/// requests to name by id; `None` from a server older than the route
/// (404, 405): requests then carry the templates, as the shim's do.
async fn register_hierarchy(target: &Target, plan: &Plan) -> Result<Option<String>, BenchError> {
    let what = format!("POST {}", crate::api::paths::HIERARCHIES);
    let body = serde_json::to_vec(&crate::api::HierarchyRegistration {
        hierarchy: &plan.hierarchy,
    })
    .expect("Strings serialize");
    let (status, answer) =
        connect::request(target, Method::POST, crate::api::paths::HIERARCHIES, body).await?;
    match status.as_u16() {
        200 => serde_json::from_slice::<crate::api::RegisteredHierarchy>(&answer)
            .map(|registered| Some(registered.id))
            .map_err(|e| BenchError::Invalid(format!("{what}: not a registered hierarchy: {e}"))),
        404 | 405 => Ok(None),
        _ => Err(connect::refusal(&what, status, &answer)),
    }
}

/// Before anything is measured: one request as the run sends them and,
/// with a writer, the document it rewrites, read and written back
/// unchanged. An unreachable server, a TLS failure, refused credentials
/// or a principal that may not write are a clear error, not a count of
/// failed requests. The writer's document.
async fn preflight(shared: &Shared, written: Option<&str>) -> Result<Option<Object>, BenchError> {
    let target = &shared.target;
    let (method, path, body, _) = shared.request(&mut Rng::new(shared.seed), 0, 0);
    let what = match shared.get {
        Some(_) => format!("GET {path}"),
        None => "a lookup".to_owned(),
    };
    let (status, answer) = connect::request(target, method, &path, body).await?;
    if matches!(status.as_u16(), 401 | 403) {
        return Err(connect::refusal(&what, status, &answer));
    }
    let Some(path) = written else {
        return Ok(None);
    };
    let (status, answer) = get(target, path).await?;
    let original: Object = if status.is_success() {
        serde_json::from_slice(&answer)
            .map_err(|e| BenchError::Invalid(format!("GET {path}: not a JSON object: {e}")))?
    } else if status == StatusCode::NOT_FOUND {
        Object::new()
    } else {
        return Err(connect::refusal(&format!("GET {path}"), status, &answer));
    };
    let body = serde_json::to_vec(&original).expect("JSON values serialize");
    let (status, answer) = connect::request(target, Method::PUT, path, body).await?;
    if !status.is_success() {
        return Err(connect::refusal(
            &format!("the writer's PUT {path}"),
            status,
            &answer,
        ));
    }
    Ok(Some(original))
}

/// Runs the bench; the report of the measured part.
///
/// # Errors
///
/// The server cannot be resolved or reached, refuses the credentials or
/// the writer's writes, or the plan has no key for the mix.
pub(crate) async fn run(
    plan: Arc<Plan>,
    sampler: Sampler,
    options: Options,
) -> Result<Report, BenchError> {
    let addr = options.target.addr().await?;
    let hierarchy_id = match options.get {
        Some(_) => None,
        None => register_hierarchy(&options.target, &plan).await?,
    };
    let mut shared = Shared {
        addr,
        target: options.target.clone(),
        bodies: Bodies::new(&plan, hierarchy_id.as_deref()),
        plan: Arc::clone(&plan),
        sampler,
        unique: options.unique,
        seed: options.seed,
        measure_from: Instant::now(),
        stop: AtomicBool::new(false),
        issued: AtomicU64::new(0),
        done: AtomicU64::new(0),
        limit: options.limit,
        get: options.get.as_deref().map(Into::into),
        headers: options.headers.clone(),
    };
    let written = options
        .write_every
        .map(|_| values_path(plan.environment, &plan.write_resource));
    let original = preflight(&shared, written.as_deref()).await?;
    shared.measure_from = Instant::now() + options.warmup;
    let shared = Arc::new(shared);
    // Without a warm-up, read the counters before the first request.
    let early = if options.warmup.is_zero() {
        Some(cache_counters(&options.target).await)
    } else {
        None
    };
    let workers: Vec<_> = (0..options.connections)
        .map(|id| tokio::spawn(worker(id, Arc::clone(&shared))))
        .collect();
    let writer = options.write_every.zip(original).map(|(every, original)| {
        tokio::spawn(writer(
            options.target.clone(),
            (plan.environment, plan.write_resource.clone()),
            original,
            every,
            Arc::clone(&shared),
        ))
    });
    let bar = progress_bar(&options);
    tokio::time::sleep_until(shared.measure_from.into()).await;
    let before = match early {
        Some(counters) => counters,
        None => cache_counters(&options.target).await,
    };
    let measure_start = Instant::now();
    let finished = measure(workers, &shared, &bar, measure_start).await;
    shared.stop.store(true, Ordering::Relaxed);
    let elapsed = measure_start.elapsed();
    bar.finish_and_clear();
    let writes = match writer {
        Some(w) => Some(w.await?),
        None => None,
    };
    let after = cache_counters(&options.target).await;
    let mut measured = Measured {
        elapsed_us: elapsed.as_micros() as u64,
        ..Measured::default()
    };
    for result in finished {
        add(&mut measured, result?.measured);
    }
    measured.samples.sort_by_key(|s| s.at_us);
    let names: Vec<String> = plan.classes.iter().map(|c| c.name.clone()).collect();
    let mut report = Report::new(
        &options.target.url(),
        &options.label,
        options.connections,
        measured,
        &names,
    );
    report.cache = match (before, after) {
        (Some((h0, m0)), Some((h1, m1))) => {
            Some(Cache::new(h1.saturating_sub(h0), m1.saturating_sub(m0)))
        }
        _ => None,
    };
    report.writes = writes;
    Ok(report)
}

/// Waits for the workers while the bar follows: stops them by the clock,
/// or lets them send their count.
async fn measure(
    workers: Vec<tokio::task::JoinHandle<Worker>>,
    shared: &Shared,
    bar: &indicatif::ProgressBar,
    measure_start: Instant,
) -> Vec<Result<Worker, tokio::task::JoinError>> {
    let all_done = async {
        let mut done = Vec::with_capacity(workers.len());
        for w in workers {
            done.push(w.await);
        }
        done
    };
    tokio::pin!(all_done);
    let mut ticker = tokio::time::interval(Duration::from_millis(100));
    loop {
        tokio::select! {
            results = &mut all_done => return results,
            _ = ticker.tick() => {
                let done = shared.done.load(Ordering::Relaxed);
                match shared.limit {
                    Limit::Duration(d) => {
                        let elapsed = measure_start.elapsed();
                        bar.set_position(elapsed.as_millis() as u64);
                        bar.set_message(format!("{done} requests"));
                        if elapsed >= d {
                            shared.stop.store(true, Ordering::Relaxed);
                        }
                    }
                    Limit::Requests(_) => bar.set_position(done),
                }
            }
        }
    }
}

/// Adds one connection's measurements to the run's.
fn add(measured: &mut Measured, w: Measured) {
    measured.samples.extend(w.samples);
    measured.errors.total += w.errors.total;
    measured.errors.transport += w.errors.transport;
    for (status, n) in w.errors.status {
        *measured.errors.status.entry(status).or_default() += n;
    }
    measured.answers.found += w.answers.found;
    measured.answers.not_found += w.answers.not_found;
    measured.answers.other += w.answers.other;
    measured.bytes_received += w.bytes_received;
}

fn progress_bar(options: &Options) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    use std::io::IsTerminal;
    if !options.progress || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let (len, template) = match options.limit {
        Limit::Duration(d) => (
            d.as_millis() as u64,
            "{spinner} [{bar:40}] {elapsed_precise} {msg}",
        ),
        Limit::Requests(n) => (n, "{spinner} [{bar:40}] {pos}/{len} requests ({per_sec})"),
    };
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_counters_from_metrics_text() {
        let cases = [
            (
                "# HELP x\nhierad_lookup_cache_total{result=\"hit\"} 12\nhierad_lookup_cache_total{result=\"miss\"} 3\n",
                Some((12, 3)),
            ),
            (
                "# HELP hierad_lookup_cache Lookup answer cache\n",
                Some((0, 0)),
            ),
            (
                "hierad_lookup_cache_total{result=\"miss\"} 5\n",
                Some((0, 5)),
            ),
            ("hierad_data_generation 1\n", Some((0, 0))),
            ("other_metric 1\n", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_cache_counters(text), want, "{text}");
        }
    }
}
