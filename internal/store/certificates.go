package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// CertificateTemplate is one version of a certificate template: what a
// certificate says besides its snapshot, and how it looks. Logo and
// Signature are PNG or JPEG bytes (nil for none).
type CertificateTemplate struct {
	ID      int64
	Name    string // for the school's own lists; never printed
	Version int

	Title       string // e.g. "Certificate of Completion"
	Intro       string // above the learner's name, e.g. "This certifies that"
	Body        string // between the name and the course, e.g. "has completed"
	Footer      string // small print at the bottom
	SignerName  string
	SignerTitle string
	SerialLabel string // before the code, e.g. "Certificate no."

	Orientation     string // "landscape" or "portrait"
	PrimaryColor    string // #rrggbb
	TextColor       string // #rrggbb
	BackgroundColor string // #rrggbb

	Logo      []byte
	Signature []byte

	CreatedAt time.Time // of the template
	UpdatedAt time.Time // of this version
}

// Certificate is an issued certificate. LearnerName, CourseTitle,
// IssuerName and IssuedAt are a snapshot taken at issue: later edits of the
// user, course or domain never change them.
type Certificate struct {
	ID              int64
	DomainID        int64
	UserID          int64
	CourseID        int64 // 0 once the course is deleted
	TemplateID      int64
	TemplateVersion int
	Code            string
	LearnerName     string
	CourseTitle     string
	IssuerName      string
	IssuedAt        time.Time
	Source          string // CertSourceCompletion or CertSourceManual
	RevokedAt       time.Time
	RevokeReason    string
	CreatedAt       time.Time
}

// Revoked reports whether the certificate has been revoked.
func (c Certificate) Revoked() bool { return !c.RevokedAt.IsZero() }

// How a certificate came to be.
const (
	CertSourceCompletion = "completion"
	CertSourceManual     = "manual"
)

// IssuerKey is one of a domain's Ed25519 signing keys. PrivateSealed is
// the private key as sealed by the caller; the store never sees it in the
// clear.
type IssuerKey struct {
	ID            int64
	DomainID      int64
	KID           string
	Public        []byte
	PrivateSealed string
	CreatedAt     time.Time
	RetiredAt     time.Time
}

const templateCols = `t.id, t.name, t.version, v.title, v.intro, v.body, v.footer, v.signer_name, v.signer_title,
	v.serial_label, v.orientation, v.primary_color, v.text_color, v.background_color, v.logo, v.signature,
	t.created_at, v.created_at`

const templateFrom = ` FROM certificate_templates t JOIN certificate_template_versions v ON v.template_id = t.id `

func scanTemplate(row interface{ Scan(...any) error }) (CertificateTemplate, error) {
	var t CertificateTemplate
	var logo, sig string
	err := row.Scan(&t.ID, &t.Name, &t.Version, &t.Title, &t.Intro, &t.Body, &t.Footer, &t.SignerName, &t.SignerTitle,
		&t.SerialLabel, &t.Orientation, &t.PrimaryColor, &t.TextColor, &t.BackgroundColor, &logo, &sig,
		timeCol(&t.CreatedAt), timeCol(&t.UpdatedAt))
	if err != nil {
		return t, err
	}
	t.Logo, _ = base64.StdEncoding.DecodeString(logo)
	t.Signature, _ = base64.StdEncoding.DecodeString(sig)
	if len(t.Logo) == 0 {
		t.Logo = nil
	}
	if len(t.Signature) == 0 {
		t.Signature = nil
	}
	return t, nil
}

func insertTemplateVersion(ctx context.Context, tx db, domainID int64, t CertificateTemplate, at time.Time) error {
	_, err := tx.exec(ctx, `INSERT INTO certificate_template_versions (domain_id, template_id, version, title, intro, body, footer,
		signer_name, signer_title, serial_label, orientation, primary_color, text_color, background_color, logo, signature, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		domainID, t.ID, t.Version, t.Title, t.Intro, t.Body, t.Footer, t.SignerName, t.SignerTitle, t.SerialLabel,
		t.Orientation, t.PrimaryColor, t.TextColor, t.BackgroundColor,
		base64.StdEncoding.EncodeToString(t.Logo), base64.StdEncoding.EncodeToString(t.Signature), formatTime(at))
	return mapErr(err)
}

// CreateCertificateTemplate adds a template at version 1.
func (s *Store) CreateCertificateTemplate(ctx context.Context, domainID int64, t CertificateTemplate) (CertificateTemplate, error) {
	at := s.now()
	t.Version, t.CreatedAt, t.UpdatedAt = 1, at, at
	err := s.tx(ctx, func(tx db) error {
		var err error
		t.ID, err = tx.insert(ctx, `INSERT INTO certificate_templates (domain_id, name, version, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?)`, domainID, t.Name, t.Version, formatTime(at), formatTime(at))
		if err != nil {
			return err
		}
		return insertTemplateVersion(ctx, tx, domainID, t, at)
	})
	return t, err
}

// CertificateTemplate returns the current version of a template.
func (s *Store) CertificateTemplate(ctx context.Context, domainID, id int64) (CertificateTemplate, error) {
	return currentTemplate(ctx, s.read(), domainID, id)
}

func currentTemplate(ctx context.Context, d db, domainID, id int64) (CertificateTemplate, error) {
	t, err := scanTemplate(d.queryRow(ctx, "SELECT "+templateCols+templateFrom+
		"AND v.version = t.version WHERE t.domain_id = ? AND t.id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, lms.NotFoundf("certificate template %d not found", id)
	}
	return t, err
}

// CertificateTemplateVersion returns one version of a template, as
// certificates issued with it render.
func (s *Store) CertificateTemplateVersion(ctx context.Context, domainID, id int64, version int) (CertificateTemplate, error) {
	t, err := scanTemplate(s.read().queryRow(ctx, "SELECT "+templateCols+templateFrom+
		"AND v.version = ? WHERE t.domain_id = ? AND t.id = ?", version, domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, lms.NotFoundf("certificate template %d version %d not found", id, version)
	}
	return t, err
}

// UpdateCertificateTemplate applies edit to the current version of a
// template and saves the result as the next version, in one transaction.
// Certificates already issued keep the version they were issued with.
func (s *Store) UpdateCertificateTemplate(ctx context.Context, domainID, id int64, edit func(*CertificateTemplate) error) (CertificateTemplate, error) {
	var t CertificateTemplate
	err := s.tx(ctx, func(tx db) error {
		var err error
		if t, err = currentTemplate(ctx, tx, domainID, id); err != nil {
			return err
		}
		if err := edit(&t); err != nil {
			return err
		}
		at := s.now()
		t.Version++
		t.UpdatedAt = at
		res, err := tx.exec(ctx, "UPDATE certificate_templates SET name = ?, version = ?, updated_at = ? WHERE domain_id = ? AND id = ? AND version = ?",
			t.Name, t.Version, formatTime(at), domainID, id, t.Version-1)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.Conflictf("certificate template %d was changed at the same time; retry", id)
		}
		err = insertTemplateVersion(ctx, tx, domainID, t, at)
		if isUnique(err) {
			return lms.Conflictf("certificate template %d was changed at the same time; retry", id)
		}
		return err
	})
	return t, err
}

// ListCertificateTemplates returns one page of the domain's templates
// (current versions) by id, and how many there are.
func (s *Store) ListCertificateTemplates(ctx context.Context, domainID int64, p Page) ([]CertificateTemplate, int64, error) {
	d := s.read()
	total, err := d.count(ctx, "SELECT COUNT(*) FROM certificate_templates WHERE domain_id = ?", domainID)
	if err != nil {
		return nil, 0, err
	}
	rows, err := d.query(ctx, "SELECT "+templateCols+templateFrom+"AND v.version = t.version WHERE t.domain_id = ? ORDER BY t.id LIMIT +? OFFSET +?",
		domainID, p.Limit, p.Offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []CertificateTemplate{}
	for rows.Next() {
		t, err := scanTemplate(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, t)
	}
	return out, total, rows.Err()
}

// SetCourseCertificateTemplate sets the template a course's completion
// issues; templateID 0 removes it (the course then issues none).
func (s *Store) SetCourseCertificateTemplate(ctx context.Context, domainID, courseID, templateID int64) error {
	return s.tx(ctx, func(tx db) error {
		if _, err := course(ctx, tx, domainID, courseID); err != nil {
			return err
		}
		if templateID == 0 {
			_, err := tx.exec(ctx, "DELETE FROM course_certificate_templates WHERE domain_id = ? AND course_id = ?", domainID, courseID)
			return err
		}
		found, err := tx.exists(ctx, "SELECT 1 FROM certificate_templates WHERE domain_id = ? AND id = ?", domainID, templateID)
		if err != nil {
			return err
		}
		if !found {
			return lms.NotFoundf("certificate template %d not found", templateID)
		}
		_, err = tx.exec(ctx, `INSERT INTO course_certificate_templates (domain_id, course_id, template_id, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (domain_id, course_id) DO UPDATE SET template_id = excluded.template_id, updated_at = excluded.updated_at`,
			domainID, courseID, templateID, formatTime(s.now()))
		return mapErr(err)
	})
}

// CourseCertificateTemplate returns the id of the template a course
// issues, 0 when it has none. An unknown course is not found.
func (s *Store) CourseCertificateTemplate(ctx context.Context, domainID, courseID int64) (int64, error) {
	d := s.read()
	if _, err := course(ctx, d, domainID, courseID); err != nil {
		return 0, err
	}
	return courseTemplate(ctx, d, domainID, courseID)
}

func courseTemplate(ctx context.Context, d db, domainID, courseID int64) (int64, error) {
	var id int64
	err := d.queryRow(ctx, "SELECT template_id FROM course_certificate_templates WHERE domain_id = ? AND course_id = ?",
		domainID, courseID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

const certCols = `id, domain_id, user_id, course_id, template_id, template_version, code, learner_name, course_title,
	issuer_name, issued_at, source, revoked_at, revoke_reason, created_at`

func scanCertificate(row interface{ Scan(...any) error }) (Certificate, error) {
	var c Certificate
	var courseID sql.NullInt64
	err := row.Scan(&c.ID, &c.DomainID, &c.UserID, &courseID, &c.TemplateID, &c.TemplateVersion, &c.Code, &c.LearnerName,
		&c.CourseTitle, &c.IssuerName, timeCol(&c.IssuedAt), &c.Source, optTimeCol(&c.RevokedAt), &c.RevokeReason, timeCol(&c.CreatedAt))
	c.CourseID = courseID.Int64
	return c, err
}

// ErrNoTemplate is returned by IssueCertificate when neither the request
// nor the course names a template.
var ErrNoTemplate = &lms.Error{Code: lms.CodeConflict, Message: "the course has no certificate template; attach one first"}

// CertificateIssue is what IssueCertificate needs.
type CertificateIssue struct {
	UserID   int64
	CourseID int64
	// TemplateID overrides the course's template (0: the course's).
	TemplateID int64
	IssuedAt   time.Time
	Source     string
	// NewCode returns a fresh random code; it is called again if a code
	// is taken.
	NewCode func() string
	// Reason is the points ledger reason that makes the
	// certificate_earned award happen once per user and course.
	Reason string
}

// IssueCertificate issues a certificate to a user for a course, taking
// the snapshot (the user's name, the course's title, the domain's name)
// and the template's current version in the same transaction, and awards
// the domain's certificate_earned points once per (user, course).
//
// It is idempotent: when the user already holds a certificate for the
// course that is not revoked, that one is returned with created false.
// A completion (Source CertSourceCompletion) also returns a revoked one
// rather than issue again: only a manual issue replaces a revoked
// certificate. With no template, ErrNoTemplate.
func (s *Store) IssueCertificate(ctx context.Context, domainID int64, in CertificateIssue) (c Certificate, created bool, err error) {
	for attempt := 0; attempt < 5; attempt++ {
		c, created, err = s.issueCertificate(ctx, domainID, in)
		if !isUnique(err) {
			return c, created, err
		}
		// A code collision (or a concurrent issue on SQLite's other
		// process): try again; the next round finds the existing one.
	}
	return c, created, err
}

func (s *Store) issueCertificate(ctx context.Context, domainID int64, in CertificateIssue) (c Certificate, created bool, err error) {
	err = s.tx(ctx, func(tx db) error {
		if err := lockUser(ctx, tx, domainID, in.UserID); err != nil {
			return err
		}
		co, err := course(ctx, tx, domainID, in.CourseID)
		if err != nil {
			return err
		}
		q := "SELECT " + certCols + " FROM certificates WHERE domain_id = ? AND user_id = ? AND course_id = ?"
		if in.Source == CertSourceManual {
			q += " AND revoked_at IS NULL"
		}
		c, err = scanCertificate(tx.queryRow(ctx, q+" ORDER BY revoked_at IS NULL DESC, id DESC LIMIT 1", domainID, in.UserID, in.CourseID))
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		templateID := in.TemplateID
		if templateID == 0 {
			if templateID, err = courseTemplate(ctx, tx, domainID, in.CourseID); err != nil {
				return err
			}
			if templateID == 0 {
				return ErrNoTemplate
			}
		}
		var version int
		err = tx.queryRow(ctx, "SELECT version FROM certificate_templates WHERE domain_id = ? AND id = ?", domainID, templateID).Scan(&version)
		if errors.Is(err, sql.ErrNoRows) {
			return lms.NotFoundf("certificate template %d not found", templateID)
		}
		if err != nil {
			return err
		}
		u, err := user(ctx, tx, domainID, in.UserID)
		if err != nil {
			return err
		}
		var issuer string
		if err := tx.queryRow(ctx, "SELECT name FROM domains WHERE id = ?", domainID).Scan(&issuer); err != nil {
			return err
		}
		at := s.now()
		c = Certificate{DomainID: domainID, UserID: u.ID, CourseID: co.ID, TemplateID: templateID, TemplateVersion: version,
			Code: in.NewCode(), LearnerName: u.Name, CourseTitle: co.Name, IssuerName: issuer,
			IssuedAt: in.IssuedAt.UTC().Truncate(time.Second), Source: in.Source, CreatedAt: at}
		if c.IssuedAt.IsZero() {
			c.IssuedAt = at
		}
		c.ID, err = tx.insert(ctx, `INSERT INTO certificates (domain_id, user_id, course_id, template_id, template_version, code,
			learner_name, course_title, issuer_name, issued_at, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			domainID, c.UserID, c.CourseID, c.TemplateID, c.TemplateVersion, c.Code, c.LearnerName, c.CourseTitle, c.IssuerName,
			formatTime(c.IssuedAt), c.Source, formatTime(at))
		if err != nil {
			return err
		}
		created = true
		if in.Reason == "" {
			return nil
		}
		done, err := tx.exists(ctx, "SELECT 1 FROM points_ledger WHERE domain_id = ? AND user_id = ? AND event = ? AND reason = ?",
			domainID, u.ID, EventCertificateEarned, in.Reason)
		if err != nil || done {
			return err
		}
		return s.awardEvent(ctx, tx, domainID, u.ID, EventCertificateEarned, in.Reason)
	})
	if err != nil {
		return Certificate{}, false, err
	}
	return c, created, nil
}

// Certificate returns one certificate of the domain.
func (s *Store) Certificate(ctx context.Context, domainID, id int64) (Certificate, error) {
	return certificateByID(ctx, s.read(), domainID, id)
}

func certificateByID(ctx context.Context, d db, domainID, id int64) (Certificate, error) {
	c, err := scanCertificate(d.queryRow(ctx, "SELECT "+certCols+" FROM certificates WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, lms.NotFoundf("certificate %d not found", id)
	}
	return c, err
}

// CertificateByCode returns the certificate with a code, whatever its
// domain (codes are unique across domains). This is the public verify
// lookup.
func (s *Store) CertificateByCode(ctx context.Context, code string) (Certificate, error) {
	c, err := scanCertificate(s.read().queryRow(ctx, "SELECT "+certCols+" FROM certificates WHERE code = ?", code))
	if errors.Is(err, sql.ErrNoRows) {
		return c, lms.NotFoundf("certificate not found")
	}
	return c, err
}

// CertificateFilter selects certificates for ListCertificates; zero ids
// select all.
type CertificateFilter struct {
	CourseID int64
	UserID   int64
}

// ListCertificates returns one page of the domain's certificates matching
// f, newest first (every match when p.Limit is 0), and how many match.
func (s *Store) ListCertificates(ctx context.Context, domainID int64, f CertificateFilter, p Page) ([]Certificate, int64, error) {
	where := "domain_id = ?"
	args := []any{domainID}
	if f.CourseID != 0 {
		where += " AND course_id = ?"
		args = append(args, f.CourseID)
	}
	if f.UserID != 0 {
		where += " AND user_id = ?"
		args = append(args, f.UserID)
	}
	d := s.read()
	total, err := listTotal(ctx, d, domainID, countCertificates, f != CertificateFilter{}, where, args)
	if err != nil {
		return nil, 0, err
	}
	if p.Limit <= 0 {
		p.Limit = int(total)
	}
	rows, err := d.query(ctx, "SELECT "+certCols+" FROM certificates WHERE "+where+" ORDER BY id DESC LIMIT +? OFFSET +?",
		append(args, p.Limit, p.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Certificate{}
	for rows.Next() {
		c, err := scanCertificate(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

// RevokeCertificate marks a certificate revoked at at with reason. A
// certificate already revoked is a conflict (its date and reason stay).
func (s *Store) RevokeCertificate(ctx context.Context, domainID, id int64, reason string, at time.Time) (Certificate, error) {
	var c Certificate
	err := s.tx(ctx, func(tx db) error {
		var err error
		if c, err = certificateByID(ctx, tx, domainID, id); err != nil {
			return err
		}
		if c.Revoked() {
			return lms.Conflictf("certificate %d was already revoked on %s", id, c.RevokedAt.Format(time.RFC3339))
		}
		c.RevokedAt, c.RevokeReason = at.UTC().Truncate(time.Second), reason
		_, err = tx.exec(ctx, "UPDATE certificates SET revoked_at = ?, revoke_reason = ? WHERE domain_id = ? AND id = ? AND revoked_at IS NULL",
			formatTime(c.RevokedAt), reason, domainID, id)
		return err
	})
	return c, err
}

const issuerKeyCols = "id, domain_id, kid, public_key, private_key, created_at, retired_at"

func scanIssuerKey(row interface{ Scan(...any) error }) (IssuerKey, error) {
	var k IssuerKey
	var pub string
	if err := row.Scan(&k.ID, &k.DomainID, &k.KID, &pub, &k.PrivateSealed, timeCol(&k.CreatedAt), optTimeCol(&k.RetiredAt)); err != nil {
		return k, err
	}
	var err error
	if k.Public, err = base64.RawURLEncoding.DecodeString(pub); err != nil || len(k.Public) == 0 {
		return k, fmt.Errorf("store: corrupt public key of issuer key %d", k.ID)
	}
	return k, nil
}

// CurrentIssuerKey returns the domain's signing key; not found when it has
// none yet.
func (s *Store) CurrentIssuerKey(ctx context.Context, domainID int64) (IssuerKey, error) {
	k, err := scanIssuerKey(s.read().queryRow(ctx, "SELECT "+issuerKeyCols+" FROM issuer_keys WHERE domain_id = ? AND retired_at IS NULL", domainID))
	if errors.Is(err, sql.ErrNoRows) {
		return k, lms.NotFoundf("domain %d has no issuer key", domainID)
	}
	return k, err
}

// IssuerKeys returns every key of the domain, current first, then retired
// ones newest first.
func (s *Store) IssuerKeys(ctx context.Context, domainID int64) ([]IssuerKey, error) {
	rows, err := s.read().query(ctx, "SELECT "+issuerKeyCols+" FROM issuer_keys WHERE domain_id = ? ORDER BY retired_at IS NULL DESC, id DESC", domainID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []IssuerKey{}
	for rows.Next() {
		k, err := scanIssuerKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// AddIssuerKey stores k as the domain's signing key. With retire, the
// current key (if any) is retired first, in the same transaction (a
// rotation). Without it, a domain that already has a key keeps it and
// that key is returned (lazy creation racing with another process).
func (s *Store) AddIssuerKey(ctx context.Context, domainID int64, k IssuerKey, retire bool) (IssuerKey, error) {
	at := s.now()
	k.DomainID, k.CreatedAt = domainID, at
	err := s.tx(ctx, func(tx db) error {
		found, err := tx.exists(ctx, "SELECT 1 FROM domains WHERE id = ?", domainID)
		if err != nil {
			return err
		}
		if !found {
			return lms.NotFoundf("domain %d not found", domainID)
		}
		if retire {
			if _, err := tx.exec(ctx, "UPDATE issuer_keys SET retired_at = ? WHERE domain_id = ? AND retired_at IS NULL", formatTime(at), domainID); err != nil {
				return err
			}
		}
		k.ID, err = tx.insert(ctx, `INSERT INTO issuer_keys (domain_id, kid, public_key, private_key, created_at) VALUES (?, ?, ?, ?, ?)`,
			domainID, k.KID, base64.RawURLEncoding.EncodeToString(k.Public), k.PrivateSealed, formatTime(at))
		return err
	})
	if isUnique(err) && !retire {
		return s.CurrentIssuerKey(ctx, domainID)
	}
	if err != nil {
		return IssuerKey{}, fmt.Errorf("add issuer key: %w", err)
	}
	return k, nil
}
