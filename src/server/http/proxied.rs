//! HAProxy's PROXY protocol (v1 and v2) from the balancers the operator
//! names (`hierad serve --proxy-protocol-from`): a TCP balancer in front
//! of hierad (TLS passes through it to hierad) otherwise makes every
//! request come from the balancer's address, so the access log and the
//! throttle of failed authentications (`throttle.rs`) would see one
//! client. A connection from a named balancer must start with the header;
//! one from anywhere else is served as ever, and a header it sends is not
//! believed (it is not HTTP or TLS, and fails as such).

use ipnet::IpNet;
use ppp::{HeaderResult, PartialResult, v1, v2};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// The longest header read: a v1 header is at most 107 bytes, a v2 one
/// 16 and its addresses, with room for the TLVs a balancer adds (TLS
/// details, a unique id).
const MAX_HEADER: usize = 4096;

/// The longest v1 header, CRLF included.
const V1_MAX: usize = 107;

/// How a v1 header starts.
const V1_SIGNATURE: &[u8] = b"PROXY ";

/// The balancers whose PROXY headers are believed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Proxies(Vec<IpNet>);

impl Proxies {
    pub(crate) fn new(nets: Vec<IpNet>) -> Proxies {
        Proxies(nets)
    }

    /// Whether a connection from `ip` must start with a PROXY header.
    pub(crate) fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for Proxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, net) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            net.fmt(f)?;
        }
        Ok(())
    }
}

/// `--proxy-protocol-from`'s value: a CIDR block, or one address.
///
/// # Errors
///
/// Neither, named.
pub(crate) fn parse_net(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| {
            format!("{text:?} is neither an address nor a CIDR block (10.0.0.0/8, fd00::/8)")
        })
}

/// Why a named balancer's connection was not served.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HeaderError {
    #[error("the connection closed before a PROXY protocol header")]
    Closed,
    #[error("the connection closed in the middle of a PROXY protocol header")]
    Truncated,
    #[error("no PROXY protocol header (is the balancer set to send one, send-proxy in HAProxy?)")]
    Missing,
    #[error("an unreadable PROXY protocol header: {0}")]
    Malformed(String),
    #[error("a PROXY protocol header longer than {MAX_HEADER} bytes")]
    TooLong,
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// What a header says, and the bytes the balancer sent past it.
#[derive(Debug)]
pub(crate) struct Proxied {
    /// The client it names; the balancer's own address for a connection
    /// of its own (v2 LOCAL, its health checks; v1 UNKNOWN).
    pub client: SocketAddr,
    pub rest: Vec<u8>,
}

/// Reads the PROXY header at the start of `stream`, which comes from the
/// balancer at `proxy`.
///
/// # Errors
///
/// [`HeaderError`] naming what was wrong; the connection is then to be
/// closed (the protocol forbids guessing).
pub(crate) async fn read_header<S: AsyncRead + Unpin>(
    stream: &mut S,
    proxy: SocketAddr,
) -> Result<Proxied, HeaderError> {
    let mut buf = Vec::with_capacity(512);
    loop {
        if stream.read_buf(&mut buf).await? == 0 {
            return Err(if buf.is_empty() {
                HeaderError::Closed
            } else {
                HeaderError::Truncated
            });
        }
        if let Some(read) = parse(&buf, proxy)? {
            return Ok(read);
        }
        if buf.len() >= MAX_HEADER {
            return Err(HeaderError::TooLong);
        }
    }
}

/// The header at the start of `buf`, if it is complete.
fn parse(buf: &[u8], proxy: SocketAddr) -> Result<Option<Proxied>, HeaderError> {
    // Whether `buf` and a header's signature agree as far as both go.
    let agrees = |signature: &[u8]| buf.starts_with(signature) || signature.starts_with(buf);
    let v1 = agrees(V1_SIGNATURE);
    if !v1 && !agrees(v2::PROTOCOL_PREFIX) {
        return Err(HeaderError::Missing);
    }
    // ppp misreads a v1 header cut between its CR and LF (the port then
    // ends in CR): parsed only whole, or once past v1's 107 bytes.
    if v1 && buf.len() < V1_MAX && !buf.windows(2).any(|w| w == b"\r\n") {
        return Ok(None);
    }
    let header = HeaderResult::parse(buf);
    if header.is_incomplete() {
        return Ok(None);
    }
    let (len, client) = match header {
        HeaderResult::V1(Ok(h)) => (
            h.header.len(),
            match h.addresses {
                v1::Addresses::Tcp4(a) => SocketAddr::from((a.source_address, a.source_port)),
                v1::Addresses::Tcp6(a) => SocketAddr::from((a.source_address, a.source_port)),
                v1::Addresses::Unknown => proxy,
            },
        ),
        HeaderResult::V2(Ok(h)) => (
            h.len(),
            match (h.command, h.addresses) {
                (v2::Command::Proxy, v2::Addresses::IPv4(a)) => {
                    SocketAddr::from((a.source_address, a.source_port))
                }
                (v2::Command::Proxy, v2::Addresses::IPv6(a)) => {
                    SocketAddr::from((a.source_address, a.source_port))
                }
                _ => proxy,
            },
        ),
        HeaderResult::V1(Err(e)) => return Err(HeaderError::Malformed(e.to_string())),
        HeaderResult::V2(Err(e)) => return Err(HeaderError::Malformed(e.to_string())),
    };
    Ok(Some(Proxied {
        client,
        rest: buf[len..].to_vec(),
    }))
}

/// `inner`, whose first bytes are `prefix` (read with the PROXY header,
/// past it).
pub(crate) struct Prefixed<S> {
    prefix: Vec<u8>,
    at: usize,
    inner: S,
}

impl<S> Prefixed<S> {
    pub(crate) fn new(prefix: Vec<u8>, inner: S) -> Prefixed<S> {
        Prefixed {
            prefix,
            at: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at < this.prefix.len() {
            let n = buf.remaining().min(this.prefix.len() - this.at);
            buf.put_slice(&this.prefix[this.at..this.at + n]);
            this.at += n;
            if this.at == this.prefix.len() {
                this.prefix = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    fn proxy() -> SocketAddr {
        "10.0.0.5:40000".parse().unwrap()
    }

    /// What `read_header` makes of `bytes` sent in pieces of `piece`
    /// bytes, and what the stream reads after it.
    async fn read(bytes: &[u8], piece: usize) -> Result<(SocketAddr, Vec<u8>), String> {
        let (mut client, mut server) = tokio::io::duplex(64 * 1024);
        let bytes = bytes.to_vec();
        let sender = tokio::spawn(async move {
            for chunk in bytes.chunks(piece.max(1)) {
                client.write_all(chunk).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        let read = read_header(&mut server, proxy()).await;
        sender.await.unwrap();
        let Proxied { client, rest } = read.map_err(|e| e.to_string())?;
        let mut stream = Prefixed::new(rest, server);
        let mut after = Vec::new();
        stream.read_to_end(&mut after).await.unwrap();
        Ok((client, after))
    }

    fn v2(command: u8, family: u8, addresses: &[u8], tlvs: &[u8]) -> Vec<u8> {
        let mut header = v2::PROTOCOL_PREFIX.to_vec();
        header.push(0x20 | command);
        header.push(family);
        let len = u16::try_from(addresses.len() + tlvs.len()).unwrap();
        header.extend(len.to_be_bytes());
        header.extend(addresses);
        header.extend(tlvs);
        header
    }

    #[tokio::test]
    async fn both_versions_name_the_client_and_keep_what_follows() {
        for piece in [1, 7, 4096] {
            let v1 = b"PROXY TCP4 192.0.2.7 10.0.0.1 51000 8750\r\nGET / HTTP/1.1\r\n";
            assert_eq!(
                read(v1, piece).await.unwrap(),
                (
                    "192.0.2.7:51000".parse().unwrap(),
                    b"GET / HTTP/1.1\r\n".to_vec()
                ),
                "{piece}"
            );
            let v6 = b"PROXY TCP6 2001:db8::7 2001:db8::1 51000 8750\r\n\x16\x03\x01";
            assert_eq!(
                read(v6, piece).await.unwrap(),
                (
                    "[2001:db8::7]:51000".parse().unwrap(),
                    b"\x16\x03\x01".to_vec()
                )
            );
            let mut binary = v2(
                1,
                0x11,
                &[192, 0, 2, 9, 10, 0, 0, 1, 0xc7, 0x38, 0x22, 0x2e],
                &[0x05, 0x00, 0x02, b'i', b'd'],
            );
            binary.extend(b"\x16\x03\x01");
            assert_eq!(
                read(&binary, piece).await.unwrap(),
                ("192.0.2.9:51000".parse().unwrap(), b"\x16\x03\x01".to_vec())
            );
        }
        // The balancer's own connections (health checks): its address.
        let local = v2(0, 0x00, &[], &[]);
        assert_eq!(read(&local, 4096).await.unwrap(), (proxy(), Vec::new()));
        assert_eq!(
            read(b"PROXY UNKNOWN\r\n", 4096).await.unwrap(),
            (proxy(), Vec::new())
        );
    }

    #[tokio::test]
    async fn anything_else_is_refused_naming_why() {
        let refused = |bytes: &'static [u8]| async move { read(bytes, 4096).await.unwrap_err() };
        assert!(
            refused(b"GET / HTTP/1.1\r\n\r\n")
                .await
                .contains("no PROXY protocol header")
        );
        assert!(
            refused(b"\x16\x03\x01\x02\x00")
                .await
                .contains("no PROXY protocol header")
        );
        assert!(refused(b"").await.contains("closed before"));
        assert!(
            refused(b"PROXY TCP4 192.0.2.7 10.0.0.1 51000")
                .await
                .contains("in the middle of")
        );
        assert!(
            refused(b"PROXY TCP4 not-an-address 10.0.0.1 1 2\r\n")
                .await
                .contains("unreadable PROXY protocol header")
        );
        let long = [b"PROXY ".as_slice(), &[b'1'; 300]].concat();
        let long: &'static [u8] = Box::leak(long.into_boxed_slice());
        assert!(
            refused(long).await.contains("unreadable"),
            "v1 has 107 bytes at most"
        );
        let huge = v2(1, 0x11, &[0; 12], &[0; 5000]);
        let huge: &'static [u8] = Box::leak(huge.into_boxed_slice());
        assert!(refused(huge).await.contains("longer than 4096 bytes"));
    }

    #[test]
    fn balancers_are_named_by_block_or_address() {
        let proxies = Proxies::new(vec![
            parse_net("10.0.0.0/8").unwrap(),
            parse_net("2001:db8::1").unwrap(),
        ]);
        assert!(proxies.trusts("10.1.2.3".parse().unwrap()));
        assert!(proxies.trusts("::ffff:10.1.2.3".parse().unwrap()));
        assert!(proxies.trusts("2001:db8::1".parse().unwrap()));
        assert!(!proxies.trusts("2001:db8::2".parse().unwrap()));
        assert!(!proxies.trusts("192.0.2.1".parse().unwrap()));
        assert!(!Proxies::default().trusts("10.1.2.3".parse().unwrap()));
        assert_eq!(
            parse_net("10.0.0.0/33").unwrap_err(),
            "\"10.0.0.0/33\" is neither an address nor a CIDR block (10.0.0.0/8, fd00::/8)"
        );
    }
}
