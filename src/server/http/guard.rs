//! The one place that decides who may do what (docs/security.md): every
//! request is authenticated against the auth file, its route template is
//! mapped to the role it needs (`auth::needed`) and the environment it
//! names checked, before any handler runs. Failed authentications are
//! counted and, after a few from one client network, make its checks take
//! turns (`throttle`).

use crate::auth::{self, AuthError, Need, Principal, remember::Remembered, verify::CertIdentity};
use crate::server::http::conn::Room;
use crate::server::http::cross_site::KnownHost;
use crate::server::http::error::{ApiError, error_response};
use crate::server::http::templates::Matched;
use crate::server::http::throttle::{Admission, Turn};
use crate::server::routes::env::Named;
use crate::server::state::AppState;
use axum::extract::{FromRequestParts, OptionalFromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use zeroize::Zeroizing;

/// What the connection knows of its client, put in every request's
/// extensions by the accept loop: one shared value per connection, so a
/// request pays one extension insert and one reference count for it
/// (bench/LOG.md "Where a cached lookup's instructions go").
#[derive(Clone, Debug)]
pub(crate) struct Peer(Arc<Client>);

/// A [`Peer`]'s contents.
#[derive(Debug)]
pub(crate) struct Client {
    pub addr: SocketAddr,
    /// The client certificate the TLS handshake verified, if any.
    pub cert: Option<Arc<CertIdentity>>,
    /// The credentials its requests proved last.
    pub remembered: Remembered,
    /// Whether the connection is TLS, or plain from loopback: the only
    /// ones plaintext secrets are sent over (`server/secrets.rs`).
    pub secure: bool,
    /// The unread-answer budget as its handlers see it; none for a
    /// request made in process.
    pub room: Option<Room>,
    /// The `Host` its requests were allowed to name (`cross_site.rs`).
    pub known_host: KnownHost,
}

impl Peer {
    /// A connection's client: `secure` as [`Client::secure`], `room` as
    /// [`Client::room`].
    pub(crate) fn new(
        addr: SocketAddr,
        cert: Option<Arc<CertIdentity>>,
        secure: bool,
        room: Option<Room>,
    ) -> Peer {
        Peer(Arc::new(Client {
            addr,
            cert,
            remembered: Remembered::default(),
            secure,
            room,
            known_host: KnownHost::default(),
        }))
    }
}

impl std::ops::Deref for Peer {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.0
    }
}

/// What the server itself attaches to a request, as ONE extension: the
/// connection's client (put by the accept loop), once authenticated the
/// principal (put by [`authorize`]), and on a direct route its path
/// parameters (put by `harden`: src/server/http/templates.rs). With
/// axum's URL parameters, on a route behind its router, that makes two;
/// each extension is an allocation, and a fourth grew the map's first
/// table, 1,150 instructions a request (bench/LOG.md, "Routing and
/// extensions").
#[derive(Clone, Debug, Default)]
pub(crate) struct Asker {
    peer: Option<Peer>,
    principal: Option<Principal>,
    matched: Option<Matched>,
}

impl Asker {
    /// A request from `peer`, not yet authenticated.
    pub(crate) fn new(peer: Peer) -> Asker {
        Asker {
            peer: Some(peer),
            principal: None,
            matched: None,
        }
    }

    /// The client of the request whose extensions these are; none for a
    /// request made in process.
    pub(crate) fn peer(extensions: &Extensions) -> Option<&Peer> {
        extensions.get::<Asker>()?.peer.as_ref()
    }

    /// Its principal, once [`authorize`] admitted it.
    pub(crate) fn principal(extensions: &Extensions) -> Option<&Principal> {
        extensions.get::<Asker>()?.principal.as_ref()
    }

    /// A direct route's path parameters, as `harden` matched them.
    pub(crate) fn matched(extensions: &mut Extensions) -> Option<&mut Matched> {
        extensions.get_mut::<Asker>()?.matched.as_mut()
    }

    /// Gives the request whose extensions these are its direct route's
    /// path parameters.
    pub(crate) fn set_matched(extensions: &mut Extensions, matched: Matched) {
        Asker::held(extensions).matched = Some(matched);
    }

    fn admit(extensions: &mut Extensions, principal: Principal) {
        Asker::held(extensions).principal = Some(principal);
    }

    /// The request's own, put now if the accept loop put none (a request
    /// made in process).
    fn held(extensions: &mut Extensions) -> &mut Asker {
        if extensions.get::<Asker>().is_none() {
            extensions.insert(Asker::default());
        }
        extensions.get_mut::<Asker>().expect("just put")
    }
}

/// A handler's principal (`who: Principal`): a route reached only
/// through [`authorize`], which admits every request it lets through, has one.
impl<S: Send + Sync> FromRequestParts<S> for Principal {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Principal, Response> {
        Asker::principal(&parts.extensions).cloned().ok_or_else(|| {
            ApiError::Internal("a request reached its handler unauthorized".to_owned())
                .into_response()
        })
    }
}

/// `Option<Principal>`: none for a probe answered without credentials.
impl<S: Send + Sync> OptionalFromRequestParts<S> for Principal {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Principal>, Infallible> {
        Ok(Asker::principal(&parts.extensions).cloned())
    }
}

/// `Option<Peer>`: none for a request made in process.
impl<S: Send + Sync> OptionalFromRequestParts<S> for Peer {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Peer>, Infallible> {
        Ok(Asker::peer(&parts.extensions).cloned())
    }
}

/// Keystone's token header, named once (not parsed per request).
static X_AUTH_TOKEN: header::HeaderName = header::HeaderName::from_static("x-auth-token");

/// Why a request's credentials were not taken.
enum Refusal {
    Failed(AuthError),
    /// Not checked: its network failed too often (429).
    Throttled {
        retry_after: Duration,
    },
}

/// Checks a request's credentials (those its connection does not
/// remember), after their turn if a guess could pass them
/// (`server/http/throttle.rs`); counts a failure, and answers it late once the
/// client's network failed too often.
async fn check(
    state: &AppState,
    authenticator: &Arc<auth::Authenticator>,
    peer: Option<&Peer>,
    authorization: Option<&[u8]>,
    auth_token: Option<&[u8]>,
) -> Result<Principal, Refusal> {
    let mut decoded = Zeroizing::new(String::new());
    let cert = peer.and_then(|p| p.cert.as_deref());
    let parsed = auth::verify::credentials(authorization, auth_token, cert, &mut decoded);
    let throttle = state.throttle();
    let turn = match (peer, &parsed) {
        (None, _) => None,
        (Some(peer), Ok(credentials)) if authenticator.guessable(credentials) => {
            match throttle.admit(peer.addr.ip()) {
                Admission::After(wait, turn) => {
                    if !wait.is_zero() {
                        state.metrics().auth_throttled(false);
                        tokio::time::sleep(wait).await;
                    }
                    Some(turn)
                }
                Admission::Refused { retry_after } => {
                    state.metrics().auth_throttled(true);
                    return Err(Refusal::Throttled { retry_after });
                }
            }
        }
        (Some(peer), _) => Some(throttle.unqueued(peer.addr.ip())),
    };
    let mut under_way = UnderWay {
        turn,
        state,
        client: peer.map(|p| p.addr.ip()),
    };
    let checked = match parsed {
        Ok(credentials) => {
            let memo = peer.map(|p| &p.remembered);
            auth::remember::check(authenticator, memo, authorization, credentials).await
        }
        Err(e) => Err(e),
    };
    let failed = checked
        .as_ref()
        .err()
        .filter(|e| !e.is_unavailable() && **e != AuthError::Missing);
    let late = under_way
        .turn
        .take()
        .map_or(Duration::ZERO, |turn| turn.settle(failed.is_some()));
    match checked {
        Ok(principal) => Ok(principal),
        Err(e) => {
            state.metrics().auth_failure(reason(&e));
            if !late.is_zero() {
                state.metrics().auth_throttled(false);
                tokio::time::sleep(late).await;
            }
            Err(Refusal::Failed(e))
        }
    }
}

/// A check of credentials under way, with its turn. Dropped before the
/// check ends (the client hung up, or the request's time ran out), it is
/// a failure: charged, counted (`abandoned`) and logged. Its turn given
/// back instead, a client that hangs up before the verdict could guess
/// for free, as fast as it can connect; and the Argon2 check it started
/// runs on to its end all the same (`auth::pool`).
struct UnderWay<'a> {
    turn: Option<Turn<'a>>,
    state: &'a AppState,
    client: Option<IpAddr>,
}

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        let Some(turn) = self.turn.take() else {
            return;
        };
        turn.settle(true);
        self.state.metrics().auth_failure("abandoned");
        tracing::info!(
            target: "hierad::access",
            client = tracing::field::display(crate::server::http::access::DisplayClient(self.client)),
            outcome = "abandoned",
            "a request left before its credentials' check ended (its client hung up, or its time ran out): counted as a failed authentication"
        );
    }
}

/// 429, saying when to come back (`Retry-After`, whole seconds).
fn throttled(retry_after: Duration) -> Response {
    let secs = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
    let mut response = error_response(
        StatusCode::TOO_MANY_REQUESTS,
        "throttled",
        format!(
            "too many failed authentications from this client's network; credentials are checked again in {secs} s"
        ),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// Authenticates `request`, checks its role and environment, and puts its
/// [`Principal`] in the request's extensions for the handlers (the author
/// of a write), and its name in `who` for the access log; or answers the
/// refusal. Without an auth file every request is
/// [`Principal::anonymous`]. Its route's `template` decides the role
/// needed; the environment its `{env}` names (`env`), whether a limited
/// principal may have it.
pub(crate) async fn authorize(
    state: &AppState,
    request: Request,
    template: Option<&'static str>,
    env: &Named,
    who: &OnceLock<Arc<str>>,
) -> Result<Request, Response> {
    let need = auth::needed(request.method(), template);
    let Some(authenticator) = state.authenticator() else {
        return Ok(admit(request, Principal::anonymous(), who));
    };
    // A probe is answered without credentials; one that sends some is
    // authenticated, so /healthz may name what its principal may read.
    if need == Need::Nobody && !sends_credentials(&request) {
        return Ok(request);
    }
    let peer = Asker::peer(request.extensions()).cloned();
    let headers = request.headers();
    let sent = single(headers, &header::AUTHORIZATION)
        .and_then(|authorization| Ok((authorization, single(headers, &X_AUTH_TOKEN)?)));
    let (authorization, auth_token) = match sent {
        Ok(sent) => sent,
        Err(e) => {
            state.metrics().auth_failure(reason(&e));
            let response = refused(&e, authenticator.keystone_url());
            return Err(closing(response, may_have_body(&request)));
        }
    };
    let memo = peer.as_ref().map(|p| &p.remembered);
    let principal = match auth::remember::recall(&authenticator, memo, authorization) {
        Some(principal) => principal,
        None => check(
            state,
            &authenticator,
            peer.as_ref(),
            authorization,
            auth_token,
        )
        .await
        .map_err(|refusal| {
            let response = match refusal {
                Refusal::Failed(e) => refused(&e, authenticator.keystone_url()),
                Refusal::Throttled { retry_after } => throttled(retry_after),
            };
            closing(response, may_have_body(&request))
        })?,
    };
    let _ = who.set(principal.name.clone());
    let env = environment(&principal, env)
        .map_err(|message| error_response(StatusCode::FORBIDDEN, "forbidden", message))?;
    if let Err(denied) = auth::permit(&principal, need, request.method(), template, env) {
        let response = error_response(StatusCode::FORBIDDEN, "forbidden", denied.to_string());
        return Err(closing(response, may_have_body(&request)));
    }
    Ok(admit(request, principal, who))
}

/// Whether `request` carries credentials: a credentials header, or a
/// client certificate on its connection.
fn sends_credentials(request: &Request) -> bool {
    let headers = request.headers();
    headers.contains_key(header::AUTHORIZATION)
        || headers.contains_key(&X_AUTH_TOKEN)
        || Asker::peer(request.extensions()).is_some_and(|peer| peer.cert.is_some())
}

/// The value of the credentials header `name`, if sent. Sent twice
/// (two `Authorization`, or two `X-Auth-Token`), the request is malformed
/// (401): which one is meant is not for the server to guess, and a proxy
/// that adds its own would otherwise decide by header order.
fn single<'h>(
    headers: &'h header::HeaderMap,
    name: &header::HeaderName,
) -> Result<Option<&'h [u8]>, AuthError> {
    let mut values = headers.get_all(name).iter();
    let first = values.next().map(HeaderValue::as_bytes);
    match values.count() {
        0 => Ok(first),
        more => Err(AuthError::Malformed(format!(
            "the request has {} {name} headers; send one",
            more + 1
        ))),
    }
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
    Asker::admit(request.extensions_mut(), principal);
    request
}

/// The environment `named` by a request's path (its `{env}`, read as the
/// handler's [`Env`](crate::server::routes::env::Env) reads it), for a
/// principal limited to some; `None` for one that is not (it may use
/// any), or for a route that names none. An `{env}` that is not a number
/// names no environment the limited principal may use: 403. A lookup's
/// environment is in its body: the handler checks it once it has parsed
/// the body, its only parse.
fn environment(principal: &Principal, named: &Named) -> Result<Option<i64>, String> {
    if principal.environments.is_none() {
        return Ok(None);
    }
    match named {
        Named::Nothing => Ok(None),
        Named::Env(env) => Ok(Some(*env)),
        Named::NotANumber(text) => Err(format!(
            "{} may use only its own environments, and {text:?} names none: environments are numbered",
            principal.name
        )),
    }
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
        AuthError::Busy => "busy",
    }
}

/// 401 with the challenges a client may answer (`WWW-Authenticate`), or
/// 503 when Keystone cannot say.
fn refused(e: &AuthError, keystone: Option<&str>) -> Response {
    if e.is_unavailable() {
        let mut response = error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "auth_unavailable",
            e.to_string(),
        );
        if *e == AuthError::Busy {
            // A check takes some 50 ms: the queue moves within a second.
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        return response;
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
mod tests;
