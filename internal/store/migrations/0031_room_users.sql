-- What a live room keeps of each user between owners, so that a node
-- taking a room over (its owner died) restores it as it was: the raised
-- hands in the order they went up (hand_at, Unix nanoseconds; 0 when down)
-- and the teacher's per-student permissions (-1 follows the class, 0
-- withdrawn, 1 granted). The sitting keeps the room-wide switches and
-- whether it was being recorded.

CREATE TABLE room_users (
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	occurrence_seq INTEGER NOT NULL,
	user_ref TEXT NOT NULL,
	hand_at BIGINT NOT NULL DEFAULT 0,
	media INTEGER NOT NULL DEFAULT -1,
	screen INTEGER NOT NULL DEFAULT -1,
	draw INTEGER NOT NULL DEFAULT -1,
	files INTEGER NOT NULL DEFAULT -1,
	PRIMARY KEY (domain_id, class_id, occurrence_seq, user_ref)
);

ALTER TABLE room_sittings ADD COLUMN draw_all INTEGER NOT NULL DEFAULT 0;
ALTER TABLE room_sittings ADD COLUMN files_all INTEGER NOT NULL DEFAULT 0;
ALTER TABLE room_sittings ADD COLUMN recording INTEGER NOT NULL DEFAULT 0;
