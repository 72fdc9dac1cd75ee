//! The bound on unread answers: bytes of answers the server has made but
//! its clients have not taken yet (`--unread-answers-mib`). hyper holds an
//! answer until the socket accepts its last byte, so a client that asks
//! and never reads pins one answer per connection; a few hundred such
//! connections asking for a large document pinned gigabytes.
//!
//! Answers shared by every request (a snapshot's encoded documents, cached
//! lookup answers: [`shared`]) cost nothing per connection and are not
//! counted, nor are answers under [`COUNTED`] bytes (at most
//! `--max-connections` of them are held at once). Over the bound, the
//! connections whose client has read nothing for a while are closed to
//! make room; if that is not enough the answer is refused with 503 and
//! `Retry-After: 1`.

use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::Notify;

/// Answers under this many bytes are not counted: looking up the budget
/// for every small lookup answer would cost more than they hold.
pub(crate) const COUNTED: u64 = 64 * 1024;

/// Marks a response whose body is shared by every request for it: it is
/// not counted against the budget (its bytes exist once however many
/// connections hold them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shared;

/// `response`, marked [`Shared`] if it is counted at all: a response
/// under [`COUNTED`] bytes goes unmarked, since its first extension cost
/// a table and a box, two allocations a cached lookup.
pub(crate) fn shared(mut response: axum::response::Response) -> axum::response::Response {
    let size = axum::body::HttpBody::size_hint(response.body()).exact();
    if size.is_none_or(|size| size >= COUNTED) {
        response.extensions_mut().insert(Shared);
    }
    response
}

/// The server-wide budget of unread answer bytes.
#[derive(Debug)]
pub(crate) struct Unread {
    limit: u64,
    held: AtomicU64,
    /// Notified when bytes are given back, for answers waiting on room
    /// made by closing stalled connections.
    released: Notify,
    /// Answers refused for want of room (`hierad_busy_refusals_total`).
    refused: prometheus_client::metrics::counter::Counter,
}

impl Unread {
    pub(crate) fn new(limit: u64, refused: prometheus_client::metrics::counter::Counter) -> Unread {
        Unread {
            limit,
            held: AtomicU64::new(0),
            released: Notify::new(),
            refused,
        }
    }

    /// An answer was refused for want of room.
    pub(crate) fn refused(&self) {
        self.refused.inc();
    }

    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Takes `bytes` from the budget if they fit, or if nothing else is
    /// held (one answer larger than the whole budget is still sent, alone).
    pub(crate) fn try_take(&self, bytes: u64) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held == 0 || held.saturating_add(bytes) <= self.limit)
                    .then(|| held.saturating_add(bytes))
            })
            .is_ok()
    }

    /// Whether `bytes` would fit now (see [`Unread::try_take`]).
    pub(crate) fn fits(&self, bytes: u64) -> bool {
        let held = self.held.load(Ordering::Acquire);
        held == 0 || held.saturating_add(bytes) <= self.limit
    }

    /// How many bytes would have to be given back for `bytes` to fit.
    pub(crate) fn shortfall(&self, bytes: u64) -> u64 {
        let held = self.held.load(Ordering::Acquire);
        held.saturating_add(bytes).saturating_sub(self.limit)
    }

    fn give_back(&self, bytes: u64) {
        if bytes > 0 {
            self.held.fetch_sub(bytes, Ordering::AcqRel);
            self.released.notify_waiters();
        }
    }

    /// Waits for some bytes to be given back.
    pub(crate) fn released(&self) -> tokio::sync::futures::Notified<'_> {
        self.released.notified()
    }
}

/// What one connection holds of the budget: the bytes of its answer not
/// yet written to the socket. Given back as they are written, and all of
/// it when the connection ends.
#[derive(Debug)]
pub(crate) struct Held {
    unread: std::sync::Arc<Unread>,
    bytes: AtomicU64,
}

impl Held {
    pub(crate) fn new(unread: std::sync::Arc<Unread>) -> Held {
        Held {
            unread,
            bytes: AtomicU64::new(0),
        }
    }

    pub(crate) fn unread(&self) -> &std::sync::Arc<Unread> {
        &self.unread
    }

    /// The connection's answer took `bytes` from the budget.
    pub(crate) fn took(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::AcqRel);
    }

    /// What the connection holds.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Acquire)
    }

    /// `written` bytes reached the socket: gives back as much of what the
    /// connection holds. (The head's bytes count too: a few hundred bytes
    /// given back early.)
    pub(crate) fn wrote(&self, written: usize) {
        if self.bytes.load(Ordering::Relaxed) == 0 {
            return;
        }
        let written = written as u64;
        let before = self
            .bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                Some(held.saturating_sub(written))
            })
            .unwrap_or_default();
        self.unread.give_back(before.min(written));
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.unread.give_back(*self.bytes.get_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn answers_take_what_fits_and_give_it_back_as_written() {
        let unread = Arc::new(Unread::new(100, Default::default()));
        let a = Held::new(Arc::clone(&unread));
        assert!(unread.try_take(80));
        a.took(80);
        assert!(!unread.try_take(30), "over the budget");
        assert_eq!(unread.shortfall(30), 10);
        a.wrote(50);
        assert_eq!(a.bytes(), 30);
        assert!(unread.try_take(30));
        let b = Held::new(Arc::clone(&unread));
        b.took(30);
        // More written than held (the head): nothing more given back.
        a.wrote(1000);
        assert_eq!(a.bytes(), 0);
        assert_eq!(unread.shortfall(70), 0);
        drop(b);
        assert_eq!(unread.shortfall(100), 0, "the dropped connection's bytes");
    }

    #[test]
    fn an_answer_larger_than_the_budget_is_sent_alone() {
        let unread = Unread::new(100, Default::default());
        assert!(unread.try_take(500));
        assert!(!unread.try_take(1));
    }
}
