//! What a change does to the registered nodes of an environment, as the
//! API answers it: between two snapshots (`nodes/changed`: a past
//! generation and now) or before and after a hypothetical write (a
//! dry-run). The node rule is `configdb::impact`'s; this adds the Hiera
//! answers of the keys a request names (each node's level path as the
//! lookup's level, as `hierad lookup --level` reads) and the API's shape.
//! Written once for the server's handlers and `ops::Local`.

use crate::api::WireValue;
use crate::api::impact::{
    ChangedNode, DryRun, DryRunNode, KeyChange, KeyChanges, NodesChanged, PathChange,
};
use crate::configdb::impact::{self, Compare, DocChange, NodeChange};
use crate::configdb::{ConfigError, DocAddress, DocKind, KeyPath, LevelPath, Snapshot, keypath};
use crate::hiera::budget::{Budget, Meter};
use crate::hiera::hierarchy::Hierarchy;
use crate::hiera::lookup::{Answer, Resolution};
use crate::hiera::{Hash, HieraError, Value};
use crate::lookup::{Request, load_config, lookup};
use crate::ops::Write;
use crate::store::ImportBatch;
use std::collections::BTreeMap;

/// Why a preview cannot be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PreviewError {
    /// The write or the request breaks a rule of the model.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A named key's lookup fails (or would overspend `budget`).
    #[error(transparent)]
    Hiera(#[from] HieraError),
}

/// What a request asks to compare.
#[derive(Clone, Debug, Default)]
pub(crate) struct Asked {
    /// Only this resource's effective documents (`None`: all).
    pub(crate) resource: Option<String>,
    /// Hiera keys whose answers to compare, per node.
    pub(crate) keys: Vec<String>,
    /// What each node's lookups of `keys` may spend, together.
    pub(crate) budget: Budget,
}

/// A level path as document URLs write it: `nodes/node-1`.
pub(crate) fn url_form(path: &LevelPath) -> String {
    path.pairs()
        .iter()
        .map(|p| format!("{}/{}", p.level, p.value))
        .collect::<Vec<_>>()
        .join("/")
}

/// A node's name: its last level value.
fn node_name(path: &LevelPath) -> String {
    path.pairs()
        .last()
        .map(|p| p.value.clone())
        .unwrap_or_default()
}

/// The nodes compared: every registered node of `env`, then each of
/// `extra` (a written level) not among them.
fn nodes_of(snapshot: &Snapshot, env: i64, extra: &[LevelPath]) -> Vec<LevelPath> {
    let mut nodes = impact::registered_nodes(snapshot, env);
    for path in extra {
        if !path.is_root() && !nodes.contains(path) {
            nodes.push(path.clone());
        }
    }
    nodes
}

/// The answers of `keys` in `env` at `node`, under the environment's own
/// Hiera configuration (`None`: not found).
fn answers(
    snapshot: &Snapshot,
    env: i64,
    node: &LevelPath,
    keys: &[String],
    budget: Budget,
) -> Result<Vec<Option<Value>>, HieraError> {
    let config = load_config(snapshot, env, None, None, None)?;
    let hierarchy = Hierarchy::new(config.hierarchy.clone());
    let mut meter = Meter::new(budget);
    let mut request = Request {
        env,
        level: node.clone(),
        key: String::new(),
        resolution: Resolution::Priority,
        hierarchy: None,
        merge_behavior: None,
        deep_merge_options: None,
        scope: Hash::default(),
        order_override: None,
        default: None,
        explain: false,
    };
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        request.key.clone_from(key);
        let outcome = lookup(snapshot, &config, &hierarchy, &request, &mut meter)?;
        out.push(match outcome.answer {
            Answer::Found(v) => Some(v.into_owned()),
            Answer::Default(v) => Some(v),
            Answer::NotFound => None,
        });
    }
    Ok(out)
}

/// Each node's changed key answers between `before` and `after` (only
/// nodes with one; none when no keys are asked).
fn key_changes(
    before: &Snapshot,
    after: &Snapshot,
    env: i64,
    nodes: &[LevelPath],
    asked: &Asked,
) -> Result<BTreeMap<LevelPath, KeyChanges>, HieraError> {
    let mut out = BTreeMap::new();
    if asked.keys.is_empty() {
        return Ok(out);
    }
    for node in nodes {
        let old = answers(before, env, node, &asked.keys, asked.budget)?;
        let new = answers(after, env, node, &asked.keys, asked.budget)?;
        let mut changes = KeyChanges::new();
        for ((key, old), new) in asked.keys.iter().zip(old).zip(new) {
            if old != new {
                changes.insert(
                    key.clone(),
                    KeyChange {
                        old: old.map(WireValue),
                        new: new.map(WireValue),
                    },
                );
            }
        }
        if !changes.is_empty() {
            out.insert(node.clone(), changes);
        }
    }
    Ok(out)
}

fn compare(asked: &Asked) -> Compare {
    Compare {
        resource: asked.resource.clone(),
        keys: Vec::new(),
    }
}

/// The registered nodes of `env` whose effective data (or, with keys
/// asked, whose answers) differ between `before` (generation `since`)
/// and `after` (generation `generation`).
///
/// # Errors
///
/// A named key's lookup fails.
pub(crate) fn nodes_changed(
    (since, before): (u64, &Snapshot),
    (generation, after): (u64, &Snapshot),
    env: i64,
    asked: &Asked,
) -> Result<NodesChanged, PreviewError> {
    let nodes = nodes_of(after, env, &[]);
    let changed = impact::nodes_changed(before, after, env, &nodes, &compare(asked));
    let mut keys = key_changes(before, after, env, &nodes, asked)?;
    let mut by_node: BTreeMap<LevelPath, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for NodeChange { node, changes } in changed {
        let resources = by_node.entry(node).or_default();
        for c in changes {
            resources.entry(c.resource).or_default().push(c.path);
        }
    }
    let listed = nodes
        .iter()
        .filter_map(|node| {
            let resources = by_node.remove(node);
            let answers = keys.remove(node);
            (resources.is_some() || answers.is_some()).then(|| ChangedNode {
                node: node_name(node),
                level: url_form(node),
                resources: resources.unwrap_or_default(),
                keys: (!asked.keys.is_empty()).then(|| answers.unwrap_or_default()),
            })
        })
        .collect();
    Ok(NodesChanged {
        since,
        generation,
        nodes: listed,
    })
}

/// What `writes` to `env` would change for its registered nodes (and the
/// written levels), nothing written.
///
/// # Errors
///
/// A write the snapshot cannot take (an unknown environment, level or
/// resource, a path out of order); a named key's lookup fails.
pub(crate) fn dry_run(
    snapshot: &Snapshot,
    env: i64,
    writes: &[DocChange],
    asked: &Asked,
) -> Result<DryRun, PreviewError> {
    let written: Vec<LevelPath> = writes.iter().map(|w| w.path.clone()).collect();
    let nodes = nodes_of(snapshot, env, &written);
    let changed = impact::dry_run(snapshot, env, writes, &nodes, &compare(asked))?;
    let keys = if asked.keys.is_empty() {
        BTreeMap::new()
    } else {
        let after = impact::with_writes(snapshot, env, writes)?;
        key_changes(snapshot, &after, env, &nodes, asked)?
    };
    let nodes = changed
        .into_iter()
        .map(|NodeChange { node, changes }| DryRunNode {
            node: node_name(&node),
            level: url_form(&node),
            changes: changes
                .into_iter()
                .map(|c| PathChange {
                    resource: c.resource,
                    path: c.path,
                    old: c.before.map(WireValue),
                    new: c.after.map(WireValue),
                })
                .collect(),
        })
        .collect();
    Ok(DryRun {
        dry_run: true,
        nodes,
        keys: (!asked.keys.is_empty()).then(|| {
            keys.into_iter()
                .map(|(node, changes)| (url_form(&node), changes))
                .collect()
        }),
    })
}

/// The documents an import of `batch` would write: each of its documents,
/// and a deletion of every other live document of a replaced (path,
/// kind).
///
/// # Errors
///
/// The environment, a level or a resource does not exist (a dry-run does
/// not define resources, as `define_missing_in` would).
pub(crate) fn import_writes(
    snapshot: &Snapshot,
    batch: &ImportBatch,
) -> Result<Vec<DocChange>, ConfigError> {
    let mut writes: Vec<DocChange> = batch
        .documents
        .iter()
        .map(|d| DocChange {
            path: d.path.clone(),
            resource: d.resource.clone(),
            kind: d.kind,
            // A file kept unparsed reads as no data here.
            content: Some(d.content.data().cloned().unwrap_or_default()),
        })
        .collect();
    for (path, kind) in &batch.replace {
        let names: Vec<String> = snapshot
            .resource_names(batch.env)
            .map(|names| names.map(str::to_owned).collect())
            .unwrap_or_default();
        for resource in names {
            let kept = batch
                .documents
                .iter()
                .any(|d| d.resource == resource && d.path == *path && d.kind == *kind);
            if !kept
                && snapshot
                    .stored(batch.env, path, &resource, *kind)?
                    .is_some()
            {
                writes.push(DocChange {
                    path: path.clone(),
                    resource,
                    kind: *kind,
                    content: None,
                });
            }
        }
    }
    Ok(writes)
}

/// The one document a write of `content` (`None`: a deletion) at `path`
/// would make.
pub(crate) fn one(
    path: &LevelPath,
    resource: &str,
    kind: DocKind,
    content: Option<Hash>,
) -> Vec<DocChange> {
    vec![DocChange {
        path: path.clone(),
        resource: resource.to_owned(),
        kind,
        content,
    }]
}

/// [`nodes_changed`] over a store (`hierad nodes changed --db`): now is
/// its newest generation, `since` a generation or a tag's name.
///
/// # Errors
///
/// An unknown environment, tag or resource; a generation not written
/// yet or pruned; a named key's lookup fails.
pub(crate) fn local_nodes_changed(
    store: &dyn crate::store::Store,
    env: i64,
    since: &str,
    resource: Option<&str>,
    keys: &[String],
) -> crate::ops::Result<NodesChanged> {
    let since = match since.parse::<u64>() {
        Ok(g) => g,
        Err(_) => store.tag(since)?.generation,
    };
    let (generation, after) = newest(store)?;
    if after.environment(env).is_none() {
        return Err(ConfigError::from(crate::configdb::NotFound::Environment(env)).into());
    }
    if let Some(r) = resource {
        if !after
            .resource_names(env)
            .is_some_and(|mut n| n.any(|n| n == r))
        {
            return Err(crate::ops::OpsError::Refused(format!(
                "environment {env} defines no resource {r:?}"
            )));
        }
    }
    let before = Snapshot::build(store.load_at(since, Some(env))?);
    let asked = Asked {
        resource: resource.map(str::to_owned),
        keys: keys.to_vec(),
        budget: Budget::DEFAULT,
    };
    nodes_changed((since, &before), (generation, &after), env, &asked).map_err(|e| match e {
        PreviewError::Config(e) => e.into(),
        PreviewError::Hiera(e) => crate::ops::OpsError::Refused(e.to_string()),
    })
}

/// A store's newest generation and the snapshot of all it holds.
fn newest(store: &dyn crate::store::Store) -> crate::ops::Result<(u64, Snapshot)> {
    let crate::store::Changes::Everything { generation, data } = store.changes_since(0)? else {
        return Err(crate::ops::OpsError::Refused(
            "the store did not answer its whole content".to_owned(),
        ));
    };
    Ok((generation, Snapshot::build(data)))
}

/// The document a write of `value` at key `key` of `at` would make, from
/// the snapshot's latest version (siblings kept).
///
/// # Errors
///
/// A key path the document cannot take.
pub(crate) fn key_writes(
    snapshot: &Snapshot,
    at: &DocAddress,
    key: &KeyPath,
    value: Value,
) -> Result<Vec<DocChange>, ConfigError> {
    let mut doc = snapshot
        .stored(at.env, &at.path, &at.resource, at.kind)?
        .map(|d| (*d.content).clone())
        .unwrap_or_default();
    keypath::set(&mut doc, key, value)?;
    Ok(one(&at.path, &at.resource, at.kind, Some(doc)))
}

/// Why a delete or a restore cannot be previewed: what the write itself
/// would answer, for the server (404, 400) and `--db` alike.
#[derive(Debug)]
pub(crate) enum Unwritable {
    /// Nothing to act on.
    Missing(String),
    /// The write cannot be carried out as asked.
    Refused(String),
    /// The address does not hold.
    Config(ConfigError),
}

impl From<ConfigError> for Unwritable {
    fn from(e: ConfigError) -> Unwritable {
        Unwritable::Config(e)
    }
}

impl Unwritable {
    fn into_ops(self) -> crate::ops::OpsError {
        match self {
            Unwritable::Missing(m) | Unwritable::Refused(m) => crate::ops::OpsError::Refused(m),
            Unwritable::Config(e) => e.into(),
        }
    }
}

/// The deletion marker a DELETE of `at` would write.
///
/// # Errors
///
/// Missing: the document has no live version, as the write says.
pub(crate) fn delete_writes(
    snapshot: &Snapshot,
    at: &DocAddress,
) -> Result<Vec<DocChange>, Unwritable> {
    if snapshot
        .stored(at.env, &at.path, &at.resource, at.kind)?
        .is_none()
    {
        return Err(Unwritable::Missing(format!(
            "{at} has no live version to delete"
        )));
    }
    Ok(one(&at.path, &at.resource, at.kind, None))
}

/// The version a restore of `at` to `version` would write, from what the
/// store holds of that version (`found`).
///
/// # Errors
///
/// Missing: no such version; Refused: it is a deletion marker.
pub(crate) fn restore_writes(
    at: &DocAddress,
    version: u64,
    found: Option<(crate::configdb::Version, Hash)>,
) -> Result<Vec<DocChange>, Unwritable> {
    match found {
        None => Err(Unwritable::Missing(format!(
            "{at} has no version {version}"
        ))),
        Some((v, _)) if v.deleted => Err(Unwritable::Refused(format!(
            "version {version} of {at} is a deletion marker: there is nothing to restore"
        ))),
        Some((_, doc)) => Ok(one(&at.path, &at.resource, at.kind, Some(doc))),
    }
}

/// [`dry_run`] of one document write over a store (`--db`), with the
/// checks the server makes before its own dry-run.
///
/// # Errors
///
/// An unknown environment, level, resource or register value; nothing
/// live to delete; no such version to restore, or a deletion marker.
pub(crate) fn local_dry_run(
    store: &dyn crate::store::Store,
    at: &DocAddress,
    write: Write<'_>,
) -> crate::ops::Result<DryRun> {
    let (_, snapshot) = newest(store)?;
    if snapshot.environment(at.env).is_none() {
        return Err(ConfigError::from(crate::configdb::NotFound::Environment(at.env)).into());
    }
    snapshot
        .check_registered(at.env, &at.path)
        .map_err(ConfigError::from)?;
    let writes = match write {
        Write::Put(doc) => one(&at.path, &at.resource, at.kind, Some(doc.clone())),
        Write::Key(key, value) => key_writes(&snapshot, at, key, value.clone())?,
        Write::Delete => delete_writes(&snapshot, at).map_err(Unwritable::into_ops)?,
        Write::Restore(version) => restore_writes(at, version, store.get(at, Some(version))?)
            .map_err(Unwritable::into_ops)?,
    };
    plain_dry_run(&snapshot, at.env, &writes)
}

/// [`dry_run`] of `writes` with no keys named.
fn plain_dry_run(
    snapshot: &Snapshot,
    env: i64,
    writes: &[DocChange],
) -> crate::ops::Result<DryRun> {
    let asked = Asked {
        budget: Budget::DEFAULT,
        ..Asked::default()
    };
    dry_run(snapshot, env, writes, &asked).map_err(|e| match e {
        PreviewError::Config(e) => e.into(),
        PreviewError::Hiera(e) => crate::ops::OpsError::Refused(e.to_string()),
    })
}

/// [`dry_run`] of an import over a store (`hierad import --dry-run
/// --db`), checked as the server's: each path against the registers
/// unless the import registers its values.
///
/// # Errors
///
/// An unknown environment, level, resource or register value.
pub(crate) fn local_import_dry_run(
    store: &dyn crate::store::Store,
    batch: &ImportBatch,
) -> crate::ops::Result<DryRun> {
    let (_, snapshot) = newest(store)?;
    if snapshot.environment(batch.env).is_none() {
        return Err(ConfigError::from(crate::configdb::NotFound::Environment(batch.env)).into());
    }
    let writes = import_writes(&snapshot, batch)?;
    if !batch.register {
        for w in &writes {
            snapshot
                .check_registered(batch.env, &w.path)
                .map_err(ConfigError::from)?;
        }
    }
    plain_dry_run(&snapshot, batch.env, &writes)
}
