-- 8: reads at an exact generation and tags (store/shared/at.rs,
-- store/shared/tags.rs). The generation that wrote each version; NULL for
-- versions written before, which read as written at or before
-- `generation.recorded_from`.
ALTER TABLE documents ADD COLUMN generation BIGINT;
-- The oldest generation a read can be exact at (see the SQLite file).
ALTER TABLE generation ADD COLUMN recorded_from BIGINT NOT NULL DEFAULT 0;
UPDATE generation SET recorded_from = value;
-- Named tags, each pinning a generation: retention keeps every version a
-- read at it needs.
CREATE TABLE tags (
    name       TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    generation BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    author     TEXT
);
-- Node scopes (see the SQLite file).
CREATE TABLE node_scopes (
    environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    node           TEXT COLLATE "C" NOT NULL,
    version        BIGINT NOT NULL CHECK (version >= 1),
    created_at     BIGINT NOT NULL,
    author         TEXT,
    deleted        BIGINT NOT NULL CHECK (deleted IN (0, 1)),
    content        TEXT NOT NULL,
    PRIMARY KEY (environment_id, node, version)
);
