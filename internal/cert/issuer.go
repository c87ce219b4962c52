// Package cert issues course certificates: the issue rules (one per
// learner and course, a snapshot, points once), the PDF with its QR code,
// the Open Badges 3.0 credential signed with the domain's Ed25519 key, and
// the public pages that verify them.
package cert

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/store"
)

// Issuer issues and serves certificates.
type Issuer struct {
	Store *store.Store
	// Now is the clock of issue and revocation (time.Now when nil).
	Now func() time.Time
	// BaseURL is the public URL verify links and credential ids start
	// with.
	BaseURL func() string
	// Secret is the server secret; issuer private keys are sealed with a
	// key derived from it.
	Secret []byte
	Logger *slog.Logger
	// Limiter limits the public routes per client address (nil: none).
	Limiter *httpx.RateLimiter
}

func (i *Issuer) now() time.Time {
	if i.Now != nil {
		return i.Now()
	}
	return time.Now()
}

func (i *Issuer) base() string {
	if i.BaseURL == nil {
		return ""
	}
	return i.BaseURL()
}

func (i *Issuer) logger() *slog.Logger {
	if i.Logger == nil {
		return slog.Default()
	}
	return i.Logger
}

// pointsReason is the ledger reason of a certificate's points: one award
// per user and course, whatever re-issues follow.
func pointsReason(courseID int64) string {
	return "certificate for course " + strconv.FormatInt(courseID, 10)
}

// OnCourseCompleted issues the user's certificate for a course they have
// just completed, dated at, when the course has a template; the domain's
// certificate_earned points are awarded with it, once. A course without a
// template issues nothing. Calling it again (or after a revocation)
// issues nothing more.
func (i *Issuer) OnCourseCompleted(ctx context.Context, domainID, courseID, userID int64, at time.Time) error {
	_, created, err := i.Store.IssueCertificate(ctx, domainID, store.CertificateIssue{UserID: userID, CourseID: courseID,
		IssuedAt: at, Source: store.CertSourceCompletion, NewCode: NewCode, Reason: pointsReason(courseID)})
	if errors.Is(err, store.ErrNoTemplate) {
		return nil
	}
	if err == nil && created {
		i.ensureKey(ctx, domainID)
	}
	return err
}

// ensureKey makes the domain's signing key when it has none, so that its
// JWKS is published from its first certificate on. A failure is only
// logged: the key is made again when a credential is first asked for.
func (i *Issuer) ensureKey(ctx context.Context, domainID int64) {
	if _, err := i.key(ctx, domainID); err != nil {
		i.logger().Error("issuer key", "domain", domainID, "err", err)
	}
}

// Issue issues a certificate by hand (the management API): templateID 0
// uses the course's template. A user who holds a valid certificate for the
// course gets it back with created false; a revoked one is replaced.
func (i *Issuer) Issue(ctx context.Context, domainID, courseID, userID, templateID int64) (store.Certificate, bool, error) {
	c, created, err := i.Store.IssueCertificate(ctx, domainID, store.CertificateIssue{UserID: userID, CourseID: courseID,
		TemplateID: templateID, IssuedAt: i.now(), Source: store.CertSourceManual, NewCode: NewCode, Reason: pointsReason(courseID)})
	if err == nil && created {
		i.ensureKey(ctx, domainID)
	}
	return c, created, err
}

// Revoke revokes a certificate now, with a reason kept for the school
// (the public page shows only the date).
func (i *Issuer) Revoke(ctx context.Context, domainID, id int64, reason string) (store.Certificate, error) {
	return i.Store.RevokeCertificate(ctx, domainID, id, reason, i.now())
}

// ForUser returns the user's certificates, newest first (revoked ones
// included; the portal shows their state).
func (i *Issuer) ForUser(ctx context.Context, domainID, userID int64) ([]store.Certificate, error) {
	cs, _, err := i.Store.ListCertificates(ctx, domainID, store.CertificateFilter{UserID: userID}, store.Page{})
	return cs, err
}

// PDFFor renders a certificate's PDF from its snapshot.
func (i *Issuer) PDFFor(ctx context.Context, c store.Certificate) ([]byte, error) {
	t, err := i.Store.CertificateTemplateVersion(ctx, c.DomainID, c.TemplateID, c.TemplateVersion)
	if err != nil {
		return nil, err
	}
	return PDF(c, t, VerifyURL(i.base(), c.Code))
}

// URLs are the public links of a certificate.
type URLs struct {
	Verify     string `json:"verify_url"`
	PDF        string `json:"pdf_url"`
	Credential string `json:"credential_url"`
}

// LinksFor returns a certificate's public links.
func (i *Issuer) LinksFor(c store.Certificate) URLs {
	v := VerifyURL(i.base(), c.Code)
	return URLs{Verify: v, PDF: v + ".pdf", Credential: v + ".jwt"}
}
