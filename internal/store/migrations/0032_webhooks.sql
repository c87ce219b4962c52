-- Outgoing webhooks: a domain's endpoints, the outbox of messages to
-- deliver (one row per event and endpoint, written in the transaction of
-- the change that raised the event) and the log of delivery attempts.
--
-- events is the endpoint's event types, space-separated with a space at
-- each end (" user.created course.created "). secret is the signing key as
-- the Standard Webhooks scheme prints it (whsec_<base64>); it must stay
-- readable to sign, so it is stored as given and never logged.
-- failing_since is when the current run of failed attempts began ('' while
-- the last attempt succeeded); disabled_at is '' while the endpoint is on.

CREATE TABLE webhook_endpoints (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	url TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	events TEXT NOT NULL,
	secret TEXT NOT NULL,
	enabled INTEGER NOT NULL DEFAULT 1,
	disabled_at TEXT NOT NULL DEFAULT '',
	disabled_reason TEXT NOT NULL DEFAULT '',
	failing_since TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);

CREATE INDEX webhook_endpoints_domain ON webhook_endpoints (domain_id, id);

-- state: pending (due at next_attempt_at), delivered, failed (gave up
-- after 24 hours of retries, or its endpoint was disabled). retry_from is
-- when the current 24-hour window of retries began: the event's time, or
-- the replay that queued it again. A worker that claims a row moves
-- next_attempt_at past the attempt (a lease), so a node that dies mid-way
-- leaves the row due again.
CREATE TABLE webhook_messages (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	endpoint_id BIGINT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
	event_id TEXT NOT NULL,
	event_type TEXT NOT NULL,
	payload TEXT NOT NULL,
	state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts INTEGER NOT NULL DEFAULT 0,
	next_attempt_at TEXT NOT NULL,
	retry_from TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);

CREATE INDEX webhook_messages_due ON webhook_messages (state, next_attempt_at);
CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id, state, created_at);

-- One row per attempt. status is the receiver's HTTP status (0 when no
-- answer came); error is why the attempt failed ('' on success).
CREATE TABLE webhook_attempts (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	endpoint_id BIGINT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
	message_id BIGINT NOT NULL DEFAULT 0,
	event_id TEXT NOT NULL,
	event_type TEXT NOT NULL,
	attempt INTEGER NOT NULL,
	success INTEGER NOT NULL,
	status INTEGER NOT NULL,
	error TEXT NOT NULL DEFAULT '',
	duration_ms INTEGER NOT NULL,
	attempted_at TEXT NOT NULL
);

CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (domain_id, endpoint_id, id);
