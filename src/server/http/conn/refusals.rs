//! The request heads hyper refuses before the router sees them.

use crate::server::state::metrics::Metrics;
use prometheus_client::metrics::counter::Counter;

/// The request heads hyper refuses itself, answering 400 (one it cannot
/// parse) or 431 (one over its size or header count) and closing: they
/// never reach the router, whose access log and metrics record every
/// other refusal, so they are logged and counted here.
#[derive(Clone)]
pub(crate) struct HeadRefusals {
    malformed: Counter,
    too_large: Counter,
}

impl HeadRefusals {
    pub(crate) fn new(metrics: &Metrics) -> HeadRefusals {
        HeadRefusals {
            malformed: metrics.refused_heads("malformed"),
            too_large: metrics.refused_heads("too_large"),
        }
    }

    /// Records how a connection ended, if hyper refused a head: other
    /// errors are the client's going (a reset, a timeout), not refusals.
    pub(super) fn record(&self, e: &hyper::Error, client: std::net::IpAddr) {
        let (counter, reason, status) = if e.is_parse_too_large() {
            (&self.too_large, "too_large", 431)
        } else if e.is_parse() || e.is_parse_status() || e.is_parse_version_h2() {
            (&self.malformed, "malformed", 400)
        } else {
            return;
        };
        counter.inc();
        // hyper's words name the fault, never a header's text.
        tracing::info!(
            target: "hierad::access",
            client = %client,
            status,
            outcome = reason,
            "refused a request head before routing: {e}"
        );
    }
}
