//! Where password checks run (docs/security.md, "Password checks"): a
//! fixed set of threads, each running one Argon2 check at a time (19 MiB
//! and a core each), behind a queue of bounded length; a check that finds
//! the queue full is refused at once (503), never started. So the memory
//! and the cores password checks take are bounded however many guesses
//! arrive, and nothing else waits behind them: tokens, certificates,
//! Keystone's cached validations and passwords verified lately never come
//! here.
//!
//! A check handed to the pool belongs to the pool, not to the request
//! that asked for it: a request that ends first (its client hung up, its
//! time ran out) leaves it running to its end, in its thread, so hanging
//! up frees nothing (`auth::verify` decides what the verdict of a request
//! that is gone may do: nothing).

use std::sync::OnceLock;

/// Checks waiting for a thread, beyond which new ones are refused: at
/// about 50 ms an Argon2 check, a few seconds of work for two threads.
pub(crate) const DEFAULT_QUEUE: usize = 64;

/// Half the cores, at least one: Argon2 is CPU-bound, so more threads
/// would only share the cores more finely and take more memory at once,
/// and a flood of guesses that fills the pool still leaves the other half
/// to every request that needs no password check (/healthz, tokens,
/// certificates, passwords verified lately).
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}

type Job = Box<dyn FnOnce() + Send>;

/// The password checks' threads and queue. Its threads start with its
/// first check, and end once it is dropped and its queue ran out.
pub(crate) struct PasswordPool {
    threads: usize,
    queue: usize,
    /// The queue's sending end; `None` when no thread could be started.
    sender: OnceLock<Option<crossbeam_channel::Sender<Job>>>,
}

impl std::fmt::Debug for PasswordPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordPool")
            .field("threads", &self.threads)
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl Default for PasswordPool {
    fn default() -> Self {
        PasswordPool::new(default_threads(), DEFAULT_QUEUE)
    }
}

/// The pool has no room for another check: every thread busy and the
/// queue full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("every password-check thread is busy and the queue is full")]
pub(crate) struct Busy;

impl PasswordPool {
    /// `threads` checks at once (at least one), and `queue` more waiting
    /// (0: none wait; a check finding every thread busy is refused).
    pub(crate) fn new(threads: usize, queue: usize) -> PasswordPool {
        PasswordPool {
            threads: threads.max(1),
            queue,
            sender: OnceLock::new(),
        }
    }

    /// Runs `check` on one of the pool's threads, to its end, whatever
    /// becomes of the caller.
    ///
    /// # Errors
    ///
    /// [`Busy`]: the queue is full (or no thread could be started); the
    /// check is not run.
    pub(crate) fn run(&self, check: impl FnOnce() + Send + 'static) -> Result<(), Busy> {
        let sender = self.sender.get_or_init(|| self.start()).as_ref();
        sender
            .ok_or(Busy)?
            .try_send(Box::new(check))
            .map_err(|_| Busy)
    }

    fn start(&self) -> Option<crossbeam_channel::Sender<Job>> {
        let (sender, receiver) = crossbeam_channel::bounded::<Job>(self.queue);
        let mut started = 0;
        for i in 0..self.threads {
            let receiver = receiver.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("hierad-password-{i}"))
                .spawn(move || {
                    for check in receiver {
                        // A check that panics (it should not) costs its
                        // request an answer, not the pool a thread.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
                    }
                });
            match spawned {
                Ok(_) => started += 1,
                Err(e) => tracing::error!(error = %e, "cannot start a password-check thread"),
            }
        }
        (started > 0).then_some(sender)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn beyond_its_threads_and_queue_a_check_is_refused_unrun() {
        let pool = PasswordPool::new(1, 1);
        let (release, hold) = mpsc::channel::<()>();
        let (ran, done) = mpsc::channel::<u32>();
        let hold = std::sync::Arc::new(std::sync::Mutex::new(hold));
        let job = |n: u32| {
            let (hold, ran) = (std::sync::Arc::clone(&hold), ran.clone());
            move || {
                let _ = hold.lock().unwrap().recv_timeout(Duration::from_secs(10));
                ran.send(n).unwrap();
            }
        };
        pool.run(job(1)).unwrap();
        // The first is taken by the thread (waiting for `release`) once
        // the thread is up; until then it is the one queued.
        let mut queued = 0;
        for _ in 0..500 {
            if pool.run(job(2)).is_ok() {
                queued += 1;
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(queued, 1, "the thread never took the first check");
        assert_eq!(pool.run(job(3)), Err(Busy), "one running, one queued");
        release.send(()).unwrap();
        release.send(()).unwrap();
        let mut ran: Vec<u32> = (0..2)
            .map(|_| done.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        ran.sort_unstable();
        assert_eq!(ran, [1, 2]);
        assert!(done.try_recv().is_err(), "the refused check never ran");
    }
}
