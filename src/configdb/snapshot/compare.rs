//! Where two snapshots differ, so a comparison of effective data
//! ([`crate::configdb::impact`]) folds only what a change can reach: a
//! node's effective document is the fold of the root's and its own
//! slots' documents, so where none of those differ, neither does the
//! fold; and each top-level key of it folds only its layers' values of
//! that key, so only the top-level keys a changed document changed can
//! differ. A root-level change of one key over 1,000 nodes then folds
//! that key 1,000 times, not 1,000 whole documents.

use super::{ResourceData, SlotDocs, Snapshot, StoredDoc};
use crate::configdb::{LevelPath, LevelValue};
use crate::hiera::Hash;
use crate::hiera::value::{HashedKey, ValueSet};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// Where the documents of one resource differ between two snapshots.
#[derive(Debug, Default)]
pub(crate) struct SlotsChanged {
    /// The root's documents differ: every node may differ.
    pub(crate) root: bool,
    /// The top-level keys the root's documents changed.
    root_keys: ValueSet,
    /// The level values whose documents differ, with the top-level keys
    /// they changed.
    slots: HashMap<LevelValue, ValueSet>,
}

impl SlotsChanged {
    /// Whether the effective document at a path of `pairs` may differ.
    pub(crate) fn reaches(&self, pairs: &[LevelValue]) -> bool {
        self.root || pairs.iter().any(|p| self.slots.contains_key(p))
    }

    /// The top-level keys of the effective document at a path of `pairs`
    /// that may differ.
    pub(crate) fn keys_at(&self, pairs: &[LevelValue]) -> Cow<'_, ValueSet> {
        let mut out = Cow::Borrowed(&self.root_keys);
        for keys in pairs.iter().filter_map(|p| self.slots.get(p)) {
            out.to_mut().extend(keys.iter().cloned());
        }
        out
    }
}

fn same(a: &SlotDocs, b: &SlotDocs) -> bool {
    let doc = |x: &Option<StoredDoc>, y: &Option<StoredDoc>| match (x, y) {
        (None, None) => true,
        (Some(x), Some(y)) => Arc::ptr_eq(&x.content, &y.content) || x.content == y.content,
        _ => false,
    };
    doc(&a.values, &b.values) && doc(&a.overrides, &b.overrides)
}

/// The top-level keys whose values differ between two slots' documents
/// (values and overrides alike).
fn keys_changed(a: &SlotDocs, b: &SlotDocs) -> ValueSet {
    let mut out = ValueSet::default();
    let empty = Hash::default();
    for (x, y) in [(&a.values, &b.values), (&a.overrides, &b.overrides)] {
        let x = x.as_ref().map_or(&empty, |d| &*d.content);
        let y = y.as_ref().map_or(&empty, |d| &*d.content);
        if std::ptr::eq(x, y) {
            continue;
        }
        for (k, v) in x {
            if y.get(k) != Some(v) {
                out.insert(k.clone());
            }
        }
        out.extend(y.keys().filter(|k| !x.contains_key(*k)).cloned());
    }
    out
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
        let root = !same(&a.root, &b.root);
        let mut changed = SlotsChanged {
            root,
            root_keys: if root {
                keys_changed(&a.root, &b.root)
            } else {
                ValueSet::default()
            },
            slots: HashMap::new(),
        };
        for (slot, docs) in &a.slots {
            let other = b.slots.get(slot).unwrap_or(&none);
            if !same(docs, other) {
                changed
                    .slots
                    .insert(slot.clone(), keys_changed(docs, other));
            }
        }
        for (slot, docs) in &b.slots {
            if !a.slots.contains_key(slot) && !same(&none, docs) {
                changed
                    .slots
                    .insert(slot.clone(), keys_changed(&none, docs));
            }
        }
        changed
    }

    /// The top-level `keys` of `resource`'s effective document at `path`
    /// in `env`, each folded from its own layers alone
    /// ([`super::PathReader::effective_key`]); absent keys are left out,
    /// and a resource or path the snapshot cannot reach holds none.
    /// `None` when a document on the path has a top-level key that is not
    /// a String: a key path cannot name it, so compare whole documents.
    pub(crate) fn effective_keys(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
        keys: &ValueSet,
    ) -> Option<Hash> {
        let mut out = Hash::default();
        let Some(reader) = self.at(env, path) else {
            return Some(out);
        };
        let Some(data) = reader.env.resources.get(resource) else {
            return Some(out);
        };
        let plain = std::iter::once(&data.root)
            .chain(path.pairs().iter().filter_map(|p| data.slots.get(p)))
            .flat_map(|slot| [&slot.values, &slot.overrides])
            .flatten()
            .all(|doc| doc.string_keys);
        if !plain {
            return None;
        }
        for key in keys {
            if let Some((value, _)) = data.effective_key(path.pairs(), &HashedKey::new(key)) {
                out.insert(key.clone(), value.into_owned());
            }
        }
        Some(out)
    }
}
