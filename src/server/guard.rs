//! The one place that decides who may do what (docs/security.md): every
//! request is authenticated against the auth file, its route template is
//! mapped to the role it needs (`auth::needed`) and the environment it
//! names checked, before any handler runs. Failed authentications are
//! counted and, after a few from one client address, slowed down. And
//! the access log: one structured line per request.

use super::body::LookupBytes;
use super::error::error_response;
use super::state::AppState;
use crate::auth::{self, AuthError, Need, Principal, remember::Remembered, verify::CertIdentity};
use axum::extract::{FromRequest, FromRequestParts, MatchedPath, RawPathParams, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// What the connection knows of its client, put in every request's
/// extensions by the accept loop.
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    pub addr: SocketAddr,
    /// The client certificate the TLS handshake verified, if any.
    pub cert: Option<Arc<CertIdentity>>,
    /// The credentials its requests proved last.
    pub remembered: Arc<Remembered>,
}

impl Peer {
    pub(crate) fn new(addr: SocketAddr, cert: Option<Arc<CertIdentity>>) -> Peer {
        Peer {
            addr,
            cert,
            remembered: Arc::default(),
        }
    }
}

/// Keystone's token header, named once (not parsed per request).
static X_AUTH_TOKEN: header::HeaderName = header::HeaderName::from_static("x-auth-token");

/// Failures from one address tolerated before its requests are delayed.
const FREE_FAILURES: u32 = 5;
/// The longest delay.
const MAX_DELAY: Duration = Duration::from_secs(5);

/// Failed authentications per client address: bounded in entries, each
/// forgotten a quarter of an hour after its last failure.
pub struct Throttle {
    failures: moka::sync::Cache<IpAddr, u32>,
    /// When the last failure was recorded, in milliseconds since `epoch`
    /// (0: never). No entry outlives it by more than [`FORGET_AFTER`], so
    /// past that nobody is throttled and a request skips the table: two
    /// lookups in it cost every authenticated request about as much as
    /// checking its bearer token.
    last_failure: AtomicU64,
    epoch: Instant,
    /// [`FORGET_AFTER`] but in tests.
    forget_after: Duration,
}

/// How long a client's failures are remembered after its last one.
const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle")
            .field("addresses", &self.failures.entry_count())
            .finish()
    }
}

impl Default for Throttle {
    fn default() -> Self {
        Throttle::forgetting_after(FORGET_AFTER)
    }
}

impl Throttle {
    fn forgetting_after(forget_after: Duration) -> Throttle {
        Throttle {
            failures: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(forget_after)
                .build(),
            last_failure: AtomicU64::new(0),
            epoch: Instant::now(),
            forget_after,
        }
    }

    /// How long a request from `ip` waits before its credentials are
    /// checked: nothing for the first few failures, then doubling from
    /// 100 ms up to [`MAX_DELAY`].
    pub fn delay(&self, ip: IpAddr) -> Duration {
        if self.all_forgotten() {
            return Duration::ZERO;
        }
        let failures = self.failures.get(&ip).unwrap_or(0);
        if failures < FREE_FAILURES {
            return Duration::ZERO;
        }
        let doublings = (failures - FREE_FAILURES).min(6);
        (Duration::from_millis(100) * 2u32.pow(doublings)).min(MAX_DELAY)
    }

    fn failed(&self, ip: IpAddr) {
        // Recorded before the entry, so that a reader who sees the entry
        // sees the time too (never "all forgotten" beside a live entry).
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_failure.fetch_max(now.max(1), Ordering::SeqCst);
        self.failures
            .entry(ip)
            .and_upsert_with(|old| old.map_or(1, |e| e.value().saturating_add(1)));
    }

    fn succeeded(&self, ip: IpAddr) {
        if !self.all_forgotten() && self.failures.contains_key(&ip) {
            self.failures.invalidate(&ip);
        }
    }

    /// Whether every recorded failure has been forgotten (or none was
    /// ever recorded): then the table holds nothing that matters.
    fn all_forgotten(&self) -> bool {
        match self.last_failure.load(Ordering::SeqCst) {
            0 => true,
            last => {
                let last = self.epoch + Duration::from_millis(last);
                // A second's margin over the table's own expiry.
                Instant::now() > last + self.forget_after + Duration::from_secs(1)
            }
        }
    }
}

/// One log line per request (target `hierad::access`): method, route
/// template (never the concrete path or query, which may name secrets),
/// status, principal, latency. Never a body or a header. Taken from the
/// request ([`AccessLog::of`]), written with the final answer
/// ([`AccessLog::done`]), so a 408 or 431 is logged too.
pub(crate) struct AccessLog(Option<(Method, Option<MatchedPath>)>);

impl AccessLog {
    pub(crate) fn of(request: &Request) -> AccessLog {
        if !tracing::enabled!(target: "hierad::access", tracing::Level::INFO) {
            return AccessLog(None);
        }
        let route = request.extensions().get::<MatchedPath>().cloned();
        AccessLog(Some((request.method().clone(), route)))
    }

    /// Logs `response`, answered in `elapsed` to `principal` (`-` if the
    /// request was refused before anyone was authenticated).
    pub(crate) fn done(self, response: &Response, principal: Option<&Arc<str>>, elapsed: Duration) {
        let Some((method, route)) = self.0 else {
            return;
        };
        tracing::info!(
            target: "hierad::access",
            method = %method,
            route = route.as_ref().map_or("unmatched", MatchedPath::as_str),
            status = response.status().as_u16(),
            principal = principal.map_or("-", |n| n),
            micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        );
    }
}

/// Authenticates `request`, checks its role and environment, and puts its
/// [`Principal`] in the request's extensions for the handlers (the author
/// of a write), and its name in `who` for the access log; or answers the
/// refusal. Without an auth file every request is
/// [`Principal::anonymous`].
pub(crate) async fn authorize(
    state: &AppState,
    request: Request,
    who: &OnceLock<Arc<str>>,
) -> Result<Request, Response> {
    let template = request.extensions().get::<MatchedPath>().cloned();
    let template = template.as_ref().map(MatchedPath::as_str);
    let need = auth::needed(request.method(), template);
    let Some(authenticator) = state.authenticator() else {
        return Ok(admit(request, Principal::anonymous(), who));
    };
    if need == Need::Nobody {
        return Ok(request);
    }
    let peer = request.extensions().get::<Peer>().cloned();
    let ip = peer.as_ref().map(|p| p.addr.ip());
    if let Some(ip) = ip {
        let delay = state.throttle().delay(ip);
        if !delay.is_zero() {
            state.metrics().auth_throttled();
            tokio::time::sleep(delay).await;
        }
    }
    let headers = request.headers();
    let proved = auth::remember::prove(
        &authenticator,
        peer.as_ref().map(|p| &*p.remembered),
        headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes),
        headers.get(&X_AUTH_TOKEN).map(HeaderValue::as_bytes),
        peer.as_ref().and_then(|p| p.cert.as_deref()),
    )
    .await;
    let principal = match proved {
        Ok(principal) => principal,
        Err(e) => {
            state.metrics().auth_failure(reason(&e));
            if let Some(ip) = ip.filter(|_| !e.is_unavailable() && e != AuthError::Missing) {
                state.throttle().failed(ip);
            }
            return Err(closing(
                refused(&e, authenticator.keystone_url()),
                may_have_body(&request),
            ));
        }
    };
    if let Some(ip) = ip {
        state.throttle().succeeded(ip);
    }
    let _ = who.set(principal.name.clone());
    let (request, env) = environment(state, &principal, template, request).await?;
    if let Err(denied) = auth::permit(&principal, need, request.method(), template, env) {
        let response = error_response(StatusCode::FORBIDDEN, "forbidden", denied.to_string());
        return Err(closing(response, may_have_body(&request)));
    }
    Ok(admit(request, principal, who))
}

/// Whether the request announces a body (which a refusal leaves unread).
fn may_have_body(request: &Request) -> bool {
    let headers = request.headers();
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

/// A refusal that leaves a body unread ends the connection (hyper closes
/// it), so it says so: a client that reused the connection would
/// otherwise meet a reset on its next request.
fn closing(mut response: Response, unread: bool) -> Response {
    if unread {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

fn admit(mut request: Request, principal: Principal, who: &OnceLock<Arc<str>>) -> Request {
    let _ = who.set(principal.name.clone());
    request.extensions_mut().insert(principal);
    request
}

/// The environment `request` names: its `{env}` path parameter, or, for
/// a lookup by a principal limited to some environments, the lookup
/// body's `environment` (read here with the lookup's own parser, and put
/// back for the handler). An `{env}` that is not a number names no
/// environment the limited principal may use.
async fn environment(
    state: &AppState,
    principal: &Principal,
    template: Option<&str>,
    request: Request,
) -> Result<(Request, Option<i64>), Response> {
    if principal.environments.is_none() {
        return Ok((request, None));
    }
    let (mut parts, body) = request.into_parts();
    let params = RawPathParams::from_request_parts(&mut parts, &()).await;
    let named = params.ok().and_then(|p| {
        p.iter()
            .find(|(k, _)| *k == "env")
            .map(|(_, v)| v.to_owned())
    });
    if let Some(text) = named {
        let env = text.parse().unwrap_or(i64::MIN);
        return Ok((Request::from_parts(parts, body), Some(env)));
    }
    if template != Some(crate::api::LOOKUP_PATH) {
        return Ok((Request::from_parts(parts, body), None));
    }
    let whole = Request::from_parts(parts.clone(), body);
    let (bytes, _turn) = match LookupBytes::from_request(whole, state).await {
        Ok(LookupBytes(bytes, turn)) => (bytes, turn),
        Err(e) => return Err(axum::response::IntoResponse::into_response(e)),
    };
    // A body the lookup cannot parse names no environment; the handler
    // answers it 400 with the same parser (its turn held while parsed).
    let env = super::lookup_api::requested_env(&bytes);
    Ok((
        Request::from_parts(parts, axum::body::Body::from(bytes)),
        env,
    ))
}

/// The metrics label of a failure.
fn reason(e: &AuthError) -> &'static str {
    match e {
        AuthError::Missing => "missing",
        AuthError::Malformed(_) | AuthError::NotAccepted(_) => "malformed",
        AuthError::WrongPassword => "password",
        AuthError::UnknownToken => "token",
        AuthError::Expired { .. } => "expired",
        AuthError::UnknownCert(_) => "cert",
        AuthError::KeystoneRefused(_) => "keystone",
        AuthError::KeystoneDown(_) => "keystone_down",
    }
}

/// 401 with the challenges a client may answer (`WWW-Authenticate`), or
/// 503 when Keystone cannot say.
fn refused(e: &AuthError, keystone: Option<&str>) -> Response {
    if e.is_unavailable() {
        return error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "auth_unavailable",
            e.to_string(),
        );
    }
    let mut response = error_response(StatusCode::UNAUTHORIZED, "unauthorized", e.to_string());
    let headers = response.headers_mut();
    headers.append(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=\"hierad\", charset=\"UTF-8\""),
    );
    headers.append(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"hierad\""),
    );
    let challenge =
        keystone.and_then(|url| HeaderValue::from_str(&format!("Keystone uri=\"{url}\"")).ok());
    if let Some(value) = challenge {
        headers.append(header::WWW_AUTHENTICATE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_failures_slow_one_address_down_until_it_succeeds() {
        let throttle = Throttle::default();
        let (a, b): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        assert!(throttle.all_forgotten(), "nothing recorded yet");
        assert_eq!(throttle.delay(a), Duration::ZERO);
        let mut delays = Vec::new();
        for _ in 0..12 {
            throttle.failed(a);
            delays.push(throttle.delay(a).as_millis());
        }
        assert_eq!(
            delays,
            [0, 0, 0, 0, 100, 200, 400, 800, 1600, 3200, 5000, 5000],
            "free failures, then doubling up to the longest delay"
        );
        assert_eq!(throttle.delay(b), Duration::ZERO, "per address");
        throttle.succeeded(a);
        throttle.failures.run_pending_tasks();
        assert_eq!(throttle.delay(a), Duration::ZERO, "a success forgives");
        throttle.failed(a);
        assert_eq!(throttle.failures.get(&a), Some(1), "and counts anew");
    }

    #[test]
    fn failures_are_forgotten_after_a_quiet_while_and_then_cost_no_lookup() {
        let throttle = Throttle::forgetting_after(Duration::from_millis(100));
        let ip: IpAddr = "192.0.2.3".parse().unwrap();
        for _ in 0..7 {
            throttle.failed(ip);
        }
        assert!(!throttle.all_forgotten());
        assert_eq!(throttle.delay(ip), Duration::from_millis(400));
        // The table's own expiry comes first: past the margin nothing of
        // the address is left, so skipping the table changes no answer.
        std::thread::sleep(Duration::from_millis(1300));
        assert!(throttle.all_forgotten());
        assert_eq!(throttle.failures.get(&ip), None);
        assert_eq!(throttle.delay(ip), Duration::ZERO);
        // A new failure turns the table back on.
        for _ in 0..5 {
            throttle.failed(ip);
        }
        assert!(!throttle.all_forgotten());
        assert_eq!(throttle.delay(ip), Duration::from_millis(100));
    }
}
