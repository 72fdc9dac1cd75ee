-- 5: a resource definition's content (configdb/schema.rs).
ALTER TABLE resource_definitions ADD COLUMN content TEXT;
