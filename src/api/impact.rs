//! The bodies of what a change does (docs/api.md, "Generations and
//! tags", "Which nodes changed", "Dry-runs"): tags, the registered nodes
//! whose effective data differ between two generations, and what a write
//! would change before it is made.

use super::WireValue;
use crate::configdb;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A tag: a name for a generation ([`super::paths::TAGS`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Tag {
    pub(crate) name: String,
    pub(crate) generation: u64,
    #[serde(default)]
    pub(crate) author: Option<String>,
    pub(crate) created_at: i64,
}

impl From<configdb::Tag> for Tag {
    fn from(t: configdb::Tag) -> Tag {
        Tag {
            name: t.name,
            generation: t.generation,
            author: t.author,
            created_at: t.created_at,
        }
    }
}

impl From<Tag> for configdb::Tag {
    fn from(t: Tag) -> configdb::Tag {
        configdb::Tag {
            name: t.name,
            generation: t.generation,
            author: t.author,
            created_at: t.created_at,
        }
    }
}

/// What `POST /api/v1/tags` takes: the name, and the generation it
/// names (absent: the newest).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewTag {
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) generation: Option<u64>,
}

/// A Hiera answer before and after (absent: not found).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct KeyChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) old: Option<WireValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) new: Option<WireValue>,
}

/// Each named key's answers before and after, for the keys whose answer
/// differs.
pub(crate) type KeyChanges = BTreeMap<String, KeyChange>;

/// One node of `nodes/changed`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ChangedNode {
    /// The level value (`node-1`).
    pub(crate) node: String,
    /// The level path as in document URLs (`nodes/node-1`).
    pub(crate) level: String,
    /// Each resource's changed key paths (`""`: the whole document).
    pub(crate) resources: BTreeMap<String, Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) keys: Option<KeyChanges>,
}

/// The answer of [`super::paths::NODES_CHANGED`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct NodesChanged {
    pub(crate) since: u64,
    pub(crate) generation: u64,
    pub(crate) nodes: Vec<ChangedNode>,
}

/// One key path a dry-run would change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PathChange {
    pub(crate) resource: String,
    pub(crate) path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) old: Option<WireValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) new: Option<WireValue>,
}

/// One node a dry-run would change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DryRunNode {
    pub(crate) node: String,
    pub(crate) level: String,
    pub(crate) changes: Vec<PathChange>,
}

/// The answer of a write sent with `?dry_run=true`: nothing was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DryRun {
    pub(crate) dry_run: bool,
    pub(crate) nodes: Vec<DryRunNode>,
    /// By node level path (`nodes/node-1`): the named keys' answers
    /// that would change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) keys: Option<BTreeMap<String, KeyChanges>>,
}

/// One entry of the change feed (`GET /api/v1/changes`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Change {
    pub(crate) generation: u64,
    pub(crate) environment: i64,
    /// The level path as document URLs write it (`nodes/node-1`, `""`:
    /// the root); a register's level name.
    pub(crate) level: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) resource: Option<String>,
    /// `values`, `overrides`, `register` or `scope` (a node scope).
    pub(crate) kind: String,
    /// A `scope` change's node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) version: Option<u64>,
    #[serde(default)]
    pub(crate) author: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) created_at: Option<i64>,
}

/// The answer of `GET /api/v1/changes`: what changed, and the generation
/// to ask from next.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Changes {
    pub(crate) generation: u64,
    pub(crate) changes: Vec<Change>,
}
