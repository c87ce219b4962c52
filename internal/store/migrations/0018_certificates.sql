-- Certificates: templates (each edit a new immutable version), the
-- template a course issues, issued certificates (a snapshot of what they
-- say) and each domain's Ed25519 issuer keys.

-- A template's current version is certificate_templates.version; the
-- content of every version ever used stays in certificate_template_versions,
-- so an issued certificate renders as it was issued.
CREATE TABLE certificate_templates (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	version INTEGER NOT NULL DEFAULT 1,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX certificate_templates_domain ON certificate_templates (domain_id, id);

-- Images are small PNG or JPEG files, base64 in TEXT ('' for none).
CREATE TABLE certificate_template_versions (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	template_id BIGINT NOT NULL REFERENCES certificate_templates (id) ON DELETE CASCADE,
	version INTEGER NOT NULL,
	title TEXT NOT NULL,
	intro TEXT NOT NULL DEFAULT '',
	body TEXT NOT NULL DEFAULT '',
	footer TEXT NOT NULL DEFAULT '',
	signer_name TEXT NOT NULL DEFAULT '',
	signer_title TEXT NOT NULL DEFAULT '',
	serial_label TEXT NOT NULL DEFAULT '',
	orientation TEXT NOT NULL DEFAULT 'landscape',
	primary_color TEXT NOT NULL DEFAULT '#1f3a5f',
	text_color TEXT NOT NULL DEFAULT '#222222',
	background_color TEXT NOT NULL DEFAULT '#ffffff',
	logo TEXT NOT NULL DEFAULT '',
	signature TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX certificate_template_versions_unique ON certificate_template_versions (template_id, version);

-- The template a course's completion issues (no row: no certificate).
CREATE TABLE course_certificate_templates (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	course_id BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
	template_id BIGINT NOT NULL REFERENCES certificate_templates (id) ON DELETE CASCADE,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX course_certificate_templates_course ON course_certificate_templates (domain_id, course_id);

-- code is 12 Crockford base32 characters, unique across all domains so
-- that /verify/{code} names one certificate. learner_name, course_title,
-- issuer_name and issued_at are the snapshot the certificate shows.
-- course_id becomes NULL when the course is deleted; the certificate
-- stays verifiable. At most one certificate per user and course is not
-- revoked.
CREATE TABLE certificates (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	course_id BIGINT REFERENCES courses (id) ON DELETE SET NULL,
	template_id BIGINT NOT NULL REFERENCES certificate_templates (id),
	template_version INTEGER NOT NULL,
	code TEXT NOT NULL,
	learner_name TEXT NOT NULL,
	course_title TEXT NOT NULL,
	issuer_name TEXT NOT NULL,
	issued_at TEXT NOT NULL,
	source TEXT NOT NULL DEFAULT 'completion',
	revoked_at TEXT,
	revoke_reason TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX certificates_code ON certificates (code);
CREATE UNIQUE INDEX certificates_valid ON certificates (domain_id, user_id, course_id) WHERE revoked_at IS NULL;
CREATE INDEX certificates_user ON certificates (domain_id, user_id, id);
CREATE INDEX certificates_course ON certificates (domain_id, course_id, id);

-- A domain's signing keys. The key without retired_at signs; retired keys
-- stay published so credentials they signed still verify. private_key is
-- sealed with a key derived from the server secret (never stored here).
CREATE TABLE issuer_keys (
	id @ID@,
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	kid TEXT NOT NULL,
	public_key TEXT NOT NULL,
	private_key TEXT NOT NULL,
	created_at TEXT NOT NULL,
	retired_at TEXT
);
CREATE UNIQUE INDEX issuer_keys_kid ON issuer_keys (kid);
CREATE UNIQUE INDEX issuer_keys_current ON issuer_keys (domain_id) WHERE retired_at IS NULL;
