//! The change log: every committed write takes the next
//! global generation and records what it changed, in its own transaction,
//! so any process on the same database learns of every write by reading
//! the log past the generation it has.
//!
//! The generation is one row (`generation`), incremented by the writing
//! transaction: the row is written under the transaction's write lock, so
//! generations commit in their order and a reader that has seen
//! generation N has seen every write numbered up to N (a sequence would
//! hand out numbers that commit out of order).

use super::sql::{Sql, params};
use super::{Result, StoreError};
use crate::configdb::{DocAddress, DocKind, LevelPath, LevelValue, SnapshotData, StoredDoc};
use std::collections::BTreeSet;

/// Past this many changed documents a reader reloads everything: deriving
/// a snapshot document by document costs more than one rebuild then.
pub(crate) const DERIVE_AT_MOST: usize = 64;

/// Change-log entries kept behind the newest generation by
/// [`prune_log`]; a reader further behind reloads everything.
pub(crate) const KEEP_GENERATIONS: u64 = 100_000;

/// What changed past a generation, read in one transaction.
#[derive(Debug)]
pub(crate) enum Changes {
    /// Nothing: the store is at this generation (never below the one asked
    /// about, unless the database was replaced: then `Everything`).
    None { generation: u64 },
    /// Only documents and registers changed, in resources and
    /// environments that existed before: each document's latest live
    /// content now (`None`: deleted), each register's values now (`None`:
    /// removed).
    Documents {
        generation: u64,
        documents: Vec<ChangedDoc>,
        registers: Vec<ChangedRegister>,
    },
    /// The structure changed (components, environments, definitions),
    /// many documents changed, or the log no longer reaches back: the
    /// whole content at `generation`.
    Everything { generation: u64, data: SnapshotData },
}

impl Changes {
    /// The generation the store was at when this was read.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "only the store's tests read it so far")
    )]
    pub(crate) fn generation(&self) -> u64 {
        match self {
            Changes::None { generation }
            | Changes::Documents { generation, .. }
            | Changes::Everything { generation, .. } => *generation,
        }
    }
}

/// What one write transaction changed, written to the log at its commit.
#[derive(Debug, Default)]
pub(crate) struct Log {
    documents: BTreeSet<(i64, String, String, String, &'static str)>,
    /// The version each document got: stamped with the generation at
    /// commit, so a read at a generation finds it (`shared/at.rs`).
    versions: Vec<(DocAddress, u64)>,
    registers: BTreeSet<(i64, String)>,
    /// Node scopes written: (environment, the level listing the node, node).
    scopes: BTreeSet<(i64, String, String)>,
    /// The version each node scope got (environment, node, version):
    /// stamped like documents', so the feed names it.
    scope_versions: Vec<(i64, String, u64)>,
    structure: bool,
    /// The versions written carry no generation (a replay): reads are
    /// exact only from this transaction's generation on.
    unrecorded: bool,
}

/// The `kind` of a log entry that names a register (its environment and
/// level; no level value, no resource). A reader that does not know it
/// sees an entry without a resource and reloads everything.
const REGISTER: &str = "register";

/// The `kind` of a log entry that names a node's scope (its environment,
/// the level whose register lists it and the node; no resource). Scopes
/// are not in snapshots: a reader derives nothing from it, but the write
/// takes a generation, so answers cached for the last one are not reused.
pub(crate) const SCOPE: &str = "scope";

impl Log {
    /// A document got version `version`.
    pub(crate) fn document(&mut self, at: &DocAddress, version: u64) {
        self.versions.push((at.clone(), version));
        let (level, value) = super::shared::slot_of(&at.path);
        self.documents.insert((
            at.env,
            level.to_owned(),
            value.to_owned(),
            at.resource.clone(),
            at.kind.as_str(),
        ));
    }

    /// The register of `level` in `env` changed (created, removed, or a
    /// value added or removed).
    pub(crate) fn register(&mut self, env: i64, level: &str) {
        self.registers.insert((env, level.to_owned()));
    }

    /// The scope of `node` (listed by `level`'s register) in `env` got
    /// version `version` (a write or a deletion marker).
    pub(crate) fn scope(&mut self, env: i64, level: &str, node: &str, version: u64) {
        self.scopes.insert((env, level.to_owned(), node.to_owned()));
        self.scope_versions.push((env, node.to_owned(), version));
    }

    /// Components, environments or definitions changed: readers reload.
    pub(crate) fn structure(&mut self) {
        self.structure = true;
    }

    /// Versions were written whose generations are not known (a replay of
    /// a dump): reads at generations before this one are refused.
    pub(crate) fn unrecorded(&mut self) {
        self.structure = true;
        self.unrecorded = true;
    }

    /// Takes the next generation and records the changes, inside the
    /// writing transaction; a transaction that changed nothing takes none.
    /// Returns the generation taken.
    pub(crate) fn commit(&self, tx: &dyn Sql) -> Result<Option<u64>> {
        if self.documents.is_empty()
            && self.registers.is_empty()
            && self.scopes.is_empty()
            && !self.structure
        {
            return Ok(None);
        }
        let generation = tx
            .query_one(
                "UPDATE generation SET value = value + 1 WHERE id = 1 RETURNING value",
                &[],
            )?
            .int(0)?;
        let insert = "INSERT INTO changes
            (generation, environment_id, level, level_value, resource, kind)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
        if self.structure {
            let none: Option<&str> = None;
            tx.execute(
                insert,
                params![generation, None::<i64>, none, none, none, none],
            )?;
        }
        for (env, level, value, resource, kind) in &self.documents {
            tx.execute(
                insert,
                params![generation, *env, level, value, resource, *kind],
            )?;
        }
        for (env, level) in &self.registers {
            let none: Option<&str> = None;
            tx.execute(
                insert,
                params![generation, *env, level, none, none, REGISTER],
            )?;
        }
        for (env, level, node) in &self.scopes {
            let none: Option<&str> = None;
            tx.execute(insert, params![generation, *env, level, node, none, SCOPE])?;
        }
        self.stamp(tx, generation)?;
        Ok(Some(u64::try_from(generation).unwrap_or_default()))
    }

    /// Records `generation` with every version this transaction wrote.
    fn stamp(&self, tx: &dyn Sql, generation: i64) -> Result<()> {
        for (at, version) in &self.versions {
            let (level, value) = super::shared::slot_of(&at.path);
            tx.execute(
                "UPDATE documents SET generation = ?1
                 WHERE environment_id = ?2 AND level = ?3 AND level_value = ?4
                   AND resource = ?5 AND kind = ?6 AND version = ?7",
                params![
                    generation,
                    at.env,
                    level,
                    value,
                    &at.resource,
                    at.kind.as_str(),
                    i64::try_from(*version).unwrap_or(i64::MAX)
                ],
            )?;
        }
        for (env, node, version) in &self.scope_versions {
            tx.execute(
                "UPDATE node_scopes SET generation = ?1
                 WHERE environment_id = ?2 AND node = ?3 AND version = ?4",
                params![
                    generation,
                    *env,
                    node,
                    i64::try_from(*version).unwrap_or(i64::MAX)
                ],
            )?;
        }
        if self.unrecorded {
            tx.execute(
                "UPDATE generation SET recorded_from = ?1 WHERE id = 1",
                params![generation],
            )?;
        }
        Ok(())
    }
}

/// The oldest generation whose versions are all recorded: a read at an
/// older one cannot be exact.
pub(crate) fn recorded_from(tx: &dyn Sql) -> Result<u64> {
    let n = tx
        .query_one("SELECT recorded_from FROM generation WHERE id = 1", &[])?
        .int(0)?;
    Ok(u64::try_from(n).unwrap_or_default())
}

/// The newest committed generation (0: nothing written since the log began).
pub(crate) fn generation(tx: &dyn Sql) -> Result<u64> {
    let n = tx
        .query_one("SELECT value FROM generation WHERE id = 1", &[])?
        .int(0)?;
    Ok(u64::try_from(n).unwrap_or_default())
}

/// One logged change: a document, or (all `None`) the structure.
type Row = (
    i64,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A changed document and its latest live content (`None`: deleted).
pub(crate) type ChangedDoc = (DocAddress, Option<StoredDoc>);

/// A changed register (environment, level) and its values now (`None`:
/// removed).
pub(crate) type ChangedRegister = (i64, String, Option<Vec<String>>);

/// What changed past a generation, before the store's content is read.
struct Changed {
    documents: Vec<ChangedDoc>,
    registers: Vec<ChangedRegister>,
}

/// A changed document's state now, as [`since`]'s caller reads it.
pub(crate) enum Latest {
    Live(StoredDoc),
    /// Deleted (a deletion marker, or never written).
    Gone,
    /// Its content does not decode: the rebuild records it as unreadable.
    Unreadable,
}

/// What changed past `since`, read inside one transaction. `load_all`,
/// `latest` and `register` (a register's values now, `None`: none) read
/// the store's content in that same transaction.
///
/// # Errors
///
/// The database fails, or a log entry names no document.
pub(crate) fn since(
    tx: &dyn Sql,
    since: u64,
    load_all: impl FnOnce() -> Result<SnapshotData>,
    latest: impl FnMut(&DocAddress) -> Result<Latest>,
    register: impl FnMut(i64, &str) -> Result<Option<Vec<String>>>,
) -> Result<Changes> {
    let generation = generation(tx)?;
    if generation == since && since > 0 {
        return Ok(Changes::None { generation });
    }
    if since > 0 && since < generation {
        if let Some(changed) = changed_since(tx, since, latest, register)? {
            return Ok(Changes::Documents {
                generation,
                documents: changed.documents,
                registers: changed.registers,
            });
        }
    }
    Ok(Changes::Everything {
        generation,
        data: load_all()?,
    })
}

/// The documents and registers changed past `since` with their state now,
/// or `None` when the reader must reload everything: the structure
/// changed, too many documents changed, one is unreadable, or the log no
/// longer reaches back.
fn changed_since(
    tx: &dyn Sql,
    since: u64,
    mut latest: impl FnMut(&DocAddress) -> Result<Latest>,
    mut register: impl FnMut(i64, &str) -> Result<Option<Vec<String>>>,
) -> Result<Option<Changed>> {
    let rows: Vec<Row> = tx
        .query(
            "SELECT generation, environment_id, level, level_value, resource, kind
             FROM changes WHERE generation > ?1 ORDER BY generation",
            params![i64::try_from(since).unwrap_or(i64::MAX)],
        )?
        .into_iter()
        .map(|mut r| {
            Ok((
                r.int(0)?,
                r.opt_int(1)?,
                r.opt_text(2)?,
                r.opt_text(3)?,
                r.opt_text(4)?,
                r.opt_text(5)?,
            ))
        })
        .collect::<Result<_>>()?;
    // The log reaches back to `since` only if its first entry past it is
    // the next generation (pruning removes the oldest first).
    let reaches = rows
        .first()
        .is_some_and(|(g, ..)| u64::try_from(*g).ok() == since.checked_add(1));
    if !reaches {
        return Ok(None);
    }
    let mut addresses = BTreeSet::new();
    let mut registers = BTreeSet::new();
    for (_, env, level, value, resource, kind) in &rows {
        match (env, level, value, resource, kind) {
            (Some(env), Some(level), None, None, Some(kind)) if kind == REGISTER => {
                registers.insert((*env, level));
            }
            (Some(_), Some(_), Some(_), None, Some(kind)) if kind == SCOPE => {}
            (Some(env), Some(level), Some(value), Some(resource), Some(kind)) => {
                addresses.insert((*env, level, value, resource, kind));
            }
            _ => return Ok(None),
        }
    }
    if addresses.len() + registers.len() > DERIVE_AT_MOST {
        return Ok(None);
    }
    let registers = registers
        .into_iter()
        .map(|(env, level)| Ok((env, level.clone(), register(env, level)?)))
        .collect::<Result<_>>()?;
    let mut documents = Vec::with_capacity(addresses.len());
    for (env, level, value, resource, kind) in addresses {
        let at = address(env, level, value, resource, kind)?;
        match latest(&at)? {
            Latest::Live(doc) => documents.push((at, Some(doc))),
            Latest::Gone => documents.push((at, None)),
            Latest::Unreadable => return Ok(None),
        }
    }
    Ok(Some(Changed {
        documents,
        registers,
    }))
}

/// The address a log row names (its path is the document's slot alone).
fn address(env: i64, level: &str, value: &str, resource: &str, kind: &str) -> Result<DocAddress> {
    let corrupt = |reason: String| StoreError::Corrupt {
        what: format!("change log entry for {resource} ({kind}) at {level}={value}"),
        reason,
    };
    let kind = kind
        .parse::<DocKind>()
        .map_err(|e| corrupt(e.to_string()))?;
    let slot = if level.is_empty() {
        None
    } else {
        Some(LevelValue::new(level, value).map_err(|e| corrupt(e.to_string()))?)
    };
    Ok(DocAddress::new(
        env,
        LevelPath::new(slot.into_iter().collect()),
        resource,
        kind,
    ))
}

/// Removes log entries more than [`KEEP_GENERATIONS`] behind the newest;
/// returns how many went.
pub(crate) fn prune_log(tx: &dyn Sql) -> Result<usize> {
    let newest = generation(tx)?;
    let Some(below) = newest.checked_sub(KEEP_GENERATIONS) else {
        return Ok(0);
    };
    let oldest: Option<i64> = match tx.query_opt("SELECT min(generation) FROM changes", &[])? {
        Some(row) => row.opt_int(0)?,
        None => None,
    };
    if oldest.is_none_or(|o| u64::try_from(o).unwrap_or_default() > below) {
        return Ok(0);
    }
    tx.execute(
        "DELETE FROM changes WHERE generation <= ?1",
        params![i64::try_from(below).unwrap_or(i64::MAX)],
    )
}

/// One entry of the change log as the change feed shows it: a document
/// or a node scope (with the version that generation wrote), or a
/// register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Logged {
    pub(crate) generation: u64,
    pub(crate) env: i64,
    /// The slot: `(level, value)`, both empty at the root; a register's
    /// level with an empty value.
    pub(crate) level: String,
    pub(crate) value: String,
    /// `None` for a register or a scope.
    pub(crate) resource: Option<String>,
    /// `values`, `overrides`, `register` or `scope` (then `value` is the
    /// node).
    pub(crate) kind: String,
    /// The version the generation wrote, its author and time (none for a
    /// register, a version retention pruned since, or one written before
    /// versions recorded their generation).
    pub(crate) version: Option<u64>,
    pub(crate) author: Option<String>,
    pub(crate) created_at: Option<i64>,
}

/// The newest generation and up to `limit` log entries past `since`,
/// oldest first, in one transaction. Structure changes (components,
/// environments) are not listed.
///
/// # Errors
///
/// The database fails.
pub(crate) fn logged_since(tx: &dyn Sql, since: u64, limit: usize) -> Result<(u64, Vec<Logged>)> {
    let newest = generation(tx)?;
    let rows = tx.query(
        "SELECT c.generation, c.environment_id, c.level, c.level_value, c.resource, c.kind,
                coalesce(d.version, s.version), coalesce(d.author, s.author),
                coalesce(d.created_at, s.created_at)
         FROM changes c LEFT JOIN documents d
           ON d.environment_id = c.environment_id AND d.level = c.level
          AND d.level_value = c.level_value AND d.resource = c.resource
          AND d.kind = c.kind AND d.generation = c.generation
         LEFT JOIN node_scopes s
           ON c.kind = 'scope' AND c.resource IS NULL
          AND s.environment_id = c.environment_id AND s.node = c.level_value
          AND s.generation = c.generation
         WHERE c.generation > ?1 AND c.environment_id IS NOT NULL
         ORDER BY c.generation, c.level, c.level_value, c.resource, c.kind
         LIMIT ?2",
        params![
            i64::try_from(since).unwrap_or(i64::MAX),
            i64::try_from(limit).unwrap_or(i64::MAX)
        ],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for mut r in rows {
        out.push(Logged {
            generation: u64::try_from(r.int(0)?).unwrap_or_default(),
            env: r.opt_int(1)?.unwrap_or_default(),
            level: r.opt_text(2)?.unwrap_or_default(),
            value: r.opt_text(3)?.unwrap_or_default(),
            resource: r.opt_text(4)?,
            kind: r.opt_text(5)?.unwrap_or_default(),
            version: r.opt_int(6)?.and_then(|v| u64::try_from(v).ok()),
            author: r.opt_text(7)?,
            created_at: r.opt_int(8)?,
        });
    }
    Ok((newest, out))
}
