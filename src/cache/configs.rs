//! Loaded Hiera configurations, kept per environment and request
//! settings for one data generation, so that a lookup does not load its
//! own.

use crate::configdb::Snapshot;
use crate::hiera::config::Config;
use crate::hiera::hierarchy::Hierarchy;
use crate::hiera::{Result, Value};
use crate::lookup::{Request, load_config};
use arc_swap::ArcSwapOption;
use std::hash::BuildHasher;
use std::sync::Arc;

/// Slots of [`Configs`]: a handful of configurations serve a deployment
/// (one per environment and Hiera setup), this many cost under a megabyte.
const CONFIG_SLOTS: usize = 256;

/// Loaded configurations, so that a lookup does not load its own (a
/// tenth of a lookup's CPU): a fixed table of the last configuration
/// loaded for each slot, each for one data generation.
///
/// A request that brings its own levels (the shim sends them already
/// interpolated: one hierarchy per node) runs under the environment's
/// configuration loaded with an empty hierarchy, kept once per
/// generation, with its levels beside it ([`Configured::hierarchy`]):
/// only [`Config::hierarchy`] depends on them. Deriving and dropping a
/// configuration per node cost about 10,000 instructions a request.
pub(crate) struct Configs {
    /// Readers never lock; a miss replaces the slot's configuration.
    slots: Box<[ArcSwapOption<Loaded>]>,
    /// Random per process.
    hasher: foldhash::fast::SeedableRandomState,
}

/// A configuration, with what it was loaded for.
pub(crate) struct Loaded {
    pub(crate) config: Config,
    /// `config`'s hierarchy, compiled once.
    hierarchy: Hierarchy,
    generation: u64,
    env: i64,
    /// Whether the configuration was loaded with an empty hierarchy, for
    /// requests with levels of their own (else it has the environment's).
    given: bool,
    merge_behavior: Option<Value>,
    deep_merge_options: Option<Value>,
}

impl Loaded {
    fn is_for(
        &self,
        generation: u64,
        env: i64,
        given: bool,
        merge_behavior: Option<&Value>,
        deep_merge_options: Option<&Value>,
    ) -> bool {
        self.generation == generation
            && self.env == env
            && self.given == given
            && self.merge_behavior.as_ref() == merge_behavior
            && self.deep_merge_options.as_ref() == deep_merge_options
    }
}

/// What a request runs under: a kept configuration (and the levels the
/// request brought, if any: [`Configured::hierarchy`]).
pub(crate) struct Configured {
    loaded: Arc<Loaded>,
}

impl Configured {
    pub(crate) fn config(&self) -> &Config {
        &self.loaded.config
    }

    /// The levels to walk: `request`'s own (the request this was got
    /// for), or the configuration's.
    pub(crate) fn hierarchy<'a>(&'a self, request: &'a Request) -> &'a Hierarchy {
        match request.hierarchy.as_deref() {
            Some(levels) if matches!(levels.written(), Value::Array(items) if !items.is_empty()) => {
                levels
            }
            _ => &self.loaded.hierarchy,
        }
    }

    #[cfg(test)]
    pub(crate) fn loaded(&self) -> &Arc<Loaded> {
        &self.loaded
    }
}

impl Default for Configs {
    fn default() -> Self {
        Configs::new()
    }
}

impl Configs {
    pub(crate) fn new() -> Configs {
        Configs {
            slots: (0..CONFIG_SLOTS).map(|_| ArcSwapOption::empty()).collect(),
            hasher: foldhash::fast::SeedableRandomState::random(),
        }
    }

    /// The configuration `request` runs under
    /// ([`crate::lookup::load_config`]) over `snapshot`, the
    /// snapshot published at `generation` (or later: read the generation
    /// first).
    ///
    /// # Errors
    ///
    /// As [`crate::lookup::load_config`] (errors are not kept).
    pub(crate) fn get(
        &self,
        generation: u64,
        snapshot: &Snapshot,
        request: &Request,
    ) -> Result<Configured> {
        let given = request.hierarchy.is_some();
        let merge_behavior = request.merge_behavior.as_ref();
        let deep_merge_options = request.deep_merge_options.as_ref();
        let hash = self
            .hasher
            .hash_one((request.env, given, merge_behavior, deep_merge_options));
        let index = usize::try_from(hash).unwrap_or_default() % CONFIG_SLOTS;
        let slot = &self.slots[index];
        if let Some(loaded) = &*slot.load() {
            if loaded.is_for(
                generation,
                request.env,
                given,
                merge_behavior,
                deep_merge_options,
            ) {
                let loaded = Arc::clone(loaded);
                return Ok(Configured { loaded });
            }
        }
        let empty = Value::Array(Vec::new());
        let levels_loaded = given.then_some(&empty);
        let config = load_config(
            snapshot,
            request.env,
            levels_loaded,
            merge_behavior,
            deep_merge_options,
        )?;
        let loaded = Arc::new(Loaded {
            hierarchy: Hierarchy::new(config.hierarchy.clone()),
            config,
            generation,
            env: request.env,
            given,
            merge_behavior: merge_behavior.cloned(),
            deep_merge_options: deep_merge_options.cloned(),
        });
        slot.store(Some(Arc::clone(&loaded)));
        Ok(Configured { loaded })
    }
}
