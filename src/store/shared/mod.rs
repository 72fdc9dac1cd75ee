//! The [`Store`](super::Store) written once over [`Sql`]: every
//! engine ([`super::SqliteStore`], [`super::PgStore`]) runs this code in its
//! own transactions, so the two cannot drift apart.

pub(super) mod at;
mod documents;
mod dump;
mod load;
pub(super) mod registers;
mod retention;
mod rewrite;
pub(crate) mod scopes;
mod store_impl;
mod tags;

pub(super) use load::load_all;
pub(crate) use scopes::Scope;

use super::sql::{Sql, params};
use super::{Result, content::decode_content};
use crate::configdb::model::check_resource_name;
use crate::configdb::unparsed::{Content, Unparsed, UnparsedDocument};
use crate::configdb::{
    Component, ComponentRef, Conflict, DocAddress, Environment, HieraVersion, Invalid, LevelPath,
    NotFound, ResourceDefinition, Version,
};
use crate::hiera::{Hash, Value};
use crate::store::StoreError;
use crate::wire;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{SystemTime, UNIX_EPOCH};

pub(super) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The (level, level_value) columns of a path's slot; `('', '')` is the root.
pub(crate) fn slot_of(path: &LevelPath) -> (&str, &str) {
    path.slot()
        .map_or(("", ""), |lv| (lv.level.as_str(), lv.value.as_str()))
}

pub(super) fn encode(doc: &Hash) -> String {
    wire::to_string(&Value::Hash(doc.clone()))
}

pub(super) fn decode(what: impl FnOnce() -> String, text: &str) -> Result<Hash> {
    if text.is_empty() {
        return Ok(Hash::default());
    }
    match wire::from_str(text) {
        Ok(Value::Hash(h)) => Ok(h),
        Ok(other) => Err(StoreError::Corrupt {
            what: what(),
            reason: format!("it holds {}, not a Hash", other.class_name()),
        }),
        Err(e) => Err(StoreError::Corrupt {
            what: what(),
            reason: e.to_string(),
        }),
    }
}

/// A version's content: its data, or the data file it keeps unparsed.
///
/// # Errors
///
/// Corrupt, as [`decode`].
pub(super) fn decode_stored(what: impl FnOnce() -> String, text: &str) -> Result<Content> {
    match Unparsed::from_stored(text) {
        Some(file) => Ok(Content::File(file)),
        None => decode(what, text).map(Content::Data),
    }
}

/// Version `version` of the document at `at` as data: a data file kept
/// unparsed is its data when it parses, else Hiera's error for it.
///
/// # Errors
///
/// [`ConfigError::Unparsed`](crate::configdb::ConfigError::Unparsed), or
/// Corrupt as [`decode`].
pub(super) fn decode_data(at: &DocAddress, version: u64, text: &str) -> Result<Hash> {
    match decode_stored(|| format!("version {version} of the {at}"), text)? {
        Content::Data(doc) => Ok(doc),
        Content::File(file) => file.parse().map_err(|error| {
            crate::configdb::ConfigError::Unparsed(Box::new(UnparsedDocument {
                at: at.clone(),
                version,
                path: file.path,
                error,
            }))
            .into()
        }),
    }
}

/// A stored document's wire JSON decoded, or why not in words that carry
/// nothing of the content (a parse error's text may quote it).
pub(super) fn decode_or_why(text: &str) -> std::result::Result<Hash, &'static str> {
    match wire::from_str(text) {
        Ok(Value::Hash(h)) => Ok(h),
        Ok(_) => Err("it is not a Hash"),
        Err(wire::WireError::TooDeep) => Err("it nests deeper than hierad reads"),
        Err(wire::WireError::Tag(_)) => Err("it holds a malformed tagged value"),
        Err(wire::WireError::Json(_)) => Err("it is not valid wire JSON"),
    }
}

pub(super) fn version_from(
    number: i64,
    created_at: i64,
    size: i64,
    deleted: bool,
    author: Option<String>,
) -> Version {
    Version {
        number: u64::try_from(number).unwrap_or_default(),
        created_at,
        size: usize::try_from(size).unwrap_or_default(),
        deleted,
        author,
    }
}

pub(super) fn sql_version(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An environment with the resource names it defines, for checking many
/// addresses in one transaction.
pub(super) struct EnvContext {
    pub(super) env: Environment,
    /// Resource name → name of the component defining it.
    pub(super) resources: BTreeMap<String, String>,
}

impl EnvContext {
    pub(super) fn load(tx: &dyn Sql, id: i64) -> Result<Self> {
        let env = load_environment(tx, id)?;
        let resources = env_resources(tx, id)?;
        Ok(EnvContext { env, resources })
    }

    pub(super) fn check(&self, at: &DocAddress) -> Result<()> {
        at.path.check(&self.env)?;
        if self.resources.contains_key(&at.resource) {
            Ok(())
        } else {
            Err(NotFound::Resource {
                env: self.env.id,
                resource: at.resource.clone(),
                defined: self.resources.len(),
            }
            .into())
        }
    }
}

pub(super) fn resolve_component(tx: &dyn Sql, which: &ComponentRef) -> Result<(i64, String)> {
    let found = match which {
        ComponentRef::Id(id) => tx.query_opt(
            "SELECT id, name FROM components WHERE id = ?1",
            params![*id],
        )?,
        ComponentRef::Name(name) => tx.query_opt(
            "SELECT id, name FROM components WHERE name = ?1",
            params![name],
        )?,
    };
    match found {
        Some(mut row) => Ok((row.int(0)?, row.text(1)?)),
        None => Err(match which {
            ComponentRef::Id(id) => NotFound::ComponentId(*id),
            ComponentRef::Name(name) => NotFound::ComponentName(name.clone()),
        }
        .into()),
    }
}

/// Components with their definitions; all of them, or the one with `id`.
pub(super) fn load_components(tx: &dyn Sql, id: Option<i64>) -> Result<Vec<Component>> {
    let mut components: Vec<Component> = tx
        .query(
            "SELECT id, name FROM components WHERE CAST(?1 AS BIGINT) IS NULL OR id = ?1 ORDER BY id",
            params![id],
        )?
        .into_iter()
        .map(|mut r| {
            Ok(Component {
                id: r.int(0)?,
                name: r.text(1)?,
                resource_definitions: Vec::new(),
            })
        })
        .collect::<Result<_>>()?;
    let at: HashMap<i64, usize> = components
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, i))
        .collect();
    let rows = tx.query(
        "SELECT id, component_id, name, content FROM resource_definitions
         WHERE CAST(?1 AS BIGINT) IS NULL OR component_id = ?1 ORDER BY id",
        params![id],
    )?;
    for mut row in rows {
        let (def_id, component_id, name) = (row.int(0)?, row.int(1)?, row.text(2)?);
        let content = decode_content(&name, row.opt_text(3)?.as_deref())?;
        if let Some(&i) = at.get(&component_id) {
            components[i].resource_definitions.push(ResourceDefinition {
                id: def_id,
                name,
                content,
            });
        }
    }
    Ok(components)
}

pub(super) fn load_component(tx: &dyn Sql, id: i64) -> Result<Component> {
    load_components(tx, Some(id))?
        .pop()
        .ok_or_else(|| NotFound::ComponentId(id).into())
}

/// Environments with their components and levels; all, or the one `id`.
/// A deleted environment is not there (until it is restored).
pub(super) fn load_environments(tx: &dyn Sql, id: Option<i64>) -> Result<Vec<Environment>> {
    load_environments_where(tx, id, false)
}

/// Live environments, or (`deleted`) the deleted ones.
pub(super) fn load_environments_where(
    tx: &dyn Sql,
    id: Option<i64>,
    deleted: bool,
) -> Result<Vec<Environment>> {
    let mut envs: Vec<Environment> = tx
        .query(
            "SELECT id, hiera FROM environments WHERE (CAST(?1 AS BIGINT) IS NULL OR id = ?1)
               AND (deleted_at IS NOT NULL) = ?2 ORDER BY id",
            params![id, deleted],
        )?
        .into_iter()
        .map(|r| {
            Ok(Environment {
                id: r.int(0)?,
                components: Vec::new(),
                hierarchy_levels: Vec::new(),
                // The column's CHECK allows only 3 and 5.
                hiera: HieraVersion::from_number(r.int(1)?).unwrap_or_default(),
            })
        })
        .collect::<Result<_>>()?;
    let at: HashMap<i64, usize> = envs.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
    let rows = tx.query(
        "SELECT environment_id, component_id FROM environment_components
         WHERE CAST(?1 AS BIGINT) IS NULL OR environment_id = ?1 ORDER BY environment_id, position",
        params![id],
    )?;
    for row in rows {
        if let Some(&i) = at.get(&row.int(0)?) {
            envs[i].components.push(row.int(1)?);
        }
    }
    let rows = tx.query(
        "SELECT environment_id, name FROM hierarchy_levels
         WHERE CAST(?1 AS BIGINT) IS NULL OR environment_id = ?1 ORDER BY environment_id, position",
        params![id],
    )?;
    for mut row in rows {
        if let Some(&i) = at.get(&row.int(0)?) {
            envs[i].hierarchy_levels.push(row.text(1)?);
        }
    }
    Ok(envs)
}

pub(super) fn load_environment(tx: &dyn Sql, id: i64) -> Result<Environment> {
    load_environments(tx, Some(id))?
        .pop()
        .ok_or_else(|| NotFound::Environment(id).into())
}

/// Resource name → defining component name, for one environment.
pub(super) fn env_resources(tx: &dyn Sql, env: i64) -> Result<BTreeMap<String, String>> {
    tx.query(
        "SELECT d.name, c.name FROM environment_components ec
         JOIN components c ON c.id = ec.component_id
         JOIN resource_definitions d ON d.component_id = c.id
         WHERE ec.environment_id = ?1 ORDER BY ec.position, d.id",
        params![env],
    )?
    .into_iter()
    .map(|mut r| Ok((r.text(0)?, r.text(1)?)))
    .collect()
}

/// Adds definitions to a component, refusing a name the component has,
/// a name listed twice, and a name another component already gives an
/// environment that uses this one.
pub(super) fn define_resources(tx: &dyn Sql, component: i64, names: &[String]) -> Result<()> {
    let component_name = tx
        .query_one(
            "SELECT name FROM components WHERE id = ?1",
            params![component],
        )?
        .text(0)?;
    let mut listed = HashSet::new();
    for name in names {
        check_resource_name(name)?;
        if !listed.insert(name.as_str()) {
            return Err(Invalid::ResourceListedTwice(name.clone()).into());
        }
    }
    let envs: Vec<i64> = tx
        .query(
            "SELECT environment_id FROM environment_components WHERE component_id = ?1",
            params![component],
        )?
        .iter()
        .map(|r| r.int(0))
        .collect::<Result<_>>()?;
    let existing: HashSet<String> = tx
        .query(
            "SELECT name FROM resource_definitions WHERE component_id = ?1",
            params![component],
        )?
        .into_iter()
        .map(|mut r| r.text(0))
        .collect::<Result<_>>()?;
    for name in names {
        if existing.contains(name) {
            return Err(Conflict::ResourceInComponent {
                component: component_name,
                resource: name.clone(),
            }
            .into());
        }
    }
    for env in envs {
        let resources = env_resources(tx, env)?;
        for name in names {
            if let Some(other) = resources.get(name) {
                return Err(Conflict::ResourceInEnvironment {
                    env,
                    resource: name.clone(),
                    first: other.clone(),
                    second: component_name,
                }
                .into());
            }
        }
    }
    for name in names {
        tx.execute(
            "INSERT INTO resource_definitions (id, component_id, name)
             VALUES ((SELECT coalesce(max(id), 0) + 1 FROM resource_definitions), ?1, ?2)",
            params![component, name],
        )?;
    }
    Ok(())
}
