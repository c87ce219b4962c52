package portal

import (
	"net/http"
)

// certCards are the learner's certificates. Until certificates exist on
// this server, there are none, and the pages say so.
func (p *Portal) certCards(r *http.Request, d *pageData, l Learner) ([]certCard, error) {
	return nil, nil
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
