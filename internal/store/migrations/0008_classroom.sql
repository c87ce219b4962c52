-- Classroom data: recordings (files in the blob store, a row per file) and
-- attendance events (join/leave per user per class occurrence).

CREATE TABLE recordings (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	user_id TEXT NOT NULL DEFAULT '',
	name TEXT NOT NULL,
	fname TEXT NOT NULL,
	blob_key TEXT NOT NULL,
	content_type TEXT NOT NULL,
	size BIGINT NOT NULL,
	status INTEGER NOT NULL DEFAULT 1,
	date_recorded TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX recordings_class ON recordings (domain_id, class_id, id);

-- user_ref is the classroom user id a client passed to getclasslaunch (a
-- string of the client's choosing, not necessarily an LMS user).
CREATE TABLE attendance_events (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	occurrence_seq INTEGER NOT NULL,
	user_ref TEXT NOT NULL,
	user_name TEXT NOT NULL DEFAULT '',
	is_teacher INTEGER NOT NULL DEFAULT 0,
	kind TEXT NOT NULL,
	at TEXT NOT NULL
);
CREATE INDEX attendance_events_class ON attendance_events (domain_id, class_id, user_ref, at);
