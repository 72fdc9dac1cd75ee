//! Reading everything a snapshot needs, decoded on every core.

use super::{load_components, load_environments, version_from};
use crate::configdb::unparsed::{Unparsed, UnparsedDocument};
use crate::configdb::{
    DocAddress, DocKind, LevelPath, LevelValue, SnapshotData, StoredDocument, UnreadableDocument,
    Version,
};
use crate::store::sql::Sql;
use crate::store::{Result, StoreError};

/// Everything a snapshot needs, read inside `tx`, in address order: without
/// an `ORDER BY` PostgreSQL answers in the order its plan happens to read,
/// so two stores holding the same rows would load differently.
pub(crate) fn load_all(tx: &dyn Sql) -> Result<SnapshotData> {
    let components = load_components(tx, None)?;
    let environments = load_environments(tx, None)?;
    let raw = tx.query(
        "SELECT d.environment_id, d.level, d.level_value, d.resource, d.kind,
                d.version, d.created_at, d.size, d.content, d.author
         FROM heads h JOIN documents d USING
             (environment_id, level, level_value, resource, kind, version)
         JOIN environments e ON e.id = d.environment_id
         WHERE d.deleted = 0 AND e.deleted_at IS NULL
         ORDER BY d.environment_id, d.level, d.level_value, d.resource, d.kind",
        &[],
    )?;
    let raw = raw
        .into_iter()
        .map(|mut r| {
            Ok(RawDoc {
                env: r.int(0)?,
                level: r.text(1)?,
                value: r.text(2)?,
                resource: r.text(3)?,
                kind: r.text(4)?,
                version: version_from(r.int(5)?, r.int(6)?, r.int(7)?, false, r.opt_text(9)?),
                text: r.text(8)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let Decoded {
        documents,
        unreadable,
        unparsed,
    } = decode_all(raw)?;
    Ok(SnapshotData {
        components,
        environments,
        documents,
        unreadable,
        unparsed,
        registers: super::registers::all(tx)?,
    })
}

/// A stored document row before decoding.
pub(super) struct RawDoc {
    pub(super) env: i64,
    pub(super) level: String,
    pub(super) value: String,
    pub(super) resource: String,
    pub(super) kind: String,
    pub(super) version: Version,
    pub(super) text: String,
}

/// A row's document, or why it cannot be read.
enum Row {
    Document(StoredDocument),
    Unreadable(UnreadableDocument),
    /// A data file kept unparsed, with Hiera's error for it.
    Unparsed(UnparsedDocument),
}

/// Every row decoded, sorted by what it holds.
pub(super) struct Decoded {
    pub(super) documents: Vec<StoredDocument>,
    pub(super) unreadable: Vec<UnreadableDocument>,
    pub(super) unparsed: Vec<UnparsedDocument>,
}

impl RawDoc {
    /// The document, or (a content that does not decode) the record of an
    /// unreadable one; an error only for a row no address can name.
    fn decode(self) -> Result<Row> {
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
        let at = |slot: Option<LevelValue>, resource| {
            DocAddress::new(
                env,
                LevelPath::new(slot.into_iter().collect()),
                resource,
                kind_parsed,
            )
        };
        let content = match super::decode_or_why(&text) {
            Ok(h) => h,
            Err(reason) => {
                let Some(file) = Unparsed::from_stored(&text) else {
                    return Ok(Row::Unreadable(UnreadableDocument {
                        at: at(slot, resource),
                        version: version.number,
                        reason,
                    }));
                };
                match file.parse() {
                    // A file an older hierad could not read: the data.
                    Ok(h) => h,
                    Err(error) => {
                        return Ok(Row::Unparsed(UnparsedDocument {
                            at: at(slot, resource),
                            version: version.number,
                            path: file.path,
                            error,
                        }));
                    }
                }
            }
        };
        Ok(Row::Document(StoredDocument {
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
pub(super) fn decode_all(raw: Vec<RawDoc>) -> Result<Decoded> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(8);
    let decoded: Vec<Row> = if threads < 2 || raw.len() < 64 {
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
        let parts: Vec<Result<Vec<Row>>> = std::thread::scope(|scope| {
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
    let mut out = Decoded {
        documents: Vec::with_capacity(decoded.len()),
        unreadable: Vec::new(),
        unparsed: Vec::new(),
    };
    for row in decoded {
        match row {
            Row::Document(doc) => out.documents.push(doc),
            Row::Unreadable(bad) => out.unreadable.push(bad),
            Row::Unparsed(kept) => out.unparsed.push(kept),
        }
    }
    Ok(out)
}
