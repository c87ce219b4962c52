package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/server"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs a server with cfg adjusted by adjust, logging at debug level
// into the returned buffer.
func start(t *testing.T, adjust func(*config.Config)) (*server.Main, *lockedBuffer) {
	t.Helper()
	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.RTCUDPPort, cfg.TURNPort = 0, 0
	if adjust != nil {
		adjust(&cfg)
	}
	logs := &lockedBuffer{}
	m := &server.Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	ctx, cancel := context.WithCancel(context.Background())
	if err := m.Open(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		m.Close()
	})
	return m, logs
}

func post(t *testing.T, u string, header map[string]string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", u, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func status(t *testing.T, u string) int {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestSignInTokensNeverLogged: login-link tokens and JWTs, used or
// refused, never reach the log; the request lines are there, path only.
func TestSignInTokensNeverLogged(t *testing.T) {
	m, logs := start(t, nil)
	ctx := context.Background()
	d, keys, _ := m.Store.CreateDomain(ctx, "A")
	m.Store.CreateUser(ctx, d.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
	auth := map[string]string{"Authorization": keys.LMS, "x-domain-id": strconv.FormatInt(d.ID, 10)}
	code, body := post(t, m.BaseURL()+"/api/v1/users/loginLink", auth, map[string]any{"email": "ann@example.com"})
	if code != 200 {
		t.Fatalf("loginLink: %d %v", code, body)
	}
	link := body["data"].(map[string]any)["url"].(string)
	token := link[strings.Index(link, "t=")+2:]
	if s := status(t, link); s != http.StatusSeeOther {
		t.Fatalf("consume: %d", s)
	}
	if s := status(t, link); s != http.StatusGone {
		t.Fatalf("reuse: %d", s)
	}
	key, _ := m.Store.RotateSSOKey(ctx, d.ID, m.Secret, 0, time.Now())
	portal := m.BaseURL() + "/" + strconv.FormatInt(d.ID, 10) + "/learn"
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"email": "ann@example.com", "aud": portal,
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Minute).Unix(), "jti": "never-logged-jti"})
	signed, _ := tok.SignedString([]byte(key.Secret))
	jwtURL := portal + "/sso/jwt?jwt=" + url.QueryEscape(signed)
	if s := status(t, jwtURL); s != http.StatusSeeOther {
		t.Fatalf("jwt: %d", s)
	}
	if s := status(t, jwtURL); s != http.StatusUnauthorized {
		t.Fatalf("jwt reuse: %d", s)
	}
	time.Sleep(50 * time.Millisecond) // the request log line is written after the response
	out := logs.String()
	if !strings.Contains(out, "path=/"+strconv.FormatInt(d.ID, 10)+"/learn/sso/consume") || !strings.Contains(out, "/sso/jwt") {
		t.Fatalf("request lines missing from the log:\n%s", out)
	}
	for _, secret := range []string{token, signed, signed[strings.LastIndex(signed, ".")+1:], key.Secret, "never-logged-jti"} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains %q:\n%s", secret, out)
		}
	}
}

// TestTestClock: off by default; with --test-clock, POST /_test/clock
// moves the clock every part of the server reads, and "" resets it.
func TestTestClock(t *testing.T) {
	m, _ := start(t, nil)
	if code, _ := post(t, m.BaseURL()+"/_test/clock", nil, map[string]any{"now": "2031-01-01T00:00:00Z"}); code == 200 {
		t.Fatal("/_test/clock answers without --test-clock")
	}

	m, _ = start(t, func(c *config.Config) { c.TestClock = true })
	ctx := context.Background()
	d, keys, _ := m.Store.CreateDomain(ctx, "A")
	m.Store.CreateUser(ctx, d.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
	auth := map[string]string{"Authorization": keys.LMS, "x-domain-id": strconv.FormatInt(d.ID, 10)}
	_, body := post(t, m.BaseURL()+"/api/v1/users/loginLink", auth, map[string]any{"email": "ann@example.com", "ttl": 60})
	link := body["data"].(map[string]any)["url"].(string)
	later := time.Now().Add(2 * time.Minute).UTC().Format(time.RFC3339)
	code, out := post(t, m.BaseURL()+"/_test/clock", nil, map[string]any{"now": later})
	if code != 200 || !strings.HasPrefix(out["now"].(string), later[:16]) {
		t.Fatalf("set clock: %d %v", code, out)
	}
	if s := status(t, link); s != http.StatusGone {
		t.Errorf("link after the clock moved past its expiry: %d", s)
	}
	if code, _ := post(t, m.BaseURL()+"/_test/clock", nil, map[string]any{"now": "tomorrow"}); code != 400 {
		t.Errorf("bad time: %d", code)
	}
	if code, _ := post(t, m.BaseURL()+"/_test/clock", nil, map[string]any{"now": ""}); code != 200 {
		t.Errorf("reset: %d", code)
	}
	_, body = post(t, m.BaseURL()+"/api/v1/users/loginLink", auth, map[string]any{"email": "ann@example.com"})
	if s := status(t, body["data"].(map[string]any)["url"].(string)); s != http.StatusSeeOther {
		t.Errorf("link after the reset: %d", s)
	}
}

func TestTestClockNeedsLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:8080": true, "0.0.0.0:8080": false, ":8080": false, "10.0.0.5:8080": false} {
		c := config.Default()
		c.Addr, c.TestClock = addr, true
		if err := c.Check(); (err == nil) != ok {
			t.Errorf("--test-clock on %s: %v", addr, err)
		}
	}
}
