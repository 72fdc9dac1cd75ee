//! [`SqliteStore`]: the [`Store`] on an embedded SQLite file (rusqlite),
//! in WAL mode with foreign keys on.
//!
//! Writes run in `BEGIN IMMEDIATE` transactions: the write lock is taken
//! before anything is read, so a version number read inside the
//! transaction is still the latest when the new row is inserted, and a
//! second writer (another thread or another process on the same file)
//! waits for the lock (up to [`BUSY_TIMEOUT`]) instead of failing.

mod dump;
mod registers;

use super::changes::{self, Changes, Latest, Log};
use super::content::{check_schema, decode_content};
use super::migrations::{self, MIGRATIONS};
use super::packing::{self, Packing};
use super::{
    DatabaseSize, DocWrite, ImportBatch, ImportReport, PruneReport, Result, Store, StoreError,
    WriteCtx,
};
use crate::configdb::model::{check_component_name, check_level_name, check_resource_name};
use crate::configdb::{
    Component, ComponentRef, ConfigError, Conflict, DocAddress, DocKind, Environment, Invalid,
    LevelPath, LevelValue, NewComponent, NewEnvironment, NotFound, ResourceDefinition, Retention,
    SnapshotData, Stale, StoredDoc, StoredDocument, UnreadableDocument, Version, check_depth,
};
use crate::hiera::{Hash, Value};
use crate::wire;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a write waits for another writer's lock before failing.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A ConfigDB in one SQLite database.
///
/// One connection behind a mutex: methods take `&self` so the store can be
/// shared (`Arc<dyn Store>`); each call holds the lock for one short
/// transaction. Several `SqliteStore`s (or processes) may open the same
/// file; SQLite's own locking orders their writes.
pub(crate) struct SqliteStore {
    conn: Mutex<Connection>,
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Database(Box::new(e))
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database file and brings its schema
    /// up to date.
    ///
    /// # Errors
    ///
    /// The file cannot be opened, a migration fails, or the schema is
    /// newer than this build knows.
    pub(crate) fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_connection(Connection::open(path)?, MIGRATIONS)
    }

    /// A private database in memory, for tests and throwaway use.
    ///
    /// # Errors
    ///
    /// As [`SqliteStore::open`].
    pub(crate) fn open_in_memory() -> Result<Self> {
        Self::from_connection(Connection::open_in_memory()?, MIGRATIONS)
    }

    fn from_connection(mut conn: Connection, migrations: &[&str]) -> Result<Self> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "foreign_keys", true)?;
        // WAL lets readers run while one writer writes; an in-memory
        // database answers "memory" and stays as it is.
        let _mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        migrations::migrate(&mut conn, migrations)?;
        Ok(SqliteStore {
            conn: Mutex::new(conn),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic mid-transaction rolled it back on unwind (Transaction's
        // drop), so the connection behind a poisoned lock is sound.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` in a write transaction; what `f` records in the [`Log`]
    /// takes the next generation in the same transaction.
    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>, &mut Log) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut log = Log::default();
        let out = f(&tx, &mut log)?;
        log.commit(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    fn read<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        f(&tx)
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The (level, level_value) columns of a path's slot; `('', '')` is the root.
pub(super) fn slot_of(path: &LevelPath) -> (&str, &str) {
    path.slot()
        .map_or(("", ""), |lv| (lv.level.as_str(), lv.value.as_str()))
}

fn encode(doc: &Hash) -> String {
    wire::to_string(&Value::Hash(doc.clone()))
}

fn decode(what: impl FnOnce() -> String, text: &str) -> Result<Hash> {
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

fn version_from(
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

fn sql_version(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An environment with the resource names it defines, for checking many
/// addresses in one transaction.
struct EnvContext {
    env: Environment,
    /// Resource name → name of the component defining it.
    resources: BTreeMap<String, String>,
}

impl EnvContext {
    fn load(tx: &Connection, id: i64) -> Result<Self> {
        let env = load_environment(tx, id)?;
        let resources = env_resources(tx, id)?;
        Ok(EnvContext { env, resources })
    }

    fn check(&self, at: &DocAddress) -> Result<()> {
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

fn resolve_component(tx: &Connection, which: &ComponentRef) -> Result<(i64, String)> {
    let found = match which {
        ComponentRef::Id(id) => tx
            .query_row("SELECT id, name FROM components WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?,
        ComponentRef::Name(name) => tx
            .query_row(
                "SELECT id, name FROM components WHERE name = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?,
    };
    found.ok_or_else(|| {
        match which {
            ComponentRef::Id(id) => NotFound::ComponentId(*id),
            ComponentRef::Name(name) => NotFound::ComponentName(name.clone()),
        }
        .into()
    })
}

/// Components with their definitions; all of them, or the one with `id`.
fn load_components(tx: &Connection, id: Option<i64>) -> Result<Vec<Component>> {
    let mut components: Vec<Component> = tx
        .prepare_cached("SELECT id, name FROM components WHERE ?1 IS NULL OR id = ?1 ORDER BY id")?
        .query_map([id], |r| {
            Ok(Component {
                id: r.get(0)?,
                name: r.get(1)?,
                resource_definitions: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let at: HashMap<i64, usize> = components
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, i))
        .collect();
    let mut stmt = tx.prepare_cached(
        "SELECT id, component_id, name, content FROM resource_definitions
         WHERE ?1 IS NULL OR component_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([id], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?,
        ))
    })?;
    for row in rows {
        let (def_id, component_id, name, content) = row?;
        let content = decode_content(&name, content.as_deref())?;
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

fn load_component(tx: &Connection, id: i64) -> Result<Component> {
    load_components(tx, Some(id))?
        .pop()
        .ok_or_else(|| NotFound::ComponentId(id).into())
}

/// Environments with their components and levels; all, or the one `id`.
/// A deleted environment is not there (until it is restored).
fn load_environments(tx: &Connection, id: Option<i64>) -> Result<Vec<Environment>> {
    load_environments_where(tx, id, false)
}

/// Live environments, or (`deleted`) the deleted ones.
fn load_environments_where(
    tx: &Connection,
    id: Option<i64>,
    deleted: bool,
) -> Result<Vec<Environment>> {
    let mut envs: Vec<Environment> = tx
        .prepare_cached(
            "SELECT id FROM environments WHERE (?1 IS NULL OR id = ?1)
               AND (deleted_at IS NOT NULL) = ?2 ORDER BY id",
        )?
        .query_map(params![id, deleted], |r| {
            Ok(Environment {
                id: r.get(0)?,
                components: Vec::new(),
                hierarchy_levels: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let at: HashMap<i64, usize> = envs.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
    let mut stmt = tx.prepare_cached(
        "SELECT environment_id, component_id FROM environment_components
         WHERE ?1 IS NULL OR environment_id = ?1 ORDER BY environment_id, position",
    )?;
    for row in stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))? {
        let (env, component) = row?;
        if let Some(&i) = at.get(&env) {
            envs[i].components.push(component);
        }
    }
    let mut stmt = tx.prepare_cached(
        "SELECT environment_id, name FROM hierarchy_levels
         WHERE ?1 IS NULL OR environment_id = ?1 ORDER BY environment_id, position",
    )?;
    for row in stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))? {
        let (env, name) = row?;
        if let Some(&i) = at.get(&env) {
            envs[i].hierarchy_levels.push(name);
        }
    }
    Ok(envs)
}

fn load_environment(tx: &Connection, id: i64) -> Result<Environment> {
    load_environments(tx, Some(id))?
        .pop()
        .ok_or_else(|| NotFound::Environment(id).into())
}

/// Resource name → defining component name, for one environment.
fn env_resources(tx: &Connection, env: i64) -> Result<BTreeMap<String, String>> {
    let mut stmt = tx.prepare_cached(
        "SELECT d.name, c.name FROM environment_components ec
         JOIN components c ON c.id = ec.component_id
         JOIN resource_definitions d ON d.component_id = c.id
         WHERE ec.environment_id = ?1 ORDER BY ec.position, d.id",
    )?;
    let rows = stmt.query_map([env], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect::<rusqlite::Result<_>>().map_err(Into::into)
}

/// Adds definitions to a component, refusing a name the component has,
/// a name listed twice, and a name another component already gives an
/// environment that uses this one.
fn define_resources(tx: &Connection, component: i64, names: &[String]) -> Result<()> {
    let component_name: String = tx.query_row(
        "SELECT name FROM components WHERE id = ?1",
        [component],
        |r| r.get(0),
    )?;
    let mut listed = HashSet::new();
    for name in names {
        check_resource_name(name)?;
        if !listed.insert(name.as_str()) {
            return Err(Invalid::ResourceListedTwice(name.clone()).into());
        }
    }
    let envs: Vec<i64> = tx
        .prepare_cached(
            "SELECT environment_id FROM environment_components WHERE component_id = ?1",
        )?
        .query_map([component], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let existing: HashSet<String> = tx
        .prepare_cached("SELECT name FROM resource_definitions WHERE component_id = ?1")?
        .query_map([component], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
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
    let mut insert =
        tx.prepare_cached("INSERT INTO resource_definitions (component_id, name) VALUES (?1, ?2)")?;
    for name in names {
        insert.execute(params![component, name])?;
    }
    Ok(())
}

/// The latest version of a document and its stored text.
fn head(tx: &Connection, at: &DocAddress) -> Result<Option<(Version, String)>> {
    let (level, value) = slot_of(&at.path);
    tx.prepare_cached(
        "SELECT d.version, d.created_at, d.size, d.deleted, d.content, d.author
         FROM heads h JOIN documents d USING
             (environment_id, level, level_value, resource, kind, version)
         WHERE h.environment_id = ?1 AND h.level = ?2 AND h.level_value = ?3
           AND h.resource = ?4 AND h.kind = ?5",
    )?
    .query_row(
        params![at.env, level, value, at.resource, at.kind.as_str()],
        |r| {
            Ok((
                version_from(r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(5)?),
                r.get(4)?,
            ))
        },
    )
    .optional()
    .map_err(Into::into)
}

/// One given version of a document and its text, unpacked: the rows
/// from it up to the first that stands alone (at most
/// [`packing::KEYFRAME_EVERY`] of them), unpacked from the top down.
fn version_row(tx: &Connection, at: &DocAddress, n: u64) -> Result<Option<(Version, String)>> {
    let (level, value) = slot_of(&at.path);
    let mut stmt = tx.prepare_cached(
        "SELECT version, created_at, size, deleted, packing, content, packed, author
         FROM documents
         WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
           AND resource = ?4 AND kind = ?5 AND version >= ?6 ORDER BY version",
    )?;
    let mut rows = stmt.query(params![
        at.env,
        level,
        value,
        at.resource,
        at.kind.as_str(),
        sql_version(n)
    ])?;
    let what = |number: u64| move || format!("version {number} of the {at}");
    // Deltas on the way up, each waiting for the text above it.
    let mut deltas: Vec<(Version, Vec<u8>)> = Vec::new();
    let mut text = loop {
        let Some(row) = rows.next()? else {
            return match deltas.last() {
                None => Ok(None),
                Some((v, _)) => Err(StoreError::Corrupt {
                    what: what(v.number)(),
                    reason: "a delta above the latest version".to_owned(),
                }),
            };
        };
        let version = version_from(
            row.get(0)?,
            row.get(1)?,
            row.get(2)?,
            row.get(3)?,
            row.get(7)?,
        );
        let expected = n + deltas.len() as u64;
        if version.number != expected {
            if deltas.is_empty() {
                return Ok(None);
            }
            return Err(StoreError::Corrupt {
                what: what(expected - 1)(),
                reason: format!("packed against version {expected}, which is gone"),
            });
        }
        let packing = Packing::from_column(row.get(4)?).ok_or_else(|| StoreError::Corrupt {
            what: what(version.number)(),
            reason: "an unknown packing".to_owned(),
        })?;
        match packing {
            Packing::Plain => break (version, row.get::<_, String>(5)?),
            Packing::Alone => {
                let bytes: Vec<u8> = row.get(6)?;
                let text = packing::unpack(what(version.number), packing, &bytes, None)?;
                break (version, text);
            }
            Packing::Delta => deltas.push((version, row.get(6)?)),
        }
    };
    while let Some((version, bytes)) = deltas.pop() {
        let below = packing::unpack(what(version.number), Packing::Delta, &bytes, Some(&text.1))?;
        text = (version, below);
    }
    Ok(Some(text))
}

/// Writes the next version of a document: `content` is wire JSON, or
/// `None` for a deletion marker; the version it replaces is packed (see
/// [`packing`]). Must run inside an IMMEDIATE transaction.
fn append(
    tx: &Connection,
    log: &mut Log,
    at: &DocAddress,
    content: Option<&str>,
    author: Option<&str>,
) -> Result<Version> {
    log.document(at);
    let (level, value) = slot_of(&at.path);
    let latest = head(tx, at)?;
    let number = latest.as_ref().map_or(0, |(v, _)| v.number) + 1;
    let text = content.unwrap_or("");
    let version = version_from(
        sql_version(number),
        now(),
        text.len() as i64,
        content.is_none(),
        author.map(str::to_owned),
    );
    tx.prepare_cached(
        "INSERT INTO documents (environment_id, level, level_value, resource, kind,
                                version, created_at, deleted, size, content, author)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        at.env,
        level,
        value,
        at.resource,
        at.kind.as_str(),
        sql_version(number),
        version.created_at,
        version.deleted,
        text.len() as i64,
        text,
        author
    ])?;
    tx.prepare_cached(
        "INSERT INTO heads (environment_id, level, level_value, resource, kind, version)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (environment_id, level, level_value, resource, kind)
         DO UPDATE SET version = excluded.version",
    )?
    .execute(params![
        at.env,
        level,
        value,
        at.resource,
        at.kind.as_str(),
        sql_version(number)
    ])?;
    if let Some((old, old_text)) = latest.filter(|(old, _)| !old.deleted) {
        let (packing, bytes) = packing::pack(old.number, &old_text, content)?;
        tx.prepare_cached(
            "UPDATE documents SET packing = ?7, packed = ?8, content = ''
             WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
               AND resource = ?4 AND kind = ?5 AND version = ?6",
        )?
        .execute(params![
            at.env,
            level,
            value,
            at.resource,
            at.kind.as_str(),
            sql_version(old.number),
            packing as i64,
            bytes
        ])?;
    }
    Ok(version)
}

/// An environment's own retention (unset limits are NULL).
fn read_retention(tx: &Connection, env: i64) -> Result<Retention> {
    let (keep_versions, keep_days): (Option<i64>, Option<i64>) = tx
        .prepare_cached("SELECT keep_versions, keep_days FROM environments WHERE id = ?1")?
        .query_row([env], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let limit = |n: Option<i64>| n.map(|n| u64::try_from(n).unwrap_or_default());
    Ok(Retention {
        keep_versions: limit(keep_versions),
        keep_days: limit(keep_days),
    })
}

/// Prunes at most `budget` versions of environment `env` that
/// `retention` no longer keeps; returns how many went.
///
/// Only documents whose oldest version falls outside the policy are
/// looked at closer (one index seek per document finds those).
fn prune_batch(
    tx: &Connection,
    env: i64,
    retention: &Retention,
    now: i64,
    budget: usize,
) -> Result<usize> {
    let limit = retention.versions_limit();
    let cutoff = retention.cutoff(now);
    type Doc = (String, String, String, String);
    let candidates: Vec<Doc> = tx
        .prepare_cached(
            "SELECT h.level, h.level_value, h.resource, h.kind, h.version, o.version, o.created_at
             FROM heads h JOIN documents o USING (environment_id, level, level_value, resource, kind)
             WHERE h.environment_id = ?1 AND o.version = (
                 SELECT min(m.version) FROM documents m
                 WHERE m.environment_id = h.environment_id AND m.level = h.level
                   AND m.level_value = h.level_value AND m.resource = h.resource
                   AND m.kind = h.kind)",
        )?
        .query_map([env], |r| {
            let doc: Doc = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
            let (head, oldest, created): (i64, i64, i64) = (r.get(4)?, r.get(5)?, r.get(6)?);
            let outside = oldest < head
                && (limit.is_some_and(|n| oldest <= head - sql_version(n))
                    || cutoff.is_some_and(|c| created < c));
            Ok(outside.then_some(doc))
        })?
        .filter_map(|r| r.transpose())
        .collect::<rusqlite::Result<_>>()?;
    let mut pruned = 0;
    for (level, value, resource, kind) in candidates {
        if pruned >= budget {
            break;
        }
        let versions: Vec<(u64, i64, bool)> = tx
            .prepare_cached(
                "SELECT version, created_at, deleted FROM documents
                 WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
                   AND resource = ?4 AND kind = ?5 ORDER BY version",
            )?
            .query_map(params![env, level, value, resource, kind], |r| {
                Ok((
                    u64::try_from(r.get::<_, i64>(0)?).unwrap_or_default(),
                    r.get(1)?,
                    r.get(2)?,
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let Some(keep_from) = retention.oldest_kept(&versions, now) else {
            continue;
        };
        // Within the budget, still oldest first.
        let upto = versions
            .iter()
            .take_while(|(n, _, _)| *n < keep_from)
            .take(budget - pruned)
            .last()
            .map(|(n, _, _)| *n);
        if let Some(upto) = upto {
            pruned += tx
                .prepare_cached(
                    "DELETE FROM documents
                     WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
                       AND resource = ?4 AND kind = ?5 AND version <= ?6",
                )?
                .execute(params![
                    env,
                    level,
                    value,
                    resource,
                    kind,
                    sql_version(upto)
                ])?;
        }
    }
    Ok(pruned)
}

/// The stored text of version `version` of a document, to be written
/// again by a restore: NotFound if it does not exist, Invalid if it is a
/// deletion marker or nests past the depth limit (a version written before
/// the limit may).
fn restorable(tx: &Connection, at: &DocAddress, version: u64) -> Result<String> {
    let Some((old, text)) = version_row(tx, at, version)? else {
        return Err(NotFound::Version {
            doc: at.clone(),
            version,
            latest: head(tx, at)?.map(|(v, _)| v.number),
        }
        .into());
    };
    if old.deleted {
        return Err(Invalid::RestoreDeleted {
            doc: at.clone(),
            version,
        }
        .into());
    }
    let content = decode(|| format!("version {version} of the {at}"), &text)?;
    check_depth(at, &content)?;
    check_schema(tx, at, &content)?;
    Ok(text)
}

impl Store for SqliteStore {
    fn create_component(&self, new: &NewComponent) -> Result<Component> {
        check_component_name(&new.name)?;
        self.write(|tx, log| {
            log.structure();
            if let Some(id) = new.id {
                let taken = tx
                    .query_row("SELECT 1 FROM components WHERE id = ?1", [id], |_| Ok(()))
                    .optional()?;
                if taken.is_some() {
                    return Err(Conflict::ComponentId(id).into());
                }
            }
            let existing: Option<i64> = tx
                .query_row(
                    "SELECT id FROM components WHERE name = ?1",
                    [&new.name],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(id) = existing {
                return Err(Conflict::ComponentName {
                    name: new.name.clone(),
                    id,
                }
                .into());
            }
            tx.execute(
                "INSERT INTO components (id, name) VALUES (?1, ?2)",
                params![new.id, new.name],
            )?;
            let id = tx.last_insert_rowid();
            define_resources(tx, id, &new.resource_definitions)?;
            load_component(tx, id)
        })
    }

    fn component(&self, which: &ComponentRef) -> Result<Component> {
        self.read(|tx| {
            let (id, _) = resolve_component(tx, which)?;
            load_component(tx, id)
        })
    }

    #[cfg(test)]
    fn components(&self) -> Result<Vec<Component>> {
        self.read(|tx| load_components(tx, None))
    }

    fn delete_component(&self, which: &ComponentRef) -> Result<()> {
        self.write(|tx, log| {
            log.structure();
            let (id, name) = resolve_component(tx, which)?;
            let users: Vec<(i64, bool)> = tx
                .prepare(
                    "SELECT ec.environment_id, e.deleted_at IS NOT NULL
                     FROM environment_components ec JOIN environments e ON e.id = ec.environment_id
                     WHERE ec.component_id = ?1 ORDER BY ec.environment_id",
                )?
                .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            if !users.is_empty() {
                return Err(Conflict::ComponentInUse {
                    component: name,
                    environments: users.iter().map(|(id, _)| *id).collect(),
                    deleted: users
                        .iter()
                        .filter(|(_, d)| *d)
                        .map(|(id, _)| *id)
                        .collect(),
                }
                .into());
            }
            tx.execute("DELETE FROM components WHERE id = ?1", [id])?;
            Ok(())
        })
    }

    #[cfg(test)]
    fn add_resource_definitions(
        &self,
        which: &ComponentRef,
        names: &[String],
    ) -> Result<Component> {
        self.write(|tx, log| {
            log.structure();
            let (id, _) = resolve_component(tx, which)?;
            define_resources(tx, id, names)?;
            load_component(tx, id)
        })
    }

    fn set_resource_content(
        &self,
        which: &ComponentRef,
        resource: &str,
        content: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Component> {
        self.write(|tx, log| {
            log.structure();
            let (id, name) = resolve_component(tx, which)?;
            super::content::set_content(tx, (id, &name), resource, content)?;
            load_component(tx, id)
        })
    }

    fn create_environment(&self, new: &NewEnvironment) -> Result<Environment> {
        let mut seen = HashSet::new();
        for level in &new.hierarchy_levels {
            check_level_name(level)?;
            if !seen.insert(level) {
                return Err(Invalid::LevelListedTwice(level.clone()).into());
            }
        }
        self.write(|tx, log| {
            log.structure();
            let mut components: Vec<(i64, String)> = Vec::new();
            for which in &new.components {
                let (id, name) = resolve_component(tx, which)?;
                if components.iter().any(|(c, _)| *c == id) {
                    return Err(Conflict::ComponentListedTwice(which.to_string()).into());
                }
                components.push((id, name));
            }
            if let Some(id) = new.id {
                let taken: Option<Option<i64>> = tx
                    .query_row(
                        "SELECT deleted_at FROM environments WHERE id = ?1",
                        [id],
                        |r| r.get(0),
                    )
                    .optional()?;
                match taken {
                    Some(None) => return Err(Conflict::EnvironmentId(id).into()),
                    Some(Some(_)) => return Err(Conflict::EnvironmentDeleted(id).into()),
                    None => {}
                }
            }
            tx.execute("INSERT INTO environments (id) VALUES (?1)", [new.id])?;
            let env = tx.last_insert_rowid();
            let mut defined: HashMap<String, String> = HashMap::new();
            for (position, (component, name)) in components.iter().enumerate() {
                tx.execute(
                    "INSERT INTO environment_components (environment_id, component_id, position)
                     VALUES (?1, ?2, ?3)",
                    params![env, component, position as i64],
                )?;
                for def in load_component(tx, *component)?.resource_definitions {
                    if let Some(first) = defined.get(&def.name) {
                        return Err(Conflict::ResourceInEnvironment {
                            env,
                            resource: def.name,
                            first: first.clone(),
                            second: name.clone(),
                        }
                        .into());
                    }
                    defined.insert(def.name, name.clone());
                }
            }
            for (position, level) in new.hierarchy_levels.iter().enumerate() {
                tx.execute(
                    "INSERT INTO hierarchy_levels (environment_id, position, name)
                     VALUES (?1, ?2, ?3)",
                    params![env, position as i64, level],
                )?;
            }
            load_environment(tx, env)
        })
    }

    fn environment(&self, id: i64) -> Result<Environment> {
        self.read(|tx| load_environment(tx, id))
    }

    fn environments(&self) -> Result<Vec<Environment>> {
        self.read(|tx| load_environments(tx, None))
    }

    fn delete_environment(&self, id: i64) -> Result<()> {
        self.write(|tx, log| {
            log.structure();
            match tx.execute(
                "UPDATE environments SET deleted_at = ?2 WHERE id = ?1 AND deleted_at IS NULL",
                params![id, now()],
            )? {
                0 => Err(NotFound::Environment(id).into()),
                _ => Ok(()),
            }
        })
    }

    fn restore_environment(&self, id: i64) -> Result<Environment> {
        self.write(|tx, log| {
            log.structure();
            let deleted: Option<Option<i64>> = tx
                .query_row(
                    "SELECT deleted_at FROM environments WHERE id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .optional()?;
            match deleted {
                None => Err(NotFound::Environment(id).into()),
                Some(None) => Err(Conflict::EnvironmentNotDeleted(id).into()),
                Some(Some(_)) => {
                    tx.execute(
                        "UPDATE environments SET deleted_at = NULL WHERE id = ?1",
                        [id],
                    )?;
                    load_environment(tx, id)
                }
            }
        })
    }

    fn purge_environment(&self, id: i64) -> Result<()> {
        self.write(|tx, log| {
            log.structure();
            // Heads first: their foreign key points at documents, and
            // SQLite cascades in no promised order.
            tx.execute("DELETE FROM heads WHERE environment_id = ?1", [id])?;
            match tx.execute("DELETE FROM environments WHERE id = ?1", [id])? {
                0 => Err(NotFound::Environment(id).into()),
                _ => Ok(()),
            }
        })
    }

    fn deleted_environments(&self) -> Result<Vec<(Environment, i64)>> {
        self.read(|tx| {
            let when: HashMap<i64, i64> = tx
                .prepare_cached(
                    "SELECT id, deleted_at FROM environments WHERE deleted_at IS NOT NULL",
                )?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            Ok(load_environments_where(tx, None, true)?
                .into_iter()
                .map(|e| {
                    let at = when.get(&e.id).copied().unwrap_or_default();
                    (e, at)
                })
                .collect())
        })
    }

    fn retention(&self, env: i64) -> Result<Retention> {
        self.read(|tx| {
            load_environment(tx, env)?;
            read_retention(tx, env)
        })
    }

    fn set_retention(&self, env: i64, retention: &Retention) -> Result<Retention> {
        self.write(|tx, _| {
            load_environment(tx, env)?;
            tx.execute(
                "UPDATE environments SET keep_versions = ?2, keep_days = ?3 WHERE id = ?1",
                params![
                    env,
                    retention.keep_versions.map(sql_version),
                    retention.keep_days.map(sql_version)
                ],
            )?;
            read_retention(tx, env)
        })
    }

    fn prune(&self, default: &Retention, now: i64, budget: usize) -> Result<PruneReport> {
        self.write(|tx, _| changes::prune_log(tx))?;
        let policies: Vec<(i64, Retention)> = self.read(|tx| {
            let ids: Vec<i64> = tx
                .prepare_cached("SELECT id FROM environments ORDER BY id")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            ids.into_iter()
                .map(|id| Ok((id, read_retention(tx, id)?.over(*default))))
                .collect()
        })?;
        let mut report = PruneReport::default();
        for (env, retention) in policies {
            if !retention.prunes() {
                continue;
            }
            let left = budget.saturating_sub(report.pruned);
            if left == 0 {
                report.more = true;
                break;
            }
            let pruned = self.write(|tx, _| prune_batch(tx, env, &retention, now, left))?;
            report.pruned += pruned;
            if pruned == left {
                report.more = true;
                break;
            }
        }
        Ok(report)
    }

    fn database_size(&self) -> Result<DatabaseSize> {
        let conn = self.lock();
        let pragma = |name: &str| -> Result<u64> {
            let n: i64 = conn.pragma_query_value(None, name, |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or_default())
        };
        let page = pragma("page_size")?;
        Ok(DatabaseSize {
            bytes: pragma("page_count")? * page,
            free_bytes: pragma("freelist_count")? * page,
        })
    }

    fn write_document(
        &self,
        at: &DocAddress,
        write: DocWrite<'_>,
        ctx: WriteCtx<'_>,
    ) -> Result<Version> {
        let put_text = match &write {
            DocWrite::Put(doc) => {
                check_depth(at, doc)?;
                Some(encode(doc))
            }
            _ => None,
        };
        self.write(|tx, log| {
            EnvContext::load(tx, at.env)?.check(at)?;
            let latest = head(tx, at)?;
            if let Some(expected) = ctx.expected {
                let number = latest.as_ref().map_or(0, |(v, _)| v.number);
                if number != expected {
                    return Err(ConfigError::from(Stale {
                        doc: at.clone(),
                        expected,
                        latest: number,
                    })
                    .into());
                }
            }
            let text = match write {
                DocWrite::Put(doc) => {
                    check_schema(tx, at, doc)?;
                    put_text.unwrap_or_default()
                }
                DocWrite::Update(edit) => {
                    let mut doc = match latest {
                        Some((v, text)) if !v.deleted => {
                            decode(|| format!("version {} of the {at}", v.number), &text)?
                        }
                        _ => Hash::default(),
                    };
                    edit(&mut doc)?;
                    check_depth(at, &doc)?;
                    check_schema(tx, at, &doc)?;
                    encode(&doc)
                }
                DocWrite::Restore(version) => restorable(tx, at, version)?,
                DocWrite::Delete => {
                    return match latest {
                        Some((v, _)) if !v.deleted => append(tx, log, at, None, ctx.author),
                        _ => Err(NotFound::Document(at.clone()).into()),
                    };
                }
            };
            append(tx, log, at, Some(&text), ctx.author)
        })
    }

    fn get(&self, at: &DocAddress, version: Option<u64>) -> Result<Option<(Version, Hash)>> {
        self.read(|tx| {
            EnvContext::load(tx, at.env)?.check(at)?;
            let row = match version {
                None => head(tx, at)?,
                Some(n) => match version_row(tx, at, n)? {
                    Some(row) => Some(row),
                    None => {
                        return Err(NotFound::Version {
                            doc: at.clone(),
                            version: n,
                            latest: head(tx, at)?.map(|(v, _)| v.number),
                        }
                        .into());
                    }
                },
            };
            row.map(|(v, text)| {
                let content = decode(|| format!("version {} of the {at}", v.number), &text)?;
                Ok((v, content))
            })
            .transpose()
        })
    }

    fn history(&self, at: &DocAddress) -> Result<Vec<Version>> {
        self.read(|tx| {
            EnvContext::load(tx, at.env)?.check(at)?;
            let (level, value) = slot_of(&at.path);
            tx.prepare_cached(
                "SELECT version, created_at, size, deleted, author FROM documents
                 WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
                   AND resource = ?4 AND kind = ?5 ORDER BY version",
            )?
            .query_map(
                params![at.env, level, value, at.resource, at.kind.as_str()],
                |r| {
                    Ok(version_from(
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                    ))
                },
            )?
            .collect::<rusqlite::Result<_>>()
            .map_err(Into::into)
        })
    }

    fn import(&self, batch: &ImportBatch) -> Result<ImportReport> {
        for doc in &batch.documents {
            let at = DocAddress::new(batch.env, doc.path.clone(), &doc.resource, doc.kind);
            check_depth(&at, &doc.content)?;
        }
        let texts: Vec<String> = batch.documents.iter().map(|d| encode(&d.content)).collect();
        let author = batch.author.as_deref();
        self.write(|tx, log| {
            let mut ctx = EnvContext::load(tx, batch.env)?;
            let mut report = ImportReport::default();
            if let Some(which) = &batch.define_missing_in {
                let (component, name) = resolve_component(tx, which)?;
                if !ctx.env.components.contains(&component) {
                    return Err(Invalid::ComponentNotInEnvironment {
                        component: name,
                        env: batch.env,
                    }
                    .into());
                }
                let mut missing: Vec<String> = Vec::new();
                for doc in &batch.documents {
                    if !ctx.resources.contains_key(&doc.resource)
                        && !missing.contains(&doc.resource)
                    {
                        missing.push(doc.resource.clone());
                    }
                }
                if !missing.is_empty() {
                    define_resources(tx, component, &missing)?;
                    log.structure();
                }
                for resource in &missing {
                    ctx.resources.insert(resource.clone(), name.clone());
                }
                report.defined = missing;
            }
            // (slot, resource, kind) of every document in the batch.
            let mut seen: HashSet<(Option<&LevelValue>, &str, DocKind)> = HashSet::new();
            for (doc, text) in batch.documents.iter().zip(&texts) {
                let at = DocAddress::new(batch.env, doc.path.clone(), &doc.resource, doc.kind);
                ctx.check(&at)?;
                if !seen.insert((doc.path.slot(), &doc.resource, doc.kind)) {
                    return Err(Invalid::ImportedTwice(at).into());
                }
                check_schema(tx, &at, &doc.content)?;
                match head(tx, &at)? {
                    Some((v, old)) if !v.deleted && old == *text => report.unchanged.push(at),
                    _ => {
                        let v = append(tx, log, &at, Some(text), author)?;
                        report.written.push((at, v));
                    }
                }
            }
            for (path, kind) in &batch.replace {
                path.check(&ctx.env)?;
                let (level, value) = slot_of(path);
                let live: Vec<String> = tx
                    .prepare_cached(
                        "SELECT h.resource FROM heads h JOIN documents d USING
                             (environment_id, level, level_value, resource, kind, version)
                         WHERE h.environment_id = ?1 AND h.level = ?2 AND h.level_value = ?3
                           AND h.kind = ?4 AND d.deleted = 0 ORDER BY h.resource",
                    )?
                    .query_map(params![batch.env, level, value, kind.as_str()], |r| {
                        r.get(0)
                    })?
                    .collect::<rusqlite::Result<_>>()?;
                for resource in live {
                    if !seen.contains(&(path.slot(), resource.as_str(), *kind)) {
                        let at = DocAddress::new(batch.env, path.clone(), resource, *kind);
                        let v = append(tx, log, &at, None, author)?;
                        report.deleted.push((at, v));
                    }
                }
            }
            Ok(report)
        })
    }

    fn register(&self, env: i64, level: &str) -> Result<Option<Vec<String>>> {
        self.read(|tx| registers::list(tx, env, level))
    }

    fn set_register(&self, env: i64, level: &str, values: Option<&[String]>) -> Result<()> {
        self.write(|tx, _| registers::set(tx, env, level, values))
    }

    fn add_to_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize> {
        self.write(|tx, _| registers::add(tx, env, level, values))
    }

    fn remove_from_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize> {
        self.write(|tx, _| registers::remove(tx, env, level, values))
    }

    fn in_register(&self, env: i64, level: &str, value: &str) -> Result<Option<bool>> {
        self.read(|tx| registers::contains(tx, env, level, value))
    }

    fn registered_in(&self, level: &str, value: &str) -> Result<Vec<i64>> {
        self.read(|tx| registers::environments_with(tx, level, value))
    }

    fn load_all(&self) -> Result<SnapshotData> {
        self.read(|tx| load_all(tx))
    }

    fn generation(&self) -> Result<u64> {
        self.read(|tx| changes::generation(tx))
    }

    fn dump(&self, out: &mut dyn FnMut(super::dump::Dumped) -> Result<()>) -> Result<()> {
        self.read(|tx| dump::dump(tx, out))
    }

    fn replay(
        &self,
        items: &mut dyn Iterator<Item = Result<super::dump::Dumped>>,
        replace: bool,
    ) -> Result<()> {
        self.write(|tx, log| dump::replay(tx, log, items, replace))
    }

    fn changes_since(&self, since: u64) -> Result<Changes> {
        self.read(|tx| changes::since(tx, since, || load_all(tx), |at| latest(tx, at)))
    }
}

/// A changed document's latest state, for the change log's readers.
fn latest(tx: &Connection, at: &DocAddress) -> Result<Latest> {
    match head(tx, at)? {
        None => Ok(Latest::Gone),
        Some((v, _)) if v.deleted => Ok(Latest::Gone),
        Some((v, text)) => match decode(|| format!("version {} of the {at}", v.number), &text) {
            Ok(content) => Ok(Latest::Live(StoredDoc::new(v, Arc::new(content)))),
            Err(StoreError::Corrupt { .. }) => Ok(Latest::Unreadable),
            Err(e) => Err(e),
        },
    }
}

/// Everything a snapshot needs, read inside `tx`.
fn load_all(tx: &Connection) -> Result<SnapshotData> {
    let components = load_components(tx, None)?;
    let environments = load_environments(tx, None)?;
    let mut stmt = tx.prepare(
        "SELECT d.environment_id, d.level, d.level_value, d.resource, d.kind,
                d.version, d.created_at, d.size, d.content, d.author
         FROM heads h JOIN documents d USING
             (environment_id, level, level_value, resource, kind, version)
         JOIN environments e ON e.id = d.environment_id
         WHERE d.deleted = 0 AND e.deleted_at IS NULL",
    )?;
    let raw = stmt
        .query_map([], |r| {
            Ok(RawDoc {
                env: r.get(0)?,
                level: r.get(1)?,
                value: r.get(2)?,
                resource: r.get(3)?,
                kind: r.get(4)?,
                version: version_from(r.get(5)?, r.get(6)?, r.get(7)?, false, r.get(9)?),
                text: r.get(8)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let (documents, unreadable) = decode_all(raw)?;
    Ok(SnapshotData {
        components,
        environments,
        documents,
        unreadable,
    })
}

/// A stored document row before decoding.
struct RawDoc {
    env: i64,
    level: String,
    value: String,
    resource: String,
    kind: String,
    version: Version,
    text: String,
}

/// A row's document, or why it cannot be read.
type Decoded = std::result::Result<StoredDocument, UnreadableDocument>;

impl RawDoc {
    /// The document, or (a content that does not decode) the record of an
    /// unreadable one; an error only for a row no address can name.
    fn decode(self) -> Result<Decoded> {
        let RawDoc {
            env,
            level,
            value,
            resource,
            kind,
            version,
            text,
        } = self;
        let what = || format!("document {resource} ({kind}) at {level}={value}");
        let corrupt = |reason: String| StoreError::Corrupt {
            what: what(),
            reason,
        };
        let kind_parsed = kind
            .parse::<DocKind>()
            .map_err(|e| corrupt(e.to_string()))?;
        let slot = if level.is_empty() {
            None
        } else {
            Some(LevelValue::new(&level, &value).map_err(|e| corrupt(e.to_string()))?)
        };
        let content = match wire::from_str(&text) {
            Ok(Value::Hash(h)) => h,
            // The reasons carry nothing of the content (a parse error's
            // text may quote it).
            other => {
                let reason = match other {
                    Ok(_) => "it is not a Hash",
                    Err(wire::WireError::TooDeep) => "it nests deeper than hierad reads",
                    Err(wire::WireError::Tag(_)) => "it holds a malformed tagged value",
                    Err(wire::WireError::Json(_)) => "it is not valid wire JSON",
                };
                let path = LevelPath::new(slot.into_iter().collect());
                return Ok(Err(UnreadableDocument {
                    at: DocAddress::new(env, path, resource, kind_parsed),
                    version: version.number,
                    reason,
                }));
            }
        };
        Ok(Ok(StoredDocument {
            env,
            slot,
            resource,
            kind: kind_parsed,
            version,
            content,
        }))
    }
}

/// Decodes documents on every core: decoding, not reading, is what a
/// large database spends its start-up on (about 60 MB/s of wire JSON per
/// core), and the documents are independent.
fn decode_all(raw: Vec<RawDoc>) -> Result<(Vec<StoredDocument>, Vec<UnreadableDocument>)> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(8);
    let decoded: Vec<Decoded> = if threads < 2 || raw.len() < 64 {
        raw.into_iter().map(RawDoc::decode).collect::<Result<_>>()?
    } else {
        let per_thread = raw.len().div_ceil(threads);
        let mut chunks: Vec<Vec<RawDoc>> = Vec::with_capacity(threads);
        let mut rest = raw.into_iter();
        loop {
            let chunk: Vec<RawDoc> = rest.by_ref().take(per_thread).collect();
            if chunk.is_empty() {
                break;
            }
            chunks.push(chunk);
        }
        let parts: Vec<Result<Vec<Decoded>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunks
                .into_iter()
                .map(|chunk| scope.spawn(move || chunk.into_iter().map(RawDoc::decode).collect()))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        let mut all = Vec::new();
        for part in parts {
            all.extend(part?);
        }
        all
    };
    let mut documents = Vec::with_capacity(decoded.len());
    let mut unreadable = Vec::new();
    for doc in decoded {
        match doc {
            Ok(doc) => documents.push(doc),
            Err(bad) => unreadable.push(bad),
        }
    }
    Ok((documents, unreadable))
}

#[cfg(test)]
pub(super) fn open_with_migrations(path: &Path, migrations: &[&str]) -> Result<SqliteStore> {
    SqliteStore::from_connection(Connection::open(path)?, migrations)
}

#[cfg(test)]
impl SqliteStore {
    /// The connection itself, for tests that check its settings.
    pub(super) fn raw<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        f(&self.lock())
    }
}
