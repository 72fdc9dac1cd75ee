//! The bench's connections: keep-alive HTTP/1.1 (hyper) over TCP, or over
//! TLS (tokio-rustls) for an `https://` server, with the client's
//! credentials (docs/security.md) on every request: the `Authorization`
//! and `X-Auth-Token` headers, made once and marked sensitive, and the
//! client certificate of the TLS configuration.

use super::BenchError;
use crate::ops::client_auth::{self, ClientAuth};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpStream;

/// Where the server is: `http://host:port` or `https://host:port` (a path
/// after it is ignored), and how to authenticate to it.
#[derive(Clone)]
pub(crate) struct Target {
    /// `host:port`, the `Host` header.
    pub(crate) authority: String,
    /// The host the server's certificate must name (https).
    host: String,
    https: bool,
    /// The TLS client of an https target, from [`Target::authenticate`].
    tls: Option<tokio_rustls::TlsConnector>,
    /// The credentials' headers, sent with every request.
    credentials: Arc<[(HeaderName, HeaderValue)]>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("url", &self.url())
            .field("credentials", &self.credentials.len())
            .finish_non_exhaustive()
    }
}

impl std::str::FromStr for Target {
    type Err = String;

    fn from_str(url: &str) -> Result<Target, String> {
        if crate::auth::url_names_user(url) {
            return Err(client_auth::CREDENTIALS_IN_URL.to_owned());
        }
        let (https, rest) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
            (Some(rest), _) => (false, rest),
            (None, Some(rest)) => (true, rest),
            (None, None) => {
                return Err(format!(
                    "the server URL must start with http:// or https://, not {url:?}"
                ));
            }
        };
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.is_empty() {
            return Err(format!("no host in {url:?}"));
        }
        // `[::1]:8750`, `host:8750`, or a host alone (the scheme's port).
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (host, Some(port)),
            _ => (authority, None),
        };
        if let Some(port) = port {
            port.parse::<u16>()
                .map_err(|_| format!("{port:?} is not a port number, in {url:?}"))?;
        }
        let default_port = if https { 443 } else { 80 };
        Ok(Target {
            authority: match port {
                Some(_) => authority.to_owned(),
                None => format!("{authority}:{default_port}"),
            },
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            https,
            tls: None,
            credentials: Arc::from(Vec::new()),
        })
    }
}

impl Target {
    pub(crate) fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.authority)
    }

    /// The target with `auth`'s credentials on every request and, for
    /// https, its CA and client certificate.
    ///
    /// # Errors
    ///
    /// An unusable CA or client certificate file; a credential that
    /// cannot be a header value.
    pub(crate) fn authenticate(mut self, auth: &ClientAuth) -> Result<Target, BenchError> {
        if self.https {
            let config = auth
                .rustls_config()
                .map_err(|e| BenchError::Invalid(e.to_string()))?;
            self.tls = Some(tokio_rustls::TlsConnector::from(config));
            ServerName::try_from(self.host.clone()).map_err(|e| {
                BenchError::Invalid(format!("{}: not a TLS server name: {e}", self.host))
            })?;
        }
        let mut credentials = Vec::new();
        let sensitive = |what: &str, text: &str| {
            let mut value = HeaderValue::from_str(text).map_err(|_| {
                BenchError::Invalid(format!(
                    "the {what} holds a character a header cannot carry"
                ))
            })?;
            value.set_sensitive(true);
            Ok::<_, BenchError>(value)
        };
        if let Some(value) = &auth.authorization {
            credentials.push((
                hyper::header::AUTHORIZATION,
                sensitive("token or password", value)?,
            ));
        }
        if let Some(token) = &auth.keystone_token {
            credentials.push((
                HeaderName::from_static("x-auth-token"),
                sensitive("Keystone token (--os-token)", token)?,
            ));
        }
        self.credentials = credentials.into();
        Ok(self)
    }

    pub(crate) async fn addr(&self) -> Result<SocketAddr, BenchError> {
        let context = || format!("cannot resolve {}", self.url());
        tokio::net::lookup_host(self.authority.as_str())
            .await
            .map_err(BenchError::io(context()))?
            .next()
            .ok_or_else(|| {
                BenchError::Invalid(format!("{}: the host resolves to nothing", self.url()))
            })
    }

    /// What a failed connection means: a TLS failure says what to do
    /// (`--cacert`, the client certificate), anything else names the
    /// server.
    pub(crate) fn unreachable(&self, e: std::io::Error) -> BenchError {
        match client_auth::rustls_error(&e) {
            Some(tls) => BenchError::Invalid(format!(
                "cannot connect to {}: {}",
                self.url(),
                client_auth::tls_failure(tls)
            )),
            None => BenchError::Io {
                context: format!("cannot reach {}", self.url()),
                error: e,
            },
        }
    }
}

/// One keep-alive connection.
pub(crate) struct Conn {
    sender: SendRequest<Full<Bytes>>,
}

impl Conn {
    /// Connects to `addr` (`target`'s), through TLS for https.
    pub(crate) async fn open(target: &Target, addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let sender = match &target.tls {
            Some(tls) => {
                let name =
                    ServerName::try_from(target.host.clone()).map_err(std::io::Error::other)?;
                let stream = tls.connect(name, stream).await?;
                handshake(TokioIo::new(stream)).await?
            }
            None if target.https => {
                return Err(std::io::Error::other(
                    "an https target without TLS settings (Target::authenticate)",
                ));
            }
            None => handshake(TokioIo::new(stream)).await?,
        };
        Ok(Conn { sender })
    }

    /// Sends a request with `target`'s credentials and `headers`; the
    /// status and the whole body.
    pub(crate) async fn send(
        &mut self,
        method: Method,
        target: &Target,
        path: &str,
        body: Vec<u8>,
        headers: &[(String, String)],
    ) -> Result<(StatusCode, Bytes), hyper::Error> {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(hyper::header::HOST, target.authority.as_str())
            .header(hyper::header::CONTENT_TYPE, "application/json");
        for (name, value) in target.credentials.iter() {
            request = request.header(name, value.clone());
        }
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .expect("a valid request");
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }
}

/// The HTTP/1.1 handshake over `io`; its connection driven by a task.
async fn handshake<T>(io: TokioIo<T>) -> std::io::Result<SendRequest<Full<Bytes>>>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = http1::handshake(io).await.map_err(std::io::Error::other)?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

/// One request on a fresh connection: (status, body).
///
/// # Errors
///
/// The server cannot be reached (a TLS failure says what to do).
pub(crate) async fn request(
    target: &Target,
    method: Method,
    path: &str,
    body: Vec<u8>,
) -> Result<(StatusCode, Bytes), BenchError> {
    let addr = target.addr().await?;
    let mut conn = Conn::open(target, addr)
        .await
        .map_err(|e| target.unreachable(e))?;
    conn.send(method, target, path, body, &[])
        .await
        .map_err(|e| target.unreachable(std::io::Error::other(e)))
}

/// An error answer in one line: the API's message (never the whole
/// body of a 401 or 403, which says nothing more), and for those what to
/// check.
pub(crate) fn refusal(what: &str, status: StatusCode, body: &[u8]) -> BenchError {
    let message = serde_json::from_slice::<crate::api::ErrorBody>(body)
        .map(|e| e.message)
        .unwrap_or_else(|_| String::from_utf8_lossy(body).trim().to_owned());
    let hint = match status.as_u16() {
        401 => {
            " (the server wants credentials it accepts: --token or $HIERAD_TOKEN, --user with \
             --password-file, --os-token, or --client-cert and --client-key)"
        }
        403 => " (the principal's role or environments do not allow this)",
        _ => "",
    };
    BenchError::Refused {
        what: what.to_owned(),
        status: status.as_u16(),
        body: format!("{message}{hint}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        let cases = [
            (
                "http://127.0.0.1:8750",
                Ok(("127.0.0.1:8750", "127.0.0.1", false)),
            ),
            (
                "http://localhost:1/api/v1",
                Ok(("localhost:1", "localhost", false)),
            ),
            ("https://x:1", Ok(("x:1", "x", true))),
            (
                "https://hierad.example",
                Ok(("hierad.example:443", "hierad.example", true)),
            ),
            ("http://[::1]:9", Ok(("[::1]:9", "::1", false))),
            ("http://[::1]", Ok(("[::1]:80", "::1", false))),
            ("ftp://x:1", Err("http:// or https://")),
            ("http:///x", Err("no host")),
            ("http://x:port", Err("not a port number")),
        ];
        for (url, want) in cases {
            match (url.parse::<Target>(), want) {
                (Ok(t), Ok((authority, host, https))) => {
                    assert_eq!(
                        (t.authority.as_str(), t.host.as_str(), t.https),
                        (authority, host, https),
                        "{url}"
                    );
                    assert!(t.url().ends_with(&t.authority));
                }
                (Err(e), Err(part)) => assert!(e.contains(part), "{url}: {e}"),
                (got, want) => panic!("{url}: {got:?} vs {want:?}"),
            }
        }
    }

    #[test]
    fn credentials_are_sensitive_headers() {
        let auth = ClientAuth {
            authorization: Some(ClientAuth::bearer("hierad_secret")),
            keystone_token: Some("ks-secret".to_owned()),
            ..ClientAuth::default()
        };
        let target = "http://127.0.0.1:1"
            .parse::<Target>()
            .unwrap()
            .authenticate(&auth)
            .unwrap();
        assert_eq!(target.credentials.len(), 2);
        assert!(target.credentials.iter().all(|(_, v)| v.is_sensitive()));
        let shown = format!("{target:?}");
        assert!(!shown.contains("secret"), "{shown}");
        let bad = ClientAuth {
            authorization: Some("Bearer a\nb".to_owned()),
            ..ClientAuth::default()
        };
        let err = "http://h:1"
            .parse::<Target>()
            .unwrap()
            .authenticate(&bad)
            .unwrap_err();
        assert!(err.to_string().contains("a header cannot carry"), "{err}");
    }

    #[test]
    fn refusals_give_the_message_and_what_to_check() {
        let body = br#"{"error":"unauthorized","message":"authentication required"}"#;
        let text = refusal("lookup", StatusCode::UNAUTHORIZED, body).to_string();
        assert!(
            text.starts_with("lookup: the server answered 401 authentication required (")
                && text.contains("--token"),
            "{text}"
        );
        let text = refusal(
            "PUT x",
            StatusCode::FORBIDDEN,
            b"{\"error\":\"forbidden\",\"message\":\"read only\"}",
        )
        .to_string();
        assert!(
            text.contains("403 read only (the principal's role"),
            "{text}"
        );
        let text = refusal("GET y", StatusCode::BAD_GATEWAY, b"  plain  ").to_string();
        assert_eq!(text, "GET y: the server answered 502 plain");
    }
}
