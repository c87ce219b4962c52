-- Gamification: point rules, the points ledger, badge definitions and the
-- badges users have earned.
--
-- A user's points are the sum of their ledger rows; rows are only ever
-- appended (a deduction is a row with negative points). A badge is earned
-- once: user_badges has a unique index on (user_id, badge_id) and rows are
-- inserted only if absent.

-- How many points an event gives. An event without a row gives 0.
CREATE TABLE point_rules (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	event TEXT NOT NULL,
	points BIGINT NOT NULL DEFAULT 0,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX point_rules_event ON point_rules (domain_id, event);

-- event is the rule's event for rows made by a rule, '' for explicit
-- grants and deductions.
CREATE TABLE points_ledger (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	points BIGINT NOT NULL,
	reason TEXT NOT NULL,
	event TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL
);
CREATE INDEX points_ledger_user ON points_ledger (user_id, created_at);
CREATE INDEX points_ledger_domain ON points_ledger (domain_id, created_at);

CREATE TABLE badges (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	description TEXT NOT NULL,
	points_required BIGINT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX badges_domain ON badges (domain_id, points_required, id);

CREATE TABLE user_badges (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	badge_id BIGINT NOT NULL REFERENCES badges (id) ON DELETE CASCADE,
	awarded_at TEXT NOT NULL
);
CREATE UNIQUE INDEX user_badges_unique ON user_badges (user_id, badge_id);
CREATE INDEX user_badges_badge ON user_badges (badge_id);
