//! The log's writer: stderr, with the access lines (one a request,
//! target `hierad::access`) gathered and written in batches. Written with
//! one `write` each, they cost the server more than the rest of a cached
//! answer's fixed path: about 5 µs of kernel time a request on a VM,
//! which instruction counts do not show (bench/LOG.md, "The access lines
//! written in batches"). As nginx's `access_log … buffer= flush=` does, an
//! access line waits at most about [`DELAY`]; every other line (a warning,
//! an error, a panic's) is written at once, after the lines logged before
//! it, and the server's exit ([`Flush`]) writes what is left. A process
//! killed outright loses at most the last [`DELAY`] of access lines.

use crate::server::http::access::TARGET as ACCESS;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tracing::Metadata;
use tracing_subscriber::fmt::MakeWriter;

/// How long the first access line of a batch waits for others.
const DELAY: Duration = Duration::from_millis(20);

/// Pending bytes past which the thread logging an access line writes the
/// batch itself (a log that cannot keep up holds its writers back, as an
/// unbatched one does, rather than growing without bound).
const HIGH: usize = 256 * 1024;

/// A [`MakeWriter`] over `W`, batching the access lines. Made by
/// [`Batched::new`], with the [`Flush`] that writes what is left.
pub(crate) struct Batched<W> {
    shared: Arc<Shared<W>>,
}

struct Shared<W> {
    pending: Mutex<Pending>,
    /// Woken when lines arrive while the batch writer waits for them.
    arrived: Condvar,
    /// Held while a batch is written, so that batches land in the order
    /// they were taken.
    out: Mutex<Out<W>>,
}

/// Lines logged and not yet written, in order.
#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    /// The batch writer waits on [`Shared::arrived`] (otherwise it is
    /// sleeping out a [`DELAY`], or writing, and needs no waking).
    waiting: bool,
    /// [`Flush`] dropped: the batch writer ends.
    closed: bool,
}

struct Out<W> {
    writer: W,
    /// The batch being written, swapped with [`Pending::lines`]: two
    /// buffers between them, not one allocated a batch.
    batch: Vec<u8>,
}

/// Writes the lines still pending when it is dropped, and ends the batch
/// writer: held for as long as the server runs.
#[must_use = "dropped, it ends the batches: later access lines wait until 256 KiB of them are pending"]
pub(crate) struct Flush<W: Write> {
    shared: Arc<Shared<W>>,
}

/// A lock that a panic elsewhere did not spoil: the log must go on.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<W: Write + Send + 'static> Batched<W> {
    /// A writer to `writer`, and its batch writer: a thread named
    /// `hierad-log` that ends when the [`Flush`] is dropped.
    ///
    /// # Errors
    ///
    /// The thread cannot be started.
    pub(crate) fn new(writer: W) -> io::Result<(Batched<W>, Flush<W>)> {
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending::default()),
            arrived: Condvar::new(),
            out: Mutex::new(Out {
                writer,
                batch: Vec::new(),
            }),
        });
        let writing = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("hierad-log".to_owned())
            .spawn(move || writing.write_batches())?;
        Ok((
            Batched {
                shared: Arc::clone(&shared),
            },
            Flush { shared },
        ))
    }
}

impl<W: Write> Shared<W> {
    /// The batch writer: once lines arrive, waits a [`DELAY`] for more,
    /// then writes them all with one `write`.
    fn write_batches(&self) {
        loop {
            let mut pending = lock(&self.pending);
            while pending.lines.is_empty() && !pending.closed {
                pending.waiting = true;
                pending = (self.arrived.wait(pending)).unwrap_or_else(PoisonError::into_inner);
                pending.waiting = false;
            }
            if pending.closed {
                return;
            }
            drop(pending);
            std::thread::sleep(DELAY);
            // Nowhere to tell of a log that cannot be written: tracing
            // drops its writers' errors too.
            let _ = self.write_pending(&[]);
        }
    }

    /// Writes the pending lines, then `line`.
    fn write_pending(&self, line: &[u8]) -> io::Result<()> {
        let mut out = lock(&self.out);
        let Out { writer, batch } = &mut *out;
        std::mem::swap(&mut lock(&self.pending).lines, batch);
        // Nothing is written for an empty part: no `write` for nothing.
        let mut written = Ok(());
        for part in [&batch[..], line].into_iter().filter(|p| !p.is_empty()) {
            written = written.and_then(|()| writer.write_all(part));
        }
        batch.clear();
        written.and_then(|()| writer.flush())
    }

    /// Adds an access line to the batch.
    fn add(&self, line: &[u8]) -> io::Result<()> {
        let mut pending = lock(&self.pending);
        pending.lines.extend_from_slice(line);
        if pending.lines.len() >= HIGH {
            drop(pending);
            return self.write_pending(&[]);
        }
        if pending.waiting {
            pending.waiting = false;
            self.arrived.notify_one();
        }
        Ok(())
    }
}

impl<W: Write> Drop for Flush<W> {
    fn drop(&mut self) {
        let mut pending = lock(&self.shared.pending);
        pending.closed = true;
        self.shared.arrived.notify_one();
        drop(pending);
        let _ = self.shared.write_pending(&[]);
    }
}

/// One event's line: an access line joins the batch, any other is
/// written at once, after it.
pub(crate) struct Line<'a, W> {
    shared: &'a Shared<W>,
    access: bool,
}

impl<W: Write> Write for Line<'_, W> {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        if self.access {
            self.shared.add(line)?;
        } else {
            self.shared.write_pending(line)?;
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a, W: Write + 'a> MakeWriter<'a> for Batched<W> {
    type Writer = Line<'a, W>;

    /// A line of unknown target: written at once.
    fn make_writer(&'a self) -> Line<'a, W> {
        Line {
            shared: &self.shared,
            access: false,
        }
    }

    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> Line<'a, W> {
        Line {
            shared: &self.shared,
            access: meta.target() == ACCESS,
        }
    }
}

#[cfg(test)]
mod tests;
