//! The store's schema as an append-only list of migrations, one pair of
//! SQL files per version in `store/migrations/` (`0003_registers.sqlite.sql`
//! beside `0003_registers.postgres.sql`), embedded in the binary; and
//! SQLite's runner, which tracks the version in `PRAGMA user_version` (the
//! number of migrations applied). PostgreSQL's runner is
//! `store/postgres/migrations.rs`.
//!
//! Never edit or reorder a file once released: add the next pair, the same
//! number for both engines. Each migration runs with the version bump in
//! one transaction, so a failed migration leaves the database as it was.
//! Every migration so far is SQL; one that needs Rust (a backfill computed
//! in code) would be a step of the runners, marked there with its number.

use super::{Result, StoreError};
use rusqlite::{Connection, TransactionBehavior};

mod embedded;

#[cfg(test)]
pub(crate) use embedded::STEMS;
pub(crate) use embedded::{POSTGRES, SQLITE};

/// The migrations a database at schema version `applied` (the number
/// applied) still needs, for either engine's runner; `SchemaTooNew` for
/// one a newer hierad made.
pub(crate) fn pending<'m>(applied: i64, migrations: &'m [&'m str]) -> Result<&'m [&'m str]> {
    let applied_n = usize::try_from(applied).unwrap_or(usize::MAX);
    migrations.get(applied_n..).ok_or(StoreError::SchemaTooNew {
        found: applied,
        known: migrations.len(),
    })
}

/// Brings the schema up to date, running each missing migration once.
///
/// # Errors
///
/// A migration that fails, or a database newer than `migrations` knows.
pub(crate) fn migrate(conn: &mut Connection, migrations: &[&str]) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let applied: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let pending = pending(applied, migrations)?;
    for sql in pending {
        tx.execute_batch(sql)?;
    }
    if !pending.is_empty() {
        tx.pragma_update(None, "user_version", migrations.len() as i64)?;
    }
    tx.commit()?;
    Ok(())
}
