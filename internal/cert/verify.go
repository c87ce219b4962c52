package cert

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"html/template"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom/i18n"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

//go:embed verify.html
var verifyHTML string

var verifyPage = template.Must(template.New("verify").Parse(verifyHTML))

// Register adds the public routes: the verify page (HTML, or JSON for
// Accept: application/json), the PDF and the VC-JWT of a certificate, and
// each domain's issuer profile and public keys. None needs credentials;
// all are rate-limited per client address.
func (i *Issuer) Register(mux *http.ServeMux) {
	mux.Handle("GET /verify/{code}", i.limit(http.HandlerFunc(i.serveVerify)))
	mux.Handle("GET /issuers/{domain}", i.limit(http.HandlerFunc(i.serveIssuer)))
	mux.Handle("GET /issuers/{domain}/jwks.json", i.limit(http.HandlerFunc(i.serveJWKS)))
}

// limit applies the rate limit per client address.
func (i *Issuer) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		dec := i.Limiter.Allow("public:" + host)
		dec.SetHeaders(w.Header())
		if !dec.Allowed {
			http.Error(w, "Too many requests; retry after "+w.Header().Get("Retry-After")+" seconds.", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// wantsJSON reports whether a client asked for JSON rather than a page.
func wantsJSON(r *http.Request) bool {
	accept := strings.ToLower(r.Header.Get("Accept"))
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html")
}

// VerifyResult is the public view of a certificate: only what its page
// shows.
type VerifyResult struct {
	Code        string `json:"code"`
	Status      string `json:"status"` // "valid" or "revoked"
	LearnerName string `json:"learner_name"`
	CourseTitle string `json:"course_title"`
	IssuedOn    string `json:"issued_on"` // YYYY-MM-DD (UTC)
	Issuer      struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"issuer"`
	RevokedOn     string `json:"revoked_on,omitempty"`
	VerifyURL     string `json:"verify_url"`
	PDFURL        string `json:"pdf_url,omitempty"`
	CredentialURL string `json:"credential_url,omitempty"`
	JWKSURL       string `json:"jwks_url"`
}

func (i *Issuer) verifyResult(c store.Certificate) VerifyResult {
	links := i.LinksFor(c)
	v := VerifyResult{Code: c.Code, Status: "valid", LearnerName: c.LearnerName, CourseTitle: c.CourseTitle,
		IssuedOn: c.IssuedAt.UTC().Format(time.DateOnly), VerifyURL: links.Verify,
		JWKSURL: IssuerURL(i.base(), c.DomainID) + "/jwks.json"}
	v.Issuer.ID, v.Issuer.Name = IssuerURL(i.base(), c.DomainID), c.IssuerName
	if c.Revoked() {
		v.Status, v.RevokedOn = "revoked", c.RevokedAt.UTC().Format(time.DateOnly)
	} else {
		v.PDFURL, v.CredentialURL = links.PDF, links.Credential
	}
	return v
}

// lookup finds the certificate a path's code names; ok is false after
// answering 404.
func (i *Issuer) lookup(w http.ResponseWriter, r *http.Request, raw string, asJSON bool) (store.Certificate, bool) {
	code, valid := NormalizeCode(raw)
	var c store.Certificate
	var err error = lms.NotFoundf("certificate not found")
	if valid {
		c, err = i.Store.CertificateByCode(r.Context(), code)
	}
	if err != nil {
		status := http.StatusNotFound
		if !lms.IsNotFound(err) {
			i.logger().Error("certificate lookup", "err", err)
			status = http.StatusInternalServerError
		}
		i.notFound(w, r, status, asJSON)
		return c, false
	}
	return c, true
}

func (i *Issuer) notFound(w http.ResponseWriter, r *http.Request, status int, asJSON bool) {
	d := newPageData(r)
	key := "cert.verify.notFound"
	if status != http.StatusNotFound {
		key = "cert.verify.error"
	}
	if asJSON {
		httpx.WriteJSON(w, status, map[string]string{"status": "not_found", "message": catalogue("en")[key]})
		return
	}
	d.Title, d.Message = d.T("cert.verify.notFoundTitle"), d.T(key)
	i.page(w, status, d)
}

// pageData is what the verify page shows, in the reader's language.
type pageData struct {
	Lang    string
	Dir     string
	Title   string
	Message string
	Cert    *VerifyResult
	Code    string
	Date    string
	Revoked string
	strings map[string]string
}

func newPageData(r *http.Request) pageData {
	lang := pageLang(r)
	d := pageData{Lang: lang, Dir: "ltr", strings: catalogue(lang)}
	if i18n.RTL(lang) {
		d.Dir = "rtl"
	}
	return d
}

// T returns the page string key with {name} placeholders replaced by the
// value after each name in args.
func (d pageData) T(key string, args ...string) string {
	s, ok := d.strings[key]
	if !ok {
		s = catalogue("en")[key]
	}
	for n := 0; n+1 < len(args); n += 2 {
		s = strings.ReplaceAll(s, "{"+args[n]+"}", args[n+1])
	}
	return s
}

// date formats a day for the page: 2 January 2006 in English, 2006-01-02
// in the other languages (their month names are not in the catalogues).
func (d pageData) date(t time.Time) string {
	if d.Lang == "en" {
		return formatDate(t)
	}
	return t.UTC().Format(time.DateOnly)
}

// catalogue returns the strings of lang (the classroom's catalogues).
func catalogue(lang string) map[string]string {
	c, _ := i18n.Catalogue(lang)
	return c
}

// pageLang picks the page's language: ?lang= when it names a catalogue,
// else the first language of Accept-Language that has one, else English.
func pageLang(r *http.Request) string {
	known := i18n.Tags()
	pick := func(tag string) string {
		tag = strings.ToLower(strings.TrimSpace(tag))
		primary, _, _ := strings.Cut(tag, "-")
		if slices.Contains(known, primary) {
			return primary
		}
		return ""
	}
	if l := pick(r.URL.Query().Get("lang")); l != "" {
		return l
	}
	type weighted struct {
		tag string
		q   float64
	}
	var prefs []weighted
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(part, ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q > 0 {
			prefs = append(prefs, weighted{tag, q})
		}
	}
	sort.SliceStable(prefs, func(a, b int) bool { return prefs[a].q > prefs[b].q })
	for _, p := range prefs {
		if l := pick(p.tag); l != "" {
			return l
		}
	}
	return "en"
}

func (i *Issuer) page(w http.ResponseWriter, status int, d pageData) {
	var buf bytes.Buffer
	if err := verifyPage.Execute(&buf, d); err != nil {
		i.logger().Error("verify page", "err", err)
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors *")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// GET /verify/{code}, /verify/{code}.pdf, /verify/{code}.jwt
func (i *Issuer) serveVerify(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("code")
	switch {
	case strings.HasSuffix(raw, ".pdf"):
		i.servePDF(w, r, strings.TrimSuffix(raw, ".pdf"))
		return
	case strings.HasSuffix(raw, ".jwt"):
		i.serveJWT(w, r, strings.TrimSuffix(raw, ".jwt"))
		return
	case strings.HasSuffix(raw, ".json"):
		r.Header.Set("Accept", "application/json")
		raw = strings.TrimSuffix(raw, ".json")
	}
	asJSON := wantsJSON(r)
	c, ok := i.lookup(w, r, raw, asJSON)
	if !ok {
		return
	}
	v := i.verifyResult(c)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Vary", "Accept, Accept-Language")
	if asJSON {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		httpx.WriteJSON(w, http.StatusOK, v)
		return
	}
	d := newPageData(r)
	d.Title, d.Cert, d.Code, d.Date = d.T("cert.verify.title")+" · "+FormatCode(c.Code), &v, FormatCode(c.Code), d.date(c.IssuedAt)
	if c.Revoked() {
		d.Revoked = d.date(c.RevokedAt)
	}
	i.page(w, http.StatusOK, d)
}

// gone answers for a revoked certificate's PDF or credential: 410, with
// the revocation date.
func (i *Issuer) gone(w http.ResponseWriter, c store.Certificate) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusGone)
	w.Write([]byte("This certificate was revoked on " + formatDate(c.RevokedAt) + ".\n"))
}

// etag names what a certificate's PDF or credential is made from.
func etag(c store.Certificate, kind, extra string) string {
	sum := sha256.Sum256([]byte(kind + "\n" + c.Code + "\n" + strconv.Itoa(c.TemplateVersion) + "\n" + extra))
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

func (i *Issuer) servePDF(w http.ResponseWriter, r *http.Request, raw string) {
	c, ok := i.lookup(w, r, raw, false)
	if !ok {
		return
	}
	if c.Revoked() {
		i.gone(w, c)
		return
	}
	tag := etag(c, "pdf", i.base())
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "no-cache")
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	b, err := i.PDFFor(r.Context(), c)
	if err != nil {
		i.logger().Error("certificate pdf", "certificate", c.ID, "err", err)
		i.notFound(w, r, http.StatusInternalServerError, false)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `inline; filename="certificate-`+c.Code+`.pdf"`)
	httpx.SetContentLength(w.Header(), len(b))
	w.Write(b)
}

func (i *Issuer) serveJWT(w http.ResponseWriter, r *http.Request, raw string) {
	c, ok := i.lookup(w, r, raw, false)
	if !ok {
		return
	}
	if c.Revoked() {
		i.gone(w, c)
		return
	}
	tok, err := i.SignCredential(r.Context(), c)
	if err != nil {
		i.logger().Error("certificate credential", "certificate", c.ID, "err", err)
		i.notFound(w, r, http.StatusInternalServerError, false)
		return
	}
	w.Header().Set("Content-Type", "application/vc+jwt")
	w.Header().Set("Content-Disposition", `inline; filename="certificate-`+c.Code+`.jwt"`)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Write([]byte(tok))
}

// domainParam reads {domain} and returns the domain and its public keys
// when it is an issuer: a domain that has never issued a certificate (and
// so has no key) is 404, like an unknown one, so the routes do not list
// every domain's name. ok is false after answering.
func (i *Issuer) domainParam(w http.ResponseWriter, r *http.Request) (store.Domain, []JWK, bool) {
	id, err := strconv.ParseInt(r.PathValue("domain"), 10, 64)
	var d store.Domain
	var keys []JWK
	if err == nil && id > 0 {
		keys, err = i.JWKS(r.Context(), id)
		if err == nil && len(keys) == 0 {
			err = lms.NotFoundf("no such issuer")
		}
		if err == nil {
			d, err = i.Store.GetDomain(r.Context(), id)
		}
	} else {
		err = lms.NotFoundf("no such issuer")
	}
	if err != nil {
		status := http.StatusNotFound
		if !lms.IsNotFound(err) {
			i.logger().Error("issuer lookup", "err", err)
			status = http.StatusInternalServerError
		}
		httpx.WriteJSON(w, status, map[string]string{"status": "not_found", "message": "no such issuer"})
		return d, nil, false
	}
	return d, keys, true
}

// GET /issuers/{domain}: the issuer's Open Badges profile.
func (i *Issuer) serveIssuer(w http.ResponseWriter, r *http.Request) {
	d, _, ok := i.domainParam(w, r)
	if !ok {
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"@context": obContext, "id": IssuerURL(i.base(), d.ID),
		"type": []string{"Profile"}, "name": d.Name})
}

// GET /issuers/{domain}/jwks.json: the domain's public keys, retired ones
// included.
func (i *Issuer) serveJWKS(w http.ResponseWriter, r *http.Request) {
	_, keys, ok := i.domainParam(w, r)
	if !ok {
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "public, max-age=300")
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"keys": keys})
}

// Certificate returns one certificate by its public code (any letter
// case, with or without hyphens).
func (i *Issuer) Certificate(ctx context.Context, code string) (store.Certificate, error) {
	c, ok := NormalizeCode(code)
	if !ok {
		return store.Certificate{}, lms.NotFoundf("certificate not found")
	}
	return i.Store.CertificateByCode(ctx, c)
}
