//! Failed authentications per client network, and what they cost
//! (docs/security.md, "Failed authentications").
//!
//! Each failure runs up a debt of [`SPACING`] that time pays off. A
//! network owing less than [`FREE_FAILURES`] failures' worth is checked
//! at once. Past that, checks of passwords (and of Keystone tokens not yet
//! validated, each a call to Keystone) take turns one [`SPACING`] apart,
//! and a request whose turn is more than [`MAX_WAIT`] away is refused
//! (429) without a check: so guesses are bounded per network whatever the
//! number of connections they come over. A success pays nothing off: a
//! valid low-privilege token interleaved with guesses at an admin's
//! password does not wipe the count. Credentials no guess can hit (bearer
//! tokens are 256 random bits; client certificates were verified by the
//! handshake) are checked at once; only their failures are answered
//! late, as long as a turn would have taken, so a client with right
//! credentials never waits for a neighbour's wrong ones.
//!
//! A network is an IPv4 address or an IPv6 /64: one host is commonly
//! given a whole /64, and would otherwise get a fresh allowance from each
//! of its addresses.

use moka::ops::compute::Op;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Failures a network may make before its checks take turns.
const FREE_FAILURES: u64 = 5;
/// What one failure costs, and the time between turns once they are
/// taken: past the free failures, one check a second per network.
const SPACING: Duration = Duration::from_secs(1);
/// The longest a request waits for its turn.
const MAX_WAIT: Duration = Duration::from_secs(5);
/// The most a network may owe: its failures are all forgotten at most
/// this long after its last one.
const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

/// Per client network, when its failures are paid off.
pub struct Throttle {
    /// Milliseconds since `epoch` at which the network owes nothing
    /// (the theoretical arrival time of the generic cell rate algorithm).
    paid_off_at: moka::sync::Cache<IpAddr, u64>,
    /// When the table was last written, in milliseconds since `epoch`
    /// (0: never). No entry outlives it by more than `forget_after`, so
    /// past that nobody owes and a request skips the table: a lookup in
    /// it costs every authenticated request about as much as checking
    /// its bearer token.
    last_write: AtomicU64,
    epoch: Instant,
    forget_after: Duration,
    /// A clock tests move by hand (milliseconds since `epoch`).
    #[cfg(test)]
    frozen: Option<AtomicU64>,
}

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle")
            .field("networks", &self.paid_off_at.entry_count())
            .finish()
    }
}

impl Default for Throttle {
    fn default() -> Self {
        Throttle::forgetting_after(FORGET_AFTER)
    }
}

/// Whether a check of credentials from a network may go ahead.
#[derive(Debug)]
pub(crate) enum Admission<'a> {
    /// After waiting this long (zero: at once), with this turn.
    After(Duration, Turn<'a>),
    /// Not now: the network's turn is further than [`MAX_WAIT`] away.
    Refused { retry_after: Duration },
}

/// A check's place in its network's account; [`Turn::settle`] it with the
/// check's outcome. A reserved turn dropped unsettled (the client hung up
/// while it waited) is given back.
#[derive(Debug)]
pub(crate) struct Turn<'a> {
    throttle: &'a Throttle,
    network: IpAddr,
    /// Whether the turn was charged to the network up front (it owed
    /// something when admitted): a failure then costs nothing more, and
    /// anything else gives the charge back.
    reserved: bool,
}

/// The network `ip` is counted in: itself for IPv4 (and IPv4-mapped IPv6),
/// its /64 for IPv6.
pub(crate) fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        },
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Throttle {
    fn forgetting_after(forget_after: Duration) -> Throttle {
        Throttle {
            paid_off_at: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(forget_after)
                .build(),
            last_write: AtomicU64::new(0),
            epoch: Instant::now(),
            forget_after,
            #[cfg(test)]
            frozen: None,
        }
    }

    fn now_ms(&self) -> u64 {
        #[cfg(test)]
        let now = match &self.frozen {
            Some(frozen) => frozen.load(Ordering::SeqCst),
            None => millis(self.epoch.elapsed()),
        };
        #[cfg(not(test))]
        let now = millis(self.epoch.elapsed());
        // 0 is `last_write`'s "never".
        now.max(1)
    }

    /// A turn for a check no guess can pass (see the module's doc): never
    /// waits; its failure counts.
    pub(crate) fn unqueued(&self, ip: IpAddr) -> Turn<'_> {
        Turn {
            throttle: self,
            network: network(ip),
            reserved: false,
        }
    }

    /// Whether a check of credentials a guess could pass, from `ip`, may
    /// go ahead, and when.
    pub(crate) fn admit(&self, ip: IpAddr) -> Admission<'_> {
        let network = network(ip);
        let free = Admission::After(
            Duration::ZERO,
            Turn {
                throttle: self,
                network,
                reserved: false,
            },
        );
        if self.all_forgotten() {
            return free;
        }
        let now = self.now_ms();
        let (spacing, cap) = (millis(SPACING), millis(self.forget_after));
        let mut outcome = None;
        self.paid_off_at.entry(network).and_compute_with(|entry| {
            let owed = entry.map_or(0, |e| e.into_value().saturating_sub(now));
            if owed == 0 {
                return Op::Nop;
            }
            let after = owed + spacing;
            let wait = after.saturating_sub(FREE_FAILURES * spacing);
            if wait > millis(MAX_WAIT) {
                outcome = Some(Err(wait));
                return Op::Nop;
            }
            outcome = Some(Ok(wait));
            Op::Put(now + after.min(cap))
        });
        match outcome {
            None => free,
            Some(Err(wait)) => Admission::Refused {
                retry_after: Duration::from_millis(wait),
            },
            Some(Ok(wait)) => {
                self.wrote(now);
                Admission::After(
                    Duration::from_millis(wait),
                    Turn {
                        throttle: self,
                        network,
                        reserved: true,
                    },
                )
            }
        }
    }

    fn wrote(&self, now: u64) {
        self.last_write.fetch_max(now, Ordering::SeqCst);
    }

    /// Adds `cost` milliseconds to what `network` owes (`cost` may be
    /// negative: a charge given back); what it owes then.
    fn charge(&self, network: IpAddr, cost: i64) -> u64 {
        let now = self.now_ms();
        let cap = millis(self.forget_after);
        // Stamped before the entry, so that a reader who sees the entry
        // sees the time too (never "all forgotten" beside a live entry).
        self.wrote(now);
        let mut owes = 0;
        self.paid_off_at.entry(network).and_compute_with(|entry| {
            let owed = entry.map_or(0, |e| e.into_value().saturating_sub(now));
            owes = owed.saturating_add_signed(cost).min(cap);
            if owes == 0 {
                Op::Remove
            } else {
                Op::Put(now + owes)
            }
        });
        owes
    }

    /// Whether every network's debt has been forgotten (or none was ever
    /// run up): then the table holds nothing that matters.
    fn all_forgotten(&self) -> bool {
        match self.last_write.load(Ordering::SeqCst) {
            0 => true,
            last => {
                // A second's margin over the table's own expiry.
                self.now_ms() > last + millis(self.forget_after + Duration::from_secs(1))
            }
        }
    }
}

impl Turn<'_> {
    /// Records the check's outcome: `failed` for a failure the client is
    /// to blame for (not missing credentials, not Keystone down). How long
    /// the refusal is to wait: for a failure that took no turn, as long as
    /// its turn would have come; but at once if that is more than
    /// [`MAX_WAIT`] away, so a network never holds more than a few
    /// connections waiting (each one waiting is a connection no one else
    /// can be served on).
    pub(crate) fn settle(mut self, failed: bool) -> Duration {
        match (self.reserved, failed) {
            // Charged up front; kept.
            (true, true) => self.reserved = false,
            (false, true) => {
                let spacing = millis(SPACING);
                let owes = self
                    .throttle
                    .charge(self.network, i64::try_from(spacing).unwrap_or(i64::MAX));
                let wait = Duration::from_millis(owes.saturating_sub(FREE_FAILURES * spacing));
                return if wait > MAX_WAIT {
                    Duration::ZERO
                } else {
                    wait
                };
            }
            // Given back when dropped.
            (_, false) => {}
        }
        Duration::ZERO
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if self.reserved {
            self.throttle.charge(
                self.network,
                -i64::try_from(millis(SPACING)).unwrap_or(i64::MAX),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    /// The wait of an admitted check, or the retry time of a refused one
    /// (negative), in milliseconds; the turn settled as `failed`.
    fn attempt(throttle: &Throttle, from: &str, failed: bool) -> i64 {
        match throttle.admit(ip(from)) {
            Admission::After(wait, turn) => {
                assert_eq!(turn.settle(failed), Duration::ZERO);
                i64::try_from(wait.as_millis()).unwrap()
            }
            Admission::Refused { retry_after } => -i64::try_from(retry_after.as_millis()).unwrap(),
        }
    }

    /// A throttle whose clock stands still but for [`advance`].
    fn frozen() -> Throttle {
        Throttle {
            frozen: Some(AtomicU64::new(1)),
            ..Throttle::default()
        }
    }

    fn advance(throttle: &Throttle, ms: u64) {
        if let Some(clock) = &throttle.frozen {
            clock.fetch_add(ms, Ordering::SeqCst);
        }
    }

    #[test]
    fn failures_past_the_free_ones_take_turns_a_second_apart() {
        let throttle = frozen();
        assert!(throttle.all_forgotten(), "nothing recorded yet");
        let waits: Vec<i64> = (0..12)
            .map(|_| attempt(&throttle, "192.0.2.1", true))
            .collect();
        // At the same instant: five free, then turns up to the longest
        // wait; past it refused, uncharged, until time pays some off.
        assert_eq!(
            waits,
            [0, 0, 0, 0, 0, 1000, 2000, 3000, 4000, 5000, -6000, -6000]
        );
        assert_eq!(attempt(&throttle, "192.0.2.2", true), 0, "per network");
        advance(&throttle, 3000);
        assert_eq!(attempt(&throttle, "192.0.2.1", true), 3000);
        assert_eq!(attempt(&throttle, "192.0.2.1", true), 4000);
        assert_eq!(attempt(&throttle, "192.0.2.1", true), 5000);
        assert_eq!(attempt(&throttle, "192.0.2.1", true), -6000);
    }

    #[test]
    fn a_success_pays_nothing_off() {
        let throttle = frozen();
        for _ in 0..5 {
            attempt(&throttle, "192.0.2.1", true);
        }
        // A valid token sent between guesses (or a neighbour behind the
        // same NAT getting in) waits its turn and then gives it back.
        for _ in 0..3 {
            assert_eq!(attempt(&throttle, "192.0.2.1", false), 1000);
        }
        assert_eq!(attempt(&throttle, "192.0.2.1", true), 1000);
        assert_eq!(attempt(&throttle, "192.0.2.1", true), 2000);
        // A bearer token's failure counts without a turn, and is answered
        // as late as a turn would be; its success is answered at once.
        assert_eq!(
            throttle.unqueued(ip("192.0.2.1")).settle(false),
            Duration::ZERO
        );
        assert_eq!(
            throttle.unqueued(ip("192.0.2.1")).settle(true),
            Duration::from_secs(3)
        );
        assert_eq!(attempt(&throttle, "192.0.2.1", false), 4000);
        let late: Vec<u128> = (0..4)
            .map(|_| throttle.unqueued(ip("192.0.2.1")).settle(true).as_millis())
            .collect();
        assert_eq!(
            late,
            [4000, 5000, 0, 0],
            "beyond the longest wait, at once: enough of the network's requests wait already"
        );
    }

    #[test]
    fn a_turn_dropped_while_waiting_is_given_back() {
        let throttle = frozen();
        for _ in 0..6 {
            attempt(&throttle, "192.0.2.1", true);
        }
        let waiting: Vec<_> = (0..4).map(|_| throttle.admit(ip("192.0.2.1"))).collect();
        assert!(matches!(
            waiting.last(),
            Some(Admission::After(wait, _)) if wait.as_millis() == 5000
        ));
        drop(waiting);
        assert_eq!(attempt(&throttle, "192.0.2.1", true), 2000);
    }

    #[test]
    fn an_ipv6_slash_64_is_one_network() {
        assert_eq!(network(ip("2001:db8:1:2:a:b:c:d")), ip("2001:db8:1:2::"));
        assert_eq!(network(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(network(ip("192.0.2.7")), ip("192.0.2.7"));
        let throttle = frozen();
        for i in 0..5 {
            assert_eq!(attempt(&throttle, &format!("2001:db8:1:2::{i}"), true), 0);
        }
        assert_eq!(attempt(&throttle, "2001:db8:1:2:ffff::1", true), 1000);
        assert_eq!(attempt(&throttle, "2001:db8:1:3::1", true), 0);
    }

    #[test]
    fn debts_are_forgotten_after_a_quiet_while_and_then_cost_no_lookup() {
        let throttle = Throttle::forgetting_after(Duration::from_millis(100));
        for _ in 0..7 {
            attempt(&throttle, "192.0.2.3", true);
        }
        assert!(!throttle.all_forgotten());
        // Owed at most `forget_after`: checked at once.
        assert_eq!(attempt(&throttle, "192.0.2.3", true), 0);
        // The table's own expiry comes first: past the margin nothing of
        // the network is left, so skipping the table changes no answer.
        std::thread::sleep(Duration::from_millis(1300));
        assert!(throttle.all_forgotten());
        assert_eq!(throttle.paid_off_at.get(&ip("192.0.2.3")), None);
        // A new failure turns the table back on.
        attempt(&throttle, "192.0.2.3", true);
        assert!(!throttle.all_forgotten());
        assert!(throttle.paid_off_at.get(&ip("192.0.2.3")).is_some());
    }
}
