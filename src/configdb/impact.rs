//! Which nodes a change reaches: the registered nodes of an environment
//! whose effective data differ between two snapshots (two generations,
//! or a snapshot and the same with a hypothetical write applied: a
//! dry-run), each with the key paths that changed and their values
//! before and after. Pure: the snapshots hold everything.
//!
//! Exact by construction: each node's effective documents are folded in
//! both snapshots and compared ([`super::diff::key_diff`]), so a change
//! that every node overrides changes no node. Only what a changed
//! document can reach is folded: the nodes whose path passes through it,
//! and of their effective documents the top-level keys it changed
//! ([`Snapshot::effective_keys`]).

use super::diff::hash_diff;
use super::keypath::{KeyPath, get};
use super::snapshot::compare::SlotsChanged;
use super::{ConfigError, DocKind, LevelPath, LevelValue, Snapshot, StoredDoc, Version};
use crate::hiera::{Hash, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// What to compare for each node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Compare {
    /// Only this resource (`None`: every resource the environment
    /// defines, in either snapshot).
    pub(crate) resource: Option<String>,
    /// Only these key paths of each effective document (empty: all).
    pub(crate) keys: Vec<KeyPath>,
}

/// One key path of one resource that differs for a node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PathChange {
    pub(crate) resource: String,
    /// A key path in [`super::keypath`]'s syntax; `""`: the whole value.
    pub(crate) path: String,
    /// The value before and after (`None`: absent).
    pub(crate) before: Option<Value>,
    pub(crate) after: Option<Value>,
}

/// A node whose effective data differ.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NodeChange {
    pub(crate) node: LevelPath,
    pub(crate) changes: Vec<PathChange>,
}

/// The nodes of environment `env`: each value of each level register, as
/// the one-level path `level=value` (levels in order, values sorted).
pub(crate) fn registered_nodes(snapshot: &Snapshot, env: i64) -> Vec<LevelPath> {
    let Some(levels) = snapshot.levels(env) else {
        return Vec::new();
    };
    let mut nodes = Vec::new();
    for level in levels {
        for value in snapshot.register(env, level).unwrap_or_default() {
            if let Ok(pair) = LevelValue::new(level, &value) {
                nodes.push(LevelPath::new(vec![pair]));
            }
        }
    }
    nodes
}

/// The nodes among `nodes` whose effective data in `env` differ between
/// `before` and `after`, in `nodes`' order, each with what changed.
pub(crate) fn nodes_changed(
    before: &Snapshot,
    after: &Snapshot,
    env: i64,
    nodes: &[LevelPath],
    compare: &Compare,
) -> Vec<NodeChange> {
    // Only the nodes a changed slot reaches are folded and compared.
    let resources: Vec<(String, SlotsChanged)> = resources(before, after, env, compare)
        .into_iter()
        .map(|r| {
            let changed = before.slots_changed(after, env, &r);
            (r, changed)
        })
        .collect();
    nodes
        .iter()
        .filter_map(|node| {
            let mut changes = Vec::new();
            for (resource, slots) in &resources {
                if !slots.reaches(node.pairs()) {
                    continue;
                }
                let (a, b) = compared(before, after, env, node, resource, slots);
                changed_paths(resource, &a, &b, &compare.keys, &mut changes);
            }
            (!changes.is_empty()).then(|| NodeChange {
                node: node.clone(),
                changes,
            })
        })
        .collect()
}

/// What to compare of `resource` at `node`: its effective documents'
/// top-level keys that `slots` say may differ (they are all that can), or
/// where a key path cannot name every key, both whole documents.
fn compared(
    before: &Snapshot,
    after: &Snapshot,
    env: i64,
    node: &LevelPath,
    resource: &str,
    slots: &SlotsChanged,
) -> (Arc<Hash>, Arc<Hash>) {
    let keys = slots.keys_at(node.pairs());
    if let (Some(a), Some(b)) = (
        before.effective_keys(env, node, resource, &keys),
        after.effective_keys(env, node, resource, &keys),
    ) {
        return (Arc::new(a), Arc::new(b));
    }
    let whole = |s: &Snapshot| s.effective(env, node, resource).unwrap_or_default();
    (whole(before), whole(after))
}

/// The resources compared: the one asked for, or every one either
/// snapshot defines in `env`.
fn resources(before: &Snapshot, after: &Snapshot, env: i64, compare: &Compare) -> Vec<String> {
    if let Some(one) = &compare.resource {
        return vec![one.clone()];
    }
    let mut all: BTreeSet<String> = BTreeSet::new();
    for s in [before, after] {
        if let Some(names) = s.resource_names(env) {
            all.extend(names.map(str::to_owned));
        }
    }
    all.into_iter().collect()
}

fn changed_paths(resource: &str, a: &Hash, b: &Hash, keys: &[KeyPath], out: &mut Vec<PathChange>) {
    let read = |h: &Hash, path: &str| -> Option<Value> {
        let key = KeyPath::parse(path).ok()?;
        get(h, &key).ok().flatten().cloned()
    };
    let mut push = |path: String, before: Option<Value>, after: Option<Value>| {
        out.push(PathChange {
            resource: resource.to_owned(),
            path,
            before,
            after,
        });
    };
    if keys.is_empty() {
        let diff = hash_diff(a, b);
        for path in diff.all_paths() {
            let (before, after) = if path.is_empty() {
                (Some(Value::Hash(a.clone())), Some(Value::Hash(b.clone())))
            } else {
                (read(a, &path), read(b, &path))
            };
            push(path, before, after);
        }
        return;
    }
    for key in keys {
        let before = get(a, key).ok().flatten();
        let after = get(b, key).ok().flatten();
        if before != after {
            push(key.as_str().to_owned(), before.cloned(), after.cloned());
        }
    }
}

/// One document of a hypothetical write: its new content (`None`:
/// deleted). A key set, a restore or an import is given as the documents
/// it would write (the caller reads what it needs, e.g. the version a
/// restore would copy).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DocChange {
    pub(crate) path: LevelPath,
    pub(crate) resource: String,
    pub(crate) kind: DocKind,
    pub(crate) content: Option<Hash>,
}

/// `snapshot` with `writes` applied to environment `env`, as the store
/// would after writing them; the snapshot itself is left alone.
///
/// # Errors
///
/// As [`Snapshot::with_document`]: an unknown environment, level or
/// resource, or a path out of order.
pub(crate) fn with_writes(
    snapshot: &Snapshot,
    env: i64,
    writes: &[DocChange],
) -> Result<Snapshot, ConfigError> {
    let mut next = snapshot.clone();
    for w in writes {
        let doc = w.content.as_ref().map(|content| {
            let number = snapshot
                .stored(env, &w.path, &w.resource, w.kind)
                .ok()
                .flatten()
                .map_or(0, |d| d.version.number);
            let version = Version {
                number: number + 1,
                created_at: 0,
                size: 0,
                deleted: false,
                author: None,
            };
            StoredDoc::new(version, Arc::new(content.clone()))
        });
        next = next.with_document(env, &w.path, &w.resource, w.kind, doc)?;
    }
    Ok(next)
}

/// A dry-run: the nodes among `nodes` that `writes` would change.
///
/// # Errors
///
/// As [`with_writes`].
pub(crate) fn dry_run(
    snapshot: &Snapshot,
    env: i64,
    writes: &[DocChange],
    nodes: &[LevelPath],
    compare: &Compare,
) -> Result<Vec<NodeChange>, ConfigError> {
    let after = with_writes(snapshot, env, writes)?;
    Ok(nodes_changed(snapshot, &after, env, nodes, compare))
}

#[cfg(test)]
mod bench;
#[cfg(test)]
mod tests;
