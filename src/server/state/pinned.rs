//! Snapshots of past generations, for reads at one (`?generation=`,
//! `?tag=`, a lookup's `"generation"`): each is built from the store's
//! read at that generation (`Store::load_at`) of one environment's
//! documents, and kept, a few at a time, by (generation, environment).
//! Apart from the newest: nothing of a past generation goes into the
//! caches of the published snapshot (`cache/`), which are valid for the
//! newest generation alone. What a generation held never changes, so a
//! kept snapshot never goes stale (one retention prunes later still
//! answers exactly, as it did).

use crate::configdb::Snapshot;
use crate::store::{Store, StoreError};
use std::sync::Arc;

/// How many past snapshots are kept: a deployment reads at one tag, and
/// each snapshot holds an environment's documents (they share nothing
/// with the published one).
const KEPT: u64 = 4;

/// The kept snapshots.
pub(crate) struct Pinned {
    kept: moka::sync::Cache<(u64, i64), Arc<Snapshot>>,
}

impl Default for Pinned {
    fn default() -> Self {
        Pinned {
            kept: moka::sync::Cache::new(KEPT),
        }
    }
}

impl Pinned {
    /// Environment `env` as of `generation`, read from `store` unless
    /// kept. Blocks: call it off the async workers.
    ///
    /// # Errors
    ///
    /// As [`Store::load_at`]: a generation not written yet (Invalid), one
    /// retention pruned (Gone).
    /// Environment `env` as of `generation` if kept.
    pub(crate) fn kept(&self, generation: u64, env: i64) -> Option<Arc<Snapshot>> {
        self.kept.get(&(generation, env))
    }

    pub(crate) fn get(
        &self,
        store: &dyn Store,
        generation: u64,
        env: i64,
    ) -> Result<Arc<Snapshot>, StoreError> {
        if let Some(kept) = self.kept.get(&(generation, env)) {
            return Ok(kept);
        }
        let snapshot = Arc::new(Snapshot::build(store.load_at(generation, Some(env))?));
        self.kept.insert((generation, env), Arc::clone(&snapshot));
        Ok(snapshot)
    }
}
