//! Level registers (migration 3): the `registers` and `register_values`
//! tables. Each function runs inside the caller's transaction.

use super::load_environment;
use crate::configdb::{LevelValue, NotFound};
use crate::store::Result;
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

fn insert(tx: &dyn Sql, env: i64, level: &str, values: &[String]) -> Result<usize> {
    tx.execute(
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
    Ok(added)
}

pub(crate) fn set(tx: &dyn Sql, env: i64, level: &str, values: Option<&[String]>) -> Result<()> {
    check_level(tx, env, level)?;
    tx.execute(
        "DELETE FROM registers WHERE environment_id = ?1 AND level = ?2",
        params![env, level],
    )?;
    if let Some(values) = values {
        check_values(level, values)?;
        insert(tx, env, level, values)?;
    }
    Ok(())
}

pub(crate) fn add(tx: &dyn Sql, env: i64, level: &str, values: &[String]) -> Result<usize> {
    check_level(tx, env, level)?;
    check_values(level, values)?;
    insert(tx, env, level, values)
}

pub(crate) fn remove(tx: &dyn Sql, env: i64, level: &str, values: &[String]) -> Result<usize> {
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
    Ok(removed)
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
