//! PostgreSQL's migration runner: the `*.postgres.sql` files of
//! `store/migrations/` ([`crate::store::migrations::POSTGRES`]), numbered
//! as SQLite's, so a schema version means the same on both engines (and
//! `schema too new` answers alike). Tracked in the one-row table
//! `schema_version`; the migrating transaction holds an advisory lock, so
//! replicas starting together migrate once.
//!
//! Differences from SQLite's text: BIGINT for every integer (the shared
//! statements bind 64-bit integers), BYTEA for blobs, and `COLLATE "C"` on
//! every text column that is sorted or compared, so orders are byte orders
//! as in SQLite whatever the database's locale.

use crate::store::Result;
use crate::store::migrations::pending;
use postgres::Client;

/// The advisory lock key of migrations ("hierad" in ASCII).
const MIGRATION_LOCK: i64 = 0x6869_6572_6164;

/// Brings the schema up to date, running each missing migration once.
///
/// # Errors
///
/// A migration that fails, or a database newer than `migrations` knows.
pub(crate) fn migrate(client: &mut Client, migrations: &[&str]) -> Result<()> {
    // Up to date, the usual case, nothing is written: a session that may
    // not write (a standby, a read-only role) opens for reading, and
    // `check_writable` says why it cannot write.
    if let Some(applied) = applied(client)?
        && pending(applied, migrations)?.is_empty()
    {
        return Ok(());
    }
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    // `IF NOT EXISTS` on a table another process made meanwhile is a
    // NOTICE, which the client library logs as if it mattered; warnings
    // and errors still come through.
    tx.batch_execute("SET LOCAL client_min_messages = warning")?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_version (
             id      BIGINT PRIMARY KEY CHECK (id = 1),
             version BIGINT NOT NULL
         )",
    )?;
    let applied: i64 = tx
        .query_opt("SELECT version FROM schema_version WHERE id = 1", &[])?
        .map_or(0, |row| row.get(0));
    let pending = pending(applied, migrations)?;
    for sql in pending {
        tx.batch_execute(sql)?;
    }
    if !pending.is_empty() {
        tx.execute(
            "INSERT INTO schema_version (id, version) VALUES (1, $1)
             ON CONFLICT (id) DO UPDATE SET version = excluded.version",
            &[&(migrations.len() as i64)],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// The schema version recorded, read without a lock or a write; `None`
/// before the first migration.
fn applied(client: &mut Client) -> Result<Option<i64>> {
    let exists: bool = client
        .query_one("SELECT to_regclass('schema_version') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(None);
    }
    Ok(client
        .query_opt("SELECT version FROM schema_version WHERE id = 1", &[])?
        .map(|row| row.get(0)))
}
