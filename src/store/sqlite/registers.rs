//! Level registers on SQLite (migration 3): the `registers` and
//! `register_values` tables. Each function runs inside the caller's
//! transaction.

use super::load_environment;
use crate::configdb::{LevelValue, NotFound};
use crate::store::Result;
use rusqlite::{Connection, OptionalExtension, params};

/// Checks that `env` exists and has `level`.
fn check_level(tx: &Connection, env: i64, level: &str) -> Result<()> {
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

fn exists(tx: &Connection, env: i64, level: &str) -> Result<bool> {
    Ok(tx
        .prepare_cached("SELECT 1 FROM registers WHERE environment_id = ?1 AND level = ?2")?
        .query_row(params![env, level], |_| Ok(()))
        .optional()?
        .is_some())
}

pub(super) fn list(tx: &Connection, env: i64, level: &str) -> Result<Option<Vec<String>>> {
    check_level(tx, env, level)?;
    if !exists(tx, env, level)? {
        return Ok(None);
    }
    let mut statement = tx.prepare_cached(
        "SELECT value FROM register_values WHERE environment_id = ?1 AND level = ?2
         ORDER BY value",
    )?;
    let values = statement
        .query_map(params![env, level], |row| row.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(Some(values))
}

/// Refuses a value that cannot stand in a level path.
fn check_values(level: &str, values: &[String]) -> Result<()> {
    for value in values {
        LevelValue::new(level, value.as_str()).map_err(crate::configdb::ConfigError::from)?;
    }
    Ok(())
}

fn insert(tx: &Connection, env: i64, level: &str, values: &[String]) -> Result<usize> {
    tx.prepare_cached(
        "INSERT INTO registers (environment_id, level) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
    )?
    .execute(params![env, level])?;
    let mut statement = tx.prepare_cached(
        "INSERT INTO register_values (environment_id, level, value) VALUES (?1, ?2, ?3)
         ON CONFLICT DO NOTHING",
    )?;
    let mut added = 0;
    for value in values {
        added += statement.execute(params![env, level, value])?;
    }
    Ok(added)
}

pub(super) fn set(tx: &Connection, env: i64, level: &str, values: Option<&[String]>) -> Result<()> {
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

pub(super) fn add(tx: &Connection, env: i64, level: &str, values: &[String]) -> Result<usize> {
    check_level(tx, env, level)?;
    check_values(level, values)?;
    insert(tx, env, level, values)
}

pub(super) fn remove(tx: &Connection, env: i64, level: &str, values: &[String]) -> Result<usize> {
    check_level(tx, env, level)?;
    if !exists(tx, env, level)? {
        return Err(NotFound::Register {
            env,
            level: level.to_owned(),
        }
        .into());
    }
    let mut statement = tx.prepare_cached(
        "DELETE FROM register_values WHERE environment_id = ?1 AND level = ?2 AND value = ?3",
    )?;
    let mut removed = 0;
    for value in values {
        removed += statement.execute(params![env, level, value])?;
    }
    Ok(removed)
}

pub(super) fn contains(
    tx: &Connection,
    env: i64,
    level: &str,
    value: &str,
) -> Result<Option<bool>> {
    if !exists(tx, env, level)? {
        return Ok(None);
    }
    let found = tx
        .prepare_cached(
            "SELECT 1 FROM register_values WHERE environment_id = ?1 AND level = ?2 AND value = ?3",
        )?
        .query_row(params![env, level, value], |_| Ok(()))
        .optional()?;
    Ok(Some(found.is_some()))
}

pub(super) fn environments_with(tx: &Connection, level: &str, value: &str) -> Result<Vec<i64>> {
    let mut statement = tx.prepare_cached(
        "SELECT r.environment_id FROM register_values r
         JOIN environments e ON e.id = r.environment_id
         WHERE r.level = ?1 AND r.value = ?2 AND e.deleted_at IS NULL
         ORDER BY r.environment_id",
    )?;
    let envs = statement
        .query_map(params![level, value], |row| row.get(0))?
        .collect::<rusqlite::Result<Vec<i64>>>()?;
    Ok(envs)
}
