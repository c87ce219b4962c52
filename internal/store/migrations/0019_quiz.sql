-- The test engine: a question bank with versions, test slots (fixed
-- questions and random draws), test settings, per-learner overrides,
-- attempts with their frozen layout, and answers.
--
-- Editing a question adds a version; attempts name the versions they were
-- given, so versions are never deleted while the question exists, and a
-- deleted question is only marked deleted (attempts still read it).

CREATE TABLE quiz_questions (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	category TEXT NOT NULL DEFAULT '',
	version_id BIGINT NOT NULL DEFAULT 0,
	version INTEGER NOT NULL DEFAULT 0,
	deleted INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX quiz_questions_domain ON quiz_questions (domain_id, deleted, category, id);

CREATE TABLE quiz_question_versions (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	question_id BIGINT NOT NULL REFERENCES quiz_questions (id) ON DELETE CASCADE,
	version INTEGER NOT NULL,
	type TEXT NOT NULL,
	text_md TEXT NOT NULL,
	points_milli BIGINT NOT NULL,
	data TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX quiz_question_versions_unique ON quiz_question_versions (question_id, version);

CREATE TABLE quiz_question_tags (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	question_id BIGINT NOT NULL REFERENCES quiz_questions (id) ON DELETE CASCADE,
	tag TEXT NOT NULL
);
CREATE UNIQUE INDEX quiz_question_tags_unique ON quiz_question_tags (question_id, tag);
CREATE INDEX quiz_question_tags_tag ON quiz_question_tags (domain_id, tag);

-- A slot is one fixed question (question_id) or count questions drawn at
-- random from a category or tag (question_id 0).
CREATE TABLE quiz_slots (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	test_id BIGINT NOT NULL REFERENCES tests (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	question_id BIGINT NOT NULL DEFAULT 0,
	category TEXT NOT NULL DEFAULT '',
	tag TEXT NOT NULL DEFAULT '',
	draw_count INTEGER NOT NULL DEFAULT 1,
	points_milli BIGINT NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL
);
CREATE INDEX quiz_slots_test ON quiz_slots (test_id, position);

-- settings is the JSON of quiz.Settings.
CREATE TABLE quiz_settings (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	test_id BIGINT NOT NULL REFERENCES tests (id) ON DELETE CASCADE,
	settings TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX quiz_settings_test ON quiz_settings (test_id);

CREATE TABLE quiz_overrides (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	test_id BIGINT NOT NULL REFERENCES tests (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	extra_time_s INTEGER NOT NULL DEFAULT 0,
	multiplier_permille INTEGER NOT NULL DEFAULT 0,
	extra_attempts INTEGER NOT NULL DEFAULT 0,
	close_at TEXT NOT NULL DEFAULT '',
	scheme_id BIGINT NOT NULL DEFAULT 0,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX quiz_overrides_unique ON quiz_overrides (test_id, user_id);

-- An attempt. layout is the JSON of []quiz.SlotLayout frozen at start.
-- deadline and next_check are '' when there is none; next_check is when
-- the expiry sweeper must look at the attempt (its deadline while in
-- progress, the end of the grace period while overdue).
CREATE TABLE quiz_attempts (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	test_id BIGINT NOT NULL REFERENCES tests (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	mode TEXT NOT NULL,
	attempt_no INTEGER NOT NULL,
	state TEXT NOT NULL,
	source TEXT NOT NULL DEFAULT 'portal',
	class_id BIGINT NOT NULL DEFAULT 0,
	sitting INTEGER NOT NULL DEFAULT 0,
	layout TEXT NOT NULL,
	started_at TEXT NOT NULL,
	deadline TEXT NOT NULL DEFAULT '',
	capped INTEGER NOT NULL DEFAULT 0,
	next_check TEXT NOT NULL DEFAULT '',
	finished_at TEXT NOT NULL DEFAULT '',
	score_milli BIGINT NOT NULL DEFAULT 0,
	max_milli BIGINT NOT NULL DEFAULT 0,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX quiz_attempts_unique ON quiz_attempts (test_id, user_id, mode, attempt_no);
CREATE UNIQUE INDEX quiz_attempts_live ON quiz_attempts (test_id, user_id, class_id, sitting) WHERE class_id <> 0;
CREATE INDEX quiz_attempts_check ON quiz_attempts (state, next_check);
CREATE INDEX quiz_attempts_test ON quiz_attempts (domain_id, test_id, user_id);
CREATE INDEX quiz_attempts_class ON quiz_attempts (domain_id, class_id, sitting);

-- One row per answered slot (and, once marked, per slot). seq is the
-- client's counter: a save with a lower or equal seq than the stored one
-- is stale and changes nothing (last write wins by seq, across tabs).
CREATE TABLE quiz_answers (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	attempt_id BIGINT NOT NULL REFERENCES quiz_attempts (id) ON DELETE CASCADE,
	slot INTEGER NOT NULL,
	response TEXT NOT NULL DEFAULT '{}',
	seq BIGINT NOT NULL DEFAULT 0,
	saved_at TEXT NOT NULL DEFAULT '',
	mark_milli BIGINT NOT NULL DEFAULT 0,
	correct TEXT NOT NULL DEFAULT '',
	pending INTEGER NOT NULL DEFAULT 0,
	manual INTEGER NOT NULL DEFAULT 0,
	comment TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX quiz_answers_unique ON quiz_answers (attempt_id, slot);

-- Tests attached to live classes for in-class quizzes.
CREATE TABLE quiz_class_tests (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	test_id BIGINT NOT NULL REFERENCES tests (id) ON DELETE CASCADE,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX quiz_class_tests_unique ON quiz_class_tests (class_id, test_id);
