-- 4: the change log (store/changes.rs): the newest generation, one row
-- updated by every write, and what each generation changed (NULL
-- document columns: the structure).
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
