//! Values derived once per environment from one snapshot and kept with
//! it (a Hiera 5 environment's hiera.yaml parsed into its layout:
//! `crate::lookup5`), where a lookup would otherwise derive them again.
//! Each is a function of the snapshot's documents alone, so it is kept
//! with the snapshot's memo and dropped with it: every write makes a new
//! snapshot, and a new, empty memo.
//!
//! Bounded: at most [`ENVIRONMENTS`] values; past that, each is derived
//! per request as before.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Values kept per snapshot at most (one per environment and kind).
pub(crate) const ENVIRONMENTS: usize = 1024;

type Kept = Arc<dyn Any + Send + Sync>;

/// One snapshot's derived values, by environment and type.
#[derive(Debug, Default)]
pub(crate) struct Derived {
    kept: Mutex<HashMap<(i64, TypeId), Kept, foldhash::fast::RandomState>>,
}

impl Derived {
    /// The `T` of environment `env`: the kept one, else `make()`'s, kept
    /// while there is room. `make` runs outside the lock: two requests
    /// may both make it; the first kept is the one answered after.
    pub(crate) fn get_or_make<T: Any + Send + Sync>(
        &self,
        env: i64,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        let key = (env, TypeId::of::<T>());
        if let Some(kept) = self.lock().get(&key).cloned()
            && let Ok(kept) = kept.downcast::<T>()
        {
            return kept;
        }
        let made = Arc::new(make());
        let mut kept = self.lock();
        if kept.len() >= ENVIRONMENTS {
            return made;
        }
        let entry = kept.entry(key).or_insert_with(|| made.clone());
        entry.clone().downcast::<T>().unwrap_or(made)
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(i64, TypeId), Kept, foldhash::fast::RandomState>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_value_is_made_once_per_environment_and_kind() {
        let derived = Derived::default();
        let made = Cell::new(0);
        let make = |v: u32| {
            made.set(made.get() + 1);
            v
        };
        assert_eq!(*derived.get_or_make(1, || make(10)), 10);
        assert_eq!(*derived.get_or_make(1, || make(11)), 10);
        assert_eq!(*derived.get_or_make(2, || make(20)), 20);
        assert_eq!(
            *derived.get_or_make(1, || String::from("other kind")),
            "other kind"
        );
        assert_eq!(made.get(), 2);
    }

    #[test]
    fn past_the_bound_values_are_made_per_call() {
        let derived = Derived::default();
        for env in 0..ENVIRONMENTS as i64 {
            derived.get_or_make(env, || env);
        }
        let made = Cell::new(0);
        for _ in 0..2 {
            derived.get_or_make(-1, || made.set(made.get() + 1));
        }
        assert_eq!((made.get(), *derived.get_or_make(5, || 0_i64)), (2, 5));
    }
}
