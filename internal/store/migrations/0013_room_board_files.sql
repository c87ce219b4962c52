-- The whiteboard, presentation and shared files of live rooms.

-- Board objects as they are now (erased ones are deleted), per sitting.
-- data is the object's JSON as the room service keeps it; ord is the
-- sequence number of the operation that added it (drawing order).
CREATE TABLE room_board_objects (
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	occurrence_seq INTEGER NOT NULL,
	object_id TEXT NOT NULL,
	page TEXT NOT NULL,
	ord BIGINT NOT NULL,
	data TEXT NOT NULL,
	PRIMARY KEY (domain_id, class_id, occurrence_seq, object_id)
);
CREATE INDEX room_board_objects_page ON room_board_objects (domain_id, class_id, occurrence_seq, ord);

-- The page everyone sees and the open presentation (JSON, '' for none).
ALTER TABLE room_sittings ADD COLUMN board_page TEXT NOT NULL DEFAULT '';
ALTER TABLE room_sittings ADD COLUMN presentation TEXT NOT NULL DEFAULT '';

-- Files shared in a class's rooms. They belong to the class (and go with
-- it); occurrence_seq is the sitting they were shared in. status is
-- 'ready', 'converting' (an office document becoming a PDF) or 'failed'.
CREATE TABLE room_files (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	occurrence_seq INTEGER NOT NULL,
	user_ref TEXT NOT NULL,
	user_name TEXT NOT NULL,
	name TEXT NOT NULL,
	content_type TEXT NOT NULL,
	kind TEXT NOT NULL,
	size BIGINT NOT NULL,
	blob_key TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX room_files_class ON room_files (domain_id, class_id, id);
