-- 8: reads at an exact generation and tags (store/shared/at.rs,
-- store/shared/tags.rs). The generation that wrote each version; NULL for
-- versions written before, which read as written at or before
-- `generation.recorded_from`.
ALTER TABLE documents ADD COLUMN generation INTEGER;
-- The oldest generation a read can be exact at: what the versions written
-- before it were at is not known. The newest generation when this ran (0
-- in a new database); a replayed copy (`hierad migrate`) moves it to the
-- replay's generation.
ALTER TABLE generation ADD COLUMN recorded_from INTEGER NOT NULL DEFAULT 0;
UPDATE generation SET recorded_from = value;
-- Named tags, each pinning a generation: retention keeps every version a
-- read at it needs.
CREATE TABLE tags (
    name       TEXT NOT NULL PRIMARY KEY,
    generation INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    author     TEXT
) WITHOUT ROWID;
-- Node scopes (store/shared/scopes.rs): the facts and scope variables
-- (a JSON object) of a registered node, versioned like documents; a
-- deletion marker has content ''.
CREATE TABLE node_scopes (
    environment_id INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    node           TEXT NOT NULL,
    version        INTEGER NOT NULL CHECK (version >= 1),
    created_at     INTEGER NOT NULL,
    author         TEXT,
    deleted        INTEGER NOT NULL CHECK (deleted IN (0, 1)),
    content        TEXT NOT NULL,
    PRIMARY KEY (environment_id, node, version)
) WITHOUT ROWID;
