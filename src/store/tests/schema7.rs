//! The migrations as the binaries before `store/migrations/` held them
//! (Rust string constants, the schema at version 7), kept verbatim so the
//! upgrade tests (`upgrade.rs`) build databases exactly as those binaries
//! did. Never edit: these are what existing databases were made by.

/// SQLite's migrations 1 to 7, as released.
pub(super) const SQLITE: &[&str] = &[
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
    r#"
    ALTER TABLE resource_definitions ADD COLUMN content TEXT;
    "#,
    r#"
    ALTER TABLE documents ADD COLUMN author TEXT;
    "#,
    r#"
    ALTER TABLE environments ADD COLUMN live_bytes INTEGER NOT NULL DEFAULT 0;
    UPDATE environments SET live_bytes = (
        SELECT coalesce(sum(d.size), 0) FROM heads h JOIN documents d USING
            (environment_id, level, level_value, resource, kind, version)
        WHERE h.environment_id = environments.id AND d.deleted = 0);
    "#,
];

/// PostgreSQL's migrations 1 to 7, as released.
pub(super) const POSTGRES: &[&str] = &[
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
    r#"
    ALTER TABLE documents ADD COLUMN packing BIGINT NOT NULL DEFAULT 0
        CHECK (packing IN (0, 1, 2));
    ALTER TABLE documents ADD COLUMN packed BYTEA;
    ALTER TABLE environments ADD COLUMN deleted_at BIGINT;
    ALTER TABLE environments ADD COLUMN keep_versions BIGINT;
    ALTER TABLE environments ADD COLUMN keep_days BIGINT;
    "#,
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
    r#"
    ALTER TABLE resource_definitions ADD COLUMN content TEXT;
    "#,
    r#"
    ALTER TABLE documents ADD COLUMN author TEXT;
    "#,
    r#"
    ALTER TABLE environments ADD COLUMN live_bytes BIGINT NOT NULL DEFAULT 0;
    UPDATE environments SET live_bytes = (
        SELECT coalesce(sum(d.size), 0) FROM heads h JOIN documents d USING
            (environment_id, level, level_value, resource, kind, version)
        WHERE h.environment_id = environments.id AND d.deleted = 0);
    "#,
];
