-- An in-class quiz attempt belongs to one launch, not to one test and
-- sitting: a teacher may launch the same test (or its questions one by
-- one) several times in a sitting, and each launch gives each student a
-- new attempt (numbered by quiz_attempts_unique's attempt_no of mode
-- live). Starting stays race-safe through the learner's row lock.
DROP INDEX quiz_attempts_live;
