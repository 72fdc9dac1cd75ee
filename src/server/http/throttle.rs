//! Failed authentications per client network, and what they cost
//! (docs/security.md, "Failed authentications").
//!
//! Each failure runs up a debt that time pays off. A network owing less
//! than its free failures' worth is checked at once. Past that, checks of
//! passwords (and of Keystone tokens not yet validated, each a call to
//! Keystone) take turns, and a request whose turn is more than
//! [`MAX_WAIT`] away is refused (429) without a check: so guesses are
//! bounded per network whatever the number of connections they come over.
//! A success pays nothing off: a valid low-privilege token interleaved
//! with guesses at an admin's password does not wipe the count.
//! Credentials no guess can hit (bearer tokens are 256 random bits; client
//! certificates were verified by the handshake) are checked at once; only
//! their failures are answered late, as long as a turn would have taken,
//! so a client with right credentials never waits for a neighbour's wrong
//! ones.
//!
//! A failure is charged to the client's host, an IPv4 address or an IPv6
//! /64 (one host is commonly given a whole /64), with [`HOST`]'s
//! allowance; an IPv6 client's also to its /48, with [`BLOCK`]'s ten
//! times larger one, since one holder of a /48 would otherwise have
//! 65,536 hosts' allowances. A check waits for the later of its turns.

use moka::ops::compute::Op;
use std::net::{IpAddr, Ipv6Addr};
#[cfg(test)]
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What a network may fail before its checks take turns, and the time
/// between turns (what one failure costs).
#[derive(Debug)]
struct Allowance {
    free: u64,
    spacing: Duration,
}

/// A host's: five failures, then a check a second.
const HOST: Allowance = Allowance {
    free: 5,
    spacing: Duration::from_secs(1),
};

/// An IPv6 /48's, shared by its hosts: fifty failures, then ten checks a
/// second.
const BLOCK: Allowance = Allowance {
    free: 50,
    spacing: Duration::from_millis(100),
};

/// The longest a request waits for its turn.
const MAX_WAIT: Duration = Duration::from_secs(5);
/// The most a network may owe: its failures are all forgotten at most
/// this long after its last one.
const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

/// A network: its address (the host bits zero) and prefix length.
type Network = (IpAddr, u8);

/// Per client network, when its failures are paid off.
pub struct Throttle {
    /// Milliseconds since `epoch` at which the network owes nothing
    /// (the theoretical arrival time of the generic cell rate algorithm).
    paid_off_at: moka::sync::Cache<Network, u64>,
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

/// Whether a check of credentials from a client may go ahead.
#[derive(Debug)]
pub(crate) enum Admission<'a> {
    /// After waiting this long (zero: at once), with this turn.
    After(Duration, Turn<'a>),
    /// Not now: a turn is further than [`MAX_WAIT`] away.
    Refused { retry_after: Duration },
}

/// One network's part in a check.
#[derive(Debug)]
struct Account {
    network: Network,
    allowance: &'static Allowance,
    /// Whether the turn was charged to the network up front (it owed
    /// something when admitted): a failure then costs nothing more, and
    /// anything else gives the charge back.
    reserved: bool,
}

/// A check's place in its networks' accounts; [`Turn::settle`] it with
/// the check's outcome. A reserved turn dropped unsettled (the client
/// hung up while it waited) is given back.
#[derive(Debug)]
pub(crate) struct Turn<'a> {
    throttle: &'a Throttle,
    accounts: [Option<Account>; 2],
}

/// The networks `ip` is counted in, with their allowances: itself for
/// IPv4 (and IPv4-mapped IPv6); its /64 and its /48 for IPv6.
fn networks(ip: IpAddr) -> [Option<(Network, &'static Allowance)>; 2] {
    let v6 = match ip.to_canonical() {
        IpAddr::V4(v4) => return [Some(((IpAddr::V4(v4), 32), &HOST)), None],
        IpAddr::V6(v6) => u128::from(v6),
    };
    let prefix = |len: u32| IpAddr::V6(Ipv6Addr::from(v6 & (u128::MAX << (128 - len))));
    [
        Some(((prefix(64), 64), &HOST)),
        Some(((prefix(48), 48), &BLOCK)),
    ]
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Allowance {
    fn spacing_ms(&self) -> u64 {
        millis(self.spacing)
    }

    /// How long a check waits for its turn when the network owes `owed`
    /// milliseconds after charging it.
    fn wait(&self, owed: u64) -> Duration {
        Duration::from_millis(owed.saturating_sub(self.free * self.spacing_ms()))
    }
}

impl Throttle {
    fn forgetting_after(forget_after: Duration) -> Throttle {
        Throttle {
            paid_off_at: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(forget_after)
                .build(),
            epoch: Instant::now(),
            forget_after,
            #[cfg(test)]
            frozen: None,
        }
    }

    fn now_ms(&self) -> u64 {
        #[cfg(test)]
        if let Some(frozen) = &self.frozen {
            return frozen.load(Ordering::SeqCst);
        }
        millis(self.epoch.elapsed())
    }

    /// A turn for a check no guess can pass (see the module's doc): charged
    /// to nobody up front, never waits; its failure counts.
    pub(crate) fn unqueued(&self, ip: IpAddr) -> Turn<'_> {
        Turn {
            throttle: self,
            accounts: networks(ip).map(|n| {
                n.map(|(network, allowance)| Account {
                    network,
                    allowance,
                    reserved: false,
                })
            }),
        }
    }

    /// Whether a check of credentials a guess could pass, from `ip`, may
    /// go ahead, and when: after the later of its networks' turns. The
    /// turn is charged up front, as if the check failed, and given back
    /// if it does not: charged only after, every check of a burst sent at
    /// once (up to one per connection) would go ahead before the first
    /// failure was counted.
    pub(crate) fn admit(&self, ip: IpAddr) -> Admission<'_> {
        let mut turn = self.unqueued(ip);
        let now = self.now_ms();
        let cap = millis(self.forget_after);
        let mut wait = Duration::ZERO;
        for account in turn.accounts.iter_mut().flatten() {
            let spacing = account.allowance.spacing_ms();
            let mut outcome = Ok(Duration::ZERO);
            self.paid_off_at
                .entry(account.network)
                .and_compute_with(|entry| {
                    let owed = entry.map_or(0, |e| e.into_value().saturating_sub(now));
                    let after = owed + spacing;
                    let wait = account.allowance.wait(after);
                    if wait > MAX_WAIT {
                        outcome = Err(wait);
                        return Op::Nop;
                    }
                    outcome = Ok(wait);
                    Op::Put(now + after.min(cap))
                });
            match outcome {
                // The turns already taken are given back with `turn`.
                Err(retry_after) => return Admission::Refused { retry_after },
                Ok(turn_wait) => {
                    account.reserved = true;
                    wait = wait.max(turn_wait);
                }
            }
        }
        Admission::After(wait, turn)
    }

    /// Adds `cost` milliseconds to what `network` owes (`cost` may be
    /// negative: a charge given back); what it owes then.
    fn charge(&self, network: Network, cost: i64) -> u64 {
        let now = self.now_ms();
        let cap = millis(self.forget_after);
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
        let mut late = Duration::ZERO;
        for account in self.accounts.iter_mut().flatten() {
            match (account.reserved, failed) {
                // Charged up front; kept.
                (true, true) => account.reserved = false,
                (false, true) => {
                    let spacing = account.allowance.spacing_ms();
                    let owes = self
                        .throttle
                        .charge(account.network, i64::try_from(spacing).unwrap_or(i64::MAX));
                    late = late.max(account.allowance.wait(owes));
                }
                // Given back when dropped.
                (_, false) => {}
            }
        }
        if late > MAX_WAIT {
            Duration::ZERO
        } else {
            late
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        for account in self.accounts.iter().flatten().filter(|a| a.reserved) {
            let spacing = account.allowance.spacing_ms();
            self.throttle
                .charge(account.network, -i64::try_from(spacing).unwrap_or(i64::MAX));
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
        let named =
            |s: &str| networks(ip(s)).map(|n| n.map(|((net, len), _)| format!("{net}/{len}")));
        assert_eq!(
            named("2001:db8:1:2:a:b:c:d"),
            [
                Some("2001:db8:1:2::/64".to_owned()),
                Some("2001:db8:1::/48".to_owned())
            ]
        );
        assert_eq!(
            named("::ffff:192.0.2.7"),
            [Some("192.0.2.7/32".to_owned()), None]
        );
        assert_eq!(named("192.0.2.7"), [Some("192.0.2.7/32".to_owned()), None]);
        let throttle = frozen();
        for i in 0..5 {
            assert_eq!(attempt(&throttle, &format!("2001:db8:1:2::{i}"), true), 0);
        }
        assert_eq!(attempt(&throttle, "2001:db8:1:2:ffff::1", true), 1000);
        assert_eq!(attempt(&throttle, "2001:db8:1:3::1", true), 0);
    }

    #[test]
    fn debts_are_capped_and_forgotten() {
        let throttle = Throttle::forgetting_after(Duration::from_millis(100));
        for _ in 0..7 {
            attempt(&throttle, "192.0.2.3", true);
        }
        // Owed at most `forget_after`: checked at once.
        assert_eq!(attempt(&throttle, "192.0.2.3", true), 0);
        let host = (ip("192.0.2.3"), 32);
        assert!(throttle.paid_off_at.get(&host).is_some());
        std::thread::sleep(Duration::from_millis(300));
        throttle.paid_off_at.run_pending_tasks();
        assert_eq!(throttle.paid_off_at.get(&host), None);
    }

    /// Checks sent at once, before any has failed: the first five go
    /// ahead, the next take turns, the rest are refused. (Charged only
    /// once they failed, all of them went ahead: 116 of 120 from one
    /// address, each an Argon2 run the other clients queued behind.)
    #[test]
    fn a_burst_sent_at_once_takes_turns_before_any_fails() {
        let throttle = frozen();
        let admitted: Vec<Admission<'_>> =
            (0..12).map(|_| throttle.admit(ip("192.0.2.1"))).collect();
        let waits: Vec<i64> = admitted
            .iter()
            .map(|a| match a {
                Admission::After(wait, _) => i64::try_from(wait.as_millis()).unwrap(),
                Admission::Refused { retry_after } => {
                    -i64::try_from(retry_after.as_millis()).unwrap()
                }
            })
            .collect();
        assert_eq!(
            waits,
            [0, 0, 0, 0, 0, 1000, 2000, 3000, 4000, 5000, -6000, -6000]
        );
        // All of them right (a NAT's clients logging in together): their
        // turns are given back, and the network owes nothing.
        for admission in admitted {
            if let Admission::After(_, turn) = admission {
                assert_eq!(turn.settle(false), Duration::ZERO);
            }
        }
        assert_eq!(attempt(&throttle, "192.0.2.1", true), 0);
    }

    #[test]
    fn the_hosts_of_an_ipv6_slash_48_share_ten_times_a_hosts_allowance() {
        let throttle = frozen();
        // A new /64 for every guess: each host owes one failure, its /48
        // all of them. Fifty free, then turns 100 ms apart, up to 5 s;
        // then refused, whatever the host.
        let host = |i: usize| format!("2001:db8:7:{i:x}::1");
        let waits: Vec<i64> = (0..101)
            .map(|i| attempt(&throttle, &host(i), true))
            .collect();
        let turns: Vec<i64> = (1..=50).map(|k| 100 * k).collect();
        assert_eq!(waits[..50], [0; 50]);
        assert_eq!(waits[50..100], turns[..]);
        assert_eq!(waits[100], -5100);
        // Another /48 owes nothing.
        assert_eq!(attempt(&throttle, "2001:db8:8::1", true), 0);
        // Time pays the /48 off as it does a host.
        advance(&throttle, 1000);
        assert_eq!(attempt(&throttle, &host(200), true), 4100);
    }
}
