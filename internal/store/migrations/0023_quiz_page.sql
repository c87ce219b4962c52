-- The page a learner is on in an attempt at a test with sequential
-- navigation (0-based). It only moves forward; the server refuses saves to
-- slots on other pages and does not show the pages ahead.
ALTER TABLE quiz_attempts ADD COLUMN page INTEGER NOT NULL DEFAULT 0;
