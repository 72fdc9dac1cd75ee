//! The SQLite schema as an append-only list of migrations, tracked by
//! `PRAGMA user_version` (the number of migrations applied).
//!
//! Never edit or reorder an entry once released: add a new one. Each runs
//! with the version bump in one transaction, so a failed migration leaves
//! the database as it was.

use super::{Result, StoreError};
use rusqlite::{Connection, TransactionBehavior};

/// The schema, one entry per version.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: components, environments, levels, versioned documents.
    r#"
    CREATE TABLE components (
        id   INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE
    );
    CREATE TABLE resource_definitions (
        id           INTEGER PRIMARY KEY,
        component_id INTEGER NOT NULL REFERENCES components (id) ON DELETE CASCADE,
        name         TEXT NOT NULL,
        UNIQUE (component_id, name)
    );
    CREATE TABLE environments (
        id INTEGER PRIMARY KEY
    );
    CREATE TABLE environment_components (
        environment_id INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
        component_id   INTEGER NOT NULL REFERENCES components (id),
        position       INTEGER NOT NULL,
        PRIMARY KEY (environment_id, component_id)
    );
    CREATE INDEX environment_components_by_component
        ON environment_components (component_id);
    CREATE TABLE hierarchy_levels (
        environment_id INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
        position       INTEGER NOT NULL,
        name           TEXT NOT NULL,
        PRIMARY KEY (environment_id, position),
        UNIQUE (environment_id, name)
    );
    -- Every version of every document. The slot is (level, level_value),
    -- both '' for the root (level names are never empty). Documents are
    -- keyed by resource name, not definition id, so their history does not
    -- depend on which component defines the name.
    CREATE TABLE documents (
        environment_id INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
        level          TEXT NOT NULL,
        level_value    TEXT NOT NULL,
        resource       TEXT NOT NULL,
        kind           TEXT NOT NULL CHECK (kind IN ('values', 'overrides')),
        version        INTEGER NOT NULL CHECK (version >= 1),
        created_at     INTEGER NOT NULL,
        deleted        INTEGER NOT NULL CHECK (deleted IN (0, 1)),
        -- Bytes of content (SQLite's length() counts characters).
        size           INTEGER NOT NULL,
        -- Wire JSON; '' for a deletion marker.
        content        TEXT NOT NULL,
        PRIMARY KEY (environment_id, level, level_value, resource, kind, version)
    ) WITHOUT ROWID;
    -- The latest version of each document: the next number is read here
    -- inside the writing transaction, and load_all reads only these rows.
    CREATE TABLE heads (
        environment_id INTEGER NOT NULL,
        level          TEXT NOT NULL,
        level_value    TEXT NOT NULL,
        resource       TEXT NOT NULL,
        kind           TEXT NOT NULL,
        version        INTEGER NOT NULL,
        PRIMARY KEY (environment_id, level, level_value, resource, kind),
        FOREIGN KEY (environment_id, level, level_value, resource, kind, version)
            REFERENCES documents (environment_id, level, level_value, resource, kind, version)
            ON DELETE CASCADE
    ) WITHOUT ROWID;
    "#,
    // 2: old versions packed (store/packing.rs), restorable environment
    // deletes, per-environment retention. Rows written before stay plain
    // (packing 0) and read as they did.
    r#"
    ALTER TABLE documents ADD COLUMN packing INTEGER NOT NULL DEFAULT 0
        CHECK (packing IN (0, 1, 2));
    -- The packed bytes when packing is not 0 (content is then '').
    ALTER TABLE documents ADD COLUMN packed BLOB;
    -- When the environment was deleted (restorable until purged).
    ALTER TABLE environments ADD COLUMN deleted_at INTEGER;
    -- Retention; NULL: the server's default, 0: no limit.
    ALTER TABLE environments ADD COLUMN keep_versions INTEGER;
    ALTER TABLE environments ADD COLUMN keep_days INTEGER;
    "#,
    // 3: level registers (issue 14): the values a level of an environment
    // takes (its nodes). A row in registers with no values is an empty
    // register (every value refused); no row: no register (any value).
    r#"
    CREATE TABLE registers (
        environment_id INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
        level          TEXT NOT NULL,
        PRIMARY KEY (environment_id, level)
    ) WITHOUT ROWID;
    CREATE TABLE register_values (
        environment_id INTEGER NOT NULL,
        level          TEXT NOT NULL,
        value          TEXT NOT NULL,
        PRIMARY KEY (environment_id, level, value),
        FOREIGN KEY (environment_id, level)
            REFERENCES registers (environment_id, level) ON DELETE CASCADE
    ) WITHOUT ROWID;
    -- Which environments register a value (the "not assigned" 404).
    CREATE INDEX register_values_by_value ON register_values (level, value);
    "#,
    // 4: the change log (store/changes.rs, issue 11): the newest
    // generation, one row updated by every write, and what each
    // generation changed (NULL document columns: the structure).
    r#"
    CREATE TABLE generation (
        id    INTEGER PRIMARY KEY CHECK (id = 1),
        value INTEGER NOT NULL
    );
    INSERT INTO generation (id, value) VALUES (1, 0);
    CREATE TABLE changes (
        generation     INTEGER NOT NULL,
        environment_id INTEGER,
        level          TEXT,
        level_value    TEXT,
        resource       TEXT,
        kind           TEXT
    );
    CREATE INDEX changes_by_generation ON changes (generation);
    "#,
    // 5: a resource definition's content (issue 12): a JSON object of
    // metadata, its "schema" checking every write; NULL: none.
    r#"
    ALTER TABLE resource_definitions ADD COLUMN content TEXT;
    "#,
    // 6: who wrote each version (issue 10): the principal's name, or
    // `local:<user>` for a process on the database file (`hierad config
    // --db`, `doctor`, `serve --import`); NULL for versions written before.
    r#"
    ALTER TABLE documents ADD COLUMN author TEXT;
    "#,
    // 7: each environment's total of latest live documents, in bytes of
    // wire JSON (store/quota.rs): kept by every document write, so the
    // environment quota costs no sum; counted here once for the rows
    // written before.
    r#"
    ALTER TABLE environments ADD COLUMN live_bytes INTEGER NOT NULL DEFAULT 0;
    UPDATE environments SET live_bytes = (
        SELECT coalesce(sum(d.size), 0) FROM heads h JOIN documents d USING
            (environment_id, level, level_value, resource, kind, version)
        WHERE h.environment_id = environments.id AND d.deleted = 0);
    "#,
];

/// Brings the schema up to date, running each missing migration once.
///
/// # Errors
///
/// A migration that fails, or a database newer than `migrations` knows.
pub(crate) fn migrate(conn: &mut Connection, migrations: &[&str]) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let applied: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let applied_n = usize::try_from(applied).unwrap_or(usize::MAX);
    if applied_n > migrations.len() {
        return Err(StoreError::SchemaTooNew {
            found: applied,
            known: migrations.len(),
        });
    }
    for sql in &migrations[applied_n..] {
        tx.execute_batch(sql)?;
    }
    if applied_n < migrations.len() {
        tx.pragma_update(None, "user_version", migrations.len() as i64)?;
    }
    tx.commit()?;
    Ok(())
}
