//! The access log: one line per request (target `hierad::access`):
//! method, route template (never the concrete path or query, which may
//! name secrets), status, principal, client address, latency. Never a
//! body or a header. Taken from the request ([`AccessLog::of`]), written
//! with the final answer ([`AccessLog::done`]), so a 408 or 431 is logged
//! too.
//!
//! The line's `name=value` pairs are written here, into one buffer per
//! thread, and logged as the event's message: the same text tracing's
//! own format wrote for them as six fields (the tests compare the two),
//! for two thirds of the instructions. Each field offered to the
//! formatter one at a time cost a dynamic call, a name lookup and
//! several small writes (bench/LOG.md, "The access line written whole; the
//! answer cache's probe").

use crate::server::http::guard::Asker;
use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use std::fmt::Write as _;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// The access log's target.
pub(crate) const TARGET: &str = "hierad::access";

/// What [`AccessLog::done`] needs of the request, kept from its start;
/// nothing when the access log is off.
pub(crate) struct AccessLog(Option<Logged>);

struct Logged {
    method: Method,
    route: Option<&'static str>,
    /// Whom to block at a firewall when the line is a failure.
    client: Option<IpAddr>,
}

impl AccessLog {
    /// The line of `request`, routed to `route` (`None`: no route).
    pub(crate) fn of(request: &Request, route: Option<&'static str>) -> AccessLog {
        if !tracing::enabled!(target: TARGET, tracing::Level::INFO) {
            return AccessLog(None);
        }
        AccessLog(Some(Logged {
            method: request.method().clone(),
            route,
            client: Asker::peer(request.extensions()).map(|p| p.addr.ip()),
        }))
    }

    /// Logs `response`, answered in `elapsed` to `principal` (`-` if the
    /// request was refused before anyone was authenticated).
    pub(crate) fn done(self, response: &Response, principal: Option<&Arc<str>>, elapsed: Duration) {
        let Some(Logged {
            method,
            route,
            client,
        }) = self.0
        else {
            return;
        };
        let fields = Fields {
            method: method.as_str(),
            route: route.unwrap_or("unmatched"),
            status: response.status().as_u16(),
            principal: principal.map_or("-", |n| n),
            client,
            micros: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        };
        thread_local! {
            static LINE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        LINE.with_borrow_mut(|line| {
            line.clear();
            fields.write(line);
            // A string, not formatted text: the formatter takes it whole.
            tracing::info!(target: TARGET, message = line.as_str());
        });
    }
}

/// One access line's values.
struct Fields<'a> {
    method: &'a str,
    route: &'a str,
    status: u16,
    principal: &'a str,
    client: Option<IpAddr>,
    micros: u64,
}

impl Fields<'_> {
    /// `method=… route="…" status=… principal="…" client=… micros=…`,
    /// as tracing's format writes such fields: a string quoted and
    /// escaped as `Debug` writes it, a number or a displayed value as
    /// it is.
    fn write(&self, line: &mut String) {
        let mut digits = itoa::Buffer::new();
        line.push_str("method=");
        if self.method.len() <= crate::server::METHOD_SHOWN {
            line.push_str(self.method);
        } else {
            let _ = write!(
                line,
                "{}",
                crate::server::Truncated(self.method, crate::server::METHOD_SHOWN)
            );
        }
        // A route is one of the server's own templates, which `Debug`
        // writes as they are (the tests check every one).
        line.push_str(" route=\"");
        line.push_str(self.route);
        line.push('"');
        line.push_str(" status=");
        line.push_str(digits.format(self.status));
        line.push_str(" principal=");
        quoted(line, self.principal);
        line.push_str(" client=");
        write_client(line, self.client);
        line.push_str(" micros=");
        line.push_str(digits.format(self.micros));
    }
}

/// `text` as `Debug` writes a string; without its escaping machinery for
/// the usual name, which needs none.
fn quoted(line: &mut String, text: &str) {
    if plain(text) {
        line.push('"');
        line.push_str(text);
        line.push('"');
    } else {
        let _ = write!(line, "{text:?}");
    }
}

/// Whether `Debug` writes `text` between quotes as it is.
fn plain(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
}

/// A client address as its `Display` writes it, or `-` for a request with
/// none (in-process tests).
fn write_client(line: &mut String, client: Option<IpAddr>) {
    match client {
        Some(IpAddr::V4(ip)) => {
            let [a, b, c, d] = ip.octets();
            let mut digits = itoa::Buffer::new();
            line.push_str(digits.format(a));
            for octet in [b, c, d] {
                line.push('.');
                line.push_str(digits.format(octet));
            }
        }
        Some(ip) => {
            let _ = write!(line, "{ip}");
        }
        None => line.push('-'),
    }
}

/// A client address, or `-`, for lines written through tracing's fields.
pub(crate) struct DisplayClient(pub(crate) Option<IpAddr>);

impl std::fmt::Display for DisplayClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = String::new();
        write_client(&mut text, self.0);
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests;
