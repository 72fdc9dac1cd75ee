-- 9: which Hiera an environment's lookups follow (see the SQLite file).
ALTER TABLE environments ADD COLUMN hiera BIGINT NOT NULL DEFAULT 3 CHECK (hiera IN (3, 5));
