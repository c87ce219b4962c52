package portal

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// PurposeLogin binds a login link to the portal's sign-in, so that no other
// kind of link row can ever be consumed as one.
const PurposeLogin = "learn-login"

// JWT entry limits: a JWT may live at most MaxJWTLifetime from iat to exp;
// clocks may differ by JWTLeeway.
const (
	MaxJWTLifetime = 5 * time.Minute
	JWTLeeway      = 30 * time.Second
)

func (p *Portal) signinRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /sso/consume", p.consume)
	mux.HandleFunc("GET /sso/jwt", p.jwtEntry)
	mux.HandleFunc("POST /logout", p.logout)
}

// newToken returns 256 random bits, base64url without padding.
func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// PortalURL is the absolute URL of a domain's portal base: its own host,
// with the public URL's scheme and port, when it has one
// (https://learn.school.com), else {public URL}/{domain_id}/learn.
func (p *Portal) PortalURL(ctx context.Context, domainID int64) (string, error) {
	host, err := p.Store.LearnHost(ctx, domainID)
	if err != nil {
		return "", err
	}
	base := strings.TrimRight(p.BaseURL(), "/")
	if host == "" {
		return base + "/" + strconv.FormatInt(domainID, 10) + "/learn", nil
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		return "http://" + host, nil
	}
	if port := u.Port(); port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, nil
}

// IssueLoginLink makes a single-use login link that signs userID in to
// domainID's portal and lands on returnTo (a path checked by
// lms.ReturnPath). It returns the URL and when it stops working.
func (p *Portal) IssueLoginLink(ctx context.Context, domainID, userID int64, returnTo string, ttl time.Duration) (string, time.Time, error) {
	now := p.now().UTC()
	expires := now.Add(ttl).Truncate(time.Second)
	token := newToken()
	err := p.Store.CreateLoginLink(ctx, store.LoginLink{DomainID: domainID, UserID: userID, Purpose: PurposeLogin,
		ReturnTo: returnTo, ExpiresAt: expires}, token, now)
	if err != nil {
		return "", time.Time{}, err
	}
	base, err := p.PortalURL(ctx, domainID)
	if err != nil {
		return "", time.Time{}, err
	}
	return base + "/sso/consume?t=" + token, expires, nil
}

// noStore marks a sign-in answer as never cached and never sent on as a
// referrer: its URL carries a token.
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

// crossSiteFrame reports whether the browser says this navigation happens
// in an iframe of another site, where a SameSite=Lax cookie is neither set
// nor sent.
func crossSiteFrame(r *http.Request) bool {
	return r.Header.Get("Sec-Fetch-Dest") == "iframe" && r.Header.Get("Sec-Fetch-Site") == "cross-site"
}

// consume is GET /sso/consume?t=...: it uses the login link, opens a
// session and redirects to the link's return_to. A link used, expired,
// unknown or of another domain shows one generic page.
func (p *Portal) consume(w http.ResponseWriter, r *http.Request) {
	noStore(w)
	token := r.URL.Query().Get("t")
	if token == "" || len(token) > 100 {
		p.linkUnusable(w, r)
		return
	}
	if crossSiteFrame(r) {
		// The session cookie would be dropped here, and the link would be
		// spent for nothing: leave it unused for a new tab.
		p.newTabPage(w, r, p.base(r)+"/sso/consume?t="+url.QueryEscape(token))
		return
	}
	d := p.domain(r)
	link, err := p.Store.ConsumeLoginLink(r.Context(), d.ID, token, PurposeLogin, p.now())
	if lms.IsNotFound(err) {
		p.linkUnusable(w, r)
		return
	}
	if err != nil {
		p.internal(w, r, err)
		return
	}
	if err := p.startSession(w, r, link.UserID, "link"); err != nil {
		p.internal(w, r, err)
		return
	}
	http.Redirect(w, r, p.base(r)+link.ReturnTo, http.StatusSeeOther)
}

// startSession opens a session for userID, ends the one the browser had
// for this domain (no fixation, no mixed users), and sets the cookie.
func (p *Portal) startSession(w http.ResponseWriter, r *http.Request, userID int64, via string) error {
	s := siteFrom(r.Context())
	if s.token != "" {
		if err := p.Store.EndLearnSession(r.Context(), s.domain.ID, s.token); err != nil {
			return err
		}
	}
	now := p.now().UTC()
	expires := now.Add(SessionMaxAge)
	token := newToken()
	if _, err := p.Store.CreateLearnSession(r.Context(), s.domain.ID, userID, token, via, now, expires); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: p.cookieName(s.domain.ID), Value: token, Path: "/",
		Expires: expires, MaxAge: int(SessionMaxAge / time.Second),
		Secure: p.Secure, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	return nil
}

// clearCookie tells the browser to drop the domain's session cookie.
func (p *Portal) clearCookie(w http.ResponseWriter, domainID int64) {
	http.SetCookie(w, &http.Cookie{Name: p.cookieName(domainID), Value: "", Path: "/", MaxAge: -1,
		Secure: p.Secure, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// logout is POST /logout from a portal page: it ends the session (CSRF
// checked) and shows the signed-out page.
func (p *Portal) logout(w http.ResponseWriter, r *http.Request) {
	noStore(w)
	s := siteFrom(r.Context())
	if _, ok := LearnerFrom(r.Context()); !ok {
		p.clearCookie(w, s.domain.ID)
		p.message(w, r, http.StatusOK, "learn.signout.title", "learn.signout.text", "")
		return
	}
	if !p.checkCSRF(r) {
		p.message(w, r, http.StatusForbidden, "learn.error.title", "learn.csrf", "")
		return
	}
	if err := p.Store.EndLearnSession(r.Context(), s.domain.ID, s.token); err != nil {
		p.internal(w, r, err)
		return
	}
	p.clearCookie(w, s.domain.ID)
	p.message(w, r, http.StatusOK, "learn.signout.title", "learn.signout.text", "")
}

// ssoClaims are the claims of a JWT entry (Thinkific's names, plus the
// registered ones Lectern requires).
type ssoClaims struct {
	jwt.RegisteredClaims
	Email     string `json:"email"`
	Name      string `json:"name"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// jwtError is why a JWT entry was refused; Code goes to error_url.
type jwtError struct{ Code, Message string }

func (e *jwtError) Error() string { return e.Message }

// jwtEntry is GET /sso/jwt?jwt=...&return_to=...&error_url=...: a JWT
// signed HS256 with one of the domain's SSO secrets signs a learner in,
// found or created by email.
func (p *Portal) jwtEntry(w http.ResponseWriter, r *http.Request) {
	noStore(w)
	q := r.URL.Query()
	errorURL := ""
	if raw := q.Get("error_url"); raw != "" {
		path, why := lms.ReturnPath(raw)
		if why != "" {
			p.message(w, r, http.StatusBadRequest, "learn.signin.refusedTitle", "learn.signin.refusedText", "error_url "+why+".")
			return
		}
		errorURL = path
	}
	fail := func(e *jwtError) {
		if errorURL != "" {
			sep := "?"
			if strings.Contains(errorURL, "?") {
				sep = "&"
			}
			http.Redirect(w, r, p.base(r)+errorURL+sep+"error="+url.QueryEscape(e.Code), http.StatusSeeOther)
			return
		}
		p.message(w, r, http.StatusUnauthorized, "learn.signin.refusedTitle", "learn.signin.refusedText", e.Message+" ("+e.Code+")")
	}
	returnTo, why := lms.ReturnPath(q.Get("return_to"))
	if why != "" {
		p.message(w, r, http.StatusBadRequest, "learn.signin.refusedTitle", "learn.signin.refusedText", "return_to "+why+".")
		return
	}
	if crossSiteFrame(r) {
		p.newTabPage(w, r, p.base(r)+"/sso/jwt?"+r.URL.RawQuery)
		return
	}
	userID, err := p.verifyJWT(r, q.Get("jwt"))
	if err != nil {
		var je *jwtError
		if errors.As(err, &je) {
			fail(je)
			return
		}
		p.internal(w, r, err)
		return
	}
	if err := p.startSession(w, r, userID, "jwt"); err != nil {
		p.internal(w, r, err)
		return
	}
	http.Redirect(w, r, p.base(r)+returnTo, http.StatusSeeOther)
}

// audience is the aud a JWT entry must carry: the URL of the portal where
// the request arrived, {public URL}/{domain_id}/learn on the main host, the
// domain's PortalURL (https://learn.school.com) on its own host.
func (p *Portal) audience(r *http.Request) (string, error) {
	s := siteFrom(r.Context())
	if s.base != "" {
		return strings.TrimRight(p.BaseURL(), "/") + s.base, nil
	}
	return p.PortalURL(r.Context(), s.domain.ID)
}

// verifyJWT checks a JWT entry and returns the learner it signs in,
// creating them when the email is new to the domain.
func (p *Portal) verifyJWT(r *http.Request, raw string) (int64, error) {
	ctx := r.Context()
	d := p.domain(r)
	if raw == "" {
		return 0, &jwtError{"missing_jwt", "The jwt parameter is missing."}
	}
	keys, err := p.Store.SSOKeys(ctx, d.ID, p.Secret, p.now())
	if err != nil {
		return 0, err
	}
	if len(keys) == 0 {
		return 0, &jwtError{"sso_not_configured", "This school has not set up JWT sign-in."}
	}
	keyfunc := func(t *jwt.Token) (any, error) {
		if kid, ok := t.Header["kid"].(string); ok && kid != "" {
			for _, k := range keys {
				if k.Kid == kid {
					return []byte(k.Secret), nil
				}
			}
			return nil, errors.New("unknown kid")
		}
		set := jwt.VerificationKeySet{}
		for _, k := range keys {
			set.Keys = append(set.Keys, []byte(k.Secret))
		}
		return set, nil
	}
	aud, err := p.audience(r)
	if err != nil {
		return 0, err
	}
	var c ssoClaims
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithAudience(aud),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(JWTLeeway), jwt.WithTimeFunc(p.now))
	if _, err := parser.ParseWithClaims(raw, &c, keyfunc); err != nil {
		switch {
		case errors.Is(err, jwt.ErrTokenExpired):
			return 0, &jwtError{"expired", "The sign-in token has expired."}
		case errors.Is(err, jwt.ErrTokenInvalidAudience):
			return 0, &jwtError{"wrong_audience", "The sign-in token is for another address (aud)."}
		case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
			return 0, &jwtError{"missing_claim", "The sign-in token lacks exp or aud."}
		case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
			return 0, &jwtError{"bad_signature", "The sign-in token's signature or algorithm is not accepted."}
		}
		return 0, &jwtError{"invalid_token", "The sign-in token is not valid."}
	}
	if c.IssuedAt == nil {
		return 0, &jwtError{"missing_claim", "The sign-in token has no iat."}
	}
	if c.ExpiresAt.Sub(c.IssuedAt.Time) > MaxJWTLifetime {
		return 0, &jwtError{"lifetime_too_long", "The sign-in token lives more than 5 minutes (exp - iat)."}
	}
	if c.ID == "" || len(c.ID) > 200 {
		return 0, &jwtError{"missing_claim", "The sign-in token needs a jti of at most 200 characters."}
	}
	email := strings.TrimSpace(c.Email)
	if !lms.ValidEmail(email) {
		return 0, &jwtError{"bad_email", "The sign-in token has no valid email."}
	}
	err = p.Store.UseJWTID(ctx, d.ID, c.ID, c.ExpiresAt.Add(JWTLeeway), p.now())
	if lms.ErrorCode(err) == lms.CodeConflict {
		return 0, &jwtError{"jti_reused", "The sign-in token was already used."}
	}
	if err != nil {
		return 0, err
	}
	u, err := p.Store.UserByEmail(ctx, d.ID, email)
	if err == nil {
		return u.ID, nil
	}
	if !lms.IsNotFound(err) {
		return 0, err
	}
	name := strings.TrimSpace(c.Name)
	if name == "" {
		name = strings.TrimSpace(c.FirstName + " " + c.LastName)
	}
	if name == "" {
		name, _, _ = strings.Cut(email, "@")
	}
	u, err = p.Store.CreateUser(ctx, d.ID, lms.User{Name: name, Username: email, Email: email})
	if lms.ErrorCode(err) == lms.CodeConflict {
		// Created by a concurrent request: use that user.
		u, err = p.Store.UserByEmail(ctx, d.ID, email)
	}
	if err != nil {
		return 0, err
	}
	return u.ID, nil
}

// EndSessions ends every portal session of one learner of a domain and
// returns how many it ended.
func (p *Portal) EndSessions(ctx context.Context, domainID, userID int64) (int64, error) {
	return p.Store.EndLearnSessions(ctx, domainID, userID)
}
