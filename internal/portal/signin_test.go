package portal_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
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
		home := get(t, b, e.URL+p.Header.Get("Location"))
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
