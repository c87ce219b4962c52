package portal

import (
	"net/http"

	"github.com/lectern-lms/lectern/internal/cert"
)

// certCards are the learner's certificates with their public links (the
// verify page, its PDF), newest first as the issuer lists them. The
// issuer only reads here, so the portal makes its own from the store.
func (p *Portal) certCards(r *http.Request, d *pageData, l Learner) ([]certCard, error) {
	is := &cert.Issuer{Store: p.Store, Now: p.Now, BaseURL: p.BaseURL}
	cs, err := is.ForUser(r.Context(), l.DomainID, l.UserID)
	if err != nil {
		return nil, err
	}
	var out []certCard
	for _, c := range cs {
		links := is.LinksFor(c)
		cc := certCard{Code: c.Code, Course: c.CourseTitle, Issued: timeHTML(c.IssuedAt, false),
			PDFURL: links.PDF, VerifyURL: links.Verify}
		if c.Revoked() {
			cc.Revoked = timeHTML(c.RevokedAt, false)
		}
		out = append(out, cc)
	}
	return out, nil
}

type certificatesBody struct {
	Certificates []certCard
}

func (p *Portal) certificatesPage(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	d := p.newPage(r, "certificates", "certificates")
	certs, err := p.certCards(r, d, l)
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	d.Title, d.Body = d.S("learn.nav.certificates"), certificatesBody{Certificates: certs}
	p.renderPage(w, r, http.StatusOK, "certificates", d)
}
