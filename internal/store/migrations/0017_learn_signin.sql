-- Learner sign-in: a domain's own portal host, single-use login links,
-- single-use JWT ids, server-side portal sessions and the per-domain
-- secrets that sign the JWT entry.

-- The host name of the domain's learner portal (learn.school.com), lower
-- case; NULL when the portal lives only under /{domain_id}/learn.
ALTER TABLE domains ADD COLUMN learn_host TEXT;
CREATE UNIQUE INDEX domains_learn_host ON domains (learn_host);

-- A login link issued by POST /api/v1/users/loginLink. Only the SHA-256 of
-- the token (hex) is kept; used_at is set once by the atomic consume.
CREATE TABLE learn_login_links (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	token_hash TEXT NOT NULL UNIQUE,
	purpose TEXT NOT NULL,
	return_to TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	used_at TEXT
);
CREATE INDEX learn_login_links_domain ON learn_login_links (domain_id, expires_at);

-- The jti of every JWT accepted by the JWT entry, kept until the token
-- could no longer be accepted anyway, so each is used once.
CREATE TABLE learn_jwt_ids (
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	jti TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	PRIMARY KEY (domain_id, jti)
);

-- A learner's portal session. Only the SHA-256 of the cookie value (hex)
-- is kept. expires_at is the absolute end; last_seen_at drives the idle
-- end. Ending a session deletes its row; deleting a user ends theirs.
CREATE TABLE learn_sessions (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	token_hash TEXT NOT NULL UNIQUE,
	via TEXT NOT NULL,
	created_at TEXT NOT NULL,
	last_seen_at TEXT NOT NULL,
	expires_at TEXT NOT NULL
);
CREATE INDEX learn_sessions_user ON learn_sessions (domain_id, user_id);

-- The secrets a school signs JWT entries with (HS256), by key id. The
-- secret is sealed (AES-256-GCM) under a key derived from the domain's
-- launch secret, because HMAC verification needs it back. expires_at is
-- NULL for the current key and set on the previous one when a newer key
-- replaces it (the rotation window).
CREATE TABLE learn_sso_keys (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	kid TEXT NOT NULL,
	secret_sealed TEXT NOT NULL,
	created_at TEXT NOT NULL,
	expires_at TEXT,
	UNIQUE (domain_id, kid)
);
