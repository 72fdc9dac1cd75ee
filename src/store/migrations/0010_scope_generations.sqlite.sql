-- 10: the change feed names a scope write's version, author and time
-- (store/changes.rs `logged_since`), as it does a document's. The
-- generation that wrote each version of a node scope; NULL for versions
-- written before, whose feed rows then name no version.
ALTER TABLE node_scopes ADD COLUMN generation INTEGER;
