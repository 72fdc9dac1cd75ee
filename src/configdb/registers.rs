//! Level registers as the model sees them: the one rule that
//! checks a level path against an environment's registers ([`check`]),
//! and the in-memory copy of every register that a [`Snapshot`] holds
//! ([`Registers`]), so a read checks its path with no store access.
//!
//! The store checks writes with the same rule over its tables
//! (`Store::check_registered`); the snapshot's copy follows the store
//! through the change log like documents do (a register write takes a
//! generation and names its register; readers read it anew).
//!
//! [`Snapshot`]: super::Snapshot

use super::error::NotFound;
use super::level::LevelPath;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// One register as the store holds it: environment, level, values (an
/// empty list is an empty register, which refuses every value).
pub(crate) type RegisterRow = (i64, String, Vec<String>);

/// Checks every level value of `path` against `env`'s registers: a value
/// passes when its level has no register in `env` or the register lists
/// it. `listed(level, value)` says whether `env`'s register of `level`
/// lists `value` (`None`: no register); `registered_in(level, value)`
/// names the live environments whose register lists it, asked only for
/// the error.
///
/// # Errors
///
/// [`NotFound::Unregistered`] for a value no other environment registers,
/// [`NotFound::NotAssigned`] for one only others register; what the two
/// functions return.
pub(crate) fn check<E: From<NotFound>>(
    env: i64,
    path: &LevelPath,
    mut listed: impl FnMut(&str, &str) -> Result<Option<bool>, E>,
    mut registered_in: impl FnMut(&str, &str) -> Result<Vec<i64>, E>,
) -> Result<(), E> {
    for pair in path.pairs() {
        if listed(&pair.level, &pair.value)? != Some(false) {
            continue;
        }
        let mut elsewhere = registered_in(&pair.level, &pair.value)?;
        elsewhere.retain(|e| *e != env);
        let (level, value) = (pair.level.clone(), pair.value.clone());
        return Err(NotFound::unregistered(env, level, value, elsewhere).into());
    }
    Ok(())
}

type Values = HashSet<String, foldhash::fast::RandomState>;
/// One environment's registers, by level; each shared with the snapshots
/// that did not change it.
type EnvRegisters = HashMap<String, Arc<Values>, foldhash::fast::RandomState>;

/// Every register of every environment (deleted ones too, as the store
/// keeps them until a purge), immutable: a change makes a new one that
/// shares every register it did not touch.
#[derive(Clone, Debug, Default)]
pub(crate) struct Registers {
    by_env: BTreeMap<i64, Arc<EnvRegisters>>,
}

impl Registers {
    /// The registers the store listed.
    pub(crate) fn from_rows(rows: Vec<RegisterRow>) -> Registers {
        let mut by_env: BTreeMap<i64, EnvRegisters> = BTreeMap::new();
        for (env, level, values) in rows {
            by_env
                .entry(env)
                .or_default()
                .insert(level, Arc::new(values.into_iter().collect()));
        }
        Registers {
            by_env: by_env.into_iter().map(|(e, r)| (e, Arc::new(r))).collect(),
        }
    }

    /// A copy with the register of `level` in `env` set to `values`
    /// (`None`: removed), sharing every other register.
    pub(crate) fn with(&self, env: i64, level: &str, values: Option<Vec<String>>) -> Registers {
        let mut by_env = self.by_env.clone();
        let mut levels = by_env
            .get(&env)
            .map(|r| EnvRegisters::clone(r))
            .unwrap_or_default();
        match values {
            Some(values) => {
                levels.insert(level.to_owned(), Arc::new(values.into_iter().collect()));
            }
            None => {
                levels.remove(level);
            }
        }
        if levels.is_empty() {
            by_env.remove(&env);
        } else {
            by_env.insert(env, Arc::new(levels));
        }
        Registers { by_env }
    }

    /// The values `env`'s register of `level` lists, sorted; `None`: no
    /// such register.
    pub(crate) fn values(&self, env: i64, level: &str) -> Option<Vec<String>> {
        let mut values: Vec<String> = self.by_env.get(&env)?.get(level)?.iter().cloned().collect();
        values.sort();
        Some(values)
    }

    /// Whether `env`'s register of `level` lists `value`; `None`: no such
    /// register.
    pub(crate) fn lists(&self, env: i64, level: &str, value: &str) -> Option<bool> {
        Some(self.by_env.get(&env)?.get(level)?.contains(value))
    }

    /// The environments (among those `live` accepts) whose register of
    /// `level` lists `value`, in order.
    pub(crate) fn listing(&self, level: &str, value: &str, live: impl Fn(i64) -> bool) -> Vec<i64> {
        self.by_env
            .iter()
            .filter(|(env, regs)| live(**env) && regs.get(level).is_some_and(|v| v.contains(value)))
            .map(|(env, _)| *env)
            .collect()
    }

    /// [`check`] against these registers; `live` says which environments
    /// the error may name.
    ///
    /// # Errors
    ///
    /// As [`check`].
    pub(crate) fn check(
        &self,
        env: i64,
        path: &LevelPath,
        live: impl Fn(i64) -> bool,
    ) -> Result<(), NotFound> {
        check(
            env,
            path,
            |level, value| Ok(self.lists(env, level, value)),
            |level, value| Ok(self.listing(level, value, &live)),
        )
    }

    /// What the registers take on the heap, estimated: each value's
    /// string and its table slot, each register's table.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        let slot = std::mem::size_of::<String>() + 1;
        self.by_env
            .values()
            .flat_map(|levels| levels.iter())
            .map(|(level, values)| {
                level.capacity()
                    + std::mem::size_of::<Values>()
                    + values.capacity() * slot
                    + values.iter().map(String::capacity).sum::<usize>()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> LevelPath {
        LevelPath::parse_cli(text).unwrap()
    }

    fn row(env: i64, level: &str, values: &[&str]) -> RegisterRow {
        (
            env,
            level.to_owned(),
            values.iter().map(|v| (*v).to_owned()).collect(),
        )
    }

    fn all_live(_: i64) -> bool {
        true
    }

    #[test]
    fn unregistered_levels_pass_and_registered_ones_list_their_values() {
        let regs = Registers::from_rows(vec![
            row(1, "nodes", &["n1", "n2"]),
            row(2, "nodes", &["n7"]),
            row(1, "role", &[]),
        ]);
        assert_eq!(regs.lists(1, "nodes", "n1"), Some(true));
        assert_eq!(regs.lists(1, "nodes", "n7"), Some(false));
        assert_eq!(regs.lists(3, "nodes", "n1"), None);
        assert_eq!(regs.lists(1, "rack", "r1"), None);
        // An empty register refuses every value.
        assert_eq!(regs.lists(1, "role", "any"), Some(false));
        regs.check(1, &LevelPath::root(), all_live).unwrap();
        regs.check(1, &path("nodes=n2"), all_live).unwrap();
        regs.check(3, &path("nodes=anything"), all_live).unwrap();
        assert_eq!(
            regs.check(1, &path("nodes=n9"), all_live),
            Err(NotFound::Unregistered {
                env: 1,
                level: "nodes".to_owned(),
                value: "n9".to_owned()
            })
        );
        assert_eq!(
            regs.check(1, &path("nodes=n7"), all_live),
            Err(NotFound::NotAssigned {
                env: 1,
                level: "nodes".to_owned(),
                value: "n7".to_owned(),
                elsewhere: vec![2]
            })
        );
        // Only live environments are named.
        assert_eq!(
            regs.check(1, &path("nodes=n7"), |e| e != 2),
            Err(NotFound::Unregistered {
                env: 1,
                level: "nodes".to_owned(),
                value: "n7".to_owned()
            })
        );
        // The first refused pair decides.
        assert!(matches!(
            regs.check(1, &path("role=r,nodes=n1"), all_live),
            Err(NotFound::Unregistered { level, .. }) if level == "role"
        ));
    }

    #[test]
    fn a_change_makes_a_new_copy_sharing_the_rest() {
        let old = Registers::from_rows(vec![row(1, "nodes", &["n1"]), row(2, "nodes", &["n7"])]);
        let new = old.with(1, "nodes", Some(vec!["n1".to_owned(), "n3".to_owned()]));
        assert_eq!(old.lists(1, "nodes", "n3"), Some(false));
        assert_eq!(new.lists(1, "nodes", "n3"), Some(true));
        assert!(Arc::ptr_eq(&old.by_env[&2], &new.by_env[&2]));
        let gone = new.with(1, "nodes", None);
        assert_eq!(gone.lists(1, "nodes", "n1"), None);
        assert!(!gone.by_env.contains_key(&1));
        let created = gone.with(5, "nodes", Some(Vec::new()));
        assert_eq!(created.lists(5, "nodes", "n1"), Some(false));
        assert_eq!(created.listing("nodes", "n7", all_live), vec![2]);
    }

    #[test]
    fn a_thousand_nodes_cost_about_a_hundred_kilobytes() {
        let values: Vec<String> = (0..1000).map(|i| format!("node-{i}.domain.tld")).collect();
        let regs = Registers::from_rows(vec![(1, "nodes".to_owned(), values)]);
        let bytes = regs.heap_bytes();
        eprintln!("registers of 1,000 nodes: {bytes} bytes on the heap");
        assert!(bytes > 1000 * 20 && bytes < 1000 * 200, "{bytes}");
    }
}
