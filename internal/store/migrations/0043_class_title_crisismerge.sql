-- The title index merges the segments of a level as soon as there are 4
-- (FTS5's crisismerge, 16 by default; its automerge, also 4, works in
-- proportion to what is written, so it hardly moves for passes of a few
-- rows). An index grown through the API, a few classes at a time, was
-- its largest segment and 15 segments of a page or so, which the
-- indexer's size rule (titleindex.go) never merges, and a search read all
-- 16 (docs/performance.md, "Twenty-third pass"). A level's merge leaves
-- the levels above it, the largest segment's among them, alone.

-- @sqlite
INSERT INTO live_classes_title (live_classes_title, rank) VALUES ('crisismerge', 4);
