//! The server's caches, both valid for one data generation: lookup
//! answers ([`AnswerCache`], admitting what missed twice: `Doorkeeper`)
//! and loaded Hiera configurations ([`Configs`]).

mod answers;
mod configs;

pub(crate) use answers::{Answer, AnswerCache};
pub(crate) use configs::{Configs, Configured};

use std::sync::atomic::{AtomicU64, Ordering};

/// Admission on the second miss (the "doorkeeper" of TinyLFU): a fixed
/// table remembering, per slot, the fingerprint that missed last. What is
/// asked once is remembered, not cached; one-off requests then cannot
/// push repeated ones out.
struct Doorkeeper {
    seen: Box<[AtomicU64]>,
}

impl Doorkeeper {
    /// A doorkeeper of `slots` fingerprints (8 bytes each).
    fn new(slots: usize) -> Doorkeeper {
        Doorkeeper {
            seen: (0..slots).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Remembers that `fingerprint` missed; whether it was its slot's last
    /// miss too (asked before, recently enough to be remembered).
    fn missed_before(&self, fingerprint: u64) -> bool {
        let slot = &self.seen[usize::try_from(fingerprint).unwrap_or_default() % self.seen.len()];
        slot.swap(fingerprint, Ordering::Relaxed) == fingerprint
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_miss_is_admitted() {
        let doorkeeper = Doorkeeper::new(4);
        assert!(!doorkeeper.missed_before(6));
        assert!(doorkeeper.missed_before(6));
        // 2 shares 6's slot: it displaces it.
        assert!(!doorkeeper.missed_before(2));
        assert!(!doorkeeper.missed_before(6));
    }
}
