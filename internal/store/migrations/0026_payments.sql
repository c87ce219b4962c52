-- Payments: a domain's gateway settings, orders (class payments and cart
-- checkouts) with their lines and refunds, class purchase grants,
-- idempotency keys and the webhook events already processed.
--
-- Money is INTEGER minor units. Card numbers and CVCs are never stored:
-- an order keeps only the gateway's charge id. Gateway secrets are sealed
-- (AES-256-GCM under a key derived from the data dir's server.secret)
-- before they reach this table.

CREATE TABLE payment_settings (
	domain_id BIGINT PRIMARY KEY REFERENCES domains (id) ON DELETE CASCADE,
	gateway TEXT NOT NULL CHECK (gateway IN ('none', 'test', 'stripe')),
	stripe_secret_sealed TEXT NOT NULL DEFAULT '',
	stripe_webhook_secret_sealed TEXT NOT NULL DEFAULT '',
	stripe_publishable_key TEXT NOT NULL DEFAULT '',
	stripe_api_base TEXT NOT NULL DEFAULT '',
	-- require_grant: getclasslaunch for a student of a paid class needs a
	-- valid purchase grant matched by userEmail.
	require_grant INTEGER NOT NULL DEFAULT 0,
	updated_at TEXT NOT NULL
);

-- status: pending, paid, failed, refunded. source: class_payment
-- (apiclasspayment) or checkout (the LMS cart). charge_id is the gateway's
-- id of the payment (a PaymentIntent for Stripe); checkout_id the id of a
-- redirect checkout session, '' for a card payment.
CREATE TABLE orders (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	source TEXT NOT NULL CHECK (source IN ('class_payment', 'checkout')),
	status TEXT NOT NULL CHECK (status IN ('pending', 'paid', 'failed', 'refunded')),
	buyer_email TEXT NOT NULL,
	buyer_email_key TEXT NOT NULL,
	user_id BIGINT NOT NULL DEFAULT 0,
	currency TEXT NOT NULL,
	subtotal_minor BIGINT NOT NULL,
	discount_minor BIGINT NOT NULL,
	total_minor BIGINT NOT NULL CHECK (total_minor >= 0),
	refunded_minor BIGINT NOT NULL DEFAULT 0,
	coupon_code TEXT NOT NULL DEFAULT '',
	gateway TEXT NOT NULL,
	charge_id TEXT NOT NULL DEFAULT '',
	checkout_id TEXT NOT NULL DEFAULT '',
	checkout_url TEXT NOT NULL DEFAULT '',
	return_url TEXT NOT NULL DEFAULT '',
	cancel_url TEXT NOT NULL DEFAULT '',
	failure_reason TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	paid_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX orders_domain ON orders (domain_id, id);
CREATE INDEX orders_buyer ON orders (domain_id, buyer_email_key);
CREATE INDEX orders_checkout ON orders (domain_id, checkout_id);

-- One line per item bought. scheme_id is 0 for products and bundles.
-- enrolled is 1 when paying enrolled the buyer directly (a refund undoes
-- exactly those).
CREATE TABLE order_lines (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	order_id BIGINT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
	item_kind TEXT NOT NULL,
	item_id BIGINT NOT NULL,
	scheme_id BIGINT NOT NULL DEFAULT 0,
	name TEXT NOT NULL DEFAULT '',
	base_minor BIGINT NOT NULL,
	discount_minor BIGINT NOT NULL,
	amount_minor BIGINT NOT NULL,
	discount_id BIGINT NOT NULL DEFAULT 0,
	enrolled INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX order_lines_order ON order_lines (order_id);

CREATE TABLE order_refunds (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	order_id BIGINT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
	amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
	gateway_refund_id TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX order_refunds_order ON order_refunds (order_id);

-- A discount use taken by an order: released if its payment fails.
ALTER TABLE discount_redemptions ADD COLUMN order_id BIGINT NOT NULL DEFAULT 0;

-- Access bought with a class payment. expires_at '' is lifetime;
-- launches_allowed 0 is unlimited.
CREATE TABLE purchase_grants (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	order_id BIGINT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL,
	scheme_id BIGINT NOT NULL,
	email TEXT NOT NULL,
	email_key TEXT NOT NULL,
	starts_at TEXT NOT NULL,
	expires_at TEXT NOT NULL DEFAULT '',
	launches_allowed INTEGER NOT NULL DEFAULT 0,
	launches_used INTEGER NOT NULL DEFAULT 0,
	revoked INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX purchase_grants_class ON purchase_grants (domain_id, class_id, email_key);
CREATE INDEX purchase_grants_email ON purchase_grants (domain_id, email_key);

-- Idempotency keys: scope is the operation (class_payment, checkout,
-- refund); request_hash an HMAC of the request's parameters; result_id
-- the order (or refund) the first request made, 0 while it runs.
CREATE TABLE idempotency_keys (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	scope TEXT NOT NULL,
	idem_key TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	result_id BIGINT NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX idempotency_keys_key ON idempotency_keys (domain_id, scope, idem_key);

-- Gateway webhook events processed, by the gateway's event id.
CREATE TABLE payment_events (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	event_id TEXT NOT NULL,
	event_type TEXT NOT NULL,
	received_at TEXT NOT NULL
);
CREATE UNIQUE INDEX payment_events_event ON payment_events (domain_id, event_id);
