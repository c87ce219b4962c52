-- The title index writes leaf pages of about 1,000 bytes instead of FTS5's
-- 4,050. A long search text asks for both its ends (ftsSearch), so FTS5
-- walks the posting lists of the common end's trigrams to the rows of
-- the rare one: it jumps to the page that holds such a row, then reads
-- that page's entries one by one up to it, and a smaller page is fewer
-- entries read. The index holds the same bytes in four times the rows.
-- SQLite, one segment of 100,000 classes, listclass-search: 507-523 to
-- 398-549 µs of server CPU a search; 1,000,000 classes: 1,188-1,342 to
-- 1,106-1,130 µs (docs/performance.md, "Twenty-seventh pass"). Segments
-- written before this keep their pages until the indexer next merges them.

-- @sqlite
INSERT INTO live_classes_title (live_classes_title, rank) VALUES ('pgsz', 1000);
