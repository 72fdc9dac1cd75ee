//! [`Store::rewrite_latest`](crate::store::Store::rewrite_latest): every
//! latest live document read, rewritten by the caller's function, and
//! written back where it changed, all in one write transaction (so one
//! generation, and no concurrent write falls between a read and its
//! rewrite: the engines' write lock is held from the first read).

use super::documents::{append, head};
use super::{decode_stored, encode, load_environment};
use crate::configdb::unparsed::Content;
use crate::configdb::{DocAddress, DocKind, Invalid, LevelPath, LevelValue, Version, check_depth};
use crate::store::changes::Log;
use crate::store::content::check_schema;
use crate::store::sql::{Sql, params};
use crate::store::{Quotas, Result, Rewrite, StoreError};

/// Inside a write transaction: the latest live documents of `env` (or of
/// every live environment), in address order, each given to `rewrite`;
/// a new version (by `author`) for each it changes.
pub(super) fn rewrite_latest(
    tx: &dyn Sql,
    log: &mut Log,
    env: Option<i64>,
    rewrite: Rewrite<'_>,
    author: Option<&str>,
    quotas: Quotas,
) -> Result<Vec<(DocAddress, Version)>> {
    if let Some(id) = env {
        load_environment(tx, id)?;
    }
    let rows = tx.query(
        "SELECT h.environment_id, h.level, h.level_value, h.resource, h.kind
         FROM heads h JOIN documents d USING
             (environment_id, level, level_value, resource, kind, version)
         JOIN environments e ON e.id = d.environment_id
         WHERE d.deleted = 0 AND e.deleted_at IS NULL
           AND (CAST(?1 AS BIGINT) IS NULL OR h.environment_id = ?1)
         ORDER BY h.environment_id, h.level, h.level_value, h.resource, h.kind",
        params![env],
    )?;
    let mut written = Vec::new();
    for mut row in rows {
        let (id, level, value) = (row.int(0)?, row.text(1)?, row.text(2)?);
        let (resource, kind) = (row.text(3)?, row.text(4)?);
        let at = address(id, &level, &value, resource, &kind)?;
        let Some((version, text)) = head(tx, &at)? else {
            continue;
        };
        // A data file kept unparsed has no values to rewrite: kept as it is.
        let Content::Data(doc) =
            decode_stored(|| format!("version {} of the {at}", version.number), &text)?
        else {
            continue;
        };
        let Some(new) = rewrite(&at, &doc).map_err(|reason| Invalid::Rewrite {
            doc: at.clone(),
            reason,
        })?
        else {
            continue;
        };
        let new_text = encode(&new);
        if new_text == text {
            continue;
        }
        check_depth(&at, &new)?;
        check_schema(tx, &at, &new)?;
        let v = append(
            tx,
            log,
            (&at, Some((version, text))),
            Some(&new_text),
            author,
            quotas,
        )?;
        written.push((at, v));
    }
    Ok(written)
}

fn address(env: i64, level: &str, value: &str, resource: String, kind: &str) -> Result<DocAddress> {
    let corrupt = |reason: String| StoreError::Corrupt {
        what: format!("document {resource} ({kind}) at {level}={value}"),
        reason,
    };
    let kind: DocKind = kind
        .parse()
        .map_err(|e: crate::configdb::model::UnknownKind| corrupt(e.to_string()))?;
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
