-- On SQLite a user or a class created is counted by the store, once per
-- group of writes, not by a trigger on every insert. The group writer runs
-- up to 64 writes in one transaction (groupcommit.go); the store's inserts
-- of users and classes record what they add to the users, live_classes
-- and live_classes_published counters, and the writer adds each domain's
-- sums with one statement a counter before its commit (db.countInserted,
-- writeCounted), so a group of classes updates each counter once instead
-- of twice a class. The counts stay exact: the sums are written in the
-- same transaction as the rows, and a write that fails adds nothing. The
-- class trigger's two upserts were about a tenth of a class's insert
-- (docs/performance.md, "Forty-ninth pass"). A domain import counts its
-- users and classes from its rows (withoutCountTriggers). Deletions and
-- a class's published flag changing are still counted by their triggers.
-- PostgreSQL keeps its triggers, which count in each connection's shard.

-- @sqlite
DROP TRIGGER users_count_ins;
DROP TRIGGER live_classes_count_ins;
