-- Core schema: tenants (domains), users, groups, courses, tests, live classes
-- and their occurrences, bundles and enrollments.
--
-- Conventions: every tenant row carries domain_id; ids are assigned by the
-- database; instants are TEXT in UTC (YYYY-MM-DDTHH:MM:SSZ); flags are
-- INTEGER 0/1. Items that pricing, discounts, bundles and enrollments hang
-- on are named by (kind, id) with kind one of 'course', 'test', 'class',
-- 'bundle'; the store deletes what hangs on an item in the same transaction
-- as the item.

CREATE TABLE domains (
	id @ID@,
	name TEXT NOT NULL,
	lms_key_hash TEXT NOT NULL,
	classroom_key_hash TEXT NOT NULL,
	launch_secret TEXT NOT NULL,
	plan TEXT NOT NULL DEFAULT 'unlimited',
	response_style TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX domains_classroom_key ON domains (classroom_key_hash);

CREATE TABLE users (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	username TEXT NOT NULL,
	email TEXT NOT NULL,
	email_key TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX users_domain_email ON users (domain_id, email_key);

CREATE TABLE user_groups (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL
);
CREATE INDEX user_groups_domain ON user_groups (domain_id, id);

CREATE TABLE group_members (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	group_id BIGINT NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	user_type TEXT NOT NULL DEFAULT 'learner',
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX group_members_unique ON group_members (group_id, user_id);
CREATE INDEX group_members_user ON group_members (user_id);

CREATE TABLE courses (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	subtitle TEXT NOT NULL DEFAULT '',
	instructor_description TEXT NOT NULL DEFAULT '',
	highlight TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	alias TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL DEFAULT 'Unpublished',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX courses_domain ON courses (domain_id, id);

CREATE TABLE tests (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	instructions TEXT NOT NULL DEFAULT '',
	time_demo TEXT NOT NULL DEFAULT '00:00:00',
	time_test TEXT NOT NULL DEFAULT '00:00:00',
	status TEXT NOT NULL DEFAULT 'Unpublished',
	in_catalog INTEGER NOT NULL DEFAULT 1,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX tests_domain ON tests (domain_id, id);

-- A live class is one row whichever API made it. date/start_minute/
-- end_minute are the wall clock of the first sitting in the class's zone;
-- class_occurrences holds every sitting as UTC instants.
CREATE TABLE live_classes (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	owner_user_id BIGINT NOT NULL DEFAULT 0,
	title TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	date TEXT NOT NULL,
	start_minute INTEGER NOT NULL,
	end_minute INTEGER NOT NULL,
	timezone_id INTEGER NOT NULL DEFAULT 0,
	timezone_name TEXT NOT NULL,
	is_recurring INTEGER NOT NULL DEFAULT 0,
	repeat_kind INTEGER NOT NULL DEFAULT 0,
	weekdays TEXT NOT NULL DEFAULT '',
	end_classes_count INTEGER NOT NULL DEFAULT 0,
	end_date TEXT NOT NULL DEFAULT '',
	currency TEXT NOT NULL DEFAULT 'usd',
	ispaid INTEGER NOT NULL DEFAULT 0,
	seat_attendees INTEGER NOT NULL DEFAULT 0,
	record INTEGER NOT NULL DEFAULT 0,
	is_recording_layout INTEGER NOT NULL DEFAULT 0,
	is_video INTEGER NOT NULL DEFAULT 0,
	is_board INTEGER NOT NULL DEFAULT 0,
	is_lang INTEGER NOT NULL DEFAULT 0,
	is_region INTEGER NOT NULL DEFAULT 0,
	is_corporate INTEGER NOT NULL DEFAULT 0,
	is_screenshare INTEGER NOT NULL DEFAULT 0,
	is_private_chat INTEGER NOT NULL DEFAULT 0,
	keyword TEXT NOT NULL DEFAULT '',
	privacy INTEGER NOT NULL DEFAULT 0,
	published INTEGER NOT NULL DEFAULT 1,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX live_classes_domain ON live_classes (domain_id, id);

CREATE TABLE class_occurrences (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL REFERENCES live_classes (id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	starts_at TEXT NOT NULL,
	ends_at TEXT NOT NULL,
	cancelled INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX class_occurrences_seq ON class_occurrences (class_id, seq);
CREATE INDEX class_occurrences_starts ON class_occurrences (class_id, starts_at);

CREATE TABLE bundles (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX bundles_domain ON bundles (domain_id, id);

CREATE TABLE bundle_items (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	bundle_id BIGINT NOT NULL REFERENCES bundles (id) ON DELETE CASCADE,
	item_kind TEXT NOT NULL,
	item_id BIGINT NOT NULL
);
CREATE UNIQUE INDEX bundle_items_unique ON bundle_items (bundle_id, item_kind, item_id);
CREATE INDEX bundle_items_item ON bundle_items (domain_id, item_kind, item_id);

-- One row per (user, item, source). source_bundle_id is 0 for a direct
-- enrollment and the bundle's id when the row exists because the user is
-- enrolled in that bundle; a user is enrolled in an item while any row for
-- it exists.
CREATE TABLE enrollments (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	item_kind TEXT NOT NULL,
	item_id BIGINT NOT NULL,
	source_bundle_id BIGINT NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX enrollments_unique ON enrollments (user_id, item_kind, item_id, source_bundle_id);
CREATE INDEX enrollments_item ON enrollments (domain_id, item_kind, item_id);
CREATE INDEX enrollments_source ON enrollments (source_bundle_id);
