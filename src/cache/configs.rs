//! Loaded Hiera configurations, kept per environment and request
//! settings for one data generation, so that a lookup does not load its
//! own.

use super::Doorkeeper;
use crate::configdb::Snapshot;
use crate::hiera::config::Config;
use crate::hiera::{Result, Value};
use crate::lookup::{Request, hierarchy_value, load_config};
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
/// A configuration with a hierarchy of the request's own is derived
/// from the environment's configuration with an empty one: only
/// [`Config::hierarchy`] depends on it. So clients that send the levels
/// already interpolated (one hierarchy per node) pay for a copy, not a
/// load.
pub(crate) struct Configs {
    /// Readers never lock; a miss replaces the slot's configuration.
    slots: Box<[ArcSwapOption<Loaded>]>,
    /// Configurations with a hierarchy of the request's own are kept from
    /// their second miss. Interpolated hierarchies are one per node;
    /// keeping each replaced (and dropped, cold) a kept one, which cost
    /// more than deriving them.
    doorkeeper: Doorkeeper,
    /// Random per process; fixed in tests, whose assertions about what is
    /// kept depend on which requests share a slot.
    hasher: foldhash::fast::SeedableRandomState,
}

/// A configuration, with what it was loaded for.
pub(crate) struct Loaded {
    pub(crate) config: Config,
    generation: u64,
    env: i64,
    /// Whether [`Config::hierarchy`] is the request's (else the
    /// environment's).
    given: bool,
    merge_behavior: Option<Value>,
    deep_merge_options: Option<Value>,
}

impl Loaded {
    fn is_for(
        &self,
        generation: u64,
        env: i64,
        hierarchy: Option<&[String]>,
        merge_behavior: Option<&Value>,
        deep_merge_options: Option<&Value>,
    ) -> bool {
        let same_levels = match (hierarchy, &self.config.hierarchy) {
            (None, _) => !self.given,
            (Some(levels), Value::Array(have)) => {
                self.given
                    && levels.len() == have.len()
                    && levels
                        .iter()
                        .zip(have)
                        .all(|(l, h)| h.as_str() == Some(l.as_str()))
            }
            (Some(_), _) => false,
        };
        self.generation == generation
            && self.env == env
            && same_levels
            && self.merge_behavior.as_ref() == merge_behavior
            && self.deep_merge_options.as_ref() == deep_merge_options
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
            doorkeeper: Doorkeeper::new(CONFIG_SLOTS),
            hasher: if cfg!(test) {
                foldhash::fast::SeedableRandomState::fixed()
            } else {
                foldhash::fast::SeedableRandomState::random()
            },
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
    ) -> Result<Arc<Loaded>> {
        self.get_for(
            generation,
            snapshot,
            request.env,
            request.hierarchy.as_deref(),
            request.merge_behavior.as_ref(),
            request.deep_merge_options.as_ref(),
        )
    }

    fn get_for(
        &self,
        generation: u64,
        snapshot: &Snapshot,
        env: i64,
        hierarchy: Option<&[String]>,
        merge_behavior: Option<&Value>,
        deep_merge_options: Option<&Value>,
    ) -> Result<Arc<Loaded>> {
        let hash = self
            .hasher
            .hash_one((env, hierarchy, merge_behavior, deep_merge_options));
        let index = usize::try_from(hash).unwrap_or_default() % CONFIG_SLOTS;
        let slot = &self.slots[index];
        if let Some(loaded) = &*slot.load() {
            if loaded.is_for(
                generation,
                env,
                hierarchy,
                merge_behavior,
                deep_merge_options,
            ) {
                return Ok(Arc::clone(loaded));
            }
        }
        let derived = hierarchy.is_some_and(|levels| !levels.is_empty());
        let config = match hierarchy {
            Some(levels) if derived => {
                let base = self.get_for(
                    generation,
                    snapshot,
                    env,
                    Some(&[]),
                    merge_behavior,
                    deep_merge_options,
                )?;
                let mut config = base.config.clone();
                config.hierarchy = hierarchy_value(levels);
                config
            }
            _ => load_config(snapshot, env, hierarchy, merge_behavior, deep_merge_options)?,
        };
        let loaded = Arc::new(Loaded {
            config,
            generation,
            env,
            given: hierarchy.is_some(),
            merge_behavior: merge_behavior.cloned(),
            deep_merge_options: deep_merge_options.cloned(),
        });
        if !derived || self.doorkeeper.missed_before(hash) {
            slot.store(Some(Arc::clone(&loaded)));
        }
        Ok(loaded)
    }
}
