-- Commerce: pricing schemes (shopping-cart pricing, class schemes),
-- discounts (LMS discounts, class specials) and discount redemptions.
--
-- Money is INTEGER minor units (price_minor 1999 is 19.99). A discount's
-- value is exact hundredths: minor units for 'flat', hundredths of a
-- percent for 'percentage' (1250 is 12.5%). Items are named by
-- (item_kind, item_id); a global discount has item_kind 'global' and
-- item_id 0. The store deletes an item's schemes and discounts in the
-- transaction that deletes the item (ownedTables); redemptions go with
-- their discount by ON DELETE CASCADE.
--
-- start_at/end_at are UTC instants or '' for none; end_at is exclusive.
-- code_key is the code in lower case, for case-insensitive uniqueness
-- among live discounts (checked by the store: liveness depends on time).

CREATE TABLE pricing_schemes (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	item_kind TEXT NOT NULL CHECK (item_kind IN ('course', 'test', 'class')),
	item_id BIGINT NOT NULL,
	price_minor BIGINT NOT NULL CHECK (price_minor >= 0),
	days INTEGER NOT NULL DEFAULT 0,
	lifetime INTEGER NOT NULL DEFAULT 0,
	numbertimes INTEGER NOT NULL DEFAULT 0,
	subscription INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL
);
CREATE INDEX pricing_schemes_item ON pricing_schemes (domain_id, item_kind, item_id);

CREATE TABLE discounts (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	item_kind TEXT NOT NULL CHECK (item_kind IN ('course', 'test', 'class', 'global')),
	item_id BIGINT NOT NULL,
	code TEXT NOT NULL DEFAULT '',
	code_key TEXT NOT NULL DEFAULT '',
	use_code INTEGER NOT NULL DEFAULT 0,
	discount_limit INTEGER NOT NULL DEFAULT 0,
	no_limit INTEGER NOT NULL DEFAULT 0,
	type TEXT NOT NULL CHECK (type IN ('percentage', 'flat')),
	value BIGINT NOT NULL CHECK (value > 0),
	start_at TEXT NOT NULL DEFAULT '',
	end_at TEXT NOT NULL DEFAULT '',
	never_expire INTEGER NOT NULL DEFAULT 0,
	used INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL
);
CREATE INDEX discounts_item ON discounts (domain_id, item_kind, item_id);
CREATE INDEX discounts_code ON discounts (domain_id, code_key);

CREATE TABLE discount_redemptions (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	discount_id BIGINT NOT NULL REFERENCES discounts (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL DEFAULT 0,
	redeemed_at TEXT NOT NULL
);
CREATE INDEX discount_redemptions_discount ON discount_redemptions (discount_id);
