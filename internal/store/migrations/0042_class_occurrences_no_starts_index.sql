-- class_occurrences_starts (class_id, starts_at) served no query: every
-- read of a class's sittings, the check for a sitting not over, and the
-- deletion and cancelling of a class's sittings go by
-- class_occurrences_seq (class_id, seq), whose first column is the same.
-- Each sitting written still paid for the second index
-- (docs/performance.md, "Nineteenth pass").
DROP INDEX IF EXISTS class_occurrences_starts;
