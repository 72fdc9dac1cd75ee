//! Refuses what a web page open in the operator's browser could make that
//! browser send (docs/security.md, "Browsers"). Without `--auth` every
//! request is an admin's, and with it a browser attaches the Basic
//! credentials it remembers to any site's requests; so, for every request,
//! with or without `--auth`:
//!
//! - a `Host` must be an IP address, `localhost`, or a name given with
//!   `--allowed-host` (421 otherwise): a page whose name its attacker
//!   resolves to this server's address (DNS rebinding) sends its own name;
//! - a request that may change something (not GET or HEAD) whose `Origin`
//!   is not this server's own is refused (403): browsers name the page's
//!   origin on such requests;
//! - a body must be declared JSON or YAML (415): a page may send
//!   `text/plain`, a form or an untyped body to any site without asking,
//!   while any other type makes the browser ask first (a CORS preflight),
//!   which this server never grants (it sends no CORS headers at all).
//!
//! A request without `Host` (HTTP/1.0, in-process tests) or without
//! `Origin` (curl, the CLI, the Ruby shim) comes from no browser.

use crate::server::http::error::ApiError;
use crate::server::http::guard::Asker;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use hyper::body::Body as _;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, OnceLock};

/// The flag that names further hosts, as refusals name it.
pub(crate) const ALLOWED_HOST_FLAG: &str = "--allowed-host";

/// The content type that refusals tell a client to send.
pub(crate) const SEND_JSON: &str = "Content-Type: application/json";

/// How much of a refused header value a refusal repeats: a client may
/// send one as long as a head may be.
const SHOWN: usize = 100;

/// The names besides IP addresses and `localhost` that requests may give
/// as their `Host` (`hierad serve --allowed-host`), lowercase, without a
/// trailing dot.
#[derive(Clone, Debug, Default)]
pub(crate) struct AllowedHosts(Arc<[Box<str>]>);

impl AllowedHosts {
    pub(crate) fn new(names: Vec<String>) -> AllowedHosts {
        AllowedHosts(
            names
                .into_iter()
                .map(|name| name.trim_end_matches('.').to_ascii_lowercase().into())
                .collect(),
        )
    }

    /// Whether a request may name `host` (without its port).
    fn allows(&self, host: &str) -> bool {
        if host.starts_with('[') || host.parse::<Ipv4Addr>().is_ok() {
            // `split_authority` took a bracketed one only if it parses.
            return true;
        }
        let name = host.strip_suffix('.').unwrap_or(host);
        name.eq_ignore_ascii_case("localhost")
            || self
                .0
                .iter()
                .any(|allowed| name.eq_ignore_ascii_case(allowed))
    }
}

/// The `Host` a connection's requests were last allowed to name, against
/// which [`AllowedHosts`]: a client names the same on every request, and
/// parsing it cost 650 instructions a request (bench/LOG.md "Where a
/// cached lookup's instructions go"). Set once per connection; a request
/// naming another is checked as the first was.
#[derive(Debug, Default)]
pub(crate) struct KnownHost(OnceLock<(AllowedHosts, HeaderValue)>);

impl KnownHost {
    fn knows(&self, value: &HeaderValue, allowed: &AllowedHosts) -> bool {
        self.0
            .get()
            .is_some_and(|(by, known)| Arc::ptr_eq(&by.0, &allowed.0) && known == value)
    }

    fn learn(&self, value: &HeaderValue, allowed: &AllowedHosts) {
        let _ = self.0.set((allowed.clone(), value.clone()));
    }
}

/// Checks an `--allowed-host` value: a DNS name, without a scheme, port or
/// path (any port is taken, so naming one would mislead).
///
/// # Errors
///
/// What is wrong with `text`, for clap to print.
pub(crate) fn parse_allowed_host(text: &str) -> Result<String, String> {
    let name = text.strip_suffix('.').unwrap_or(text);
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if text.contains("://") || text.contains('/') {
        return Err(format!(
            "{text:?} is a URL; give the host name alone, e.g. hierad.example.com"
        ));
    }
    if text.contains(':') && !text.starts_with('[') {
        return Err(format!(
            "{text:?} has a port; give the host name alone (any port is taken)"
        ));
    }
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(format!(
            "{text:?} is not a host name (letters, digits, '-' and '.'), e.g. hierad.example.com"
        ));
    }
    Ok(name.to_owned())
}

/// A refusal for `request`, or `None` when a browser could not have been
/// made to send it from another site.
pub(crate) fn refusal(request: &Request, allowed: &AllowedHosts) -> Option<Response> {
    check(request, allowed)
        .err()
        .map(IntoResponse::into_response)
}

fn check(request: &Request, allowed: &AllowedHosts) -> Result<(), ApiError> {
    let headers = request.headers();
    let host = host(request, allowed)?;
    let changes = !matches!(*request.method(), Method::GET | Method::HEAD);
    if changes {
        origin(headers, host)?;
    }
    // Exact 0 for no body, or a Content-Length of 0.
    let has_body = request.body().size_hint().exact() != Some(0);
    content_type(headers, has_body, changes)
}

/// The request's `Host`, once checked; `None` when it names none
/// (HTTP/1.0).
fn host<'r>(request: &'r Request, allowed: &AllowedHosts) -> Result<Option<&'r str>, ApiError> {
    let headers = request.headers();
    let mut values = headers.get_all(header::HOST).iter();
    let value = values.next();
    if values.next().is_some() {
        return Err(ApiError::BadRequest(
            "the request has more than one Host header; send one".to_owned(),
        ));
    }
    // An absolute request target names the host too, and wins over the
    // header (RFC 9112, section 3.2.2): both are checked.
    if let Some(target) = request.uri().authority() {
        check_host(target.as_str(), allowed)?;
    }
    let Some(value) = value else {
        return Ok(None);
    };
    let text = text(value)?;
    let known = Asker::peer(request.extensions()).map(|p| &p.known_host);
    if known.is_some_and(|known| known.knows(value, allowed)) {
        return Ok(Some(text));
    }
    check_host(text, allowed)?;
    if let Some(known) = known {
        known.learn(value, allowed);
    }
    Ok(Some(text))
}

fn check_host<'a>(
    value: &'a str,
    allowed: &AllowedHosts,
) -> Result<(&'a str, Option<u16>), ApiError> {
    match split_authority(value) {
        Some((host, port)) if allowed.allows(host) => Ok((host, port)),
        Some(_) => Err(ApiError::UnknownHost(format!(
            "this server does not answer to the host {:?}: a request must name it by an IP \
             address, `localhost`, or a name given with `hierad serve {ALLOWED_HOST_FLAG} NAME` \
             (HIERAD_ALLOWED_HOST); a web page may be reaching it through a name that resolves \
             to its address (DNS rebinding)",
            crate::server::Truncated(value, SHOWN).to_string()
        ))),
        None => Err(ApiError::BadRequest(format!(
            "the request's Host {:?} is not a host with an optional port",
            crate::server::Truncated(value, SHOWN).to_string()
        ))),
    }
}

/// Refuses an `Origin` other than the request's own `Host`: the same name
/// and port. The scheme only gives the port a bare `Host` means: behind a
/// proxy that ends TLS the page's origin is https while this server sees
/// http, and no other site can share a name and port with this one.
fn origin(headers: &HeaderMap, host: Option<&str>) -> Result<(), ApiError> {
    let mut values = headers.get_all(header::ORIGIN).iter();
    let Some(value) = values.next() else {
        return Ok(());
    };
    let refused = |value: &str| {
        ApiError::CrossOrigin(format!(
            "a request from the web page at {:?} may not change anything here: a request \
             that sends Origin must come from this server's own pages (a client that is not \
             a browser sends no Origin)",
            crate::server::Truncated(value, SHOWN).to_string()
        ))
    };
    if values.next().is_some() {
        return Err(refused("(several)"));
    }
    let value = text(value).map_err(|_| refused("(not text)"))?;
    let own = value.split_once("://").and_then(|(scheme, authority)| {
        let default = match scheme.to_ascii_lowercase().as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let (name, port) = split_authority(authority)?;
        let (own_name, own_port) = split_authority(host?)?;
        (name.eq_ignore_ascii_case(own_name)
            && port.unwrap_or(default) == own_port.unwrap_or(default))
        .then_some(())
    });
    own.ok_or_else(|| refused(value))
}

/// What a body may be declared as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Media {
    Json,
    Yaml,
}

impl Media {
    /// The media type `value` declares (its parameters ignored), if one
    /// this server reads.
    pub(crate) fn of(value: &HeaderValue) -> Option<Media> {
        // What nearly every client sends, known without parsing (690
        // instructions a lookup parsed, bench/LOG.md "Where a cached
        // lookup's instructions go").
        if value.as_bytes() == b"application/json" {
            return Some(Media::Json);
        }
        let essence = value.to_str().ok()?.split(';').next()?.trim();
        let is = |name: &str| essence.eq_ignore_ascii_case(name);
        if is("application/json") {
            Some(Media::Json)
        } else if is("application/yaml")
            || is("application/x-yaml")
            || is("text/yaml")
            || is("text/x-yaml")
        {
            Some(Media::Yaml)
        } else {
            None
        }
    }
}

/// A body must be declared JSON or YAML; so must a request that may change
/// something and declares a type at all (a browser's form, even empty).
fn content_type(headers: &HeaderMap, has_body: bool, changes: bool) -> Result<(), ApiError> {
    let declared = headers.get(header::CONTENT_TYPE);
    let shown = match declared {
        None if has_body => "no Content-Type".to_owned(),
        Some(value) if (has_body || changes) && Media::of(value).is_none() => format!(
            "Content-Type {:?}",
            crate::server::Truncated(&String::from_utf8_lossy(value.as_bytes()), SHOWN).to_string()
        ),
        _ => return Ok(()),
    };
    Err(ApiError::UnsupportedMediaType(format!(
        "the request has {shown}; send `{SEND_JSON}` with a JSON body (a document write \
         also takes `Content-Type: application/yaml`)"
    )))
}

/// Splits `host[:port]` (`[v6]` bracketed); `None` when it is not that.
fn split_authority(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, rest) = match authority.strip_prefix('[') {
        Some(inner) => {
            let (v6, _) = inner.split_once(']')?;
            v6.parse::<Ipv6Addr>().ok()?;
            authority.split_at(v6.len() + 2)
        }
        None => {
            let (name, rest) = authority.split_at(authority.find(':').unwrap_or(authority.len()));
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
            if !valid {
                return None;
            }
            (name, rest)
        }
    };
    let port = match rest {
        "" => None,
        _ => {
            let digits = rest.strip_prefix(':')?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(digits.parse().ok()?)
        }
    };
    Some((host, port))
}

fn text(value: &HeaderValue) -> Result<&str, ApiError> {
    value
        .to_str()
        .map_err(|_| ApiError::BadRequest("the request's Host is not text".to_owned()))
}

#[cfg(test)]
mod tests;
