//! A connection's socket, watched: the header and idle timeouts (the idle
//! one also bounds a write the client does not read) and the framing
//! check of a request head, for the accept loop in `conn.rs`.

use super::{Conn, Phase};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

#[derive(Clone, Copy, Debug)]
pub(super) struct Timeouts {
    pub(super) header: Duration,
    pub(super) idle: Duration,
}

/// A connection's socket, failing its reads with `TimedOut` when a head
/// takes longer than the header timeout or the connection idles longer
/// than the idle timeout, and its writes when the client reads nothing
/// for the idle timeout. The timers are armed only when a read or a write
/// has to wait, so a request that arrives in one piece arms nothing.
pub(super) struct Watched<S> {
    pub(super) stream: S,
    conn: Arc<Conn>,
    timeouts: Timeouts,
    client: SocketAddr,
    timer: Pin<Box<Sleep>>,
    /// Runs while a write waits for the client to read (made on the first
    /// such wait); `write_due` says until when.
    write_timer: Option<Pin<Box<Sleep>>>,
    write_due: Option<Instant>,
    /// The phase the timer runs for, if it runs.
    armed: Option<Phase>,
    /// When the current head started arriving.
    head_since: Instant,
    /// When the last answer was written: the idle time counts from here.
    idle_since: Instant,
    framing: Framing,
}

impl<S> Watched<S> {
    pub(super) fn new(
        stream: S,
        conn: Arc<Conn>,
        timeouts: Timeouts,
        client: SocketAddr,
    ) -> Watched<S> {
        Watched {
            stream,
            conn,
            timeouts,
            client,
            timer: Box::pin(tokio::time::sleep(timeouts.header)),
            write_timer: None,
            write_due: None,
            armed: None,
            head_since: Instant::now(),
            idle_since: Instant::now(),
            framing: Framing::default(),
        }
    }

    /// A read must wait: time it against the phase's limit.
    fn wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let phase = self.conn.phase();
        if phase == Phase::Busy || !self.expired(cx, phase) {
            return Poll::Pending;
        }
        let what = match phase {
            Phase::Head => "the request head did not arrive within the header timeout",
            _ => "the connection was idle longer than the idle timeout",
        };
        Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, what)))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Pending => this.wait(cx),
            Poll::Ready(Ok(())) => {
                let read = &buf.filled()[before..];
                let phase = this.conn.phase();
                if !read.is_empty() && phase == Phase::Idle {
                    // The next request's head starts.
                    this.conn.set(Phase::Head);
                    this.head_since = Instant::now();
                    this.framing = Framing::default();
                }
                if phase != Phase::Busy && this.framing.ambiguous_head(read) {
                    this.conn.ambiguous.store(true, Ordering::Relaxed);
                }
                Poll::Ready(Ok(()))
            }
            failed => failed,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.wrote(cx, written)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.wrote(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // TLS flushes what it has buffered: a wait for the client too.
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_flush(cx) {
            Poll::Pending => this.write_wait(cx).map(Err),
            Poll::Ready(Ok(())) => {
                this.write_progressed();
                Poll::Ready(Ok(()))
            }
            failed => failed,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

impl<S> Watched<S> {
    /// Writing an answer starts (or, to a slow reader, prolongs) the idle
    /// time: the timer is armed here because hyper does not read again
    /// after answering until the socket wakes it. A write that must wait
    /// is timed (see [`Watched::write_wait`]).
    fn wrote(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        match written {
            Poll::Pending => self.write_wait(cx).map(Err),
            Poll::Ready(Ok(n)) if n > 0 => {
                self.conn.held.wrote(n);
                self.write_progressed();
                if self.conn.phase() == Phase::Idle {
                    self.idle_since = Instant::now();
                    // Registers the wake-up; it cannot have expired yet.
                    let _ = self.expired(cx, Phase::Idle);
                }
                written
            }
            other => other,
        }
    }

    /// A write waits for the client to read: pending, or `TimedOut` once
    /// it has read nothing for the idle timeout. Without this a client
    /// that pipelines requests and never reads holds its connection, and
    /// the answers hyper has buffered for it, until shutdown: hyper reads
    /// nothing while an answer is unwritten, so no read timeout runs.
    fn write_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        let due = *self.write_due.get_or_insert_with(|| {
            self.conn.waits_on_client();
            Instant::now() + self.timeouts.idle
        });
        let timer = self
            .write_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        if timer.deadline() != due {
            timer.as_mut().reset(due);
        }
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        tracing::debug!(target: "hierad::server::conn", client = %self.client, "closed a connection: the client read none of its answer within the idle timeout");
        Poll::Ready(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client read none of its answer within the idle timeout",
        ))
    }

    fn write_progressed(&mut self) {
        if self.write_due.take().is_some() {
            self.conn.progressed();
        }
    }

    /// Whether `phase`'s limit has passed, registering a wake-up for it if
    /// not. The timer is reset only when the phase it runs for changes or
    /// it fires before its phase's (moving) start plus limit: resetting it
    /// on every answer cost a timer-wheel update per request.
    fn expired(&mut self, cx: &mut Context<'_>, phase: Phase) -> bool {
        let due = match phase {
            Phase::Idle => self.idle_since + self.timeouts.idle,
            _ => self.head_since + self.timeouts.header,
        };
        if self.armed != Some(phase) {
            self.timer.as_mut().reset(due);
            self.armed = Some(phase);
        }
        while self.timer.as_mut().poll(cx).is_ready() {
            if Instant::now() >= due {
                return true;
            }
            // Armed for an earlier answer or head: wait out the rest.
            self.timer.as_mut().reset(due);
        }
        false
    }
}

/// Finds a request head that carries both `Content-Length` and
/// `Transfer-Encoding`, which hyper accepts (reading the body as chunked)
/// but a proxy in front may frame differently. Fed the bytes read while a
/// head arrives; stops at the head's end, so bodies are never scanned. A
/// head pipelined behind another in one read is not seen (hyper still
/// closes such a connection after answering).
#[derive(Default)]
struct Framing {
    /// The first bytes of a line that a read cut, as they came.
    start: [u8; Framing::LONGEST],
    /// How long the current line is so far.
    line: usize,
    /// The request line has started: an empty line before it is skipped,
    /// as httparse skips it (CRLF or LF), not the head's end.
    started: bool,
    content_length: bool,
    transfer_encoding: bool,
    ended: bool,
}

impl Framing {
    const CONTENT_LENGTH: &'static [u8] = b"content-length:";
    const TRANSFER_ENCODING: &'static [u8] = b"transfer-encoding:";
    const LONGEST: usize = 18;

    /// Feeds the next bytes of a head: true when the head ended here and
    /// carried both headers. A line whole in `bytes` is looked at where
    /// it lies; only one that a read cuts is copied into `start` (copying
    /// every line's start cost 700 instructions a request, bench/LOG.md
    /// "Where a cached lookup's instructions go").
    fn ambiguous_head(&mut self, mut bytes: &[u8]) -> bool {
        while !self.ended && !bytes.is_empty() {
            let Some(newline) = memchr::memchr(b'\n', bytes) else {
                self.keep(bytes);
                self.line += bytes.len();
                return false;
            };
            let length = self.line + newline;
            let line = if self.line == 0 {
                &bytes[..newline]
            } else {
                self.keep(&bytes[..newline]);
                &self.start[..length.min(Self::LONGEST)]
            };
            let empty = length == 0 || (length == 1 && line.first() == Some(&b'\r'));
            if empty && self.started {
                self.ended = true;
                return self.content_length && self.transfer_encoding;
            }
            self.started |= !empty;
            self.content_length |= names(line, Self::CONTENT_LENGTH);
            self.transfer_encoding |= names(line, Self::TRANSFER_ENCODING);
            self.line = 0;
            bytes = &bytes[newline + 1..];
        }
        false
    }

    /// Keeps the start of a line that a read cut, up to [`Self::LONGEST`]
    /// bytes of it.
    fn keep(&mut self, bytes: &[u8]) {
        if self.line < Self::LONGEST {
            let take = (Self::LONGEST - self.line).min(bytes.len());
            self.start[self.line..self.line + take].copy_from_slice(&bytes[..take]);
        }
    }
}

/// Whether a head's `line` starts with the header name `prefix` (lowercase,
/// with its colon), in any case. The colon's place is looked at first: it
/// rules out nearly every other line in one comparison.
fn names(line: &[u8], prefix: &[u8]) -> bool {
    let colon = prefix.len() - 1;
    line.get(colon) == Some(&b':') && line[..colon].eq_ignore_ascii_case(&prefix[..colon])
}

#[cfg(test)]
mod tests {
    use super::Framing;

    fn ambiguous(pieces: &[&[u8]]) -> bool {
        let mut framing = Framing::default();
        pieces.iter().any(|piece| framing.ambiguous_head(piece))
    }

    #[test]
    fn heads_with_both_lengths_are_found_across_reads() {
        let both = b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTRANSFER-ENCODING: chunked\r\n\r\n0\r\n\r\n";
        assert!(ambiguous(&[both]));
        for cut in 1..both.len() {
            let (a, b) = both.split_at(cut);
            assert!(ambiguous(&[a, b]), "cut at {cut}");
        }
        let bare = b"POST /x HTTP/1.1\ntransfer-encoding: chunked\ncontent-length: 5\n\n";
        assert!(ambiguous(&[bare]));
    }

    /// A head read a byte at a time, in any case, keeps each line's start
    /// across the reads.
    #[test]
    fn heads_read_a_byte_at_a_time_are_seen() {
        let both = b"POST /x HTTP/1.1\r\nCONTENT-length: 5\r\ntransfer-ENCODING: chunked\r\n\r\n";
        assert!(ambiguous(&both.chunks(1).collect::<Vec<_>>()));
        let one = b"POST /x HTTP/1.1\r\nContent-Lengthy: 5\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(!ambiguous(&one.chunks(1).collect::<Vec<_>>()));
        assert!(!ambiguous(&one.chunks(7).collect::<Vec<_>>()));
    }

    #[test]
    fn empty_lines_before_the_request_line_do_not_end_the_head() {
        let both = b"POST /x HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n";
        for lead in [&b"\r\n"[..], b"\n", b"\r\n\n\r\n"] {
            let head = [lead, &both[..]].concat();
            assert!(ambiguous(&[&head]), "{lead:?}");
            for cut in 1..head.len() {
                let (a, b) = head.split_at(cut);
                assert!(ambiguous(&[a, b]), "{lead:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn one_length_or_a_body_that_names_both_is_not_ambiguous() {
        assert!(!ambiguous(&[
            b"POST /x HTTP/1.1\r\nContent-Length: 60\r\n\r\n"
        ]));
        assert!(!ambiguous(&[
            b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        ]));
        // The body is not read as a head.
        assert!(!ambiguous(&[
            b"PUT /x HTTP/1.1\r\nContent-Length: 60\r\n\r\n",
            b"content-length: 1\r\ntransfer-encoding: chunked\r\n\r\n",
        ]));
        // A header whose name merely starts alike.
        assert!(!ambiguous(&[
            b"GET / HTTP/1.1\r\ncontent-length-x: 1\r\ntransfer-encoding: chunked\r\n\r\n"
        ]));
    }
}
