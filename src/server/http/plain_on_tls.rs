//! A plain-HTTP request on a TLS listener (`http://` for an `https://`
//! server). rustls would answer it with a TLS alert, which curl and
//! browsers show as "invalid HTTP version"; the first byte tells the two
//! apart, and a plain request gets a plain 400 saying to use `https://`.

use crate::server::http::proxied::Prefixed;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The first byte of every TLS record that opens a connection: the
/// ContentType `handshake` (RFC 8446, section 5.1,
/// <https://www.rfc-editor.org/rfc/rfc8446#section-5.1>).
const TLS_HANDSHAKE: u8 = 0x16;

/// What a connection to a TLS listener starts with.
pub(super) enum Opening<S> {
    /// A TLS record (or anything else rustls should judge): the stream
    /// with the byte read put back.
    Tls(Prefixed<S>),
    /// An HTTP method's first letter: a client speaking plain HTTP.
    PlainHttp(S),
    /// The client closed, or the read failed, before a byte.
    Closed,
}

/// Reads the connection's first byte to tell TLS from plain HTTP.
pub(super) async fn opening<S: AsyncRead + Unpin>(mut stream: S) -> Opening<S> {
    let mut first = [0u8; 1];
    match stream.read(&mut first).await {
        Ok(1..) if first[0] != TLS_HANDSHAKE && first[0].is_ascii_uppercase() => {
            Opening::PlainHttp(stream)
        }
        Ok(1..) => Opening::Tls(Prefixed::new(first.to_vec(), stream)),
        _ => Opening::Closed,
    }
}

/// The answer to a plain-HTTP request: a 400 in the API's error form
/// (docs/api.md), so hierad's own client shows its message too.
pub(super) fn answer() -> Vec<u8> {
    let body = serde_json::json!({
        "error": "bad_request",
        "message": crate::api::SPEAKS_TLS,
    })
    .to_string();
    format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Sends [`answer`]; the caller then closes the connection.
pub(super) async fn refuse<S: AsyncWrite + Unpin>(stream: &mut S) {
    // A client gone already is no one's concern.
    if stream.write_all(&answer()).await.is_ok() {
        let _ = stream.flush().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_first_byte_tells_tls_from_plain_http() {
        let plain: &[u8] = b"GET / HTTP/1.1\r\n";
        assert!(matches!(opening(plain).await, Opening::PlainHttp(_)));
        let tls: &[u8] = &[TLS_HANDSHAKE, 3, 1];
        let Opening::Tls(mut stream) = opening(tls).await else {
            panic!("a handshake record is TLS");
        };
        let mut back = Vec::new();
        stream.read_to_end(&mut back).await.unwrap();
        assert_eq!(back, [TLS_HANDSHAKE, 3, 1], "the byte read is put back");
        let empty: &[u8] = b"";
        assert!(matches!(opening(empty).await, Opening::Closed));
        let text = String::from_utf8(answer()).unwrap();
        assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
        assert!(
            text.ends_with("use https:// instead of http://\"}"),
            "{text}"
        );
    }
}
