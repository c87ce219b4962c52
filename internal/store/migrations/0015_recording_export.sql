-- The single-file export of a recording: export_state is '' (none asked),
-- 'running', 'ready', 'failed' or 'unavailable' (no ffmpeg on the
-- server); export_progress is 0-100.
ALTER TABLE recordings ADD COLUMN export_state TEXT NOT NULL DEFAULT '';
ALTER TABLE recordings ADD COLUMN export_progress INTEGER NOT NULL DEFAULT 0;
