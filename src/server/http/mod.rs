//! The HTTP layer: what every request and connection goes through before
//! and after its route's handler. Connections (`conn.rs`: the accept
//! loop, the connection limit, shedding; `watched.rs`: header and idle
//! timeouts, the head's size bound), TLS (`tls.rs`), the PROXY protocol
//! (`proxied.rs`), plain HTTP on the TLS port (`plain_on_tls.rs`); around
//! the router (`harden.rs`, in order, with the route's template from
//! `templates.rs`): the access log (`access.rs`), JSON error bodies
//! (`error.rs`), head and time limits, cross-site checks
//! (`cross_site.rs`), authorization (`guard.rs`, with `throttle.rs`
//! spacing failed authentications); request bodies (`body.rs`); the
//! shutdown signal (`signal.rs`).

pub(crate) mod access;
pub(crate) mod body;
pub(crate) mod conn;
pub(crate) mod cross_site;
pub(crate) mod error;
pub(crate) mod guard;
pub(crate) mod harden;
pub(crate) mod plain_on_tls;
pub(crate) mod proxied;
pub(crate) mod signal;
pub(crate) mod templates;
pub(crate) mod throttle;
pub(crate) mod tls;
