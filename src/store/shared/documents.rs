//! Document versions: reading the head and old (packed) versions, writing
//! the next version, and the document writes of the [`Store`](crate::store::Store).

use super::{
    EnvContext, decode, decode_data, decode_stored, encode, now, resolve_component, slot_of,
    sql_version, version_from,
};
use crate::configdb::unparsed::{Content, Unparsed};
use crate::configdb::{
    ConfigError, DocAddress, DocKind, Invalid, LevelValue, NotFound, OverQuota, Stale, StoredDoc,
    Version, check_depth,
};
use crate::hiera::Hash;
use crate::store::changes::{Latest, Log};
use crate::store::content::check_schema;
use crate::store::packing::{self, Packing};
use crate::store::sql::{Sql, params};
use crate::store::{DocWrite, ImportBatch, ImportReport, Quotas, Result, StoreError, WriteCtx};
use std::collections::HashSet;
use std::sync::Arc;

/// The latest version of a document and its stored text.
pub(super) fn head(tx: &dyn Sql, at: &DocAddress) -> Result<Option<(Version, String)>> {
    let (level, value) = slot_of(&at.path);
    let row = tx.query_opt(
        "SELECT d.version, d.created_at, d.size, d.deleted, d.content, d.author
         FROM heads h JOIN documents d USING
             (environment_id, level, level_value, resource, kind, version)
         WHERE h.environment_id = ?1 AND h.level = ?2 AND h.level_value = ?3
           AND h.resource = ?4 AND h.kind = ?5",
        params![at.env, level, value, &at.resource, at.kind.as_str()],
    )?;
    row.map(|mut r| {
        let author = r.opt_text(5)?;
        Ok((
            version_from(r.int(0)?, r.int(1)?, r.int(2)?, r.flag(3)?, author),
            r.text(4)?,
        ))
    })
    .transpose()
}

/// One given version of a document and its text, unpacked: the rows
/// from it up to the first that stands alone (at most
/// [`packing::KEYFRAME_EVERY`] of them), unpacked from the top down.
pub(super) fn version_row(
    tx: &dyn Sql,
    at: &DocAddress,
    n: u64,
) -> Result<Option<(Version, String)>> {
    let (level, value) = slot_of(&at.path);
    let rows = tx.query(
        "SELECT version, created_at, size, deleted, packing, content, packed, author
         FROM documents WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
           AND resource = ?4 AND kind = ?5 AND version >= ?6 ORDER BY version LIMIT ?7",
        params![
            at.env,
            level,
            value,
            &at.resource,
            at.kind.as_str(),
            sql_version(n),
            sql_version(packing::KEYFRAME_EVERY + 1)
        ],
    )?;
    let mut rows = rows.into_iter();
    let what = |number: u64| move || format!("version {number} of the {at}");
    // Deltas on the way up, each waiting for the text above it.
    let mut deltas: Vec<(Version, Vec<u8>)> = Vec::new();
    let mut text = loop {
        let Some(mut row) = rows.next() else {
            return match deltas.last() {
                None => Ok(None),
                Some((v, _)) => Err(StoreError::Corrupt {
                    what: what(v.number)(),
                    reason: "a delta above the latest version".to_owned(),
                }),
            };
        };
        let author = row.opt_text(7)?;
        let version = version_from(row.int(0)?, row.int(1)?, row.int(2)?, row.flag(3)?, author);
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
        let packing = Packing::from_column(row.int(4)?).ok_or_else(|| StoreError::Corrupt {
            what: what(version.number)(),
            reason: "an unknown packing".to_owned(),
        })?;
        match packing {
            Packing::Plain => break (version, row.text(5)?),
            Packing::Alone => {
                let bytes = row.bytes(6)?;
                let text = packing::unpack(what(version.number), packing, &bytes, None)?;
                break (version, text);
            }
            Packing::Delta => deltas.push((version, row.bytes(6)?)),
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
/// [`packing`]). Must run inside a write transaction; `latest` is the
/// document's [`head`], read once by the caller in the same transaction. The one place every
/// document write goes through, so the one that checks the [`Quotas`]
/// and keeps the environment's total of latest documents.
pub(super) fn append(
    tx: &dyn Sql,
    log: &mut Log,
    (at, latest): (&DocAddress, Option<(Version, String)>),
    content: Option<&str>,
    author: Option<&str>,
    quotas: Quotas,
) -> Result<Version> {
    let (level, value) = slot_of(&at.path);
    let number = latest.as_ref().map_or(0, |(v, _)| v.number) + 1;
    log.document(at, number);
    let text = content.unwrap_or("");
    let live = |v: &Version| if v.deleted { 0 } else { v.size as u64 };
    let old_size = latest.as_ref().map_or(0, |(v, _)| live(v));
    count_bytes(tx, at, (old_size, text.len() as u64), quotas)?;
    let version = version_from(
        sql_version(number),
        now(),
        text.len() as i64,
        content.is_none(),
        author.map(str::to_owned),
    );
    tx.execute(
        "INSERT INTO documents (environment_id, level, level_value, resource, kind,
                                version, created_at, deleted, size, content, author)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            at.env,
            level,
            value,
            &at.resource,
            at.kind.as_str(),
            sql_version(number),
            version.created_at,
            i64::from(version.deleted),
            text.len() as i64,
            text,
            author
        ],
    )?;
    tx.execute(
        "INSERT INTO heads (environment_id, level, level_value, resource, kind, version)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (environment_id, level, level_value, resource, kind)
         DO UPDATE SET version = excluded.version",
        params![
            at.env,
            level,
            value,
            &at.resource,
            at.kind.as_str(),
            sql_version(number)
        ],
    )?;
    if let Some((old, old_text)) = latest.filter(|(old, _)| !old.deleted) {
        let (packing, bytes) = packing::pack(old.number, &old_text, content)?;
        tx.execute(
            "UPDATE documents SET packing = ?7, packed = ?8, content = ''
             WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
               AND resource = ?4 AND kind = ?5 AND version = ?6",
            params![
                at.env,
                level,
                value,
                &at.resource,
                at.kind.as_str(),
                sql_version(old.number),
                packing as i64,
                bytes.as_slice()
            ],
        )?;
    }
    Ok(version)
}

/// Checks a document's new stored size (`sizes`: its latest version's and
/// the new one's, 0 for none or a deletion marker) against the quotas and
/// moves the environment's total by the difference. The total is read
/// back from the update itself, which waits for any concurrent writer's
/// (SQLite's write lock; PostgreSQL's generation row and the row lock),
/// so it is exact. A write that does not grow the total passes whatever
/// the total is, so an environment over a lowered limit can shrink.
fn count_bytes(tx: &dyn Sql, at: &DocAddress, sizes: (u64, u64), quotas: Quotas) -> Result<()> {
    let (old, new) = sizes;
    if quotas.document_bytes > 0 && new > quotas.document_bytes {
        return Err(OverQuota::Document {
            doc: at.clone(),
            size: new,
            limit: quotas.document_bytes,
        }
        .into());
    }
    if old == new {
        return Ok(());
    }
    let delta = i64::try_from(new).unwrap_or(i64::MAX) - i64::try_from(old).unwrap_or(i64::MAX);
    let total = tx
        .query_one(
            "UPDATE environments SET live_bytes = live_bytes + ?2 WHERE id = ?1
             RETURNING live_bytes",
            params![at.env, delta],
        )?
        .int(0)?;
    let total = u64::try_from(total).unwrap_or_default();
    if delta > 0 && quotas.environment_bytes > 0 && total > quotas.environment_bytes {
        return Err(OverQuota::Environment {
            doc: at.clone(),
            size: new,
            total,
            limit: quotas.environment_bytes,
        }
        .into());
    }
    Ok(())
}

/// The stored text of version `version` of a document, to be written
/// again by a restore: NotFound if it does not exist, Invalid if it is a
/// deletion marker or nests past the depth limit (a version written before
/// the limit may).
fn restorable(tx: &dyn Sql, at: &DocAddress, version: u64) -> Result<String> {
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
    // A data file kept unparsed is restored as it was kept.
    if let Content::Data(content) =
        decode_stored(|| format!("version {version} of the {at}"), &text)?
    {
        check_depth(at, &content)?;
        check_schema(tx, at, &content)?;
    }
    Ok(text)
}

/// [`Store::write_document`](crate::store::Store::write_document) inside
/// a write transaction; `put_text` is a put's document, encoded.
pub(super) fn write_document(
    tx: &dyn Sql,
    log: &mut Log,
    at: &DocAddress,
    (write, put_text): (DocWrite<'_>, Option<String>),
    ctx: WriteCtx<'_>,
    quotas: Quotas,
) -> Result<Version> {
    EnvContext::load(tx, at.env)?.check(at)?;
    check_registered(tx, at.env, &at.path)?;
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
            let mut doc = match &latest {
                Some((v, text)) if !v.deleted => decode_data(at, v.number, text)?,
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
                Some((v, text)) if !v.deleted => {
                    append(tx, log, (at, Some((v, text))), None, ctx.author, quotas)
                }
                _ => Err(NotFound::Document(at.clone()).into()),
            };
        }
    };
    append(tx, log, (at, latest), Some(&text), ctx.author, quotas)
}

/// Checks every level value of `path` against `env`'s registers inside
/// the caller's transaction: a write and its check see the same
/// registers, so no register change slips in between.
fn check_registered(tx: &dyn Sql, env: i64, path: &crate::configdb::LevelPath) -> Result<()> {
    crate::configdb::registers::check(
        env,
        path,
        |level, value| super::registers::contains(tx, env, level, value),
        |level, value| super::registers::environments_with(tx, level, value),
    )
}

/// [`Store::get`](crate::store::Store::get) inside a read transaction.
pub(super) fn get(
    tx: &dyn Sql,
    at: &DocAddress,
    version: Option<u64>,
) -> Result<Option<(Version, Hash)>> {
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
        let content = decode_data(at, v.number, &text)?;
        Ok((v, content))
    })
    .transpose()
}

/// [`Store::kept_file`](crate::store::Store::kept_file) inside a read transaction.
pub(super) fn kept_file(tx: &dyn Sql, at: &DocAddress) -> Result<Option<Unparsed>> {
    EnvContext::load(tx, at.env)?.check(at)?;
    Ok(head(tx, at)?
        .filter(|(v, _)| !v.deleted)
        .and_then(|(_, text)| Unparsed::from_stored(&text)))
}

/// [`Store::history`](crate::store::Store::history) inside a read transaction.
pub(super) fn history(tx: &dyn Sql, at: &DocAddress) -> Result<Vec<Version>> {
    EnvContext::load(tx, at.env)?.check(at)?;
    let (level, value) = slot_of(&at.path);
    tx.query(
        "SELECT version, created_at, size, deleted, author FROM documents
         WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
           AND resource = ?4 AND kind = ?5 ORDER BY version",
        params![at.env, level, value, &at.resource, at.kind.as_str()],
    )?
    .into_iter()
    .map(|mut r| {
        let author = r.opt_text(4)?;
        Ok(version_from(
            r.int(0)?,
            r.int(1)?,
            r.int(2)?,
            r.flag(3)?,
            author,
        ))
    })
    .collect()
}

/// [`Store::import`](crate::store::Store::import) inside a write
/// transaction; `texts` are the batch's documents, encoded.
pub(super) fn import(
    tx: &dyn Sql,
    log: &mut Log,
    batch: &ImportBatch,
    texts: &[String],
    quotas: Quotas,
) -> Result<ImportReport> {
    let author = batch.author.as_deref();
    let mut ctx = EnvContext::load(tx, batch.env)?;
    let mut report = ImportReport::default();
    register_paths(tx, log, batch)?;
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
            if !ctx.resources.contains_key(&doc.resource) && !missing.contains(&doc.resource) {
                missing.push(doc.resource.clone());
            }
        }
        if !missing.is_empty() {
            super::define_resources(tx, component, &missing)?;
            log.structure();
        }
        for resource in &missing {
            ctx.resources.insert(resource.clone(), name.clone());
        }
        report.defined = missing;
    }
    // (slot, resource, kind) of every document in the batch.
    let mut seen: HashSet<(Option<&LevelValue>, &str, DocKind)> = HashSet::new();
    for (doc, text) in batch.documents.iter().zip(texts) {
        let at = DocAddress::new(batch.env, doc.path.clone(), &doc.resource, doc.kind);
        ctx.check(&at)?;
        if !seen.insert((doc.path.slot(), &doc.resource, doc.kind)) {
            return Err(Invalid::ImportedTwice(at).into());
        }
        if let Content::Data(content) = &doc.content {
            check_schema(tx, &at, content)?;
        }
        match head(tx, &at)? {
            Some((v, old)) if !v.deleted && old == *text => report.unchanged.push(at),
            latest => {
                let v = append(tx, log, (&at, latest), Some(text), author, quotas)?;
                report.written.push((at, v));
            }
        }
    }
    for (path, kind) in &batch.replace {
        path.check(&ctx.env)?;
        let (level, value) = slot_of(path);
        let live: Vec<String> = tx
            .query(
                "SELECT h.resource FROM heads h JOIN documents d USING
                     (environment_id, level, level_value, resource, kind, version)
                 WHERE h.environment_id = ?1 AND h.level = ?2 AND h.level_value = ?3
                   AND h.kind = ?4 AND d.deleted = 0 ORDER BY h.resource",
                params![batch.env, level, value, kind.as_str()],
            )?
            .into_iter()
            .map(|mut r| r.text(0))
            .collect::<Result<_>>()?;
        for resource in live {
            if !seen.contains(&(path.slot(), resource.as_str(), *kind)) {
                let at = DocAddress::new(batch.env, path.clone(), resource, *kind);
                let latest = head(tx, &at)?;
                let v = append(tx, log, (&at, latest), None, author, quotas)?;
                report.deleted.push((at, v));
            }
        }
    }
    Ok(report)
}

/// Registers the level values of the batch's paths when it says so
/// ([`ImportBatch::register`]), then checks them: in the import's
/// transaction, so a refused import registers nothing.
fn register_paths(tx: &dyn Sql, log: &mut Log, batch: &ImportBatch) -> Result<()> {
    let mut paths: Vec<&crate::configdb::LevelPath> =
        batch.documents.iter().map(|d| &d.path).collect();
    paths.extend(batch.replace.iter().map(|(path, _)| path));
    paths.dedup();
    for path in paths {
        if batch.register {
            for pair in path.pairs() {
                super::registers::add(
                    tx,
                    log,
                    batch.env,
                    &pair.level,
                    std::slice::from_ref(&pair.value),
                )?;
            }
        }
        check_registered(tx, batch.env, path)?;
    }
    Ok(())
}

/// A changed document's latest state, for the change log's readers.
pub(super) fn latest(tx: &dyn Sql, at: &DocAddress) -> Result<Latest> {
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
