-- 4: the change log (store/changes.rs); the generation row is also the
-- lock every write transaction takes first (store/postgres/mod.rs).
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
