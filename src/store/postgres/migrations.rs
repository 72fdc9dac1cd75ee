//! The PostgreSQL schema: the same append-only list as SQLite's
//! ([`crate::store::migrations`]), entry for entry, so a schema version
//! means the same on both engines (and `schema too new` answers alike).
//! Tracked in the one-row table `schema_version`; the migrating
//! transaction holds an advisory lock, so replicas starting together
//! migrate once.
//!
//! Differences from SQLite's text: BIGINT for every integer (the shared
//! statements bind 64-bit integers), BYTEA for blobs, and `COLLATE "C"` on
//! every text column that is sorted or compared, so orders are byte orders
//! as in SQLite whatever the database's locale.

use crate::store::{Result, StoreError};
use postgres::Client;

/// The schema, one entry per version (the same numbers as SQLite's).
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: components, environments, levels, versioned documents.
    r#"
    CREATE TABLE components (
        id   BIGINT PRIMARY KEY,
        name TEXT COLLATE "C" NOT NULL UNIQUE
    );
    CREATE TABLE resource_definitions (
        id           BIGINT PRIMARY KEY,
        component_id BIGINT NOT NULL REFERENCES components (id) ON DELETE CASCADE,
        name         TEXT COLLATE "C" NOT NULL,
        UNIQUE (component_id, name)
    );
    CREATE TABLE environments (
        id BIGINT PRIMARY KEY
    );
    CREATE TABLE environment_components (
        environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
        component_id   BIGINT NOT NULL REFERENCES components (id),
        position       BIGINT NOT NULL,
        PRIMARY KEY (environment_id, component_id)
    );
    CREATE INDEX environment_components_by_component
        ON environment_components (component_id);
    CREATE TABLE hierarchy_levels (
        environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
        position       BIGINT NOT NULL,
        name           TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (environment_id, position),
        UNIQUE (environment_id, name)
    );
    CREATE TABLE documents (
        environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
        level          TEXT COLLATE "C" NOT NULL,
        level_value    TEXT COLLATE "C" NOT NULL,
        resource       TEXT COLLATE "C" NOT NULL,
        kind           TEXT COLLATE "C" NOT NULL CHECK (kind IN ('values', 'overrides')),
        version        BIGINT NOT NULL CHECK (version >= 1),
        created_at     BIGINT NOT NULL,
        deleted        BIGINT NOT NULL CHECK (deleted IN (0, 1)),
        size           BIGINT NOT NULL,
        content        TEXT NOT NULL,
        PRIMARY KEY (environment_id, level, level_value, resource, kind, version)
    );
    CREATE TABLE heads (
        environment_id BIGINT NOT NULL,
        level          TEXT COLLATE "C" NOT NULL,
        level_value    TEXT COLLATE "C" NOT NULL,
        resource       TEXT COLLATE "C" NOT NULL,
        kind           TEXT COLLATE "C" NOT NULL,
        version        BIGINT NOT NULL,
        PRIMARY KEY (environment_id, level, level_value, resource, kind),
        FOREIGN KEY (environment_id, level, level_value, resource, kind, version)
            REFERENCES documents (environment_id, level, level_value, resource, kind, version)
            ON DELETE CASCADE
    );
    "#,
    // 2: packed old versions, restorable environment deletes, retention.
    r#"
    ALTER TABLE documents ADD COLUMN packing BIGINT NOT NULL DEFAULT 0
        CHECK (packing IN (0, 1, 2));
    ALTER TABLE documents ADD COLUMN packed BYTEA;
    ALTER TABLE environments ADD COLUMN deleted_at BIGINT;
    ALTER TABLE environments ADD COLUMN keep_versions BIGINT;
    ALTER TABLE environments ADD COLUMN keep_days BIGINT;
    "#,
    // 3: level registers (issue 14).
    r#"
    CREATE TABLE registers (
        environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
        level          TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (environment_id, level)
    );
    CREATE TABLE register_values (
        environment_id BIGINT NOT NULL,
        level          TEXT COLLATE "C" NOT NULL,
        value          TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (environment_id, level, value),
        FOREIGN KEY (environment_id, level)
            REFERENCES registers (environment_id, level) ON DELETE CASCADE
    );
    CREATE INDEX register_values_by_value ON register_values (level, value);
    "#,
    // 4: the change log (issue 11); the generation row is also the lock
    // every write transaction takes first (store/postgres/mod.rs).
    r#"
    CREATE TABLE generation (
        id    BIGINT PRIMARY KEY CHECK (id = 1),
        value BIGINT NOT NULL
    );
    INSERT INTO generation (id, value) VALUES (1, 0);
    CREATE TABLE changes (
        generation     BIGINT NOT NULL,
        environment_id BIGINT,
        level          TEXT COLLATE "C",
        level_value    TEXT COLLATE "C",
        resource       TEXT COLLATE "C",
        kind           TEXT COLLATE "C"
    );
    CREATE INDEX changes_by_generation ON changes (generation);
    "#,
    // 5: a resource definition's content (issue 12).
    r#"
    ALTER TABLE resource_definitions ADD COLUMN content TEXT;
    "#,
    // 6: who wrote each version (issue 10); NULL for versions written before.
    r#"
    ALTER TABLE documents ADD COLUMN author TEXT;
    "#,
    // 7: each environment's total of latest live documents (store/quota.rs).
    r#"
    ALTER TABLE environments ADD COLUMN live_bytes BIGINT NOT NULL DEFAULT 0;
    UPDATE environments SET live_bytes = (
        SELECT coalesce(sum(d.size), 0) FROM heads h JOIN documents d USING
            (environment_id, level, level_value, resource, kind, version)
        WHERE h.environment_id = environments.id AND d.deleted = 0);
    "#,
];

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
    if let Some(applied) = applied(client)? {
        let applied_n = usize::try_from(applied).unwrap_or(usize::MAX);
        if applied_n > migrations.len() {
            return Err(StoreError::SchemaTooNew {
                found: applied,
                known: migrations.len(),
            });
        }
        if applied_n == migrations.len() {
            return Ok(());
        }
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
    let applied_n = usize::try_from(applied).unwrap_or(usize::MAX);
    if applied_n > migrations.len() {
        return Err(StoreError::SchemaTooNew {
            found: applied,
            known: migrations.len(),
        });
    }
    for sql in &migrations[applied_n..] {
        tx.batch_execute(sql)?;
    }
    if applied_n < migrations.len() {
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
