// Package portal serves the learner portal: sign-in (login links, the JWT
// entry, sessions, logout) and, through pageRoutes, the learner's pages.
//
// A domain's portal lives at /{domain_id}/learn/... on the server's own
// host, and at /... on the domain's own host name (lectern domain
// set-host), e.g. learn.school.com. Routes are registered once, relative
// to the portal's base ("GET /sso/consume", "GET /courses/{id}"), on the
// portal's own mux; Front finds the domain and the base of each request
// and strips the base before dispatching. Links a page writes start with
// p.base(r).
package portal

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom/i18n"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Session lifetimes: a session ends 30 days after sign-in, or after 7 days
// without a request, whichever comes first.
const (
	SessionMaxAge  = 30 * 24 * time.Hour
	SessionIdleAge = 7 * 24 * time.Hour
	// touchEvery is how stale last_seen_at may get before a request
	// refreshes it (one write per session per interval, not per request).
	touchEvery = 5 * time.Minute
)

// Portal is the learner portal of every domain.
type Portal struct {
	Store *store.Store
	// Learn is the course-content service (outline, locks, progress).
	Learn  *learn.Service
	Logger *slog.Logger
	// Now is the server's clock (time.Now when nil); the settable test
	// clock reaches the portal through it.
	Now func() time.Time
	// BaseURL is the server's public URL (--public-url).
	BaseURL func() string
	// Secure makes cookies Secure and __Host- prefixed; set it when the
	// public URL is https.
	Secure bool
	// Secret is the server secret (server.secret in the data dir); the
	// domains' SSO secrets are sealed under a key derived from it.
	Secret []byte

	mux        *http.ServeMux
	publicHost atomic.Pointer[baseURLHost] // baseHost's last answer
}

func (p *Portal) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Register builds the portal's routes: sign-in here, the pages through
// pageRoutes. The portal's URLs cannot be patterns of the server's mux
// ("/{domain_id}/learn/" overlaps "GET /recordings/{id}/files/{file}"), so
// they live on the portal's own mux and Front dispatches to it; mux is
// kept for routes outside the portal's URL space (none yet).
func (p *Portal) Register(mux *http.ServeMux) {
	p.mux = http.NewServeMux()
	p.signinRoutes(p.mux)
	p.pageRoutes(p.mux)
	p.attemptRoutes(p.mux)
}

// Learner is the signed-in learner of a request (set by the session
// middleware).
type Learner struct {
	DomainID, UserID int64
	Name, Email      string
	// Lang is the portal language: the best match of Accept-Language among
	// the classroom's catalogues ("en" when none matches).
	Lang      string
	SessionID string
	// CSRF is the token every portal form and JSON write must carry
	// (form field "csrf" or header X-CSRF-Token).
	CSRF string
}

type ctxKey int

const (
	learnerKey ctxKey = iota
	siteKey
)

// site is where a portal request arrived: the domain and the portal's base.
type site struct {
	domain store.Domain
	base   string
	token  string // the session cookie's value, if any
}

// LearnerFrom returns the signed-in learner of a portal request.
func LearnerFrom(ctx context.Context) (Learner, bool) {
	l, ok := ctx.Value(learnerKey).(Learner)
	return l, ok
}

func siteFrom(ctx context.Context) site {
	s, _ := ctx.Value(siteKey).(site)
	return s
}

// base is the base path of a domain's portal: "/{domain_id}/learn" on the
// main host, "" on the domain's own host.
func (p *Portal) base(r *http.Request) string { return siteFrom(r.Context()).base }

// domain is the domain whose portal the request is for.
func (p *Portal) domain(r *http.Request) store.Domain { return siteFrom(r.Context()).domain }

// Front returns next with the portal in front of it: requests for
// /{domain_id}/learn/... on any host, and on a domain's own host those
// for a route of the portal that next (the server's mux) has no route of
// its own for, are served by the portal; the rest go to next.
func (p *Portal) Front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.mux == nil {
			next.ServeHTTP(w, r)
			return
		}
		if id, rest, ok := portalPath(r.URL.Path); ok {
			if rest == "" {
				http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
				return
			}
			d, err := p.Store.GetDomain(r.Context(), id)
			if err != nil {
				if !lms.IsNotFound(err) {
					p.internal(w, r, err)
					return
				}
				p.notFound(w, r)
				return
			}
			p.serve(w, r, d, "/"+strconv.FormatInt(id, 10)+"/learn", rest)
			return
		}
		if host := p.foreignHost(r); host != "" && !serverRoute(next, r) {
			d, err := p.Store.DomainByLearnHost(r.Context(), host)
			if err == nil {
				if _, pattern := p.mux.Handler(r); pattern != "" {
					p.serve(w, r, d, "", r.URL.Path)
					return
				}
			} else if !lms.IsNotFound(err) {
				p.internal(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// serverRoute reports whether the server's own mux has a route of its own
// for r (the API, /healthz, /classroom/..., media, verify pages): those
// keep working on a domain's portal host. The server's root ("/") is not
// one; at / on its host the portal answers.
func serverRoute(next http.Handler, r *http.Request) bool {
	m, ok := next.(interface {
		Handler(*http.Request) (http.Handler, string)
	})
	if !ok {
		return false
	}
	_, pattern := m.Handler(r)
	_, path, _ := strings.Cut(pattern, " ")
	if path == "" {
		path = pattern
	}
	return pattern != "" && path != "/" && path != "/{$}"
}

// portalPath splits /{id}/learn/rest into id and /rest ("" for
// /{id}/learn itself).
func portalPath(path string) (int64, string, bool) {
	first, after, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok || first == "" || first[0] < '1' || first[0] > '9' {
		return 0, "", false
	}
	id, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, "", false
	}
	if after == "learn" {
		return id, "", true
	}
	if rest, ok := strings.CutPrefix(after, "learn/"); ok {
		return id, "/" + rest, true
	}
	return 0, "", false
}

// foreignHost returns the request's host name (lower case, no port) when
// it may be a domain's own portal host: not the public URL's host, not an
// IP address, not localhost.
//
// It runs for every request the server answers on a host name, API calls
// included, so it neither parses the public URL each time (baseHost) nor
// makes an error for a host without a port (hostName) or for a name that
// is not an IP address (ipLiteral).
func (p *Portal) foreignHost(r *http.Request) string {
	host := strings.ToLower(strings.TrimSuffix(hostName(r.Host), "."))
	if host == "" || host == "localhost" || ipLiteral(host) {
		return ""
	}
	if p.BaseURL != nil && strings.EqualFold(p.baseHost(), host) {
		return ""
	}
	return host
}

// hostName is a Host header's host: without its port, and an IPv6
// address without its brackets. net.SplitHostPort gives the same for a
// host with a port, but makes an error for one without.
func hostName(hostport string) string {
	if rest, ok := strings.CutPrefix(hostport, "["); ok {
		if ip, _, ok := strings.Cut(rest, "]"); ok {
			return ip
		}
		return hostport
	}
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && strings.IndexByte(hostport, ':') == i {
		return hostport[:i]
	}
	return hostport // no port, or an IPv6 address without brackets
}

// ipLiteral reports whether host is an IP address. Only a host of digits
// and dots, or one with a colon, can be: net.ParseIP is not asked about
// names, for which it makes an error.
func ipLiteral(host string) bool {
	if !strings.Contains(host, ":") && strings.Trim(host, "0123456789.") != "" {
		return false
	}
	return net.ParseIP(host) != nil
}

// baseURLHost is a public URL and its host name.
type baseURLHost struct{ url, host string }

// baseHost returns the host name of BaseURL, parsed once for each URL it
// returns ("" when it does not parse).
func (p *Portal) baseHost() string {
	u := p.BaseURL()
	if b := p.publicHost.Load(); b != nil && b.url == u {
		return b.host
	}
	b := &baseURLHost{url: u}
	if pu, err := url.Parse(u); err == nil {
		b.host = pu.Hostname()
	}
	p.publicHost.Store(b)
	return b.host
}

// serve dispatches a portal request for domain d with the base stripped
// from its path, after reading its session.
func (p *Portal) serve(w http.ResponseWriter, r *http.Request, d store.Domain, base, path string) {
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	r2.URL.Path = path
	r2.URL.RawPath = ""
	s := site{domain: d, base: base}
	ctx := r.Context()
	if c, err := r.Cookie(p.cookieName(d.ID)); err == nil && c.Value != "" {
		s.token = c.Value
		l, err := p.session(ctx, d.ID, c.Value)
		if err != nil && !lms.IsNotFound(err) {
			p.internal(w, r, err)
			return
		}
		if err == nil {
			l.Lang = lang(r)
			ctx = context.WithValue(ctx, learnerKey, l)
		}
	}
	ctx = context.WithValue(ctx, siteKey, s)
	p.mux.ServeHTTP(w, r2.WithContext(ctx))
}

// session returns the learner of an active session, refreshing its
// last-seen time when stale.
func (p *Portal) session(ctx context.Context, domainID int64, token string) (Learner, error) {
	now := p.now()
	ls, err := p.Store.ActiveLearnSession(ctx, domainID, token, now, now.Add(-SessionIdleAge))
	if err != nil {
		return Learner{}, err
	}
	if now.Sub(ls.LastSeenAt) > touchEvery {
		if err := p.Store.TouchLearnSession(ctx, domainID, ls.ID, now); err != nil {
			return Learner{}, err
		}
	}
	return Learner{DomainID: domainID, UserID: ls.User.ID, Name: ls.User.Name, Email: ls.User.Email,
		SessionID: strconv.FormatInt(ls.ID, 10), CSRF: csrfToken(token)}, nil
}

// csrfToken is the CSRF token of a session: derived from the cookie value,
// so it needs no storage and a copy of the database does not reveal it.
func csrfToken(cookie string) string {
	sum := sha256.Sum256([]byte("lectern-learn-csrf-v1\n" + cookie))
	return hex.EncodeToString(sum[:16])
}

// cookieName is the session cookie of a domain's portal. The domain id in
// the name keeps sessions of two domains on the main host apart.
func (p *Portal) cookieName(domainID int64) string {
	name := "lectern-learn-" + strconv.FormatInt(domainID, 10)
	if p.Secure {
		return "__Host-" + name
	}
	return name
}

// requireLearner runs h for a signed-in learner; without a session it
// shows the sign-in landing page (HTTP 401), which never redirects, so a
// browser without the cookie (a cross-site iframe) cannot loop.
func (p *Portal) requireLearner(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := LearnerFrom(r.Context()); !ok {
			p.signInPage(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// checkCSRF reports whether a POST/PUT/DELETE from a portal page carries
// the session's CSRF token (header X-CSRF-Token, else form field "csrf")
// and, when the browser sent an Origin (other than "null"), comes from the
// request's own host.
func (p *Portal) checkCSRF(r *http.Request) bool {
	l, ok := LearnerFrom(r.Context())
	if !ok || l.CSRF == "" {
		return false
	}
	// Pages send Referrer-Policy: no-referrer, under which browsers send
	// "Origin: null" with form posts; the token decides then.
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return false
		}
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(l.CSRF)) == 1
}

// lang picks the portal language from Accept-Language among the
// catalogues the classroom has.
func lang(r *http.Request) string {
	tags := i18n.Tags()
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		tag = strings.ToLower(tag)
		primary, _, _ := strings.Cut(tag, "-")
		for _, t := range tags {
			if t == tag || t == primary {
				return t
			}
		}
	}
	return "en"
}

// internal logs err and answers a plain 500 page.
func (p *Portal) internal(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	p.logger().Error("portal", "path", r.URL.Path, "err", err)
	p.message(w, r, http.StatusInternalServerError, "learn.error.title", "learn.error.text", "")
}

func (p *Portal) notFound(w http.ResponseWriter, r *http.Request) {
	p.message(w, r, http.StatusNotFound, "learn.notFound.title", "learn.notFound.text", "")
}

func (p *Portal) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}
