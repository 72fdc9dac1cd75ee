//! The bare server the benchmark compares hierad with: hyper 1 HTTP/1.1
//! keep-alive on the same tokio runtime as `hierad serve`, reading each
//! request's body and answering a fixed body (a short lookup answer, or
//! the bytes of a whole document), over plain TCP or over TLS with the
//! server's own rustls configuration (bench/tls.sh: what TLS costs a
//! server that does nothing else). Its throughput is the ceiling of any
//! server on this machine with this client.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::Future;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;

/// What every request gets: a short found answer, as a lookup of a
/// node's fqdn gives.
pub(crate) const FIXED: &[u8] = br#"{"found":true,"value":"node-1.test.domain.local"}"#;

/// What a hierarchy registration gets, so that the bench names the
/// hierarchy by id here too and both servers read the same requests.
const REGISTERED: &[u8] = br#"{"id":"00000000000000000000000000000000"}"#;

async fn answer(
    request: Request<Incoming>,
    body: Bytes,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = if request.uri().path() == crate::api::paths::HIERARCHIES {
        Bytes::from_static(REGISTERED)
    } else {
        body
    };
    // Read the body, as a real server must.
    let _ = request.into_body().collect().await;
    Ok(Response::builder()
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(body))
        .expect("a valid response"))
}

/// Serves `body` (e.g. [`FIXED`]) until `shutdown` resolves, over TLS
/// when given an acceptor (hierad's, `server::tls`, so the two differ in
/// their handlers only). `nodelay` as hierad's own listener sets it.
///
/// # Errors
///
/// The listener fails.
pub(crate) async fn serve(
    listener: TcpListener,
    nodelay: bool,
    tls: Option<tokio_rustls::TlsAcceptor>,
    body: Bytes,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            () = &mut shutdown => return Ok(()),
        };
        if nodelay {
            stream.set_nodelay(true)?;
        }
        let body = body.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => connection(stream, body).await,
                // A failed handshake ends the connection, as in hierad.
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        connection(stream, body).await;
                    }
                }
            }
        });
    }
}

/// HTTP/1.1 keep-alive on one connection until it ends.
async fn connection<S>(stream: S, body: Bytes)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| answer(request, body.clone()));
    let _ = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}
