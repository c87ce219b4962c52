-- Course content and the learner's progress through it: sections and
-- ordered lessons, course-level rules, unlock conditions, per-learner
-- overrides, lesson progress, course completions, test results, uploaded
-- files, and a server secret for signed media links.
--
-- Lesson and course completion are not cached as percentages: the rules
-- in internal/learn recompute them from these rows on every read. The
-- rows record what happened (opened, marked, watched ranges, a test
-- result) and the first time a lesson or course was complete.

-- Course-level rules. A course without a row has the defaults.
-- navigation: 'free' or 'sequential'. timezone: the IANA zone in which
-- "N days after enrolment" and local unlock dates are computed.
-- attendance_percent: the share of a live sitting a learner must attend
-- for a live-class lesson to be complete.
CREATE TABLE course_settings (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	course_id BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
	navigation TEXT NOT NULL DEFAULT 'free',
	timezone TEXT NOT NULL DEFAULT 'UTC',
	attendance_percent INTEGER NOT NULL DEFAULT 50,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX course_settings_course ON course_settings (course_id);

CREATE TABLE course_sections (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	course_id BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
	title TEXT NOT NULL,
	position INTEGER NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX course_sections_course ON course_sections (domain_id, course_id, position);

-- Files uploaded for lessons (video, audio, downloads), kept in the blob
-- store under blob_key.
CREATE TABLE learn_files (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	blob_key TEXT NOT NULL,
	name TEXT NOT NULL,
	content_type TEXT NOT NULL,
	size BIGINT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX learn_files_domain ON learn_files (domain_id, id);

-- type: 'text', 'video', 'audio', 'file', 'embed', 'live_class', 'test'.
-- An embed is a provider ('youtube' or 'vimeo') and a validated video id,
-- never HTML. unlock_at is either an instant in UTC (…Z) or a local wall
-- time (YYYY-MM-DDTHH:MM) read in the course's zone; '' means none.
-- unlock_days is -1 for none. unlock_class_id names a live class whose
-- sitting unlock_class_seq (0: its last sitting) must have ended.
CREATE TABLE lessons (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	course_id BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
	section_id BIGINT NOT NULL REFERENCES course_sections (id) ON DELETE CASCADE,
	title TEXT NOT NULL,
	type TEXT NOT NULL,
	position INTEGER NOT NULL,
	is_required INTEGER NOT NULL DEFAULT 1,
	is_preview INTEGER NOT NULL DEFAULT 0,
	body_md TEXT NOT NULL DEFAULT '',
	embed_provider TEXT NOT NULL DEFAULT '',
	embed_id TEXT NOT NULL DEFAULT '',
	file_id BIGINT REFERENCES learn_files (id) ON DELETE SET NULL,
	class_id BIGINT REFERENCES live_classes (id) ON DELETE SET NULL,
	class_seq INTEGER NOT NULL DEFAULT 0,
	test_id BIGINT REFERENCES tests (id) ON DELETE SET NULL,
	duration_s INTEGER NOT NULL DEFAULT 0,
	unlock_at TEXT NOT NULL DEFAULT '',
	unlock_days INTEGER NOT NULL DEFAULT -1,
	unlock_class_id BIGINT REFERENCES live_classes (id) ON DELETE SET NULL,
	unlock_class_seq INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX lessons_course ON lessons (domain_id, course_id, section_id, position);
CREATE INDEX lessons_section ON lessons (section_id, position);
CREATE INDEX lessons_test ON lessons (domain_id, test_id);

-- A lesson that opens only after other lessons are complete.
CREATE TABLE lesson_prerequisites (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	lesson_id BIGINT NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
	after_lesson_id BIGINT NOT NULL REFERENCES lessons (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX lesson_prerequisites_unique ON lesson_prerequisites (lesson_id, after_lesson_id);
CREATE INDEX lesson_prerequisites_after ON lesson_prerequisites (after_lesson_id);

-- A per-learner exception: lesson_id 0 opens every lesson of the course.
CREATE TABLE unlock_overrides (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	course_id BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	lesson_id BIGINT NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX unlock_overrides_unique ON unlock_overrides (user_id, course_id, lesson_id);
CREATE INDEX unlock_overrides_course ON unlock_overrides (domain_id, course_id);

-- One row per learner and lesson they touched. watched is the merged
-- list of watched second ranges as JSON ([[0,30],[45,60]]); position is
-- the resume point in seconds. marked_at is the explicit "complete" mark;
-- completed_at the first time the lesson's completion rule held ('' while
-- it has not).
CREATE TABLE lesson_progress (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	course_id BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
	lesson_id BIGINT NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	opened_at TEXT NOT NULL DEFAULT '',
	marked_at TEXT NOT NULL DEFAULT '',
	completed_at TEXT NOT NULL DEFAULT '',
	watched TEXT NOT NULL DEFAULT '[]',
	position INTEGER NOT NULL DEFAULT 0,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX lesson_progress_unique ON lesson_progress (user_id, lesson_id);
CREATE INDEX lesson_progress_course ON lesson_progress (domain_id, course_id, user_id);

-- completed_at is set once; notified_at once OnCourseCompleted succeeded.
CREATE TABLE course_completions (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	course_id BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	completed_at TEXT NOT NULL,
	notified_at TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX course_completions_unique ON course_completions (user_id, course_id);
CREATE INDEX course_completions_course ON course_completions (domain_id, course_id);

-- The test engine's verdict per learner and test (test-mode attempts).
CREATE TABLE learn_test_results (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	test_id BIGINT NOT NULL REFERENCES tests (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	passed INTEGER NOT NULL,
	at TEXT NOT NULL
);
CREATE UNIQUE INDEX learn_test_results_unique ON learn_test_results (user_id, test_id);

-- Server-wide secrets by purpose (e.g. 'media'), made once at random so
-- every server process sharing the database signs alike.
CREATE TABLE server_secrets (
	id @ID@,
	purpose TEXT NOT NULL,
	secret TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX server_secrets_purpose ON server_secrets (purpose);
