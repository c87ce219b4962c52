-- Secret rotation: after POST /webhooks/rotate/{id}, deliveries are
-- signed with the new secret and, until previous_until, also with the
-- previous one, so a receiver can switch without losing events.
-- previous_secret is '' when no rotation is in its grace period.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_endpoints ADD COLUMN previous_until TEXT NOT NULL DEFAULT '';

-- Retention: the worker deletes delivered and failed messages by the time
-- they finished (next_attempt_at of a finished message), and delivery-log
-- lines by attempted_at, in bounded batches.
CREATE INDEX webhook_attempts_time ON webhook_attempts (attempted_at);
