//! Connections: the accept loop, the connection limit (idle connections,
//! then requests stalled on their clients, are shed to make room), the
//! header and idle timeouts (the idle one also bounds a write the client
//! does not read), the bound on a request head's memory, and the shutdown
//! deadline. What a request means is the router's business.

use crate::server::http::error::{ApiError, Busy};
use crate::server::http::guard::{Asker, Peer};
use crate::server::http::harden::Harden;
use crate::server::http::plain_on_tls::{self, Opening};
use crate::server::http::proxied::{HeaderError, Prefixed, Proxied, read_header};
use crate::server::http::tls::Tls;
use crate::server::state::unread::{COUNTED, Held, Shared, Unread};
use crate::settings::Settings;
use axum::response::{IntoResponse, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;

/// Where a connection is in its request cycle; it decides which timeout
/// applies and whether the connection may be shed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    /// Between requests: the idle timeout applies.
    Idle = 0,
    /// A request head is arriving (or the connection is new): the header
    /// timeout applies.
    Head = 1,
    /// A request is being answered: the request time limit applies.
    Busy = 2,
}

/// What one connection shares between its socket, its service and the
/// accept loop.
struct Conn {
    phase: AtomicU8,
    /// Set once the accept loop asked it to make room.
    shedding: AtomicBool,
    shed: Notify,
    /// The head just read carries both Content-Length and
    /// Transfer-Encoding (see [`Framing`]).
    ambiguous: AtomicBool,
    /// Since when the connection waits on its client (a request body's
    /// next bytes, or room to write its answer): milliseconds since
    /// `born`, plus one; 0 while it does not.
    waiting: AtomicU64,
    born: Instant,
    /// What its answer holds of the unread-answer budget (`server/state/unread.rs`).
    held: Held,
}

impl Conn {
    fn new(unread: Arc<Unread>) -> Conn {
        Conn {
            phase: AtomicU8::new(Phase::Head as u8),
            shedding: AtomicBool::new(false),
            shed: Notify::new(),
            ambiguous: AtomicBool::new(false),
            waiting: AtomicU64::new(0),
            born: Instant::now(),
            held: Held::new(unread),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX - 1) + 1
    }

    /// The client is not sending or not reading: starts the stall's clock
    /// unless it runs.
    fn waits_on_client(&self) {
        let now = self.now_ms();
        let _ = self
            .waiting
            .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Bytes moved: the client is not stalled.
    fn progressed(&self) {
        if self.waiting.load(Ordering::Relaxed) != 0 {
            self.waiting.store(0, Ordering::Relaxed);
        }
    }

    /// Whether it may be closed to make room: no request in progress, or
    /// one whose client has been stalled for [`STALLED`].
    fn sheddable(&self) -> bool {
        self.phase() != Phase::Busy || self.stalled()
    }

    fn stalled(&self) -> bool {
        self.stalled_for().is_some_and(|stalled| stalled >= STALLED)
    }

    /// How long the connection has waited on its client, if it does.
    fn stalled_for(&self) -> Option<Duration> {
        let since = self.waiting.load(Ordering::Relaxed);
        (since != 0).then(|| Duration::from_millis(self.now_ms().saturating_sub(since)))
    }

    fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Relaxed) {
            0 => Phase::Idle,
            1 => Phase::Head,
            _ => Phase::Busy,
        }
    }

    fn set(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }
}

/// The open connections, oldest first.
#[derive(Default)]
struct Registry {
    conns: Mutex<BTreeMap<u64, Arc<Conn>>>,
}

impl Registry {
    fn insert(&self, id: u64, conn: Arc<Conn>) {
        self.lock().insert(id, conn);
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Conn>>> {
        // A panic while holding this lock leaves a consistent map.
        self.conns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Asks the oldest connection that is not answering a request to
    /// close, else the oldest whose request is stalled on its client;
    /// false if every connection is busy.
    fn shed_one(&self) -> bool {
        let conns = self.lock();
        let unasked = |c: &&Arc<Conn>| !c.shedding.load(Ordering::Relaxed);
        let victim = conns
            .values()
            .filter(unasked)
            .find(|c| c.phase() != Phase::Busy)
            .or_else(|| conns.values().filter(unasked).find(|c| c.stalled()));
        victim
            .inspect(|c| {
                c.shedding.store(true, Ordering::Relaxed);
                c.shed.notify_one();
            })
            .is_some()
    }

    /// Asks the connections holding unread answers whose clients have
    /// read nothing for [`STALLED`] to close, the longest stalled first,
    /// until they hold `needed` bytes; whether any was asked.
    fn shed_unread(&self, needed: u64) -> bool {
        let conns = self.lock();
        let mut stalled: Vec<(Duration, &Arc<Conn>)> = conns
            .values()
            .filter(|c| !c.shedding.load(Ordering::Relaxed) && c.held.bytes() > 0)
            .filter_map(|c| c.stalled_for().map(|d| (d, c)))
            .filter(|(d, _)| *d >= STALLED)
            .collect();
        stalled.sort_by_key(|c| std::cmp::Reverse(c.0));
        let mut freed = 0u64;
        let mut asked = false;
        for (_, c) in stalled {
            if freed >= needed {
                break;
            }
            freed = freed.saturating_add(c.held.bytes());
            c.shedding.store(true, Ordering::Relaxed);
            c.shed.notify_one();
            asked = true;
        }
        asked
    }
}

/// How long a request may wait on its client (a body whose bytes stopped
/// arriving, an answer the client does not read) before its connection
/// counts as shed-able at the connection limit, like an idle one: such a
/// request holds a slot without doing any work.
const STALLED: Duration = Duration::from_secs(1);

/// What the accept loop tells the connections when it stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Serve,
    /// Finish the request in progress, then close.
    Drain,
    /// Close now: the shutdown deadline passed.
    Close,
}

/// Serves `app` on `listener` within `settings`' connection limits until
/// `shutdown` resolves; then stops accepting, lets the requests in progress
/// finish, and closes what is still open after the shutdown deadline.
///
/// # Errors
///
/// None yet: accept errors (out of file descriptors…) are logged and
/// retried, so the server outlives them.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Harden,
    settings: &Settings,
    (unread, heads): (Arc<Unread>, HeadRefusals),
    tls: Option<Arc<Tls>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    // hyper answers 431 (empty body) and closes for a head over its bound;
    // the router answers heads between `max_header_bytes` and it with a
    // JSON 431 (see `limits::head`). Our own timers replace hyper's.
    http.max_header_size(settings.max_header_bytes.saturating_mul(2))
        .header_read_timeout(None);
    let slots = Arc::new(Semaphore::new(settings.max_connections));
    let registry = Arc::new(Registry::default());
    let (stop, stopping) = watch::channel(Stop::Serve);
    let timeouts = Timeouts {
        header: settings.header_timeout,
        idle: settings.idle_timeout,
    };
    let send_buffer = settings.send_buffer_bytes;
    let mut shutdown = pin!(shutdown);
    for id in 0u64.. {
        let (stream, addr) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
        };
        let slot = tokio::select! {
            biased;
            () = &mut shutdown => break,
            slot = make_room(&slots, &registry) => slot,
        };
        // Answers are written whole; Nagle would only delay them.
        let _ = stream.set_nodelay(true);
        if let Some(bytes) = send_buffer {
            // Bounds the kernel's copy of answers a client does not read:
            // autotuned, each connection may take 4 MiB of them.
            let _ = socket2::SockRef::from(&stream).set_send_buffer_size(bytes);
        }
        let conn = Arc::new(Conn::new(Arc::clone(&unread)));
        registry.insert(id, Arc::clone(&conn));
        let one = One {
            heads: heads.clone(),
            http: http.clone(),
            app: app.clone(),
            registry: Arc::clone(&registry),
            conn,
            timeouts,
            stopping: stopping.clone(),
            // The socket's own peer (a balancer's, if proxied).
            loopback: addr.ip().to_canonical().is_loopback(),
        };
        let registry = Arc::clone(&registry);
        let acceptor = tls.as_ref().map(|tls| tls.acceptor());
        let from_balancer = settings.proxies.trusts(addr.ip());
        tokio::spawn(async move {
            if from_balancer {
                // Boxed for the reason `serve` boxes TLS.
                Box::pin(async move {
                    if let Some((stream, client)) = one.proxied(stream, addr).await {
                        one.serve(acceptor, stream, client).await;
                    }
                })
                .await;
            } else {
                one.serve(acceptor, stream, addr).await;
            }
            registry.remove(id);
            drop(slot);
        });
    }
    drop(listener);
    let _ = stop.send(Stop::Drain);
    let all = u32::try_from(settings.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(settings.shutdown_timeout, slots.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!(target: "hierad::server::conn",
            open = registry.len(),
            "shutdown deadline passed; closing the connections still open"
        );
        let _ = stop.send(Stop::Close);
        // Each task drops its connection at its next poll.
        let _ = tokio::time::timeout(Duration::from_secs(1), slots.acquire_many(all)).await;
    }
    Ok(())
}

/// What serving one accepted connection takes.
struct One {
    heads: HeadRefusals,
    http: hyper::server::conn::http1::Builder,
    app: Harden,
    registry: Arc<Registry>,
    conn: Arc<Conn>,
    timeouts: Timeouts,
    stopping: watch::Receiver<Stop>,
    /// Whether the connection comes from loopback.
    loopback: bool,
}

impl One {
    /// The unread-answer budget as this connection's handlers see it.
    fn room(&self) -> Room {
        Room {
            unread: Arc::clone(self.conn.held.unread()),
            registry: Arc::clone(&self.registry),
        }
    }

    /// Serves `stream` from `client`, over TLS if `acceptor` is given.
    async fn serve<S>(
        self,
        acceptor: Option<tokio_rustls::TlsAcceptor>,
        stream: S,
        client: SocketAddr,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        match acceptor {
            None => {
                let peer = Peer::new(client, None, self.loopback, Some(self.room()));
                self.run(stream, peer).await;
            }
            // Boxed: a TLS connection's state (rustls' session, its
            // handshake) is larger than a plain one's, and every
            // connection's task would otherwise be sized for it.
            Some(acceptor) => {
                Box::pin(async move {
                    if let Some((stream, peer)) = self.handshake(acceptor, stream, client).await {
                        self.run(stream, peer).await;
                    }
                })
                .await;
            }
        }
    }

    /// The PROXY protocol header a balancer's connection starts with
    /// (`proxied.rs`): the client it names, and the stream past it; within
    /// the header timeout, given up as [`One::handshake`] is. A connection
    /// without a header that can be believed is closed, and logged: the
    /// balancer is the operator's own, so its fault is theirs to mend.
    async fn proxied(
        &self,
        mut stream: TcpStream,
        balancer: SocketAddr,
    ) -> Option<(Prefixed<TcpStream>, SocketAddr)> {
        let mut stopping = self.stopping.clone();
        let read = tokio::select! {
            read = tokio::time::timeout(self.timeouts.header, read_header(&mut stream, balancer)) => read,
            () = self.conn.shed.notified() => return None,
            _ = stopping.changed() => return None,
        };
        match read {
            Ok(Ok(Proxied { client, rest })) => Some((Prefixed::new(rest, stream), client)),
            Ok(Err(HeaderError::Closed)) => None,
            Ok(Err(e)) => {
                tracing::warn!(target: "hierad::server::conn", %balancer, "closed a connection from a balancer: {e}");
                None
            }
            Err(_) => {
                tracing::warn!(target: "hierad::server::conn", %balancer, "closed a connection from a balancer: no PROXY protocol header within the header timeout");
                None
            }
        }
    }

    /// The TLS handshake, within the header timeout (a client that does
    /// not finish it holds a connection slot no longer than one that does
    /// not finish its head), given up if the connection is shed or the
    /// server stops meanwhile.
    async fn handshake<S>(
        &self,
        acceptor: tokio_rustls::TlsAcceptor,
        stream: S,
        addr: SocketAddr,
    ) -> Option<(tokio_rustls::server::TlsStream<Prefixed<S>>, Peer)>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let mut stopping = self.stopping.clone();
        // `http://` to this port: a plain 400 saying so, not an alert.
        let handshake = async {
            match plain_on_tls::opening(stream).await {
                Opening::Tls(stream) => acceptor.accept(stream).await.ok(),
                Opening::PlainHttp(mut stream) => {
                    plain_on_tls::refuse(&mut stream).await;
                    tracing::debug!(target: "hierad::server::conn", client = %addr, "answered a plain HTTP request on the TLS port with 400");
                    linger(stream, &self.conn, self.stopping.clone()).await;
                    None
                }
                Opening::Closed => None,
            }
        };
        let accepted = tokio::select! {
            accepted = tokio::time::timeout(self.timeouts.header, handshake) => accepted,
            () = self.conn.shed.notified() => return None,
            _ = stopping.changed() => return None,
        };
        // A failed handshake is the client's business (rustls has told it
        // with an alert); nothing to log at the rate a scanner makes them.
        let stream = accepted.ok()??;
        let cert = stream
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|chain| chain.first())
            .and_then(crate::server::http::tls::identity)
            .map(Arc::new);
        Some((stream, Peer::new(addr, cert, true, Some(self.room()))))
    }

    /// Serves HTTP/1.1 on `stream` until the connection ends.
    async fn run<S>(self, stream: S, peer: Peer)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let client = peer.addr.ip().to_canonical();
        let io = TokioIo::new(Watched::new(
            stream,
            Arc::clone(&self.conn),
            self.timeouts,
            peer.addr,
        ));
        let service = Tracked {
            app: self.app,
            conn: Arc::clone(&self.conn),
            registry: self.registry,
            peer,
        };
        let connection = self.http.serve_connection(io, service);
        match drive(connection, &self.conn, self.stopping.clone()).await {
            Ok(Some(io)) => linger(io.into_inner().stream, &self.conn, self.stopping).await,
            Ok(None) => {}
            Err(e) => self.heads.record(&e, client),
        }
    }
}

/// How long a connection hyper has finished with keeps reading what the
/// client still sends. An answer given before the request's body was read
/// (413, 401, 404) ends the connection; closing a socket with unread bytes
/// makes the kernel send a reset, which destroys the answer on its way and
/// leaves the client a broken pipe instead of the reason.
const LINGER: Duration = Duration::from_secs(2);

/// Ends a connection the way its client can read: half-closes it, then
/// discards what arrives until the client closes too, [`LINGER`] passes,
/// the connection is shed, or the server stops.
async fn linger<S>(mut stream: S, conn: &Conn, mut stopping: watch::Receiver<Stop>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let discard = async {
        if stream.shutdown().await.is_err() {
            return;
        }
        // On the heap: an array here sat in every connection's task, used
        // or not (16 KiB of each idle connection's memory).
        let mut sink = vec![0u8; 16 * 1024];
        while matches!(stream.read(&mut sink).await, Ok(read) if read > 0) {}
    };
    tokio::select! {
        () = discard => {}
        () = tokio::time::sleep(LINGER) => {}
        () = conn.shed.notified() => {}
        _ = stopping.changed() => {}
    }
}

/// Runs one connection until it ends, is shed, or the server stops; gives
/// the socket back, not yet shut down, when hyper ended it without error,
/// and hyper's error when it ended with one.
async fn drive<C>(
    mut connection: hyper::server::conn::http1::Connection<C, Tracked>,
    conn: &Conn,
    mut stopping: watch::Receiver<Stop>,
) -> Result<Option<C>, hyper::Error>
where
    C: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    loop {
        tokio::select! {
            // Errors here are the client's (reset, timeout, bad framing),
            // answered where they could be; the caller records refusals.
            ended = std::future::poll_fn(|cx| connection.poll_without_shutdown(cx)) => {
                return ended.map(|()| Some(connection.into_parts().io));
            }
            () = conn.shed.notified() => {
                if conn.sheddable() {
                    return Ok(None);
                }
                conn.shedding.store(false, Ordering::Relaxed);
            }
            changed = stopping.changed() => {
                let stop = *stopping.borrow_and_update();
                if changed.is_err() || stop == Stop::Close {
                    return Ok(None);
                }
                if stop == Stop::Drain {
                    Pin::new(&mut connection).graceful_shutdown();
                }
            }
        }
    }
}

/// A free connection slot: at once if there is one, else by shedding an
/// idle connection, else (every connection busy) once one ends.
async fn make_room(slots: &Arc<Semaphore>, registry: &Registry) -> OwnedSemaphorePermit {
    loop {
        if let Ok(slot) = Arc::clone(slots).try_acquire_owned() {
            return slot;
        }
        registry.shed_one();
        // The shed connection frees its slot within a poll; a busy one
        // may have turned idle meanwhile, so look again after a while.
        if let Ok(Ok(slot)) =
            tokio::time::timeout(Duration::from_millis(50), Arc::clone(slots).acquire_owned()).await
        {
            return slot;
        }
    }
}

/// Accept failures are the client's (a reset before accept) or the
/// process's (out of file descriptors): neither stops the server, but the
/// second must not spin.
async fn accept_failed(e: &io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::warn!(target: "hierad::server::conn", error = %e, "cannot accept a connection; retrying in 100 ms");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// The per-request service: marks the connection busy while the router
/// answers.
#[derive(Clone)]
struct Tracked {
    app: Harden,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
    peer: Peer,
}

impl hyper::service::Service<hyper::Request<Incoming>> for Tracked {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn call(&self, mut request: hyper::Request<Incoming>) -> Self::Future {
        self.conn.set(Phase::Busy);
        if head::may_wait(request.uri()) {
            head::detach(&mut request);
        }
        request
            .extensions_mut()
            .insert(Asker::new(self.peer.clone()));
        let framing = if self.conn.ambiguous.load(Ordering::Relaxed) {
            self.conn.ambiguous.store(false, Ordering::Relaxed);
            // hyper reads such a body as chunked and drops Content-Length;
            // a proxy in front may have framed it by Content-Length, so
            // what follows could be a smuggled request. Refuse and close.
            Some("the request has both Content-Length and Transfer-Encoding; send one")
        } else {
            unchunked(request.headers())
        };
        if let Some(why) = framing {
            // Refused by the router's first steps (`harden`), so that the
            // access log and the metrics record it as they do any refusal.
            request.extensions_mut().insert(Unframed(why));
        }
        let conn = Arc::clone(&self.conn);
        let request = request.map(|body| Arriving {
            body,
            conn: Arc::clone(&conn),
        });
        let answer = self.app.answer(request);
        let registry = Arc::clone(&self.registry);
        Box::pin(async move {
            let response = answer.await;
            let response = admit(response, &conn, &registry).await;
            conn.set(Phase::Idle);
            Ok(response)
        })
    }
}

/// The unread-answer budget as a handler sees it ([`Peer`]'s `room`):
/// to refuse an answer made per request before making it, when there is
/// no room for one and no stalled connection to close for it. Refused
/// after it is made, it had cost its CPU and its memory for nothing.
#[derive(Clone)]
pub(crate) struct Room {
    unread: Arc<Unread>,
    registry: Arc<Registry>,
}

impl std::fmt::Debug for Room {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Room").finish_non_exhaustive()
    }
}

impl Room {
    /// # Errors
    ///
    /// [`ApiError::Busy`] when a counted answer would not fit and no
    /// stalled connection can be closed to make room.
    pub(crate) fn check(&self) -> Result<(), ApiError> {
        if self.unread.fits(COUNTED) || self.registry.shed_unread(self.unread.shortfall(COUNTED)) {
            return Ok(());
        }
        self.unread.refused();
        tracing::debug!(target: "hierad::server::conn", "refused a request: the unread-answer budget is full");
        Err(ApiError::Busy(Busy::UnreadAnswers(self.unread.limit())))
    }
}

/// How long an answer over the unread-answer budget waits for the
/// stalled connections it asked to close to give their bytes back (they
/// do at their next poll).
const MAKING_ROOM: Duration = Duration::from_millis(250);

/// `response` if the unread-answer budget has room for it (taken from the
/// budget until written), after closing stalled connections if need be;
/// else a 503 in its place.
async fn admit(response: Response, conn: &Conn, registry: &Registry) -> Response {
    let size = match axum::body::HttpBody::size_hint(response.body()).exact() {
        Some(size) if size >= COUNTED && response.extensions().get::<Shared>().is_none() => size,
        _ => return response,
    };
    let unread = conn.held.unread();
    let deadline = Instant::now() + MAKING_ROOM;
    let mut asked = false;
    loop {
        let released = unread.released();
        let mut released = pin!(released);
        released.as_mut().enable();
        if unread.try_take(size) {
            conn.held.took(size);
            return response;
        }
        if !asked {
            asked = registry.shed_unread(unread.shortfall(size));
        }
        if !asked || tokio::time::timeout_at(deadline, released).await.is_err() {
            break;
        }
    }
    tracing::debug!(target: "hierad::server::conn",
        bytes = size,
        "refused an answer: the unread-answer budget is full"
    );
    unread.refused();
    ApiError::Busy(Busy::UnreadAnswers(unread.limit())).into_response()
}

/// A request whose framing the connection refuses (see [`Tracked`]): it
/// reaches no handler and its body is never read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unframed(&'static str);

impl Unframed {
    /// 400 saying why, closing the connection: what follows the head
    /// could be a smuggled request.
    pub(crate) fn refusal(self) -> Response {
        let mut refusal = ApiError::BadRequest(self.0.to_owned()).into_response();
        refusal.headers_mut().insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
        refusal
    }
}

/// Why a request's `Transfer-Encoding` is refused, if it is: anything but
/// one `chunked`. hyper reads a body as chunked when the last coding is
/// `chunked`, however many came before (`chunked, chunked`, or the header
/// twice), where a proxy in front may refuse or frame it otherwise, as with
/// both lengths; and hierad decodes no other coding.
fn unchunked(headers: &axum::http::HeaderMap) -> Option<&'static str> {
    let mut codings = headers
        .get_all(axum::http::header::TRANSFER_ENCODING)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii);
    let first = codings.next()?;
    if codings.next().is_some() {
        Some(
            "the request's Transfer-Encoding names more than one coding; send `Transfer-Encoding: chunked` once",
        )
    } else if !first.eq_ignore_ascii_case(b"chunked") {
        Some("the request's Transfer-Encoding is not `chunked`, the only one hierad reads")
    } else {
        None
    }
}

/// A request body that tells its connection when it waits for the
/// client's next bytes (or a `100 Continue`'s body), which makes the
/// connection shed-able once that lasts (see [`STALLED`]).
struct Arriving {
    body: Incoming,
    conn: Arc<Conn>,
}

impl axum::body::HttpBody for Arriving {
    type Data = axum::body::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        if frame.is_pending() {
            this.conn.waits_on_client();
        } else {
            this.conn.progressed();
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

mod head;
mod refusals;
mod watched;
pub(crate) use refusals::HeadRefusals;
use watched::{Timeouts, Watched};
