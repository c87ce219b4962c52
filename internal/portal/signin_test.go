package portal_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
)

// browser is a client with a cookie jar that does not follow redirects,
// so each step of a sign-in can be checked.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type page struct {
	Status int
	Header http.Header
	Body   string
}

func fetch(t *testing.T, c *http.Client, method, u string, form url.Values, header map[string]string) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

func get(t *testing.T, c *http.Client, u string) page {
	t.Helper()
	return fetch(t, c, "GET", u, nil, nil)
}

// newUser creates a user in e.Domain and returns its id.
func newUser(t *testing.T, e *Env, email string) int64 {
	t.Helper()
	r := e.LMS("POST", "/users/create", map[string]any{"username": email, "email": email, "name": "Ann Learner"})
	if r.Status != 200 {
		t.Fatalf("create user: %d %s", r.Status, r.Body)
	}
	return Int(t, r.JSON(t), "id")
}

// link asks the API for a login link with body and returns its url.
func link(t *testing.T, e *Env, body map[string]any) string {
	t.Helper()
	r := e.LMS("POST", "/users/loginLink", body)
	if r.Status != 200 {
		t.Fatalf("loginLink: %d %s", r.Status, r.Body)
	}
	return Str(t, r.JSON(t), "data.url")
}

func portalURL(e *Env, d Domain) string {
	return e.URL + "/" + itoa(d.ID) + "/learn"
}

func TestLoginLinkSignsInAndLandsOnReturnTo(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		u := link(t, e, map[string]any{"email": "ann@example.com", "return_to": "/courses/7?tab=outline"})
		if !strings.HasPrefix(u, portalURL(e, e.Domain)+"/sso/consume?t=") {
			t.Fatalf("url %s is not the domain's consume URL", u)
		}
		b := browser(t)
		p := get(t, b, u)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("consume: %d %s", p.Status, p.Body)
		}
		if got, want := p.Header.Get("Location"), "/"+itoa(e.Domain.ID)+"/learn/courses/7?tab=outline"; got != want {
			t.Errorf("Location %q, want %q", got, want)
		}
		if p.Header.Get("Referrer-Policy") != "no-referrer" || p.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("consume headers: %v", p.Header)
		}
		cookie := p.Header.Get("Set-Cookie")
		for _, want := range []string{"lectern-learn-" + itoa(e.Domain.ID) + "=", "HttpOnly", "SameSite=Lax", "Path=/"} {
			if !strings.Contains(cookie, want) {
				t.Errorf("Set-Cookie %q lacks %q", cookie, want)
			}
		}
		// return_to named a course that does not exist: the portal's home shows who is signed in.
		home := get(t, b, portalURL(e, e.Domain)+"/")
		if home.Status != 200 || !strings.Contains(home.Body, "ann@example.com") {
			t.Fatalf("after sign-in: %d %s", home.Status, home.Body)
		}
		// The same link again: the generic page, and no new session.
		again := get(t, browser(t), u)
		if again.Status != http.StatusGone || !strings.Contains(again.Body, "used or has expired") {
			t.Fatalf("reuse: %d %s", again.Status, again.Body)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// signIn follows a login link in b and returns the page it lands on.
func signIn(t *testing.T, e *Env, b *http.Client, u string) page {
	t.Helper()
	p := get(t, b, u)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("consume %s: %d %s", u, p.Status, p.Body)
	}
	return get(t, b, e.URL+p.Header.Get("Location"))
}

func signedIn(t *testing.T, e *Env, b *http.Client, d Domain) bool {
	t.Helper()
	p := get(t, b, portalURL(e, d)+"/")
	switch p.Status {
	case 200:
		return true
	case http.StatusUnauthorized:
		if p.Header.Get("Location") != "" {
			t.Errorf("the sign-in page redirects to %s", p.Header.Get("Location"))
		}
		return false
	}
	t.Fatalf("home: %d %s", p.Status, p.Body)
	return false
}

func TestLoginLinkExpiresOnTheServerClock(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		start := time.Date(2030, 3, 4, 10, 0, 0, 0, time.UTC)
		e.Clock.Set(start)
		u := link(t, e, map[string]any{"email": "ann@example.com", "ttl": 30})
		e.Clock.Set(start.Add(30 * time.Second))
		if p := get(t, browser(t), u); p.Status != http.StatusGone || !strings.Contains(p.Body, "used or has expired") {
			t.Fatalf("at expiry: %d %s", p.Status, p.Body)
		}
		u = link(t, e, map[string]any{"email": "ann@example.com", "ttl": 30})
		e.Clock.Set(start.Add(59 * time.Second))
		if p := get(t, browser(t), u); p.Status != http.StatusSeeOther {
			t.Fatalf("a second before expiry: %d %s", p.Status, p.Body)
		}
	})
}

// TestLoginLinkOfAnotherDomainRefused: domain A's link on domain B's
// portal is the generic refusal, and stays usable on A's.
func TestLoginLinkOfAnotherDomainRefused(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		u := link(t, e, map[string]any{"email": "ann@example.com"})
		onB := strings.Replace(u, "/"+itoa(e.Domain.ID)+"/learn/", "/"+itoa(e.Other.ID)+"/learn/", 1)
		b := browser(t)
		if p := get(t, b, onB); p.Status != http.StatusGone {
			t.Fatalf("A's link on B's portal: %d %s", p.Status, p.Body)
		}
		if signedIn(t, e, b, e.Other) {
			t.Fatal("signed in to B with A's link")
		}
		if home := signIn(t, e, b, u); home.Status != 200 {
			t.Fatalf("A's link on A's portal after the refusal: %d", home.Status)
		}
		// A's session cookie does not open B's portal.
		if signedIn(t, e, b, e.Other) {
			t.Fatal("A's session opens B's portal")
		}
		if get(t, b, e.URL+"/999999/learn/").Status != http.StatusNotFound {
			t.Error("unknown domain's portal is not 404")
		}
	})
}

func TestSessionEndsByAPILogoutAndUserDelete(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		newUser(t, e, "bob@example.com")
		ann1, ann2, bob := browser(t), browser(t), browser(t)
		signIn(t, e, ann1, link(t, e, map[string]any{"email": "ann@example.com"}))
		signIn(t, e, ann2, link(t, e, map[string]any{"email": "ann@example.com"}))
		signIn(t, e, bob, link(t, e, map[string]any{"email": "bob@example.com"}))
		r := e.LMS("POST", "/users/logout", map[string]any{"email": "ann@example.com"})
		if r.Status != 200 || Int(t, r.JSON(t), "data.sessions_ended") != 2 {
			t.Fatalf("logout: %d %s", r.Status, r.Body)
		}
		if signedIn(t, e, ann1, e.Domain) || signedIn(t, e, ann2, e.Domain) {
			t.Error("ann still signed in after logout through the API")
		}
		if !signedIn(t, e, bob, e.Domain) {
			t.Error("bob signed out by ann's logout")
		}
		if r := e.LMS("DELETE", "/users/delete", map[string]any{"email": "bob@example.com"}); r.Status != 200 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if signedIn(t, e, bob, e.Domain) {
			t.Error("deleted user still signed in")
		}
	})
}

func TestSessionIdleAndAbsoluteEnd(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		start := time.Date(2030, 3, 4, 10, 0, 0, 0, time.UTC)
		e.Clock.Set(start)
		idle := browser(t)
		signIn(t, e, idle, link(t, e, map[string]any{"email": "ann@example.com"}))
		busy := browser(t)
		signIn(t, e, busy, link(t, e, map[string]any{"email": "ann@example.com"}))
		// busy comes back every 6 days; idle does not.
		for day := 6; day <= 30; day += 6 {
			e.Clock.Set(start.Add(time.Duration(day) * 24 * time.Hour).Add(-time.Minute))
			if !signedIn(t, e, busy, e.Domain) {
				t.Fatalf("busy session ended on day %d", day)
			}
		}
		if signedIn(t, e, idle, e.Domain) {
			t.Error("idle session still open after 30 days")
		}
		e.Clock.Set(start.Add(30 * 24 * time.Hour))
		if signedIn(t, e, busy, e.Domain) {
			t.Error("session open 30 days after sign-in")
		}
		e.Clock.Set(start)
		idle2 := browser(t)
		signIn(t, e, idle2, link(t, e, map[string]any{"email": "ann@example.com"}))
		e.Clock.Set(start.Add(7*24*time.Hour - time.Minute))
		if !signedIn(t, e, idle2, e.Domain) {
			t.Error("session ended before 7 idle days")
		}
		e.Clock.Set(start.Add(14*24*time.Hour - time.Minute))
		if signedIn(t, e, idle2, e.Domain) {
			t.Error("session open after 7 idle days")
		}
	})
}

// csrf is the CSRF token of the session cookie in b for d (as portal
// pages embed it).
func csrf(t *testing.T, e *Env, b *http.Client, d Domain) string {
	t.Helper()
	u, _ := url.Parse(e.URL + "/")
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == "lectern-learn-"+itoa(d.ID) {
			sum := sha256.Sum256([]byte("lectern-learn-csrf-v1\n" + c.Value))
			return hex.EncodeToString(sum[:16])
		}
	}
	t.Fatal("no session cookie")
	return ""
}

func TestPortalLogoutChecksCSRF(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		b := browser(t)
		signIn(t, e, b, link(t, e, map[string]any{"email": "ann@example.com"}))
		out := portalURL(e, e.Domain) + "/logout"
		token := csrf(t, e, b, e.Domain)
		if p := fetch(t, b, "POST", out, url.Values{}, nil); p.Status != http.StatusForbidden {
			t.Errorf("logout without token: %d", p.Status)
		}
		if p := fetch(t, b, "POST", out, url.Values{"csrf": {"x" + token[1:]}}, nil); p.Status != http.StatusForbidden {
			t.Errorf("logout with a wrong token: %d", p.Status)
		}
		if p := fetch(t, b, "POST", out, url.Values{"csrf": {token}}, map[string]string{"Origin": "https://evil.example"}); p.Status != http.StatusForbidden {
			t.Errorf("logout from another origin: %d", p.Status)
		}
		if !signedIn(t, e, b, e.Domain) {
			t.Fatal("refused logouts ended the session")
		}
		p := fetch(t, b, "POST", out, url.Values{"csrf": {token}}, map[string]string{"Origin": "null"}) // as under Referrer-Policy: no-referrer
		if p.Status != 200 || !strings.Contains(p.Body, "signed out") || !strings.Contains(p.Header.Get("Set-Cookie"), "Max-Age=0") {
			t.Fatalf("logout: %d %v %s", p.Status, p.Header, p.Body)
		}
		if signedIn(t, e, b, e.Domain) {
			t.Fatal("signed in after logout")
		}
	})
}

// TestCrossSiteFrameKeepsTheLink: in a cross-site iframe the link is not
// spent; the page offers it in a new tab, where it still works.
func TestCrossSiteFrameKeepsTheLink(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		u := link(t, e, map[string]any{"email": "ann@example.com"})
		b := browser(t)
		p := fetch(t, b, "GET", u, nil, map[string]string{"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "cross-site"})
		if p.Status != 200 || !strings.Contains(p.Body, `target="_blank"`) || p.Header.Get("Set-Cookie") != "" {
			t.Fatalf("cross-site frame: %d %v %s", p.Status, p.Header, p.Body)
		}
		home := fetch(t, b, "GET", portalURL(e, e.Domain)+"/courses/1", nil, map[string]string{"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "cross-site"})
		if home.Status != http.StatusUnauthorized || !strings.Contains(home.Body, "Open in a new tab") || home.Header.Get("Location") != "" {
			t.Fatalf("portal page in a frame without session: %d %s", home.Status, home.Body)
		}
		if signIn(t, e, b, u).Status != 200 {
			t.Fatal("the link did not work in the new tab")
		}
	})
}

// TestOwnHost: with a host set, login links use it and the portal answers
// at / there.
func TestOwnHost(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		if err := e.Store.SetLearnHost(context.Background(), e.Domain.ID, "learn.school.test"); err != nil {
			t.Fatal(err)
		}
		port := e.URL[strings.LastIndex(e.URL, ":")+1:]
		u := link(t, e, map[string]any{"email": "ann@example.com", "return_to": "/courses/7"})
		if want := "http://learn.school.test:" + port + "/sso/consume?t="; !strings.HasPrefix(u, want) {
			t.Fatalf("link %s, want %s...", u, want)
		}
		// Reach the loopback server under the portal's host name.
		pu, _ := url.Parse(u)
		host := pu.Host
		pu.Host = "127.0.0.1:" + port
		b := browser(t)
		req := func(method, u string) page {
			r, _ := http.NewRequest(method, u, nil)
			r.Host = host
			resp, err := b.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return page{resp.StatusCode, resp.Header, string(body)}
		}
		p := req("GET", pu.String())
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/courses/7" {
			t.Fatalf("consume on own host: %d %q", p.Status, p.Header.Get("Location"))
		}
		if home := req("GET", "http://127.0.0.1:"+port+"/"); home.Status != 200 || !strings.Contains(home.Body, "ann@example.com") {
			t.Fatalf("portal on own host: %d %s", home.Status, home.Body)
		}
		// The API and health checks still answer on that host.
		if h := req("GET", "http://127.0.0.1:"+port+"/healthz"); h.Status != 200 || !strings.Contains(h.Body, "ok") {
			t.Errorf("healthz on own host: %d %s", h.Status, h.Body)
		}
		// An unknown host is not a portal.
		r, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/sso/consume?t=x", nil)
		r.Host = "other.school.test"
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("consume on an unknown host: %d", resp.StatusCode)
		}
	})
}

// TestSecureCookie: with an https public URL the session cookie is
// __Host- prefixed and Secure (the test reaches the server over plain
// HTTP on its address, as a TLS-ending proxy would).
func TestSecureCookie(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		e.URL = "http://" + e.Main.Addr()
		newUser(t, e, "ann@example.com")
		u := link(t, e, map[string]any{"email": "ann@example.com"})
		prefix := "https://lectern.example.test/" + itoa(e.Domain.ID) + "/learn/sso/consume?t="
		if !strings.HasPrefix(u, prefix) {
			t.Fatalf("link %s, want %s...", u, prefix)
		}
		p := get(t, browser(t), portalURL(e, e.Domain)+"/sso/consume?t="+strings.TrimPrefix(u, prefix))
		cookie := p.Header.Get("Set-Cookie")
		for _, want := range []string{"__Host-lectern-learn-" + itoa(e.Domain.ID) + "=", "Path=/", "Secure", "HttpOnly", "SameSite=Lax"} {
			if !strings.Contains(cookie, want) {
				t.Errorf("Set-Cookie %q lacks %q", cookie, want)
			}
		}
		if strings.Contains(cookie, "Domain=") {
			t.Errorf("a __Host- cookie must not have a Domain: %q", cookie)
		}
	}, func(c *config.Config) { c.PublicURL = "https://lectern.example.test" })
}

// TestCSRFHeader: JSON writes may send the token as X-CSRF-Token.
func TestCSRFHeader(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		b := browser(t)
		signIn(t, e, b, link(t, e, map[string]any{"email": "ann@example.com"}))
		p := fetch(t, b, "POST", portalURL(e, e.Domain)+"/logout", nil, map[string]string{"X-CSRF-Token": csrf(t, e, b, e.Domain)})
		if p.Status != 200 || signedIn(t, e, b, e.Domain) {
			t.Fatalf("logout with the header: %d", p.Status)
		}
	})
}
