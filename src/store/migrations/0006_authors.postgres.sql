-- 6: who wrote each version; NULL for versions written before.
ALTER TABLE documents ADD COLUMN author TEXT;
