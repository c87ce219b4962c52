-- The SQLite title index (migration 0034) is kept behind the table
-- instead of in every writing transaction. FTS5 writes its pending terms
-- as a new segment at every savepoint release, and the group writer runs
-- each write in a savepoint of its own (groupcommit.go), so each class
-- created was a segment of one row, and the segments' merging grew with
-- the index: at 1M classes 45 % of the server's CPU under `schedule`
-- (docs/performance.md).
--
-- live_classes_title_state.indexed_upto is the highest live_classes.id
-- whose title is in the index: every row at or below it is indexed with
-- its current title, none above it is. New rows (AUTOINCREMENT ids, never
-- reused, so above it) are left out, and the store's indexer
-- (titleindex.go) adds them in batches, one statement and one segment per
-- batch, moving indexed_upto in the same transaction. A search takes the
-- index's candidates and every row above indexed_upto, and the LIKE on the
-- folded title decides, so its results do not depend on the indexer's
-- progress. The triggers touch the index only for rows at or below
-- indexed_upto: an external-content FTS5 'delete' must only be given a row
-- that is in the index, with the title it was indexed with.
--
-- PostgreSQL is unchanged: its trigram GIN index has a pending list of
-- its own.

-- @sqlite
CREATE TABLE live_classes_title_state (
	one INTEGER PRIMARY KEY CHECK (one = 1),
	indexed_upto INTEGER NOT NULL
);
-- The index holds every row now (0034's triggers).
INSERT INTO live_classes_title_state (one, indexed_upto) SELECT 1, COALESCE(MAX(id), 0) FROM live_classes;
DROP TRIGGER live_classes_title_ins;
DROP TRIGGER live_classes_title_del;
DROP TRIGGER live_classes_title_upd;
-- A row inserted at or below indexed_upto (an explicit id that was freed)
-- is indexed at once, so that everything at or below it stays indexed.
CREATE TRIGGER live_classes_title_ins AFTER INSERT ON live_classes
WHEN NEW.id <= (SELECT indexed_upto FROM live_classes_title_state) BEGIN
	INSERT INTO live_classes_title (rowid, title) VALUES (NEW.id, NEW.title);
END;
CREATE TRIGGER live_classes_title_del AFTER DELETE ON live_classes
WHEN OLD.id <= (SELECT indexed_upto FROM live_classes_title_state) BEGIN
	INSERT INTO live_classes_title (live_classes_title, rowid, title) VALUES ('delete', OLD.id, OLD.title);
END;
-- An update that writes the same title leaves the index alone.
CREATE TRIGGER live_classes_title_upd AFTER UPDATE OF title ON live_classes
WHEN OLD.id <= (SELECT indexed_upto FROM live_classes_title_state) AND NEW.title IS NOT OLD.title BEGIN
	INSERT INTO live_classes_title (live_classes_title, rowid, title) VALUES ('delete', OLD.id, OLD.title);
	INSERT INTO live_classes_title (rowid, title) VALUES (NEW.id, NEW.title);
END;
