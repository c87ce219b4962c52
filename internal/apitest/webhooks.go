package apitest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/config"
)

// Receiver is a webhook endpoint on loopback that records what it gets
// and answers with a settable status (200 until SetStatus).
type Receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status int
	got    []Delivery
}

// Delivery is one request a Receiver got.
type Delivery struct {
	Header http.Header
	Body   []byte
}

// NewReceiver starts a Receiver, closed when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	rc := &Receiver{status: 200}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, Delivery{r.Header.Clone(), body})
		status := rc.status
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// URL is the receiver's base URL (http://127.0.0.1:port).
func (rc *Receiver) URL() string { return rc.srv.URL }

// SetStatus sets the status of the following answers.
func (rc *Receiver) SetStatus(s int) {
	rc.mu.Lock()
	rc.status = s
	rc.mu.Unlock()
}

// Deliveries returns what the receiver got so far, oldest first.
func (rc *Receiver) Deliveries() []Delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Delivery(nil), rc.got...)
}

// Count is the number of deliveries so far.
func (rc *Receiver) Count() int { return len(rc.Deliveries()) }

// VerifyWebhook checks a delivery as a receiver following the Standard
// Webhooks specification would, written apart from the server's signing
// code: the key is the base64 after whsec_, the signed content
// id.timestamp.body, and webhook-signature holds space-separated
// v1,<base64> entries, of which one must match secret.
func VerifyWebhook(secret string, d Delivery) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts := d.Header.Get("Webhook-Id"), d.Header.Get("Webhook-Timestamp")
	if id == "" || ts == "" {
		return errors.New("missing webhook-id or webhook-timestamp")
	}
	if _, err := strconv.ParseInt(ts, 10, 64); err != nil {
		return errors.New("webhook-timestamp is not Unix seconds")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(d.Body)))
	want := mac.Sum(nil)
	for _, s := range strings.Fields(d.Header.Get("Webhook-Signature")) {
		version, sig, _ := strings.Cut(s, ",")
		got, err := base64.StdEncoding.DecodeString(sig)
		if version == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no matching v1 signature")
}

// WebhookPayload decodes a delivery's body (numbers as json.Number).
func WebhookPayload(t testing.TB, d Delivery) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(d.Body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("delivery body is not JSON: %s", d.Body)
	}
	return m
}

// AllowPrivateWebhooks lets the server deliver to loopback receivers
// (--webhook-allow-private).
func AllowPrivateWebhooks(c *config.Config) { c.WebhookAllowPrivate = true }

// FutureTime is a whole second an hour or more ahead of real time, for
// tests that drive the clock by hand. The server's webhook worker runs
// from the start on real time: a pass that read the clock before the test
// set it, and claims late, must find nothing due yet (with a clock set
// into the past it would deliver the test's message a second time).
func FutureTime() time.Time { return time.Now().UTC().Add(time.Hour).Truncate(time.Second) }

// WaitForWebhooks runs the webhook worker until cond holds (the server's
// own worker runs too; either may deliver), and fails the test after 20
// seconds with the server's webhook log lines.
func (e *Env) WaitForWebhooks(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; the server logged:\n%s", what, e.webhookLog())
		}
		if _, err := e.Main.Webhooks.RunOnce(context.Background()); err != nil {
			t.Fatalf("webhook worker: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// webhookLog returns the server's log lines about webhooks.
func (e *Env) webhookLog() string {
	if e.Logs == nil {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(e.Logs.String(), "\n") {
		if strings.Contains(strings.ToLower(l), "webhook") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// Hook registers a webhook endpoint of the Env's domain for url and
// events through the API and returns its id and signing secret.
func (e *Env) Hook(t testing.TB, url string, events ...string) (int64, string) {
	t.Helper()
	r := e.LMS("POST", "/webhooks/create", map[string]any{"url": url, "events": events})
	if r.Status != 200 {
		t.Fatalf("create webhook: %d %s", r.Status, r.Body)
	}
	body := r.JSON(t)
	return Int(t, body, "data.id"), Str(t, body, "data.secret")
}

// Delivered waits until rc got a delivery of each of types, checks that
// each verifies under secret, and returns the payloads by type (the last
// of each type).
func (e *Env) Delivered(t testing.TB, rc *Receiver, secret string, types ...string) map[string]map[string]any {
	t.Helper()
	got := map[string]map[string]any{}
	e.WaitForWebhooks(t, strings.Join(types, ", "), func() bool {
		for _, d := range rc.Deliveries() {
			var p struct{ Type string }
			json.Unmarshal(d.Body, &p)
			got[p.Type] = nil
		}
		for _, typ := range types {
			if _, ok := got[typ]; !ok {
				return false
			}
		}
		return true
	})
	for _, d := range rc.Deliveries() {
		if err := VerifyWebhook(secret, d); err != nil {
			t.Errorf("delivery %s: %v", d.Body, err)
		}
		p := WebhookPayload(t, d)
		if p["id"] != d.Header.Get("Webhook-Id") {
			t.Errorf("payload id %v, webhook-id %s", p["id"], d.Header.Get("Webhook-Id"))
		}
		got[Str(t, p, "type")] = p
	}
	return got
}
