-- 1: components, environments, levels, versioned documents (the comments
-- of 0001_initial.sqlite.sql say what each holds).
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
