//! `hierad health`: is the server on this machine up and healthy? For a
//! container's HEALTHCHECK or a supervisor. It GETs `/healthz` on the port
//! `hierad serve` listens on (`--listen`, `HIERAD_LISTEN`, so the same
//! environment configures both), over TLS when the server speaks it.
//!
//! The server's certificate is not verified: the probe connects to
//! loopback, sends nothing (no credentials: `/healthz` is open) and reads
//! only the status, and a certificate names the host, not 127.0.0.1.

use crate::settings::DEFAULT_PORT;
use anyhow::bail;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The address `hierad serve` listens on; a wildcard address
    /// (0.0.0.0, [::]) is reached on loopback
    #[arg(long, env = "HIERAD_LISTEN", default_value_t = SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)))]
    listen: SocketAddr,
    /// Seconds to wait for the answer, per protocol tried
    #[arg(long, default_value = "5", value_parser = super::args::seconds)]
    timeout: Duration,
}

/// Prints `/healthz`'s answer; exit 0 when it is 200 (`ok`, or `degraded`
/// naming unreadable documents), 1 with the reason otherwise.
///
/// # Errors
///
/// Nothing answers on the port, or the answer is not 200.
pub(crate) fn run(args: &Args) -> anyhow::Result<String> {
    let mut addr = args.listen;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
        });
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(args.timeout))
        .http_status_as_error(false)
        .tls_config(
            ureq::tls::TlsConfig::builder()
                .disable_verification(true)
                .build(),
        )
        .build()
        .into();
    let mut failures = Vec::new();
    for scheme in ["http", "https"] {
        let url = format!("{scheme}://{addr}{}", crate::api::paths::HEALTHZ);
        match agent.get(&url).call() {
            Ok(mut answer) => {
                let status = answer.status();
                let body = answer.body_mut().read_to_string().unwrap_or_default();
                if status == 200 {
                    return Ok(body.trim_end().to_owned());
                }
                // A TLS port telling a plain request to use https.
                if status == 400 && scheme == "http" && body.contains(crate::api::SPEAKS_TLS) {
                    failures.push(format!("{scheme}: {}", crate::api::SPEAKS_TLS));
                    continue;
                }
                bail!("{url} answered {status}: {}", body.trim_end());
            }
            // Nothing listens: the other protocol would fail the same way.
            Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                bail!(
                    "nothing answers at {addr}: {e} (is hierad serve running, with this --listen?)"
                );
            }
            Err(e) => failures.push(format!("{scheme}: {e}")),
        }
    }
    bail!("no answer from {addr}: {}", failures.join("; "))
}
