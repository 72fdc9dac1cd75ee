//! Reads at an exact generation: the documents as they were when
//! generation N committed. Every version records the generation that
//! wrote it (`documents.generation`, stamped by
//! [`Log::commit`](crate::store::changes::Log::commit)); the version of a
//! document at N is its newest with a generation at most N. Versions
//! written before generations were recorded (NULL) count as written by
//! `generation.recorded_from`, so reads older than that are refused, as
//! are reads that need a version retention pruned: [`Gone`] names the
//! oldest generation that can be read.
//!
//! Only documents are versioned: the components, environments, levels and
//! registers of a read at N are today's (a purged or deleted environment
//! is not there; one created after N is, without documents).

use super::documents::version_row;
use super::load::{RawDoc, decode_all};
use super::{load_components, load_environments, version_from};
use crate::configdb::{DocAddress, Gone, Invalid, LevelPath, LevelValue, SnapshotData};
use crate::store::changes;
use crate::store::packing::Packing;
use crate::store::sql::{Sql, params};
use crate::store::{Result, StoreError};

/// Everything a snapshot needs as of `generation`, read inside `tx`;
/// with `env`, only that environment's documents (and only its pruning
/// limits the generations it can read).
///
/// # Errors
///
/// Invalid ([`Invalid::GenerationAhead`]): a generation past the newest.
/// [`StoreError::Gone`]: one older than [`oldest_readable`].
pub(crate) fn load_at(tx: &dyn Sql, generation: u64, env: Option<i64>) -> Result<SnapshotData> {
    check_readable(tx, generation, env)?;
    let rows = tx.query(
        "SELECT d.environment_id, d.level, d.level_value, d.resource, d.kind, d.version,
                d.created_at, d.size, d.packing, d.content, d.author
         FROM documents d JOIN (
             SELECT environment_id, level, level_value, resource, kind, max(version) AS version
             FROM documents
             WHERE (CAST(?1 AS BIGINT) IS NULL OR environment_id = ?1)
               AND coalesce(generation, 0) <= ?2
             GROUP BY environment_id, level, level_value, resource, kind
         ) m USING (environment_id, level, level_value, resource, kind, version)
         JOIN environments e ON e.id = d.environment_id
         WHERE d.deleted = 0 AND e.deleted_at IS NULL",
        params![env, super::sql_version(generation)],
    )?;
    let mut raw = Vec::with_capacity(rows.len());
    for mut r in rows {
        let mut doc = RawDoc {
            env: r.int(0)?,
            level: r.text(1)?,
            value: r.text(2)?,
            resource: r.text(3)?,
            kind: r.text(4)?,
            version: version_from(r.int(5)?, r.int(6)?, r.int(7)?, false, r.opt_text(10)?),
            text: String::new(),
        };
        doc.text = if r.int(8)? == Packing::Plain as i64 {
            r.text(9)?
        } else {
            unpacked(tx, &doc)?
        };
        raw.push(doc);
    }
    let super::load::Decoded {
        documents,
        unreadable,
        unparsed,
    } = decode_all(raw)?;
    Ok(SnapshotData {
        components: load_components(tx, None)?,
        environments: load_environments(tx, None)?,
        documents,
        unreadable,
        unparsed,
        registers: super::registers::all(tx)?,
    })
}

/// Checks that a read at `generation` (of `env`'s documents, or all) can
/// be exact.
///
/// # Errors
///
/// As [`load_at`].
pub(crate) fn check_readable(tx: &dyn Sql, generation: u64, env: Option<i64>) -> Result<()> {
    let newest = changes::generation(tx)?;
    if generation > newest {
        return Err(Invalid::GenerationAhead {
            asked: generation,
            newest,
        }
        .into());
    }
    let oldest = oldest_readable(tx, env)?;
    if generation < oldest {
        return Err(StoreError::Gone(Gone {
            asked: generation,
            oldest,
        }));
    }
    Ok(())
}

/// The oldest generation a read (of `env`'s documents, or all) can be
/// exact at: the first with recorded versions, or later where retention
/// pruned the versions before a document's oldest kept one (the
/// generation that wrote that one; before it, the pruned one was live).
pub(crate) fn oldest_readable(tx: &dyn Sql, env: Option<i64>) -> Result<u64> {
    let recorded = changes::recorded_from(tx)?;
    let pruned = tx
        .query_one(
            "SELECT max(coalesce(d.generation, 0)) FROM documents d JOIN (
                 SELECT environment_id, level, level_value, resource, kind, min(version) AS version
                 FROM documents WHERE CAST(?1 AS BIGINT) IS NULL OR environment_id = ?1
                 GROUP BY environment_id, level, level_value, resource, kind
             ) m USING (environment_id, level, level_value, resource, kind, version)
             JOIN environments e ON e.id = d.environment_id
             WHERE m.version > 1 AND e.deleted_at IS NULL",
            params![env],
        )?
        .opt_int(0)?
        .map_or(0, |g| u64::try_from(g).unwrap_or_default());
    Ok(recorded.max(pruned))
}

/// The text of a packed version, unpacked as a read of it would.
fn unpacked(tx: &dyn Sql, doc: &RawDoc) -> Result<String> {
    let what = || format!("document {} ({}) at {}", doc.resource, doc.kind, doc.level);
    let corrupt = |reason: String| StoreError::Corrupt {
        what: what(),
        reason,
    };
    let slot = if doc.level.is_empty() {
        Vec::new()
    } else {
        vec![LevelValue::new(&doc.level, &doc.value).map_err(|e| corrupt(e.to_string()))?]
    };
    let kind = doc.kind.parse().map_err(|e| corrupt(format!("{e}")))?;
    let at = DocAddress::new(doc.env, LevelPath::new(slot), &doc.resource, kind);
    match version_row(tx, &at, doc.version.number)? {
        Some((_, text)) => Ok(text),
        None => Err(corrupt(format!(
            "version {} vanished while it was read",
            doc.version.number
        ))),
    }
}
