//! [`Store::dump`](crate::store::Store::dump) and
//! [`Store::replay`](crate::store::Store::replay) on either engine: every
//! row out in one read transaction, every row in in one write transaction.
//! Versions are read newest first per document, so each packed delta is
//! unpacked against the text just read above it, and written back the same
//! way: each version is packed against the one above it, as
//! [`super::documents::append`] packs a version when the next one
//! replaces it. Authors are copied with their versions.

use super::retention::read_retention;
use super::{decode_stored, load_components, load_environments_where, sql_version};
use crate::configdb::unparsed::{Content, Unparsed};
use crate::configdb::{Conflict, DocAddress, DocKind, Environment, LevelPath, LevelValue, Version};
use crate::store::changes::Log;
use crate::store::dump::Dumped;
use crate::store::packing::{self, Packing};
use crate::store::sql::{Param, Row, Sql, params};
use crate::store::{Result, StoreError, UnreadableVersion, VersionsChecked};

/// Every row of the database, in the order [`Dumped`] documents.
pub(crate) fn dump(tx: &dyn Sql, out: &mut dyn FnMut(Dumped) -> Result<()>) -> Result<()> {
    for component in load_components(tx, None)? {
        out(Dumped::Component(component))?;
    }
    let deleted_at: Vec<(i64, i64)> = tx
        .query(
            "SELECT id, deleted_at FROM environments WHERE deleted_at IS NOT NULL",
            &[],
        )?
        .iter()
        .map(|r| Ok((r.int(0)?, r.int(1)?)))
        .collect::<Result<_>>()?;
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
    dump_versions(tx, out)?;
    dump_scopes_and_tags(tx, out)
}

/// Every version of every node scope, oldest first per node, then every
/// tag by name.
fn dump_scopes_and_tags(tx: &dyn Sql, out: &mut dyn FnMut(Dumped) -> Result<()>) -> Result<()> {
    let scopes = tx.query(
        "SELECT environment_id, node, version, created_at, deleted, author, content
         FROM node_scopes ORDER BY environment_id, node, version",
        &[],
    )?;
    for mut r in scopes {
        let (env, node, deleted, author, text) = (
            r.int(0)?,
            r.text(1)?,
            r.flag(4)?,
            r.opt_text(5)?,
            r.text(6)?,
        );
        let size = i64::try_from(text.len()).unwrap_or(i64::MAX);
        out(Dumped::Scope {
            env,
            node,
            version: super::version_from(r.int(2)?, r.int(3)?, size, deleted, author),
            content: (!deleted).then_some(text),
        })?;
    }
    let tags = tx.query(
        "SELECT name, generation, created_at, author FROM tags ORDER BY name",
        &[],
    )?;
    for mut r in tags {
        out(Dumped::Tag(crate::configdb::tags::Tag {
            name: r.text(0)?,
            generation: u64::try_from(r.int(1)?).unwrap_or_default(),
            created_at: r.int(2)?,
            author: r.opt_text(3)?,
        }))?;
    }
    Ok(())
}

fn dump_registers(tx: &dyn Sql, out: &mut dyn FnMut(Dumped) -> Result<()>) -> Result<()> {
    let registers: Vec<(i64, String)> = tx
        .query(
            "SELECT environment_id, level FROM registers ORDER BY environment_id, level",
            &[],
        )?
        .into_iter()
        .map(|mut r| Ok((r.int(0)?, r.text(1)?)))
        .collect::<Result<_>>()?;
    for (env, level) in registers {
        let values = tx
            .query(
                "SELECT value FROM register_values WHERE environment_id = ?1 AND level = ?2
                 ORDER BY value",
                params![env, &level],
            )?
            .into_iter()
            .map(|mut r| r.text(0))
            .collect::<Result<_>>()?;
        out(Dumped::Register { env, level, values })?;
    }
    Ok(())
}

/// A document: (environment, level, level value, resource, kind).
type DocKey = (i64, String, String, String, String);

fn dump_versions(tx: &dyn Sql, out: &mut dyn FnMut(Dumped) -> Result<()>) -> Result<()> {
    // The version read just before, of the same document: its number and text.
    let mut above: Option<(DocKey, u64, String)> = None;
    tx.for_each(
        "SELECT environment_id, level, level_value, resource, kind, version, created_at,
                size, deleted, packing, content, packed, author
         FROM documents
         ORDER BY environment_id, level, level_value, resource, kind, version DESC",
        &[],
        &mut |row: Row| {
            let (key, version, text) = read_version(row, above.as_ref())?;
            let what = || describe(&key, version.number);
            let content = if version.deleted {
                None
            } else {
                Some(decode_stored(what, &text)?)
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
            Ok(())
        },
    )
}

/// [`Store::check_versions`](crate::store::Store::check_versions): the
/// rows of [`dump_versions`], each unpacked against the one read above it
/// and decoded; what fails goes to `out` and the reading goes on.
pub(crate) fn check_versions(
    tx: &dyn Sql,
    out: &mut dyn FnMut(UnreadableVersion) -> Result<()>,
) -> Result<VersionsChecked> {
    // The version read just before, of the same document: its number and
    // text (None: it did not unpack, so a delta against it cannot either).
    let mut above: Option<(DocKey, u64, Option<String>)> = None;
    let mut checked = VersionsChecked::default();
    tx.for_each(
        "SELECT environment_id, level, level_value, resource, kind, version, deleted,
                packing, content, packed
         FROM documents
         ORDER BY environment_id, level, level_value, resource, kind, version DESC",
        &[],
        &mut |mut row: Row| {
            let key = doc_key(&mut row)?;
            let number = u64::try_from(row.int(5)?).unwrap_or_default();
            let same_doc = above.as_ref().filter(|(k, _, _)| *k == key);
            let latest = same_doc.is_none();
            let base = same_doc
                .filter(|(_, n, _)| *n == number + 1)
                .map(|(_, _, text)| text.as_deref());
            // A column of the wrong type is as unreadable as bad bytes.
            let text = match (Packing::from_column(row.int(7)?), base) {
                (None, _) => Err("an unknown packing".to_owned()),
                (Some(Packing::Plain), _) => row
                    .opt_text(8)
                    .map(Option::unwrap_or_default)
                    .map_err(|e| e.to_string()),
                // One reason for the whole chain, which doctor then
                // lists as one run of versions.
                (Some(Packing::Delta), Some(None)) => {
                    Err("it is packed against a newer version that cannot be read".to_owned())
                }
                (Some(packing), base) => row
                    .bytes(9)
                    .and_then(|bytes| packing::unpack(String::new, packing, &bytes, base.flatten()))
                    .map_err(|e| match e {
                        StoreError::Corrupt { reason, .. } => reason,
                        other => other.to_string(),
                    }),
            };
            let why = match &text {
                Err(why) => Some(why.clone()),
                Ok(_) if row.flag(6)? => None,
                Ok(text) if text.is_empty() => None,
                Ok(text) if Unparsed::from_stored(text).is_some() => None,
                Ok(text) => super::decode_or_why(text).err().map(str::to_owned),
            };
            checked.versions += 1;
            if latest {
                checked.documents += 1;
            }
            if let Some(reason) = why {
                out(UnreadableVersion {
                    at: address(&key, number)?,
                    version: number,
                    latest,
                    reason,
                })?;
            }
            above = Some((key, number, text.ok()));
            Ok(())
        },
    )?;
    Ok(checked)
}

/// The document of a row whose first five columns name it.
fn doc_key(row: &mut Row) -> Result<DocKey> {
    Ok((
        row.int(0)?,
        row.text(1)?,
        row.text(2)?,
        row.text(3)?,
        row.text(4)?,
    ))
}

/// The address of a stored document's key.
fn address(key: &DocKey, number: u64) -> Result<DocAddress> {
    let corrupt = |reason: String| StoreError::Corrupt {
        what: describe(key, number),
        reason,
    };
    let kind = key
        .4
        .parse::<DocKind>()
        .map_err(|e| corrupt(e.to_string()))?;
    let slot = if key.1.is_empty() {
        None
    } else {
        Some(LevelValue::new(&key.1, &key.2).map_err(|e| corrupt(e.to_string()))?)
    };
    Ok(DocAddress::new(
        key.0,
        LevelPath::new(slot.into_iter().collect()),
        key.3.clone(),
        kind,
    ))
}

fn describe(key: &DocKey, number: u64) -> String {
    format!(
        "version {number} of the {} of resource \"{}\" at {}={} in environment {}",
        key.4, key.3, key.1, key.2, key.0
    )
}

/// One row of [`dump_versions`]: its document, version and unpacked text
/// (`above`: the version read just before).
fn read_version(
    mut row: Row,
    above: Option<&(DocKey, u64, String)>,
) -> Result<(DocKey, Version, String)> {
    let key = doc_key(&mut row)?;
    let author = row.opt_text(12)?;
    let version = super::version_from(row.int(5)?, row.int(6)?, row.int(7)?, row.flag(8)?, author);
    let what = || describe(&key, version.number);
    let packing = Packing::from_column(row.int(9)?).ok_or_else(|| StoreError::Corrupt {
        what: what(),
        reason: "an unknown packing".to_owned(),
    })?;
    let base = above
        .filter(|(k, n, _)| *k == key && *n == version.number + 1)
        .map(|(_, _, text)| text.as_str());
    let text = match packing {
        Packing::Plain => row.text(10)?,
        _ => packing::unpack(what, packing, &row.bytes(11)?, base)?,
    };
    Ok((key, version, text))
}

/// Whether the database holds any component or environment.
fn is_empty(tx: &dyn Sql) -> Result<bool> {
    tx.query_one(
        "SELECT NOT EXISTS (SELECT 1 FROM components) AND NOT EXISTS (SELECT 1 FROM environments)",
        &[],
    )?
    .flag(0)
}

/// Removes every component, environment and document, node scopes, and
/// the tags (they named generations of the history replaced).
fn erase(tx: &dyn Sql) -> Result<()> {
    for table in [
        "tags",
        "node_scopes",
        "heads",
        "documents",
        "register_values",
        "registers",
        "hierarchy_levels",
        "environment_components",
        "environments",
        "resource_definitions",
        "components",
    ] {
        tx.execute(&format!("DELETE FROM {table}"), &[])?;
    }
    Ok(())
}

/// Writes `items` (as [`dump`] yields them) into an empty database, or
/// (`replace`) into one erased first, inside the caller's transaction.
pub(crate) fn replay(
    tx: &dyn Sql,
    log: &mut Log,
    items: &mut dyn Iterator<Item = Result<Dumped>>,
    replace: bool,
) -> Result<()> {
    log.unrecorded();
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
                    params![c.id, &c.name],
                )?;
                for d in &c.resource_definitions {
                    let content = (!d.content.is_empty())
                        .then(|| serde_json::Value::Object(d.content.clone()).to_string());
                    tx.execute(
                        "INSERT INTO resource_definitions (id, component_id, name, content)
                         VALUES (?1, ?2, ?3, ?4)",
                        params![d.id, c.id, &d.name, content.as_deref()],
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
                    "INSERT INTO environments (id, deleted_at, keep_versions, keep_days, hiera)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        env.id,
                        deleted_at,
                        limit(retention.keep_versions),
                        limit(retention.keep_days),
                        env.hiera.number()
                    ],
                )?;
                for (position, component) in env.components.iter().enumerate() {
                    tx.execute(
                        "INSERT INTO environment_components (environment_id, component_id, position)
                         VALUES (?1, ?2, ?3)",
                        params![env.id, *component, position as i64],
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
                    params![env, &level],
                )?;
                for value in &values {
                    tx.execute(
                        "INSERT INTO register_values (environment_id, level, value)
                         VALUES (?1, ?2, ?3)",
                        params![env, &level, value],
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
                let text = content.as_ref().map(Content::to_stored);
                above = Some(insert_version(tx, above.take(), key, &version, text)?);
            }
            Dumped::Scope {
                env,
                node,
                version,
                content,
            } => {
                tx.execute(
                    "INSERT INTO node_scopes (environment_id, node, version, created_at, author, deleted, content)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        env,
                        &node,
                        sql_version(version.number),
                        version.created_at,
                        version.author.as_deref(),
                        i64::from(version.deleted),
                        content.as_deref().unwrap_or("")
                    ],
                )?;
            }
            Dumped::Tag(tag) => {
                let generation = i64::try_from(tag.generation).unwrap_or(i64::MAX);
                tx.execute(
                    "INSERT INTO tags (name, generation, created_at, author) VALUES (?1, ?2, ?3, ?4)",
                    params![&tag.name, generation, tag.created_at, tag.author.as_deref()],
                )?;
                // The copy's generations go on past every tag's: a read
                // at one is then gone (before the replay's generation),
                // never a generation not written yet.
                tx.execute(
                    "UPDATE generation SET value = ?1 WHERE id = 1 AND value < ?1",
                    params![generation],
                )?;
            }
        }
    }
    // The running totals the quotas read (store/quota.rs), counted once
    // for the copy, as migration 7 counts them.
    tx.execute(
        "UPDATE environments SET live_bytes = (
             SELECT coalesce(sum(d.size), 0) FROM heads h JOIN documents d USING
                 (environment_id, level, level_value, resource, kind, version)
             WHERE h.environment_id = environments.id AND d.deleted = 0)",
        params![],
    )?;
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
    tx: &dyn Sql,
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
    let number = sql_version(version.number);
    let packed = match &packed {
        Some(bytes) => Param::Bytes(bytes),
        None => Param::Int(None),
    };
    tx.execute(
        "INSERT INTO documents (environment_id, level, level_value, resource, kind,
                                version, created_at, deleted, size, content, packing, packed,
                                author)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        &[
            key.0.into(),
            (&key.1).into(),
            (&key.2).into(),
            (&key.3).into(),
            (&key.4).into(),
            number.into(),
            version.created_at.into(),
            i64::from(version.deleted).into(),
            size.into(),
            content.as_str().into(),
            (packing as i64).into(),
            packed,
            version.author.as_deref().into(),
        ],
    )?;
    if same.is_none() {
        tx.execute(
            "INSERT INTO heads (environment_id, level, level_value, resource, kind, version)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![key.0, &key.1, &key.2, &key.3, &key.4, number],
        )?;
    }
    Ok(Above {
        key,
        number: version.number,
        text,
    })
}
