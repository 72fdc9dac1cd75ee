//! The request and response types of the "why and what changed"
//! routes (docs/api.md: "Provenance", "Diffs", "Node scopes"), shared by
//! the server and the remote client.

use super::WireValue;
use crate::configdb;
use crate::hiera::{Hash, Value};
use serde::{Deserialize, Serialize};

/// An effective document with each top-level key's origin
/// (`GET …/values?effective&show_lookup`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ShowLookup {
    pub(crate) data: WireValue,
    /// Per top-level key, in the document's order.
    pub(crate) lookup: indexmap::IndexMap<String, Origin>,
}

/// Which stored document last supplied a key
/// ([`crate::configdb::provenance`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Origin {
    /// The level path, `nodes/node-12` (the root: `""`).
    pub(crate) level: String,
    /// `values` or `overrides`.
    pub(crate) kind: String,
    pub(crate) version: u64,
    #[serde(default)]
    pub(crate) author: Option<String>,
    pub(crate) created_at: i64,
}

impl From<&configdb::provenance::Origin> for Origin {
    fn from(o: &configdb::provenance::Origin) -> Origin {
        Origin {
            level: o.level.clone(),
            kind: o.kind.as_str().to_owned(),
            version: o.version.number,
            author: o.version.author.clone(),
            created_at: o.version.created_at,
        }
    }
}

impl ShowLookup {
    /// The answer for `effective` and its keys' `origins`.
    pub(crate) fn new(
        effective: Hash,
        origins: &[(String, configdb::provenance::Origin)],
    ) -> ShowLookup {
        ShowLookup {
            data: WireValue(Value::Hash(effective)),
            lookup: origins.iter().map(|(k, o)| (k.clone(), o.into())).collect(),
        }
    }
}

/// A diff between two versions of a document or two generations of an
/// effective one (`GET …/values/diff`): key paths added, removed and
/// changed, and the RFC 6902 JSON Patch turning the first into the
/// second ([`crate::configdb::diff`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DiffAnswer {
    /// The version (or generation) compared from.
    pub(crate) from: u64,
    pub(crate) to: u64,
    pub(crate) added: Vec<String>,
    pub(crate) removed: Vec<String>,
    pub(crate) changed: Vec<ChangedPath>,
    pub(crate) patch: json_patch::Patch,
}

/// A key path whose value changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ChangedPath {
    pub(crate) path: String,
    pub(crate) old: WireValue,
    pub(crate) new: WireValue,
}

impl DiffAnswer {
    /// The diff from `a` (version or generation `from`) to `b` (`to`).
    pub(crate) fn new(from: u64, to: u64, a: &Hash, b: &Hash) -> DiffAnswer {
        let keys = configdb::diff::hash_diff(a, b);
        let at = |doc: &Hash, path: &str| -> Value {
            if path.is_empty() {
                return Value::Hash(doc.clone());
            }
            configdb::KeyPath::parse(path)
                .ok()
                .and_then(|key| configdb::keypath::get(doc, &key).ok().flatten().cloned())
                .unwrap_or(Value::Nil)
        };
        let changed = keys
            .changed
            .iter()
            .map(|path| ChangedPath {
                path: path.clone(),
                old: WireValue(at(a, path)),
                new: WireValue(at(b, path)),
            })
            .collect();
        DiffAnswer {
            from,
            to,
            added: keys.added,
            removed: keys.removed,
            changed,
            patch: configdb::diff::patch(&Value::Hash(a.clone()), &Value::Hash(b.clone())),
        }
    }
}

/// A node's stored scope, as `GET …/nodes/{node}/scope` answers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct NodeScope {
    pub(crate) node: String,
    pub(crate) scope: serde_json::Map<String, serde_json::Value>,
    pub(crate) version: u64,
    #[serde(default)]
    pub(crate) author: Option<String>,
    pub(crate) created_at: i64,
}
