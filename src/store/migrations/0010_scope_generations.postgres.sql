-- 10: the generation that wrote each version of a node scope (see the
-- SQLite file).
ALTER TABLE node_scopes ADD COLUMN generation BIGINT;
