//! Answers about a document made for a request (an old version, a key,
//! an old version's effective document: `GET …/values?version=N`,
//! `?key=K`, `?effective&version=N`) as response bodies, shared by the
//! requests that ask for the same one: read, folded and encoded once, off
//! the async workers, not once per request (a reader pipelining such GETs
//! on many connections pinned a copy per connection, and making them held
//! the async workers for seconds).

use crate::configdb::{DocAddress, Encoded};
use std::sync::Arc;
use std::time::Duration;

/// Which answer about a document.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Answer {
    /// Version N as stored, whole.
    Stored(u64),
    /// Version N's effective document (its values folded with the other
    /// layers as they are at the generation).
    Effective(u64),
    /// A key (its canonical path) of a version (the latest: `None`),
    /// stored or effective.
    Key {
        version: Option<u64>,
        effective: bool,
        key: String,
    },
}

/// Bytes of encoded answers kept: a few large documents' worth.
const KEPT_BYTES: u64 = 64 * 1024 * 1024;

/// How long a version nobody asks for is kept.
const KEPT_IDLE: Duration = Duration::from_secs(60);

/// Encoded answers, keyed by the data generation they were made at too: a
/// version number names other content once its environment is purged and
/// made again, and an effective document or a latest key change with
/// every write, all of which bump the generation.
#[derive(Debug)]
pub(crate) struct Versions {
    cache: moka::sync::Cache<(u64, DocAddress, Answer), Arc<Encoded>>,
}

impl Default for Versions {
    fn default() -> Versions {
        Versions {
            cache: moka::sync::Cache::builder()
                .max_capacity(KEPT_BYTES)
                .weigher(|_, encoded: &Arc<Encoded>| {
                    u32::try_from(encoded.body.len()).unwrap_or(u32::MAX)
                })
                .time_to_idle(KEPT_IDLE)
                .build(),
        }
    }
}

impl Versions {
    /// The kept body of `answer` about `at`, made at `generation`.
    pub(crate) fn get(
        &self,
        generation: u64,
        at: &DocAddress,
        answer: &Answer,
    ) -> Option<Arc<Encoded>> {
        self.cache.get(&(generation, at.clone(), answer.clone()))
    }

    /// The body of `answer` about `at`, made at `generation`: the kept
    /// one, else `make`'s, kept. Concurrent callers for one answer wait
    /// for one `make` (moka's `try_get_with`). Blocking: call it off the
    /// async workers.
    ///
    /// # Errors
    ///
    /// What `make` returns (not kept).
    pub(crate) fn get_or_make<E: Send + Sync + 'static>(
        &self,
        generation: u64,
        at: &DocAddress,
        answer: Answer,
        make: impl FnOnce() -> Result<Encoded, E>,
    ) -> Result<Arc<Encoded>, Arc<E>> {
        self.cache
            .try_get_with((generation, at.clone(), answer), || make().map(Arc::new))
    }
}
