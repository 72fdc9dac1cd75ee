//! Retention: an environment's own policy, and pruning what it no longer
//! keeps.

use super::sql_version;
use crate::configdb::Retention;
use crate::store::Result;
use crate::store::sql::{Sql, params};

/// An environment's own retention (unset limits are NULL).
pub(super) fn read_retention(tx: &dyn Sql, env: i64) -> Result<Retention> {
    let row = tx.query_one(
        "SELECT keep_versions, keep_days FROM environments WHERE id = ?1",
        params![env],
    )?;
    let limit = |n: Option<i64>| n.map(|n| u64::try_from(n).unwrap_or_default());
    Ok(Retention {
        keep_versions: limit(row.opt_int(0)?),
        keep_days: limit(row.opt_int(1)?),
    })
}

/// Prunes at most `budget` versions of environment `env` that
/// `retention` no longer keeps; returns how many went.
///
/// Only documents whose oldest version falls outside the policy are
/// looked at closer (one index seek per document finds those). The
/// version a read at the oldest tag's generation needs is kept, with every
/// later one ([`Retention::pinned`]).
pub(super) fn prune_batch(
    tx: &dyn Sql,
    env: i64,
    retention: &Retention,
    now: i64,
    budget: usize,
) -> Result<usize> {
    let tag = super::tags::oldest_pinned(tx)?;
    let limit = retention.versions_limit();
    let cutoff = retention.cutoff(now);
    type Doc = (String, String, String, String);
    let mut candidates: Vec<Doc> = Vec::new();
    for mut r in tx.query(
        "SELECT h.level, h.level_value, h.resource, h.kind, h.version, o.version, o.created_at
         FROM heads h JOIN documents o USING (environment_id, level, level_value, resource, kind)
         WHERE h.environment_id = ?1 AND o.version = (
             SELECT min(m.version) FROM documents m
             WHERE m.environment_id = h.environment_id AND m.level = h.level
               AND m.level_value = h.level_value AND m.resource = h.resource
               AND m.kind = h.kind)",
        params![env],
    )? {
        let (head, oldest, created) = (r.int(4)?, r.int(5)?, r.int(6)?);
        let outside = oldest < head
            && (limit.is_some_and(|n| oldest <= head - sql_version(n))
                || cutoff.is_some_and(|c| created < c));
        if outside {
            candidates.push((r.text(0)?, r.text(1)?, r.text(2)?, r.text(3)?));
        }
    }
    let mut pruned = 0;
    for (level, value, resource, kind) in candidates {
        if pruned >= budget {
            break;
        }
        let rows = tx.query(
            "SELECT version, created_at, deleted, generation FROM documents
             WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
               AND resource = ?4 AND kind = ?5 ORDER BY version",
            params![env, &level, &value, &resource, &kind],
        )?;
        let mut versions: Vec<(u64, i64, bool)> = Vec::with_capacity(rows.len());
        let mut generations: Vec<(u64, Option<u64>)> = Vec::with_capacity(rows.len());
        for r in rows {
            let n = u64::try_from(r.int(0)?).unwrap_or_default();
            versions.push((n, r.int(1)?, r.flag(2)?));
            let generation = r.opt_int(3)?.map(|g| u64::try_from(g).unwrap_or_default());
            generations.push((n, generation));
        }
        let Some(mut keep_from) = retention.oldest_kept(&versions, now) else {
            continue;
        };
        if let Some(pinned) = tag.and_then(|t| Retention::pinned(&generations, t)) {
            keep_from = keep_from.min(pinned);
        }
        // Within the budget, still oldest first.
        let upto = versions
            .iter()
            .take_while(|(n, _, _)| *n < keep_from)
            .take(budget - pruned)
            .last()
            .map(|(n, _, _)| *n);
        if let Some(upto) = upto {
            pruned += tx.execute(
                "DELETE FROM documents
                 WHERE environment_id = ?1 AND level = ?2 AND level_value = ?3
                   AND resource = ?4 AND kind = ?5 AND version <= ?6",
                params![env, &level, &value, &resource, &kind, sql_version(upto)],
            )?;
        }
    }
    Ok(pruned)
}
