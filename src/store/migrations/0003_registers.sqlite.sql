-- 3: level registers (configdb/registers.rs): the values a level of an
-- environment takes (its nodes). A row in registers with no values is an
-- empty register (every value refused); no row: no register (any value).
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
