-- The trigram index of class titles (migration 0034) on PostgreSQL takes
-- new titles straight into the index, not into GIN's pending list. A
-- search reads the whole pending list, which grows to
-- gin_pending_list_limit (4 MB) before anything empties it: with the
-- 12,910 titles a bulk insert left there, a search at 100,000 classes
-- took 6.6 ms instead of 0.45 ms, and its plan looked dear enough that
-- prepared statements switched to a generic plan reading every class
-- (35 ms; docs/performance.md, "Thirteenth pass"). A class insert updates
-- the index itself instead. The list is emptied now. Nothing is done
-- where the index is missing (pg_trgm was not available); where it cannot
-- be altered (an index made by hand by another role), the migration still
-- succeeds with a warning.
-- @postgres
DO $$
BEGIN
	IF to_regclass('live_classes_title_trgm') IS NOT NULL THEN
		ALTER INDEX live_classes_title_trgm SET (fastupdate = off);
		PERFORM gin_clean_pending_list(to_regclass('live_classes_title_trgm'));
	END IF;
EXCEPTION WHEN OTHERS THEN
	RAISE WARNING 'lectern: the trigram index of class titles keeps its pending list (%); see docs/performance.md', SQLERRM;
END
$$;
