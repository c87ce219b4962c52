-- A class's sittings are keyed by (class_id, seq) alone: the id each
-- sitting had was read by nothing outside the store. On SQLite the table
-- is rebuilt WITHOUT ROWID, so a sitting is one b-tree write where it was
-- three (the row, the class_occurrences_seq index and, for AUTOINCREMENT,
-- the sqlite_sequence row). BenchmarkCreateLiveClass/sqlite/serial: 300-365
-- to 253-294 µs a class (docs/performance.md, "Twenty-eighth pass"). The
-- rebuild copies every sitting once: 0.36 s for 100,000 in the sqlite3
-- shell. On PostgreSQL the id column goes and the (class_id, seq) index
-- becomes the primary key, without rewriting the table.

-- @sqlite
CREATE TABLE class_occurrences_by_seq (
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	starts_at TEXT NOT NULL,
	ends_at TEXT NOT NULL,
	cancelled INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (class_id, seq)
) WITHOUT ROWID;
INSERT INTO class_occurrences_by_seq (domain_id, class_id, seq, starts_at, ends_at, cancelled)
	SELECT domain_id, class_id, seq, starts_at, ends_at, cancelled FROM class_occurrences;
DROP TABLE class_occurrences;
ALTER TABLE class_occurrences_by_seq RENAME TO class_occurrences;

-- @postgres
ALTER TABLE class_occurrences DROP COLUMN id;
ALTER TABLE class_occurrences ADD CONSTRAINT class_occurrences_seq PRIMARY KEY USING INDEX class_occurrences_seq;
