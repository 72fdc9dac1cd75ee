//! Where each top-level key of an effective document came from: the last
//! layer of the fold ([`super::fold`]: the root and then each level of
//! the path, values then overrides) that holds the key. A later layer
//! that holds a key replaces or deep-merges into what the earlier ones
//! gave, so it is the one that last supplied it. Pure: the layers come
//! from the snapshot (the server) or the store (`hierad config --db`).

use super::{DocKind, LevelPath, Version};
use crate::hiera::{Hash, Value};

/// One layer of the fold, as stored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layer<'a> {
    /// The level path whose slot holds the document (the root: empty).
    pub(crate) path: &'a LevelPath,
    pub(crate) kind: DocKind,
    pub(crate) version: &'a Version,
    pub(crate) content: &'a Hash,
}

/// Which stored document last supplied a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Origin {
    /// The level path in the URL form, `nodes/node-12` (the root: `""`).
    pub(crate) level: String,
    pub(crate) kind: DocKind,
    pub(crate) version: Version,
}

/// The level path as URL segments: `nodes/node-12/role/web`.
pub(crate) fn level_url(path: &LevelPath) -> String {
    path.pairs()
        .iter()
        .map(|p| format!("{}/{}", p.level, p.value))
        .collect::<Vec<_>>()
        .join("/")
}

/// Each String top-level key of the fold of `layers` (given least
/// specific first) with the last layer that holds it, in the order the
/// keys first appear (the fold's own order). A key that is not a String
/// (a YAML document may have one) has no key path and is left out.
pub(crate) fn origins(layers: &[Layer<'_>]) -> Vec<(String, Origin)> {
    let mut found: indexmap::IndexMap<&str, &Layer<'_>> = indexmap::IndexMap::new();
    for layer in layers {
        for key in layer.content.keys() {
            if let Value::String(name) = key {
                found.insert(name.as_str(), layer);
            }
        }
    }
    found
        .into_iter()
        .map(|(key, layer)| {
            let origin = Origin {
                level: level_url(layer.path),
                kind: layer.kind,
                version: layer.version.clone(),
            };
            (key.to_owned(), origin)
        })
        .collect()
}

#[cfg(test)]
mod tests;
