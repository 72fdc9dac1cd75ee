-- 9: which Hiera an environment's lookups follow (configdb/model.rs
-- `HieraVersion`): 3 (Hiera 3.10, every environment made before) or 5
-- (Puppet 7's `lookup`, src/lookup5).
ALTER TABLE environments ADD COLUMN hiera INTEGER NOT NULL DEFAULT 3 CHECK (hiera IN (3, 5));
