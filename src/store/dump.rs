//! A whole ConfigDB as a stream of rows, for copying it from one store to
//! another (`hierad migrate`): [`Store::dump`](super::Store::dump)
//! yields [`Dumped`] items, [`Store::replay`](super::Store::replay) writes
//! them into an empty store keeping every id, version number and date.
//!
//! [`Tally`] counts what went by and computes a checksum of it, the same
//! way from either side: SHA-256 over the sorted SHA-256 digests of each
//! item's canonical form, so it depends on the content and not on the
//! order an engine yields it in. A document's content enters as its wire
//! JSON (whose Hash order matters and is kept); a definition's content,
//! a JSON object of metadata, with its keys sorted; a version's number,
//! date, author and whether it is a deletion marker.

use super::Result;
use crate::configdb::tags::Tag;
use crate::configdb::unparsed::Content;
use crate::configdb::{Component, DocKind, Environment, HieraVersion, Retention, Version};
use serde_json::{Value as Json, json};
use sha2::{Digest, Sha256};

/// One row of a dump.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Dumped {
    /// A component with its resource definitions (ids and content kept).
    Component(Component),
    /// An environment, deleted ones included, with its own retention.
    Environment {
        env: Environment,
        /// When it was deleted (Unix seconds); `None`: live.
        deleted_at: Option<i64>,
        retention: Retention,
    },
    /// A register (possibly empty) of one level of an environment.
    Register {
        env: i64,
        level: String,
        values: Vec<String>,
    },
    /// One stored version of one document; `content` is `None` for a
    /// deletion marker. A document lives at a slot: `level` and `value`
    /// are both empty at the root.
    Version {
        env: i64,
        level: String,
        value: String,
        resource: String,
        kind: DocKind,
        version: Version,
        content: Option<Content>,
    },
    /// One version of a node's scope (`store/shared/scopes.rs`): its JSON
    /// text, `None` for a deletion marker. A node's versions come oldest
    /// first.
    Scope {
        env: i64,
        node: String,
        version: Version,
        content: Option<String>,
    },
    /// A tag. Its generation names the source's history, which a copy
    /// cannot read at: the copy reads it as gone (410), not as ahead.
    Tag(Tag),
}

impl Dumped {
    /// The canonical form the checksum digests (see the module).
    fn canonical(&self) -> String {
        let line = match self {
            Dumped::Component(c) => {
                let definitions: Vec<Json> = c
                    .resource_definitions
                    .iter()
                    .map(|d| json!([d.id, d.name, sorted(&Json::Object(d.content.clone()))]))
                    .collect();
                json!(["component", c.id, c.name, definitions])
            }
            Dumped::Environment {
                env,
                deleted_at,
                retention,
            } => {
                let mut line = json!([
                    "environment",
                    env.id,
                    env.components,
                    env.hierarchy_levels,
                    deleted_at,
                    retention.keep_versions,
                    retention.keep_days
                ]);
                // Hiera 3 environments digest as before Hiera 5 ones existed.
                if let (Json::Array(items), HieraVersion::Five) = (&mut line, env.hiera) {
                    items.push(json!(env.hiera.number()));
                }
                line
            }
            Dumped::Register { env, level, values } => {
                let mut values = values.clone();
                values.sort();
                json!(["register", env, level, values])
            }
            Dumped::Version {
                env,
                level,
                value,
                resource,
                kind,
                version,
                content,
            } => json!([
                "version",
                env,
                level,
                value,
                resource,
                kind.as_str(),
                version.number,
                version.created_at,
                version.deleted,
                version.author,
                content.as_ref().map(Content::to_stored)
            ]),
            Dumped::Scope {
                env,
                node,
                version,
                content,
            } => json!([
                "scope",
                env,
                node,
                version.number,
                version.created_at,
                version.deleted,
                version.author,
                content
            ]),
            Dumped::Tag(t) => json!(["tag", t.name, t.generation, t.created_at, t.author]),
        };
        line.to_string()
    }
}

/// `value` with every object's keys sorted.
fn sorted(value: &Json) -> Json {
    match value {
        Json::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Json::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Json::Array(items) => Json::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// What a dump held: counts by kind and the checksum (see the module).
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    pub(crate) components: u64,
    pub(crate) definitions: u64,
    pub(crate) environments: u64,
    pub(crate) deleted_environments: u64,
    pub(crate) registers: u64,
    pub(crate) register_values: u64,
    pub(crate) documents: u64,
    pub(crate) versions: u64,
    pub(crate) deletion_markers: u64,
    pub(crate) scope_versions: u64,
    pub(crate) tags: u64,
    digests: Vec<[u8; 32]>,
    /// The document of the last version counted (versions of one
    /// document come together).
    last_document: Option<(i64, String, String, String, DocKind)>,
}

impl Tally {
    /// Counts `item`.
    pub(crate) fn add(&mut self, item: &Dumped) {
        self.digests
            .push(Sha256::digest(item.canonical().as_bytes()).into());
        match item {
            Dumped::Component(c) => {
                self.components += 1;
                self.definitions += c.resource_definitions.len() as u64;
            }
            Dumped::Environment { deleted_at, .. } => {
                self.environments += 1;
                self.deleted_environments += u64::from(deleted_at.is_some());
            }
            Dumped::Register { values, .. } => {
                self.registers += 1;
                self.register_values += values.len() as u64;
            }
            Dumped::Version {
                env,
                level,
                value,
                resource,
                kind,
                version,
                ..
            } => {
                self.versions += 1;
                self.deletion_markers += u64::from(version.deleted);
                let document = (*env, level.clone(), value.clone(), resource.clone(), *kind);
                if self.last_document.as_ref() != Some(&document) {
                    self.documents += 1;
                    self.last_document = Some(document);
                }
            }
            Dumped::Scope { .. } => self.scope_versions += 1,
            Dumped::Tag(_) => self.tags += 1,
        }
    }

    /// The counts, named as `hierad migrate` prints them.
    pub(crate) fn counts(&self) -> [(&'static str, u64); 11] {
        [
            ("components", self.components),
            ("resource definitions", self.definitions),
            ("environments", self.environments),
            ("  of which deleted", self.deleted_environments),
            ("registers", self.registers),
            ("register values", self.register_values),
            ("documents", self.documents),
            ("versions", self.versions),
            ("  of which deletion markers", self.deletion_markers),
            ("node scope versions", self.scope_versions),
            ("tags", self.tags),
        ]
    }

    /// The checksum, in hex (see the module).
    pub(crate) fn checksum(&self) -> String {
        let mut digests = self.digests.clone();
        digests.sort_unstable();
        let mut all = Sha256::new();
        for d in &digests {
            all.update(d);
        }
        all.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The whole dump of `store`, tallied.
///
/// # Errors
///
/// What the store's dump returns.
pub(crate) fn tally(store: &dyn super::Store) -> Result<Tally> {
    let mut tally = Tally::default();
    store.dump(&mut |item| {
        tally.add(&item);
        Ok(())
    })?;
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configdb::ResourceDefinition;
    use crate::hiera::Value;
    use crate::wire;

    fn version(number: u64, content: Option<&str>) -> Dumped {
        let content = content.map(|text| match wire::from_str(text).unwrap() {
            Value::Hash(h) => Content::Data(h),
            other => panic!("{other:?}"),
        });
        Dumped::Version {
            env: 1,
            level: String::new(),
            value: String::new(),
            resource: "globals".to_owned(),
            kind: DocKind::Values,
            version: Version {
                number,
                created_at: 1_700_000_000,
                size: 0,
                deleted: content.is_none(),
                author: Some("local:ops".to_owned()),
            },
            content,
        }
    }

    #[test]
    fn the_checksum_ignores_order_and_sees_every_difference() {
        let component = |content: serde_json::Map<String, Json>| {
            Dumped::Component(Component {
                id: 7,
                name: "fuel".to_owned(),
                resource_definitions: vec![ResourceDefinition {
                    id: 3,
                    name: "globals".to_owned(),
                    content,
                }],
            })
        };
        let ab: serde_json::Map<String, Json> =
            serde_json::from_str(r#"{"a": 1, "b": {"d": 1, "c": 2}}"#).unwrap();
        let ba: serde_json::Map<String, Json> =
            serde_json::from_str(r#"{"b": {"c": 2, "d": 1}, "a": 1}"#).unwrap();
        let sum = |items: &[Dumped]| {
            let mut tally = Tally::default();
            for item in items {
                tally.add(item);
            }
            tally
        };
        let one = sum(&[
            component(ab.clone()),
            version(2, None),
            version(1, Some(r#"{"x": 1, "y": 2}"#)),
        ]);
        let again = sum(&[
            version(2, None),
            component(ba),
            version(1, Some(r#"{"x": 1, "y": 2}"#)),
        ]);
        assert_eq!(one.checksum(), again.checksum());
        assert_eq!(one.checksum().len(), 64);
        assert_eq!(
            (
                one.components,
                one.definitions,
                one.documents,
                one.versions,
                one.deletion_markers
            ),
            (1, 1, 1, 2, 1)
        );
        // A document's key order is part of its content.
        let reordered = sum(&[
            component(ab.clone()),
            version(2, None),
            version(1, Some(r#"{"y": 2, "x": 1}"#)),
        ]);
        assert_ne!(one.checksum(), reordered.checksum());
        let renumbered = sum(&[
            component(ab),
            version(3, None),
            version(1, Some(r#"{"x": 1, "y": 2}"#)),
        ]);
        assert_ne!(one.checksum(), renumbered.checksum());
    }
}
