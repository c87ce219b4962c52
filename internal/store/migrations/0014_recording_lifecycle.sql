-- Recordings made by the classroom itself: a lifecycle, a duration, the
-- sitting, and the files that make one recording (a WebM per stream, the
-- event log, an MP4 export).

-- state: 'recording', 'processing', 'ready' or 'failed' (imported files
-- are 'ready'). status stays the 0/1 publish flag of the API.
ALTER TABLE recordings ADD COLUMN state TEXT NOT NULL DEFAULT 'ready';
ALTER TABLE recordings ADD COLUMN duration_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE recordings ADD COLUMN occurrence_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE recordings ADD COLUMN segment INTEGER NOT NULL DEFAULT 0;

-- role: 'media' (a WebM of one stream), 'events' (the event log), 'mp4'
-- (the single-file export). start_ms is where the file starts on the
-- recording's clock.
CREATE TABLE recording_files (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	recording_id BIGINT NOT NULL REFERENCES recordings (id) ON DELETE CASCADE,
	role TEXT NOT NULL,
	blob_key TEXT NOT NULL,
	name TEXT NOT NULL,
	content_type TEXT NOT NULL,
	user_ref TEXT NOT NULL DEFAULT '',
	label TEXT NOT NULL DEFAULT '',
	start_ms BIGINT NOT NULL DEFAULT 0,
	duration_ms BIGINT NOT NULL DEFAULT 0,
	width INTEGER NOT NULL DEFAULT 0,
	height INTEGER NOT NULL DEFAULT 0,
	size BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX recording_files_recording ON recording_files (domain_id, recording_id, id);

-- How many days a domain keeps recordings (0: for ever).
ALTER TABLE domains ADD COLUMN recording_retention_days INTEGER NOT NULL DEFAULT 0;
