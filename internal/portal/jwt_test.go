package portal_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

type claims map[string]any

func sign(t *testing.T, method jwt.SigningMethod, kid string, key any, c claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, jwt.MapClaims(c))
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func jwtURL(e *Env, d Domain, token string, extra url.Values) string {
	q := url.Values{"jwt": {token}}
	for k, v := range extra {
		q[k] = v
	}
	return portalURL(e, d) + "/sso/jwt?" + q.Encode()
}

func TestJWTEntry(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ctx := context.Background()
		now := time.Date(2030, 3, 4, 10, 0, 0, 0, time.UTC)
		e.Clock.Set(now)
		old, err := e.Store.RotateSSOKey(ctx, e.Domain.ID, e.Main.Secret, time.Hour, now.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		cur, _ := e.Store.RotateSSOKey(ctx, e.Domain.ID, e.Main.Secret, time.Hour, now.Add(-time.Minute))
		otherKey, _ := e.Store.RotateSSOKey(ctx, e.Other.ID, e.Main.Secret, time.Hour, now)
		aud := portalURL(e, e.Domain)
		n := 0
		base := func() claims {
			n++
			return claims{"email": "ann@example.com", "first_name": "Ann", "last_name": "Lee", "aud": aud,
				"iat": now.Unix(), "exp": now.Add(2 * time.Minute).Unix(), "jti": "jti-" + itoa(int64(n))}
		}
		with := func(change func(c claims)) claims {
			c := base()
			change(c)
			return c
		}
		key := []byte(cur.Secret)
		reused := base()
		cases := []struct {
			name  string
			token string
			extra url.Values
			ok    bool
			code  string // error code when refused
		}{
			{"valid, creates the learner", sign(t, jwt.SigningMethodHS256, cur.Kid, key, base()), url.Values{"return_to": {"/courses/7"}}, true, ""},
			{"valid, no kid tries the valid keys", sign(t, jwt.SigningMethodHS256, "", key, base()), nil, true, ""},
			{"old kid during rotation", sign(t, jwt.SigningMethodHS256, old.Kid, []byte(old.Secret), base()), nil, true, ""},
			{"first use of a jti", sign(t, jwt.SigningMethodHS256, cur.Kid, key, reused), nil, true, ""},
			{"reused jti", sign(t, jwt.SigningMethodHS256, cur.Kid, key, reused), nil, false, "jti_reused"},
			{"wrong alg HS512", sign(t, jwt.SigningMethodHS512, cur.Kid, key, base()), nil, false, "bad_signature"},
			{"alg none", sign(t, jwt.SigningMethodNone, cur.Kid, jwt.UnsafeAllowNoneSignatureType, base()), nil, false, "bad_signature"},
			{"wrong secret", sign(t, jwt.SigningMethodHS256, cur.Kid, []byte("lss_not-the-secret"), base()), nil, false, "bad_signature"},
			{"another domain's secret", sign(t, jwt.SigningMethodHS256, otherKey.Kid, []byte(otherKey.Secret), base()), nil, false, "bad_signature"},
			{"old secret under the new kid", sign(t, jwt.SigningMethodHS256, cur.Kid, []byte(old.Secret), base()), nil, false, "bad_signature"},
			{"wrong aud", sign(t, jwt.SigningMethodHS256, cur.Kid, key, with(func(c claims) { c["aud"] = portalURL(e, e.Other) })), nil, false, "wrong_audience"},
			{"no aud", sign(t, jwt.SigningMethodHS256, cur.Kid, key, with(func(c claims) { delete(c, "aud") })), nil, false, "missing_claim"},
			{"no exp", sign(t, jwt.SigningMethodHS256, cur.Kid, key, with(func(c claims) { delete(c, "exp") })), nil, false, "missing_claim"},
			{"no iat", sign(t, jwt.SigningMethodHS256, cur.Kid, key, with(func(c claims) { delete(c, "iat") })), nil, false, "missing_claim"},
			{"no jti", sign(t, jwt.SigningMethodHS256, cur.Kid, key, with(func(c claims) { delete(c, "jti") })), nil, false, "missing_claim"},
			{"exp too far after iat", sign(t, jwt.SigningMethodHS256, cur.Kid, key, with(func(c claims) { c["exp"] = now.Add(5*time.Minute + time.Second).Unix() })), nil, false, "lifetime_too_long"},
			{"expired", sign(t, jwt.SigningMethodHS256, cur.Kid, key, with(func(c claims) {
				c["iat"] = now.Add(-3 * time.Minute).Unix()
				c["exp"] = now.Add(-time.Minute).Unix()
			})), nil, false, "expired"},
			{"no email", sign(t, jwt.SigningMethodHS256, cur.Kid, key, with(func(c claims) { delete(c, "email") })), nil, false, "bad_email"},
			{"refusal goes to error_url", sign(t, jwt.SigningMethodHS256, cur.Kid, key, with(func(c claims) { c["aud"] = "https://evil.example" })),
				url.Values{"error_url": {"/signin-problem"}}, false, "wrong_audience"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				b := browser(t)
				p := get(t, b, jwtURL(e, e.Domain, c.token, c.extra))
				if p.Header.Get("Cache-Control") != "no-store" || p.Header.Get("Referrer-Policy") != "no-referrer" {
					t.Errorf("headers %v", p.Header)
				}
				if c.ok {
					want := "/" + itoa(e.Domain.ID) + "/learn" + c.extra.Get("return_to")
					if c.extra.Get("return_to") == "" {
						want += "/"
					}
					if p.Status != http.StatusSeeOther || p.Header.Get("Location") != want {
						t.Fatalf("%d %q %s, want a redirect to %s", p.Status, p.Header.Get("Location"), p.Body, want)
					}
					if !signedIn(t, e, b, e.Domain) {
						t.Fatal("not signed in")
					}
					return
				}
				if c.extra.Get("error_url") != "" {
					want := "/" + itoa(e.Domain.ID) + "/learn" + c.extra.Get("error_url") + "?error=" + c.code
					if p.Status != http.StatusSeeOther || p.Header.Get("Location") != want {
						t.Fatalf("%d %q, want a redirect to %s", p.Status, p.Header.Get("Location"), want)
					}
				} else if p.Status != http.StatusUnauthorized || !strings.Contains(p.Body, "("+c.code+")") {
					t.Fatalf("%d %s, want 401 with %s", p.Status, p.Body, c.code)
				}
				if p.Header.Get("Set-Cookie") != "" || signedIn(t, e, b, e.Domain) {
					t.Fatal("signed in by a refused JWT")
				}
			})
		}
		u, err := e.Store.UserByEmail(ctx, e.Domain.ID, "ann@example.com")
		if err != nil || u.Name != "Ann Lee" {
			t.Errorf("created learner: %+v %v", u, err)
		}
		// After the grace period the old kid is refused.
		e.Clock.Set(now.Add(time.Hour))
		c := base()
		c["iat"], c["exp"] = now.Add(time.Hour).Unix(), now.Add(time.Hour+time.Minute).Unix()
		if p := get(t, browser(t), jwtURL(e, e.Domain, sign(t, jwt.SigningMethodHS256, old.Kid, []byte(old.Secret), c), nil)); p.Status != http.StatusUnauthorized {
			t.Errorf("old kid after the grace period: %d %s", p.Status, p.Body)
		}
	})
}

func TestJWTEntryRedirectRules(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		cur, _ := e.Store.RotateSSOKey(context.Background(), e.Domain.ID, e.Main.Secret, 0, time.Now())
		tok := sign(t, jwt.SigningMethodHS256, cur.Kid, []byte(cur.Secret), claims{"email": "ann@example.com", "aud": portalURL(e, e.Domain),
			"iat": time.Now().Unix(), "exp": time.Now().Add(time.Minute).Unix(), "jti": "r1"})
		for _, c := range []struct{ field, value string }{
			{"return_to", "https://evil.example/"}, {"return_to", "//evil.example"}, {"return_to", "/\\evil.example"},
			{"error_url", "https://evil.example/"}, {"error_url", "//evil.example"},
		} {
			b := browser(t)
			p := get(t, b, jwtURL(e, e.Domain, tok, url.Values{c.field: {c.value}}))
			if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, c.field) || p.Header.Get("Location") != "" {
				t.Errorf("%s=%s: %d %s", c.field, c.value, p.Status, p.Body)
			}
		}
		// The refused requests did not spend the jti.
		if p := get(t, browser(t), jwtURL(e, e.Domain, tok, nil)); p.Status != http.StatusSeeOther {
			t.Errorf("valid JWT after refused redirects: %d %s", p.Status, p.Body)
		}
	})
}

func TestJWTEntryWithoutKey(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		tok := sign(t, jwt.SigningMethodHS256, "", []byte("anything"), claims{"email": "ann@example.com"})
		if p := get(t, browser(t), jwtURL(e, e.Domain, tok, nil)); p.Status != http.StatusUnauthorized || !strings.Contains(p.Body, "sso_not_configured") {
			t.Errorf("no SSO key: %d %s", p.Status, p.Body)
		}
	})
}
