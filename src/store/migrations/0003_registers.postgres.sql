-- 3: level registers (configdb/registers.rs).
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
