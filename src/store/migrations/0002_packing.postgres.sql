-- 2: packed old versions, restorable environment deletes, retention.
ALTER TABLE documents ADD COLUMN packing BIGINT NOT NULL DEFAULT 0
    CHECK (packing IN (0, 1, 2));
ALTER TABLE documents ADD COLUMN packed BYTEA;
ALTER TABLE environments ADD COLUMN deleted_at BIGINT;
ALTER TABLE environments ADD COLUMN keep_versions BIGINT;
ALTER TABLE environments ADD COLUMN keep_days BIGINT;
