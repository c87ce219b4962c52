-- Live rooms: what a sitting of a live class keeps beyond its attendance
-- events. user_ref is the classroom user id of getclasslaunch.

-- Chat of a sitting, kept so late joiners and reconnects see it. to_ref is
-- '' for a message to everyone.
CREATE TABLE room_chat (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	occurrence_seq INTEGER NOT NULL,
	from_ref TEXT NOT NULL,
	from_name TEXT NOT NULL,
	to_ref TEXT NOT NULL DEFAULT '',
	body TEXT NOT NULL,
	at TEXT NOT NULL
);
CREATE INDEX room_chat_sitting ON room_chat (domain_id, class_id, occurrence_seq, id);

-- Users the teacher removed from a sitting: they cannot enter it again.
CREATE TABLE room_removals (
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	occurrence_seq INTEGER NOT NULL,
	user_ref TEXT NOT NULL,
	at TEXT NOT NULL,
	PRIMARY KEY (domain_id, class_id, occurrence_seq, user_ref)
);

-- A sitting's room state that outlives the room: how long the teacher
-- extended it, and when it was ended ('' while it may still be entered).
CREATE TABLE room_sittings (
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	occurrence_seq INTEGER NOT NULL,
	extended_minutes INTEGER NOT NULL DEFAULT 0,
	opened_at TEXT NOT NULL DEFAULT '',
	ended_at TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (domain_id, class_id, occurrence_seq)
);
