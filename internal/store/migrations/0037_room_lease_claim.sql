-- claim is a random token of the claim that last changed a room lease's
-- holder. A takeover is reported by the one claim whose token the row
-- holds afterwards: comparing the transaction's now() with taken, as
-- before, took two concurrent claims that started in the same microsecond
-- for two takeovers.
ALTER TABLE room_leases ADD COLUMN claim TEXT NOT NULL DEFAULT '';
