-- Products and product categories (the LMS API's /products/... endpoints).
--
-- Money is INTEGER minor units (cents): price_cents and shipping_cents hold
-- 1999 for 19.99; the API parses and formats the decimal text exactly.
-- status is the product's publication state ('Not Published' or
-- 'Published'). category_id is NULL when the product has no category;
-- deleting a category detaches its products (the store does it in the
-- deleting transaction; ON DELETE SET NULL is the backstop).

CREATE TABLE product_categories (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	is_status INTEGER NOT NULL DEFAULT 1,
	user_id BIGINT NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX product_categories_domain ON product_categories (domain_id, id);

CREATE TABLE products (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	product_type INTEGER NOT NULL,
	sku TEXT NOT NULL,
	price_cents BIGINT NOT NULL,
	shipping_cents BIGINT NOT NULL DEFAULT 0,
	is_track_stock INTEGER NOT NULL DEFAULT 0,
	status TEXT NOT NULL DEFAULT 'Not Published',
	category_id BIGINT REFERENCES product_categories (id) ON DELETE SET NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX products_domain ON products (domain_id, id);
CREATE UNIQUE INDEX products_domain_sku ON products (domain_id, sku);
CREATE INDEX products_category ON products (domain_id, category_id);
