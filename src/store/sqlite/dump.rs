//! [`Store::dump`](crate::store::Store::dump) and
//! [`Store::replay`](crate::store::Store::replay) on SQLite: every row
//! out in one read transaction, every row in in one write transaction.
//! Versions are read newest first per document, so each packed delta is
//! unpacked against the text just read above it, and written back the same
//! way: each version is packed against the one above it, as
//! [`super::append`] packs a version when the next one replaces it.

use super::{
    decode, encode, load_components, load_environments_where, read_retention, sql_version,
};
use crate::configdb::{Conflict, DocKind, Environment, Version};
use crate::store::changes::Log;
use crate::store::dump::Dumped;
use crate::store::packing::{self, Packing};
use crate::store::{Result, StoreError};
use rusqlite::{Connection, params};

/// Every row of the database, in the order [`Dumped`] documents.
pub(super) fn dump(tx: &Connection, out: &mut dyn FnMut(Dumped) -> Result<()>) -> Result<()> {
    for component in load_components(tx, None)? {
        out(Dumped::Component(component))?;
    }
    let deleted_at = deleted_at(tx)?;
    let mut envs: Vec<Environment> = load_environments_where(tx, None, false)?;
    envs.extend(load_environments_where(tx, None, true)?);
    envs.sort_by_key(|e| e.id);
    for env in envs {
        let retention = read_retention(tx, env.id)?;
        let deleted_at = deleted_at
            .iter()
            .find(|(id, _)| *id == env.id)
            .map(|(_, at)| *at);
        out(Dumped::Environment {
            env,
            deleted_at,
            retention,
        })?;
    }
    dump_registers(tx, out)?;
    dump_versions(tx, out)
}

fn deleted_at(tx: &Connection) -> Result<Vec<(i64, i64)>> {
    let rows = tx
        .prepare("SELECT id, deleted_at FROM environments WHERE deleted_at IS NOT NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

fn dump_registers(tx: &Connection, out: &mut dyn FnMut(Dumped) -> Result<()>) -> Result<()> {
    let registers: Vec<(i64, String)> = tx
        .prepare("SELECT environment_id, level FROM registers ORDER BY environment_id, level")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut values = tx.prepare(
        "SELECT value FROM register_values WHERE environment_id = ?1 AND level = ?2 ORDER BY value",
    )?;
    for (env, level) in registers {
        let values = values
            .query_map(params![env, level], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        out(Dumped::Register { env, level, values })?;
    }
    Ok(())
}

/// A document: (environment, level, level value, resource, kind).
type DocKey = (i64, String, String, String, String);

fn dump_versions(tx: &Connection, out: &mut dyn FnMut(Dumped) -> Result<()>) -> Result<()> {
    let mut stmt = tx.prepare(
        "SELECT environment_id, level, level_value, resource, kind, version, created_at,
                size, deleted, packing, content, packed, author
         FROM documents
         ORDER BY environment_id, level, level_value, resource, kind, version DESC",
    )?;
    let mut rows = stmt.query([])?;
    // The version read just before, of the same document: its number and text.
    let mut above: Option<(DocKey, u64, String)> = None;
    while let Some(row) = rows.next()? {
        let key: DocKey = (
            row.get(0)?,
            row.get(1)?,
            row.get(2)?,
            row.get(3)?,
            row.get(4)?,
        );
        let version = super::version_from(
            row.get(5)?,
            row.get(6)?,
            row.get(7)?,
            row.get(8)?,
            row.get(12)?,
        );
        let what = || {
            format!(
                "version {} of the {} of resource \"{}\" at {}={} in environment {}",
                version.number, key.4, key.3, key.1, key.2, key.0
            )
        };
        let packing = Packing::from_column(row.get(9)?).ok_or_else(|| StoreError::Corrupt {
            what: what(),
            reason: "an unknown packing".to_owned(),
        })?;
        let base = above
            .as_ref()
            .filter(|(k, n, _)| *k == key && *n == version.number + 1)
            .map(|(_, _, text)| text.as_str());
        let text = match packing {
            Packing::Plain => row.get::<_, String>(10)?,
            _ => packing::unpack(what, packing, &row.get::<_, Vec<u8>>(11)?, base)?,
        };
        let content = if version.deleted {
            None
        } else {
            Some(decode(what, &text)?)
        };
        let kind = key.4.parse::<DocKind>().map_err(|e| StoreError::Corrupt {
            what: what(),
            reason: e.to_string(),
        })?;
        let number = version.number;
        out(Dumped::Version {
            env: key.0,
            level: key.1.clone(),
            value: key.2.clone(),
            resource: key.3.clone(),
            kind,
            version,
            content,
        })?;
        above = Some((key, number, text));
    }
    Ok(())
}

/// Whether the database holds any component or environment.
fn is_empty(tx: &Connection) -> Result<bool> {
    Ok(tx.query_row(
        "SELECT NOT EXISTS (SELECT 1 FROM components) AND NOT EXISTS (SELECT 1 FROM environments)",
        [],
        |r| r.get(0),
    )?)
}

/// Removes every component, environment and document.
fn erase(tx: &Connection) -> Result<()> {
    tx.execute_batch(
        "DELETE FROM heads; DELETE FROM documents; DELETE FROM register_values;
         DELETE FROM registers; DELETE FROM hierarchy_levels;
         DELETE FROM environment_components; DELETE FROM environments;
         DELETE FROM resource_definitions; DELETE FROM components;",
    )?;
    Ok(())
}

/// Writes `items` (as [`dump`] yields them) into an empty database, or
/// (`replace`) into one erased first, inside the caller's transaction.
pub(super) fn replay(
    tx: &Connection,
    log: &mut Log,
    items: &mut dyn Iterator<Item = Result<Dumped>>,
    replace: bool,
) -> Result<()> {
    log.structure();
    if replace {
        erase(tx)?;
    } else if !is_empty(tx)? {
        return Err(Conflict::NotEmpty.into());
    }
    let mut above: Option<Above> = None;
    for item in items {
        match item? {
            Dumped::Component(c) => {
                tx.execute(
                    "INSERT INTO components (id, name) VALUES (?1, ?2)",
                    params![c.id, c.name],
                )?;
                for d in &c.resource_definitions {
                    let content = (!d.content.is_empty())
                        .then(|| serde_json::Value::Object(d.content.clone()).to_string());
                    tx.execute(
                        "INSERT INTO resource_definitions (id, component_id, name, content)
                         VALUES (?1, ?2, ?3, ?4)",
                        params![d.id, c.id, d.name, content],
                    )?;
                }
            }
            Dumped::Environment {
                env,
                deleted_at,
                retention,
            } => {
                let limit = |n: Option<u64>| n.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
                tx.execute(
                    "INSERT INTO environments (id, deleted_at, keep_versions, keep_days)
                     VALUES (?1, ?2, ?3, ?4)",
                    params![
                        env.id,
                        deleted_at,
                        limit(retention.keep_versions),
                        limit(retention.keep_days)
                    ],
                )?;
                for (position, component) in env.components.iter().enumerate() {
                    tx.execute(
                        "INSERT INTO environment_components (environment_id, component_id, position)
                         VALUES (?1, ?2, ?3)",
                        params![env.id, component, position as i64],
                    )?;
                }
                for (position, level) in env.hierarchy_levels.iter().enumerate() {
                    tx.execute(
                        "INSERT INTO hierarchy_levels (environment_id, position, name)
                         VALUES (?1, ?2, ?3)",
                        params![env.id, position as i64, level],
                    )?;
                }
            }
            Dumped::Register { env, level, values } => {
                tx.execute(
                    "INSERT INTO registers (environment_id, level) VALUES (?1, ?2)",
                    params![env, level],
                )?;
                for value in values {
                    tx.execute(
                        "INSERT INTO register_values (environment_id, level, value)
                         VALUES (?1, ?2, ?3)",
                        params![env, level, value],
                    )?;
                }
            }
            Dumped::Version {
                env,
                level,
                value,
                resource,
                kind,
                version,
                content,
            } => {
                let key = (env, level, value, resource, kind.as_str().to_owned());
                let text = content.as_ref().map(encode);
                above = Some(insert_version(tx, above.take(), key, &version, text)?);
            }
        }
    }
    Ok(())
}

/// The version written just before, of the same document or not.
struct Above {
    key: DocKey,
    number: u64,
    /// `None`: a deletion marker.
    text: Option<String>,
}

/// Inserts one version; the first of its document is the head, each later
/// one (older) is packed against the one `above` it.
fn insert_version(
    tx: &Connection,
    above: Option<Above>,
    key: DocKey,
    version: &Version,
    text: Option<String>,
) -> Result<Above> {
    let same = above.as_ref().filter(|a| a.key == key);
    if same.is_some_and(|a| a.number <= version.number) {
        return Err(StoreError::Corrupt {
            what: format!(
                "the copy of the {} of resource \"{}\" in environment {}",
                key.4, key.3, key.0
            ),
            reason: format!(
                "version {} came after version {}: a document's versions must come newest first",
                version.number,
                same.map_or(0, |a| a.number)
            ),
        });
    }
    let (packing, content, packed) = match (&text, same) {
        (None, _) => (Packing::Plain, String::new(), None),
        (Some(t), None) => (Packing::Plain, t.clone(), None),
        (Some(t), Some(a)) => {
            let base = a.text.as_deref().filter(|_| a.number == version.number + 1);
            let (packing, bytes) = packing::pack(version.number, t, base)?;
            (packing, String::new(), Some(bytes))
        }
    };
    let size = text.as_ref().map_or(0, String::len) as i64;
    tx.prepare_cached(
        "INSERT INTO documents (environment_id, level, level_value, resource, kind,
                                version, created_at, deleted, size, content, packing, packed,
                                author)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        key.0,
        key.1,
        key.2,
        key.3,
        key.4,
        sql_version(version.number),
        version.created_at,
        version.deleted,
        size,
        content,
        packing as i64,
        packed,
        version.author
    ])?;
    if same.is_none() {
        tx.prepare_cached(
            "INSERT INTO heads (environment_id, level, level_value, resource, kind, version)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            key.0,
            key.1,
            key.2,
            key.3,
            key.4,
            sql_version(version.number)
        ])?;
    }
    Ok(Above {
        key,
        number: version.number,
        text,
    })
}
