-- 7: each environment's total of latest live documents, in bytes of wire
-- JSON (store/quota.rs): kept by every document write, so the environment
-- quota costs no sum; counted here once for the rows written before.
ALTER TABLE environments ADD COLUMN live_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE environments SET live_bytes = (
    SELECT coalesce(sum(d.size), 0) FROM heads h JOIN documents d USING
        (environment_id, level, level_value, resource, kind, version)
    WHERE h.environment_id = environments.id AND d.deleted = 0);
