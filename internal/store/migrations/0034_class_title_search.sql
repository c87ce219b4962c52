-- An index made for searching live classes by title (a substring,
-- case-insensitive), so /v2/listclass?search= does not scan every title
-- (docs/performance.md). The search keeps its meaning: the title, case
-- folded (fold.go), contains the text; the index only narrows the rows
-- the exact condition is checked on. Texts under 3 characters cannot use
-- a trigram index and are checked on every title of the domain.

-- @sqlite
-- FTS5 with the trigram tokenizer, external content: the titles are not
-- stored twice. Its case folding (Unicode, like strings.ToLower for
-- letters) only chooses the candidates.
CREATE VIRTUAL TABLE live_classes_title USING fts5(title, content='live_classes', content_rowid='id', tokenize='trigram');
INSERT INTO live_classes_title (live_classes_title) VALUES ('rebuild');
CREATE TRIGGER live_classes_title_ins AFTER INSERT ON live_classes BEGIN
	INSERT INTO live_classes_title (rowid, title) VALUES (NEW.id, NEW.title);
END;
CREATE TRIGGER live_classes_title_del AFTER DELETE ON live_classes BEGIN
	INSERT INTO live_classes_title (live_classes_title, rowid, title) VALUES ('delete', OLD.id, OLD.title);
END;
CREATE TRIGGER live_classes_title_upd AFTER UPDATE OF title ON live_classes BEGIN
	INSERT INTO live_classes_title (live_classes_title, rowid, title) VALUES ('delete', OLD.id, OLD.title);
	INSERT INTO live_classes_title (rowid, title) VALUES (NEW.id, NEW.title);
END;

-- @postgres
-- pg_trgm ships with PostgreSQL (the contrib package) and is a trusted
-- extension: a user with CREATE on the database may create it. Where it is missing or
-- not allowed, the migration still succeeds with a warning and searches
-- scan the domain's titles (correct, slower); docs/performance.md says how
-- to add the index later.
-- The extension goes to the public schema (one per database, whatever
-- schema Lectern's tables are in), and the operator class is named there.
DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
		CREATE EXTENSION pg_trgm SCHEMA public;
	END IF;
	CREATE INDEX live_classes_title_trgm ON live_classes USING gin (LOWER(title) public.gin_trgm_ops);
EXCEPTION WHEN OTHERS THEN
	RAISE WARNING 'lectern: no trigram index for searching class titles (%); searches scan the titles. See docs/performance.md', SQLERRM;
END
$$;
