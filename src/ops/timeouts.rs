//! How long [`super::Remote`] waits for a server, and the error it gives
//! when a wait runs out: the server, the phase and the flag that sets it.

use super::client_auth::{rustls_error, tls_failure};
use super::remote::RemoteError;
use std::time::Duration;

/// How long the client waits for a server.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Timeouts {
    /// To resolve the host name and open the TCP connection.
    pub(crate) connect: Duration,
    /// For each read or write once connected: the longest the server may
    /// stay silent (processing a request included).
    pub(crate) read: Duration,
}

impl Timeouts {
    /// `--connect-timeout`'s default, in seconds.
    pub(crate) const CONNECT_DEFAULT: &str = "10";
    /// `--timeout`'s default for a command that only reads: a read is
    /// answered at once, so a silent server is given up on sooner.
    pub(crate) const READ_DEFAULT: Duration = Duration::from_secs(30);
    /// `--timeout`'s default for a command that writes: a large import is
    /// processed before the server answers.
    pub(crate) const WRITE_DEFAULT: Duration = Duration::from_secs(120);

    /// The defaults of a command that only reads.
    pub(crate) fn reads() -> Timeouts {
        Timeouts {
            read: Timeouts::READ_DEFAULT,
            ..Timeouts::default()
        }
    }
}

/// The defaults of a command that writes.
impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(10),
            read: Timeouts::WRITE_DEFAULT,
        }
    }
}

/// The error of a request that got no answer: a timeout names its phase
/// and the flag that sets it; a connection that broke once open may have
/// carried the request (`writes`: whether it changes anything).
pub(super) fn transport_error(
    url: &str,
    timeouts: Timeouts,
    writes: bool,
    e: ureq::Error,
) -> RemoteError {
    use ureq::Timeout as T;
    let timed_out = |phase, limit: Duration, flag| RemoteError::TimedOut {
        url: url.to_owned(),
        phase,
        seconds: limit.as_secs_f64(),
        flag,
    };
    match e {
        ureq::Error::Timeout(T::Resolve | T::Connect) => {
            timed_out("connecting to", timeouts.connect, "--connect-timeout")
        }
        ureq::Error::Timeout(T::PerWrite | T::SendRequest | T::SendBody) => {
            timed_out("sending the request to", timeouts.read, "--timeout")
        }
        ureq::Error::Timeout(_) => {
            timed_out("waiting for an answer from", timeouts.read, "--timeout")
        }
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            timed_out("waiting for an answer from", timeouts.read, "--timeout")
        }
        ureq::Error::Rustls(tls) => RemoteError::Unreachable {
            url: url.to_owned(),
            reason: tls_failure(&tls),
        },
        ureq::Error::Io(io) if rustls_error(&io).is_some() => RemoteError::Unreachable {
            url: url.to_owned(),
            reason: rustls_error(&io).map(tls_failure).unwrap_or_default(),
        },
        // Refused, unknown host, TLS: nothing was sent. These come once
        // the connection is open: while or after the request was sent
        // (ureq's "Peer disconnected" is an EOF awaiting the answer).
        ureq::Error::Io(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
            ) =>
        {
            RemoteError::Lost {
                url: url.to_owned(),
                reason: io.to_string(),
                writes,
            }
        }
        e => RemoteError::Unreachable {
            url: url.to_owned(),
            reason: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_name_the_server_the_phase_and_the_flag() {
        let timeouts = Timeouts {
            connect: Duration::from_millis(1500),
            read: Duration::from_secs(3),
        };
        let cases = [
            (
                ureq::Error::Timeout(ureq::Timeout::Connect),
                "timed out connecting to the hierad server at http://h:1 (no progress in 1.5 s; --connect-timeout sets the limit)",
            ),
            (
                ureq::Error::Timeout(ureq::Timeout::Resolve),
                "timed out connecting to",
            ),
            (
                ureq::Error::Timeout(ureq::Timeout::PerRead),
                "timed out waiting for an answer from the hierad server at http://h:1 (no progress in 3 s; --timeout sets the limit)",
            ),
            (
                ureq::Error::Timeout(ureq::Timeout::SendBody),
                "timed out sending the request to",
            ),
            (
                ureq::Error::ConnectionFailed,
                "cannot reach the hierad server at http://h:1",
            ),
        ];
        for (error, want) in cases {
            let got = transport_error("http://h:1", timeouts, true, error).to_string();
            assert!(got.starts_with(want), "{got}");
        }
    }
}
