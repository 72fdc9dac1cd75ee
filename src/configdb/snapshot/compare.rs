//! Which slots of a resource hold different documents in two snapshots,
//! so a comparison of effective data ([`crate::configdb::impact`]) folds
//! only the nodes a changed slot can reach: a node's effective document
//! is the fold of the root's and its own slots' documents, so where none
//! of those differ, neither does the fold.

use super::{ResourceData, SlotDocs, Snapshot};
use crate::configdb::LevelValue;
use std::collections::HashSet;
use std::sync::Arc;

/// Where the documents of one resource differ between two snapshots.
#[derive(Debug, Default)]
pub(crate) struct SlotsChanged {
    /// The root's documents differ: every node may differ.
    pub(crate) root: bool,
    /// The level values whose documents differ.
    pub(crate) slots: HashSet<LevelValue>,
}

impl SlotsChanged {
    /// Whether the effective document at a path of `pairs` may differ.
    pub(crate) fn reaches(&self, pairs: &[LevelValue]) -> bool {
        self.root || pairs.iter().any(|p| self.slots.contains(p))
    }
}

fn same(a: &SlotDocs, b: &SlotDocs) -> bool {
    let doc = |x: &Option<super::StoredDoc>, y: &Option<super::StoredDoc>| match (x, y) {
        (None, None) => true,
        (Some(x), Some(y)) => Arc::ptr_eq(&x.content, &y.content) || x.content == y.content,
        _ => false,
    };
    doc(&a.values, &b.values) && doc(&a.overrides, &b.overrides)
}

impl Snapshot {
    fn resource_data(&self, env: i64, resource: &str) -> Option<&Arc<ResourceData>> {
        self.envs.get(&env)?.resources.get(resource)
    }

    /// Where `resource`'s documents in `env` differ between this snapshot
    /// and `other` (a resource defined in only one: at the root and
    /// everywhere it has documents).
    pub(crate) fn slots_changed(&self, other: &Snapshot, env: i64, resource: &str) -> SlotsChanged {
        let empty = ResourceData::default();
        let (a, b) = match (
            self.resource_data(env, resource),
            other.resource_data(env, resource),
        ) {
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) => return SlotsChanged::default(),
            (None, None) => return SlotsChanged::default(),
            (a, b) => (a.map_or(&empty, |a| &**a), b.map_or(&empty, |b| &**b)),
        };
        let none = SlotDocs::default();
        let mut changed = SlotsChanged {
            root: !same(&a.root, &b.root),
            slots: HashSet::new(),
        };
        for (slot, docs) in &a.slots {
            if !same(docs, b.slots.get(slot).unwrap_or(&none)) {
                changed.slots.insert(slot.clone());
            }
        }
        for (slot, docs) in &b.slots {
            if !a.slots.contains_key(slot) && !same(&none, docs) {
                changed.slots.insert(slot.clone());
            }
        }
        changed
    }
}
