-- 6: who wrote each version: the principal's name, or `local:<user>` for
-- a process on the database file (`hierad config --db`, `doctor`,
-- `serve --import`); NULL for versions written before.
ALTER TABLE documents ADD COLUMN author TEXT;
