-- 5: a resource definition's content (configdb/schema.rs): a JSON object
-- of metadata, its "schema" checking every write; NULL: none.
ALTER TABLE resource_definitions ADD COLUMN content TEXT;
