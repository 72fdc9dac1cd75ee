-- 1: components, environments, levels, versioned documents.
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
