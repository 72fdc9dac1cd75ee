-- 7: each environment's total of latest live documents (store/quota.rs).
ALTER TABLE environments ADD COLUMN live_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE environments SET live_bytes = (
    SELECT coalesce(sum(d.size), 0) FROM heads h JOIN documents d USING
        (environment_id, level, level_value, resource, kind, version)
    WHERE h.environment_id = environments.id AND d.deleted = 0);
