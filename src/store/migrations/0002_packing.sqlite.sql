-- 2: old versions packed (store/packing.rs), restorable environment
-- deletes, per-environment retention. Rows written before stay plain
-- (packing 0) and read as they did.
ALTER TABLE documents ADD COLUMN packing INTEGER NOT NULL DEFAULT 0
    CHECK (packing IN (0, 1, 2));
-- The packed bytes when packing is not 0 (content is then '').
ALTER TABLE documents ADD COLUMN packed BLOB;
-- When the environment was deleted (restorable until purged).
ALTER TABLE environments ADD COLUMN deleted_at INTEGER;
-- Retention; NULL: the server's default, 0: no limit.
ALTER TABLE environments ADD COLUMN keep_versions INTEGER;
ALTER TABLE environments ADD COLUMN keep_days INTEGER;
