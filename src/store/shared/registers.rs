//! Level registers (migration 3): the `registers` and `register_values`
//! tables. Each function runs inside the caller's transaction; a write
//! that changes a register names it in the change log, so servers read it
//! anew into their snapshots (`changes::since`).

use super::load_environment;
use crate::configdb::{LevelValue, NotFound, RegisterRow};
use crate::store::Result;
use crate::store::changes::Log;
use crate::store::sql::{Sql, params};

/// Checks that `env` exists and has `level`.
fn check_level(tx: &dyn Sql, env: i64, level: &str) -> Result<()> {
    let environment = load_environment(tx, env)?;
    if environment.hierarchy_levels.iter().any(|l| l == level) {
        Ok(())
    } else {
        Err(NotFound::Level {
            env,
            level: level.to_owned(),
            levels: environment.hierarchy_levels,
        }
        .into())
    }
}

fn exists(tx: &dyn Sql, env: i64, level: &str) -> Result<bool> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM registers WHERE environment_id = ?1 AND level = ?2",
            params![env, level],
        )?
        .is_some())
}

pub(crate) fn list(tx: &dyn Sql, env: i64, level: &str) -> Result<Option<Vec<String>>> {
    check_level(tx, env, level)?;
    current(tx, env, level)
}

/// The values of the register of `level` in `env`, sorted; `None`: there
/// is none (whether or not the environment and level exist).
pub(crate) fn current(tx: &dyn Sql, env: i64, level: &str) -> Result<Option<Vec<String>>> {
    if !exists(tx, env, level)? {
        return Ok(None);
    }
    let values = tx
        .query(
            "SELECT value FROM register_values WHERE environment_id = ?1 AND level = ?2
             ORDER BY value",
            params![env, level],
        )?
        .into_iter()
        .map(|mut r| r.text(0))
        .collect::<Result<Vec<String>>>()?;
    Ok(Some(values))
}

/// Refuses a value that cannot stand in a level path.
fn check_values(level: &str, values: &[String]) -> Result<()> {
    for value in values {
        LevelValue::new(level, value.as_str()).map_err(crate::configdb::ConfigError::from)?;
    }
    Ok(())
}

/// Adds `values` (creating the register); how many were new. Logs the
/// register if it changed.
fn insert(tx: &dyn Sql, log: &mut Log, env: i64, level: &str, values: &[String]) -> Result<usize> {
    let created = tx.execute(
        "INSERT INTO registers (environment_id, level) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
        params![env, level],
    )?;
    let mut added = 0;
    for value in values {
        added += tx.execute(
            "INSERT INTO register_values (environment_id, level, value) VALUES (?1, ?2, ?3)
             ON CONFLICT DO NOTHING",
            params![env, level, value],
        )?;
    }
    if created + added > 0 {
        log.register(env, level);
    }
    Ok(added)
}

pub(crate) fn set(
    tx: &dyn Sql,
    log: &mut Log,
    env: i64,
    level: &str,
    values: Option<&[String]>,
) -> Result<()> {
    check_level(tx, env, level)?;
    let removed = tx.execute(
        "DELETE FROM registers WHERE environment_id = ?1 AND level = ?2",
        params![env, level],
    )?;
    if removed > 0 {
        log.register(env, level);
    }
    if let Some(values) = values {
        check_values(level, values)?;
        insert(tx, log, env, level, values)?;
    }
    Ok(())
}

pub(crate) fn add(
    tx: &dyn Sql,
    log: &mut Log,
    env: i64,
    level: &str,
    values: &[String],
) -> Result<usize> {
    check_level(tx, env, level)?;
    check_values(level, values)?;
    insert(tx, log, env, level, values)
}

pub(crate) fn remove(
    tx: &dyn Sql,
    log: &mut Log,
    env: i64,
    level: &str,
    values: &[String],
) -> Result<usize> {
    check_level(tx, env, level)?;
    if !exists(tx, env, level)? {
        return Err(NotFound::Register {
            env,
            level: level.to_owned(),
        }
        .into());
    }
    let mut removed = 0;
    for value in values {
        removed += tx.execute(
            "DELETE FROM register_values WHERE environment_id = ?1 AND level = ?2 AND value = ?3",
            params![env, level, value],
        )?;
    }
    if removed > 0 {
        log.register(env, level);
    }
    Ok(removed)
}

/// Every register of every environment (deleted ones too), each with its
/// values sorted: what a snapshot holds.
pub(crate) fn all(tx: &dyn Sql) -> Result<Vec<RegisterRow>> {
    let mut out: Vec<RegisterRow> = tx
        .query(
            "SELECT environment_id, level FROM registers ORDER BY environment_id, level",
            &[],
        )?
        .into_iter()
        .map(|mut r| Ok((r.int(0)?, r.text(1)?, Vec::new())))
        .collect::<Result<_>>()?;
    let rows = tx.query(
        "SELECT environment_id, level, value FROM register_values
         ORDER BY environment_id, level, value",
        &[],
    )?;
    let at: std::collections::HashMap<(i64, String), usize> = out
        .iter()
        .enumerate()
        .map(|(i, (env, level, _))| ((*env, level.clone()), i))
        .collect();
    for mut row in rows {
        let key = (row.int(0)?, row.text(1)?);
        let value = row.text(2)?;
        let Some(&i) = at.get(&key) else {
            return Err(crate::store::StoreError::Corrupt {
                what: format!(
                    "register value of level {:?} of environment {}",
                    key.1, key.0
                ),
                reason: "its register is missing".to_owned(),
            });
        };
        out[i].2.push(value);
    }
    Ok(out)
}

pub(crate) fn contains(tx: &dyn Sql, env: i64, level: &str, value: &str) -> Result<Option<bool>> {
    if !exists(tx, env, level)? {
        return Ok(None);
    }
    let found = tx.query_opt(
        "SELECT 1 FROM register_values WHERE environment_id = ?1 AND level = ?2 AND value = ?3",
        params![env, level, value],
    )?;
    Ok(Some(found.is_some()))
}

pub(crate) fn environments_with(tx: &dyn Sql, level: &str, value: &str) -> Result<Vec<i64>> {
    tx.query(
        "SELECT r.environment_id FROM register_values r
         JOIN environments e ON e.id = r.environment_id
         WHERE r.level = ?1 AND r.value = ?2 AND e.deleted_at IS NULL
         ORDER BY r.environment_id",
        params![level, value],
    )?
    .iter()
    .map(|r| r.int(0))
    .collect()
}
