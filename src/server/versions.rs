//! Old versions of documents (`GET …/values?version=N`) as response
//! bodies, shared by the requests that ask for the same one: read from
//! the store and encoded once, not once per request (a reader pipelining
//! such GETs on many connections pinned a copy per connection).

use crate::configdb::{DocAddress, Encoded};
use crate::hiera::Hash;
use std::sync::Arc;
use std::time::Duration;

/// Bytes of encoded versions kept: a few large documents' worth.
const KEPT_BYTES: u64 = 64 * 1024 * 1024;

/// How long a version nobody asks for is kept.
const KEPT_IDLE: Duration = Duration::from_secs(60);

/// Encoded versions, keyed by the data generation they were read at too:
/// a number names other content once its environment is purged and made
/// again, which bumps the generation.
#[derive(Debug)]
pub(crate) struct Versions {
    cache: moka::sync::Cache<(u64, DocAddress, u64), Arc<Encoded>>,
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
    /// The kept body of version `number` of `at`, read at `generation`.
    pub(crate) fn get(
        &self,
        generation: u64,
        at: &DocAddress,
        number: u64,
    ) -> Option<Arc<Encoded>> {
        self.cache.get(&(generation, at.clone(), number))
    }

    /// The body of version `number` of `at`, read at `generation`: the
    /// kept one, else `read`'s, encoded and kept. Concurrent callers for
    /// one version wait for one read (moka's `try_get_with`). Blocking:
    /// call it off the async workers.
    ///
    /// # Errors
    ///
    /// What `read` returns (not kept).
    pub(crate) fn get_or_read<E: Send + Sync + 'static>(
        &self,
        generation: u64,
        at: &DocAddress,
        number: u64,
        read: impl FnOnce() -> Result<Hash, E>,
    ) -> Result<Arc<Encoded>, Arc<E>> {
        self.cache
            .try_get_with((generation, at.clone(), number), || {
                read().map(|doc| Arc::new(Encoded::of(&doc)))
            })
    }
}
