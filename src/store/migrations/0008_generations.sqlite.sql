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
