package lmsapi_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/server"
	"github.com/lectern-lms/lectern/internal/webhook"
)

// flag reads the boolean at path.
func flag(t *testing.T, body any, path string) bool {
	t.Helper()
	v, ok := Lookup(body, path)
	b, isBool := v.(bool)
	if !ok || !isBool {
		t.Fatalf("%s: %v is not a boolean", path, v)
	}
	return b
}

// deliveryLog returns the endpoint's delivery log, newest first.
func deliveryLog(t *testing.T, e *Env, id int64) any {
	t.Helper()
	r := e.LMS("POST", "/webhooks/deliveries/"+itoa(id), nil)
	if r.Status != 200 {
		t.Fatalf("deliveries: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)
}

func TestWebhookRegistration(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		id, secret := e.Hook(t, "https://hooks.example.com/lectern", "user.created", "course.deleted")
		if !strings.HasPrefix(secret, "whsec_") {
			t.Errorf("secret %q lacks whsec_", secret)
		}
		path := "/webhooks/get/" + itoa(id)
		e.Scenarios(t, []Scenario{
			{Name: "create with comma-separated events", Request: api("POST", "/webhooks/create",
				map[string]any{"url": "http://hooks.example.com/x", "events": "badge.awarded, payment.refunded", "description": "CRM"}),
				Status: 200, Want: map[string]any{"data.events.#": 2, "data.events.0": "badge.awarded", "data.enabled": true, "data.description": "CRM"}},
			{Name: "bad URL", Request: api("POST", "/webhooks/create", map[string]any{"url": "not a url", "events": []string{"user.created"}}),
				Status: 400, Fields: []string{"url"}},
			{Name: "not http", Request: api("POST", "/webhooks/create", map[string]any{"url": "ftp://example.com/x", "events": []string{"user.created"}}),
				Status: 400, Fields: []string{"url"}},
			{Name: "user info in URL", Request: api("POST", "/webhooks/create", map[string]any{"url": "https://u:p@example.com/x", "events": []string{"user.created"}}),
				Status: 400, Fields: []string{"url"}},
			{Name: "missing URL and events", Request: api("POST", "/webhooks/create", nil), Status: 400, Fields: []string{"url", "events"}},
			{Name: "unknown event type", Request: api("POST", "/webhooks/create", map[string]any{"url": "https://example.com/x", "events": []string{"user.created", "user.exploded"}}),
				Status: 400, Fields: []string{"events"}, Check: func(t *testing.T, r *Response) {
					if !strings.Contains(string(r.Body), "user.exploded") {
						t.Errorf("the error does not name the unknown type: %s", r.Body)
					}
				}},
			{Name: "events not an array of strings", Request: api("POST", "/webhooks/create", map[string]any{"url": "https://example.com/x", "events": []any{1}}),
				Status: 400, Fields: []string{"events"}},
			{Name: "loopback literal refused", Request: api("POST", "/webhooks/create", map[string]any{"url": "http://127.0.0.1:9/x", "events": "user.created"}),
				Status: 400, Fields: []string{"url"}},
			{Name: "IPv6 loopback refused", Request: api("POST", "/webhooks/create", map[string]any{"url": "http://[::1]/x", "events": "user.created"}),
				Status: 400, Fields: []string{"url"}},
			{Name: "metadata address refused", Request: api("POST", "/webhooks/create", map[string]any{"url": "http://169.254.169.254/latest", "events": "user.created"}),
				Status: 400, Fields: []string{"url"}},
			{Name: "private address refused", Request: api("POST", "/webhooks/create", map[string]any{"url": "https://10.0.0.8/x", "events": "user.created"}),
				Status: 400, Fields: []string{"url"}},
			{Name: "get carries the secret", Request: api("GET", path, nil), Status: 200,
				Want: map[string]any{"data.id": id, "data.url": "https://hooks.example.com/lectern", "data.secret": secret, "data.events.1": "course.deleted"}},
			{Name: "list hides secrets", Request: api("POST", "/webhooks/list", nil), Status: 200,
				Want: map[string]any{"total": 2, "data.0.id": id, "data.0.secret": Absent}},
			{Name: "update events", Request: api("PUT", "/webhooks/update/"+itoa(id), map[string]any{"events": []string{"class.started"}}), Status: 200,
				Want: map[string]any{"data.events.#": 1, "data.events.0": "class.started", "data.url": "https://hooks.example.com/lectern"}},
			{Name: "update with an unknown type", Request: api("PUT", "/webhooks/update/"+itoa(id), map[string]any{"events": "nope"}), Status: 400, Fields: []string{"events"}},
			{Name: "update with a bad URL", Request: api("PUT", "/webhooks/update/"+itoa(id), map[string]any{"url": "mailto:a@b.c"}), Status: 400, Fields: []string{"url"}},
			{Name: "page size checked", Request: api("POST", "/webhooks/list", map[string]any{"limit": 501}), Status: 400, Fields: []string{"limit"}},
			{Name: "replay since checked", Request: api("POST", "/webhooks/replay/"+itoa(id), map[string]any{"since": "yesterday"}), Status: 400, Fields: []string{"since"}},
			{Name: "bad id: get", Request: api("GET", "/webhooks/get/x", nil), Status: 400, Fields: []string{"webhook_id"}},
			{Name: "bad id: update", Request: api("PUT", "/webhooks/update/0", map[string]any{"description": "x"}), Status: 400, Fields: []string{"webhook_id"}},
			{Name: "bad id: delete", Request: api("DELETE", "/webhooks/delete/-1", nil), Status: 400, Fields: []string{"webhook_id"}},
			{Name: "bad id: test", Request: api("POST", "/webhooks/test/x", nil), Status: 400, Fields: []string{"webhook_id"}},
			{Name: "bad id: deliveries", Request: api("POST", "/webhooks/deliveries/x", nil), Status: 400, Fields: []string{"webhook_id"}},
			{Name: "bad id: enable", Request: api("POST", "/webhooks/enable/x", nil), Status: 400, Fields: []string{"webhook_id"}},
			{Name: "bad id: replay", Request: api("POST", "/webhooks/replay/x", nil), Status: 400, Fields: []string{"webhook_id"}},
			{Name: "description too long", Request: api("PUT", "/webhooks/update/"+itoa(id), map[string]any{"description": strings.Repeat("d", 300)}),
				Status: 400, Fields: []string{"description"}},
			{Name: "empty URL", Request: api("PUT", "/webhooks/update/"+itoa(id), map[string]any{"url": ""}), Status: 400, Fields: []string{"url"}},
			{Name: "wrong method", Request: api("GET", "/webhooks/create", nil), Status: 405},
			{Name: "no auth", Request: Request{Method: "POST", Path: "/api/v1/webhooks/list", NoAuth: true}, Status: 401},
			{Name: "other domain: list", Request: other(e, "POST", "/webhooks/list", nil), Status: 200, Want: map[string]any{"total": 0}},
			{Name: "other domain: get", Request: other(e, "GET", path, nil), Status: 404},
			{Name: "other domain: update", Request: other(e, "PUT", "/webhooks/update/"+itoa(id), map[string]any{"url": "https://evil.example.com/"}), Status: 404},
			{Name: "other domain: test", Request: other(e, "POST", "/webhooks/test/"+itoa(id), nil), Status: 404},
			{Name: "other domain: deliveries", Request: other(e, "POST", "/webhooks/deliveries/"+itoa(id), nil), Status: 404},
			{Name: "other domain: enable", Request: other(e, "POST", "/webhooks/enable/"+itoa(id), nil), Status: 404},
			{Name: "other domain: rotate", Request: other(e, "POST", "/webhooks/rotate/"+itoa(id), nil), Status: 404},
			{Name: "other domain: replay", Request: other(e, "POST", "/webhooks/replay/"+itoa(id), nil), Status: 404},
			{Name: "other domain: delete", Request: other(e, "DELETE", "/webhooks/delete/"+itoa(id), nil), Status: 404},
			{Name: "URL unchanged by the other domain", Request: api("GET", path, nil), Status: 200,
				Want: map[string]any{"data.url": "https://hooks.example.com/lectern"}},
			{Name: "delete", Request: api("DELETE", "/webhooks/delete/"+itoa(id), nil), Status: 200},
			{Name: "gone", Request: api("GET", path, nil), Status: 404},
			{Name: "delete again", Request: api("DELETE", "/webhooks/delete/"+itoa(id), nil), Status: 404},
		})
	})
}

// Creating and deleting a user through the API delivers user.created and
// user.deleted, signed, to the domain's endpoint only.
func TestWebhookUserEventsDelivered(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		rc := NewReceiver(t)
		id, secret := e.Hook(t, rc.URL()+"/hook", "user.created", "user.deleted")
		otherRC := NewReceiver(t)
		r := e.Do(other(e, "POST", "/webhooks/create", map[string]any{"url": otherRC.URL(), "events": "user.created"}))
		if r.Status != 200 {
			t.Fatalf("other domain's webhook: %d %s", r.Status, r.Body)
		}

		uid := user(t, e, "ann@example.com")
		e.WaitForWebhooks(t, "user.created", func() bool { return rc.Count() >= 1 })
		d := rc.Deliveries()[0]
		if err := VerifyWebhook(secret, d); err != nil {
			t.Fatalf("signature: %v (headers %v)", err, d.Header)
		}
		p := WebhookPayload(t, d)
		if p["type"] != "user.created" || p["id"] != d.Header.Get("Webhook-Id") || !strings.HasPrefix(d.Header.Get("Webhook-Id"), "evt_") {
			t.Errorf("payload %s with webhook-id %s", d.Body, d.Header.Get("Webhook-Id"))
		}
		if Int(t, p, "data.id") != uid || Str(t, p, "data.email") != "ann@example.com" || Int(t, p, "domain_id") != e.Domain.ID {
			t.Errorf("payload data %s", d.Body)
		}
		if err := VerifyWebhook("whsec_"+base64.StdEncoding.EncodeToString([]byte("a different secret, 32 bytes...")), d); err == nil {
			t.Error("the delivery verifies under a wrong secret")
		}

		if r := e.LMS("DELETE", "/users/delete", map[string]any{"email": "ann@example.com"}); r.Status != 200 {
			t.Fatalf("delete user: %d %s", r.Status, r.Body)
		}
		e.WaitForWebhooks(t, "user.deleted", func() bool { return rc.Count() >= 2 })
		d = rc.Deliveries()[1]
		if err := VerifyWebhook(secret, d); err != nil {
			t.Fatalf("signature: %v", err)
		}
		if p := WebhookPayload(t, d); p["type"] != "user.deleted" || Int(t, p, "data.id") != uid {
			t.Errorf("second delivery %s", d.Body)
		}

		log := deliveryLog(t, e, id)
		if Int(t, log, "total") != 2 {
			t.Fatalf("log: %v", log)
		}
		for _, k := range []string{"0", "1"} {
			l, _ := Lookup(log, "data."+k)
			if !flag(t, l, "success") || Int(t, l, "status") != 200 || Int(t, l, "response_ms") < 0 || Int(t, l, "attempt") != 1 {
				t.Errorf("log line %s: %v", k, l)
			}
		}
		if got := Str(t, log, "data.0.event_type"); got != "user.deleted" {
			t.Errorf("newest line is %s", got)
		}
		if otherRC.Count() != 0 {
			t.Errorf("another domain's endpoint got %d deliveries of this domain's events", otherRC.Count())
		}
		if strings.Contains(e.Logs.String(), secret) {
			t.Error("the signing secret was logged")
		}
	}, AllowPrivateWebhooks)
}

// A failing receiver is retried with exponential back-off on the
// server's clock, with the same event id, until it answers 2xx.
func TestWebhookRetryBackoff(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		t0 := FutureTime()
		e.Clock.Set(t0)
		rc := NewReceiver(t)
		rc.SetStatus(503)
		id, secret := e.Hook(t, rc.URL(), "user.created")
		user(t, e, "bob@example.com")
		e.WaitForWebhooks(t, "first attempt", func() bool { return rc.Count() == 1 })

		at := t0
		for n := 1; n <= 3; n++ {
			next := at.Add(webhook.Backoff(n))
			e.Clock.Set(next.Add(-time.Second))
			if k, err := e.Main.Webhooks.RunOnce(context.Background()); err != nil || k != 0 {
				t.Fatalf("a second before retry %d: attempted %d (%v)", n+1, k, err)
			}
			if rc.Count() != n {
				t.Fatalf("a second before retry %d the receiver has %d deliveries", n+1, rc.Count())
			}
			if n == 3 {
				rc.SetStatus(204)
			}
			e.Clock.Set(next)
			e.WaitForWebhooks(t, "retry "+strconv.Itoa(n+1), func() bool { return rc.Count() == n+1 })
			at = next
		}
		ds := rc.Deliveries()
		for i, d := range ds {
			if err := VerifyWebhook(secret, d); err != nil {
				t.Errorf("attempt %d: %v", i+1, err)
			}
			if d.Header.Get("Webhook-Id") != ds[0].Header.Get("Webhook-Id") {
				t.Errorf("attempt %d has webhook-id %s, the first %s", i+1, d.Header.Get("Webhook-Id"), ds[0].Header.Get("Webhook-Id"))
			}
		}
		if ts := ds[3].Header.Get("Webhook-Timestamp"); ts != strconv.FormatInt(at.Unix(), 10) {
			t.Errorf("last attempt's timestamp %s, want the clock's %d", ts, at.Unix())
		}
		log := deliveryLog(t, e, id)
		if Int(t, log, "total") != 4 || !flag(t, log, "data.0.success") || Int(t, log, "data.0.attempt") != 4 ||
			Int(t, log, "data.1.status") != 503 || flag(t, log, "data.1.success") {
			t.Errorf("log %v", log)
		}
		// Delivered: nothing more, however late.
		e.Clock.Set(t0.Add(48 * time.Hour))
		if k, _ := e.Main.Webhooks.RunOnce(context.Background()); k != 0 || rc.Count() != 4 {
			t.Errorf("after delivery: attempted %d, receiver has %d", k, rc.Count())
		}
		m := e.Do(Request{Method: "GET", Path: "/metrics", NoAuth: true})
		if !strings.Contains(string(m.Body), `lectern_webhook_delivery_failures_total{reason="status_5xx"} 3`) {
			t.Errorf("metrics lack the three 5xx failures")
		}
	}, AllowPrivateWebhooks)
}

// An endpoint that fails every attempt for a day is disabled; enabling
// it and replaying delivers the event that gave up.
func TestWebhookDisableEnableReplay(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		t0 := FutureTime()
		e.Clock.Set(t0)
		rc := NewReceiver(t)
		rc.SetStatus(500)
		id, secret := e.Hook(t, rc.URL(), "user.created")
		user(t, e, "cy@example.com")
		end := t0.Add(webhook.RetryFor)
		at := t0
		for n := 1; ; n++ {
			e.Clock.Set(at)
			e.WaitForWebhooks(t, "attempt "+strconv.Itoa(n), func() bool { return rc.Count() == n })
			if at.Equal(end) {
				break
			}
			if at = at.Add(webhook.Backoff(n)); at.After(end) {
				at = end
			}
			if n > 50 {
				t.Fatal("no end to the retries")
			}
		}
		get := func() any { return e.LMS("GET", "/webhooks/get/"+itoa(id), nil).JSON(t) }
		e.WaitForWebhooks(t, "the endpoint disabled", func() bool { return !flag(t, get(), "data.enabled") })
		ep := get()
		if Str(t, ep, "data.disabled_reason") == "" || Str(t, ep, "data.disabled_at") != end.Format(time.RFC3339) {
			t.Errorf("disabled endpoint %v", ep)
		}
		attempts := rc.Count()
		t.Logf("%d attempts in %s", attempts, webhook.RetryFor)

		// Disabled: nothing is queued or sent.
		user(t, e, "dee@example.com")
		e.Clock.Set(end.Add(time.Hour))
		e.Main.Webhooks.RunOnce(context.Background())
		if rc.Count() != attempts {
			t.Fatalf("a disabled endpoint got a delivery")
		}

		if r := e.LMS("POST", "/webhooks/enable/"+itoa(id), nil); r.Status != 200 || !flag(t, r.JSON(t), "data.enabled") {
			t.Fatalf("enable: %d %s", r.Status, r.Body)
		}
		rc.SetStatus(200)
		r := e.LMS("POST", "/webhooks/replay/"+itoa(id), map[string]any{"since": t0.Format(time.RFC3339)})
		if r.Status != 200 || Int(t, r.JSON(t), "data.queued") != 1 {
			t.Fatalf("replay: %d %s", r.Status, r.Body)
		}
		e.WaitForWebhooks(t, "the replayed delivery", func() bool { return rc.Count() == attempts+1 })
		d := rc.Deliveries()[attempts]
		if err := VerifyWebhook(secret, d); err != nil {
			t.Fatal(err)
		}
		if d.Header.Get("Webhook-Id") != rc.Deliveries()[0].Header.Get("Webhook-Id") || Str(t, WebhookPayload(t, d), "data.email") != "cy@example.com" {
			t.Errorf("replayed %s, first id %s", d.Body, rc.Deliveries()[0].Header.Get("Webhook-Id"))
		}
		if log := deliveryLog(t, e, id); !flag(t, log, "data.0.success") {
			t.Errorf("log after replay %v", log)
		}
		if r := e.LMS("POST", "/webhooks/replay/"+itoa(id), map[string]any{"since": t0.Format(time.RFC3339)}); Int(t, r.JSON(t), "data.queued") != 0 {
			t.Errorf("a delivered message was replayed again: %s", r.Body)
		}
	}, AllowPrivateWebhooks)
}

// Without --webhook-allow-private a name that resolves to loopback is
// refused when the delivery connects, and redirects are not followed.
func TestWebhookRefusesPrivateAddresses(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		rc := NewReceiver(t)
		port := rc.URL()[strings.LastIndexByte(rc.URL(), ':'):]
		id, _ := e.Hook(t, "http://localhost"+port+"/hook", "user.created")
		r := e.LMS("POST", "/webhooks/test/"+itoa(id), nil)
		if r.Status != 200 {
			t.Fatalf("test: %d %s", r.Status, r.Body)
		}
		body := r.JSON(t)
		if flag(t, body, "data.success") || !strings.Contains(Str(t, body, "data.error"), "not a public address") {
			t.Errorf("test delivery to loopback: %s", r.Body)
		}
		user(t, e, "eve@example.com")
		e.WaitForWebhooks(t, "the refused attempt", func() bool { return Int(t, deliveryLog(t, e, id), "total") == 2 })
		if log := deliveryLog(t, e, id); flag(t, log, "data.0.success") || !strings.Contains(Str(t, log, "data.0.error"), "not a public address") {
			t.Errorf("log %v", log)
		}
		if rc.Count() != 0 {
			t.Errorf("the loopback receiver got %d requests", rc.Count())
		}
	})
}

func TestWebhookTestDeliveryAndRedirects(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		rc := NewReceiver(t)
		target := NewReceiver(t)
		redirect := httptest.NewServer(http.RedirectHandler(target.URL(), http.StatusFound))
		t.Cleanup(redirect.Close)

		id, secret := e.Hook(t, rc.URL(), "badge.awarded")
		r := e.LMS("POST", "/webhooks/test/"+itoa(id), nil)
		if r.Status != 200 || !flag(t, r.JSON(t), "data.success") || Int(t, r.JSON(t), "data.status") != 200 {
			t.Fatalf("test: %d %s", r.Status, r.Body)
		}
		if rc.Count() != 1 || VerifyWebhook(secret, rc.Deliveries()[0]) != nil || WebhookPayload(t, rc.Deliveries()[0])["type"] != "webhook.test" {
			t.Fatalf("test delivery %v", rc.Deliveries())
		}

		rid, _ := e.Hook(t, redirect.URL, "badge.awarded")
		r = e.LMS("POST", "/webhooks/test/"+itoa(rid), nil)
		if b := r.JSON(t); flag(t, b, "data.success") || Int(t, b, "data.status") != 302 {
			t.Errorf("test through a redirect: %s", r.Body)
		}
		if target.Count() != 0 {
			t.Errorf("the redirect was followed")
		}
		if log := deliveryLog(t, e, rid); Int(t, log, "total") != 1 || Str(t, log, "data.0.event_type") != "webhook.test" {
			t.Errorf("log %v", log)
		}
	}, AllowPrivateWebhooks)
}

// startMain runs a server on cfg until the returned stop is called; poll
// is its Main.WebhookPoll.
func startMain(t *testing.T, cfg config.Config, poll time.Duration) (m *server.Main, stop func()) {
	t.Helper()
	m = &server.Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), WebhookPoll: poll}
	ctx, cancel := context.WithCancel(context.Background())
	if err := m.Open(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		m.Close()
	}
	t.Cleanup(stop)
	return m, stop
}

// sharedConfig is the configuration of servers that share one store.
func sharedConfig(t *testing.T, b Backend) config.Config {
	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.DatabaseURL = IsolatedURL(t, b.URL)
	cfg.RateLimit, cfg.RTCUDPPort, cfg.TURNPort = 0, 0, 0
	cfg.WebhookAllowPrivate = true
	return cfg
}

// startWithDomain starts a server without a webhook worker and creates a
// domain on it.
func startWithDomain(t *testing.T, b Backend, cfg config.Config) (*Env, func()) {
	m, stop := startMain(t, cfg, -1)
	d, keys, err := m.Store.CreateDomain(context.Background(), "A")
	if err != nil {
		t.Fatal(err)
	}
	return &Env{T: t, Backend: b, Main: m, Store: m.Store, URL: m.BaseURL(), Client: &http.Client{},
		Domain: Domain{ID: d.ID, LMSKey: keys.LMS}}, stop
}

// The outbox outlives the process: events written by a server that stops
// before delivering them are delivered by the next server on the same
// store.
func TestWebhookOutboxSurvivesRestart(t *testing.T) {
	for _, b := range Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			cfg := sharedConfig(t, b)
			rc := NewReceiver(t)

			// First run: no worker, so nothing is delivered.
			e, stop := startWithDomain(t, b, cfg)
			_, secret := e.Hook(t, rc.URL(), "user.created", "course.created")
			uid := user(t, e, "fay@example.com")
			create(t, e, "/courses/create", map[string]any{"course_name": "Rust"}, "data.course_id")
			stop()
			if rc.Count() != 0 {
				t.Fatalf("the first run delivered %d events without a worker", rc.Count())
			}

			// Second run: its worker delivers both.
			startMain(t, cfg, 20*time.Millisecond)
			deadline := time.Now().Add(20 * time.Second)
			for rc.Count() < 2 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			ds := rc.Deliveries()
			if len(ds) != 2 {
				t.Fatalf("after restart the receiver has %d deliveries", len(ds))
			}
			types := map[string]bool{}
			for _, d := range ds {
				if err := VerifyWebhook(secret, d); err != nil {
					t.Error(err)
				}
				p := WebhookPayload(t, d)
				types[Str(t, p, "type")] = true
				if p["type"] == "user.created" && Int(t, p, "data.id") != uid {
					t.Errorf("user.created for %s", d.Body)
				}
			}
			if !types["user.created"] || !types["course.created"] {
				t.Errorf("delivered %v", types)
			}
		})
	}
}

// Workers claiming at once (two stores on one database, as two nodes
// would be) deliver every message once.
func TestWebhookWorkersClaimEachMessageOnce(t *testing.T) {
	for _, b := range Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			cfg := sharedConfig(t, b)
			rc := NewReceiver(t)
			e, _ := startWithDomain(t, b, cfg)
			m := e.Main
			e.Hook(t, rc.URL(), "user.created")
			const n = 60
			for i := range n {
				user(t, e, "u"+strconv.Itoa(i)+"@example.com")
			}
			m2, _ := startMain(t, cfg, -1)
			workers := []*webhook.Worker{m.Webhooks, m2.Webhooks, m.Webhooks, m2.Webhooks}
			var wg sync.WaitGroup
			for _, w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						k, err := w.RunOnce(context.Background())
						if err != nil {
							t.Error(err)
							return
						}
						if k == 0 {
							return
						}
					}
				}()
			}
			wg.Wait()
			seen := map[string]int{}
			for _, d := range rc.Deliveries() {
				seen[d.Header.Get("Webhook-Id")]++
			}
			if len(rc.Deliveries()) != n || len(seen) != n {
				t.Errorf("%d deliveries of %d events, want %d of %d", len(rc.Deliveries()), len(seen), n, n)
			}
		})
	}
}

// The catalog's endpoints on both APIs raise their events.
func TestWebhookCatalogEvents(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		rc := NewReceiver(t)
		_, secret := e.Hook(t, rc.URL(), "course.created", "course.deleted", "class.created", "class.deleted",
			"enrollment.created", "enrollment.deleted")
		uid := user(t, e, "gus@example.com")
		course := create(t, e, "/courses/create", map[string]any{"course_name": "Go"}, "data.course_id")
		for _, step := range []Request{
			api("POST", "/courses/enroll", map[string]any{"courseId": course, "email": "gus@example.com"}),
			api("POST", "/courses/unenroll", map[string]any{"courseId": course, "email": "gus@example.com"}),
			api("DELETE", "/courses/delete/"+itoa(course), nil),
		} {
			if r := e.Do(step); r.Status != 200 {
				t.Fatalf("%s %s: %d %s", step.Method, step.Path, r.Status, r.Body)
			}
		}
		class := create(t, e, "/liveClasses/create", map[string]any{"title": "Live", "date": "2030-01-02", "startTime": "10", "endTime": "11", "timezone": "28"}, "data.id")
		if r := e.VC("removeclass", url.Values{"cid": {itoa(class)}}); r.Status != 200 || !strings.Contains(string(r.Body), "removeclass") {
			t.Fatalf("removeclass: %d %s", r.Status, r.Body)
		}
		e.WaitForWebhooks(t, "six events", func() bool { return rc.Count() >= 6 })
		got := map[string]map[string]any{}
		for _, d := range rc.Deliveries() {
			if err := VerifyWebhook(secret, d); err != nil {
				t.Error(err)
			}
			p := WebhookPayload(t, d)
			got[Str(t, p, "type")] = p
		}
		want := map[string]func(p map[string]any) bool{
			"course.created": func(p map[string]any) bool { return Int(t, p, "data.id") == course && Str(t, p, "data.name") == "Go" },
			"course.deleted": func(p map[string]any) bool { return Int(t, p, "data.id") == course },
			"enrollment.created": func(p map[string]any) bool {
				return Int(t, p, "data.user_id") == uid && Str(t, p, "data.kind") == "course" && Int(t, p, "data.item_id") == course
			},
			"enrollment.deleted": func(p map[string]any) bool {
				return Int(t, p, "data.user_id") == uid && Int(t, p, "data.item_id") == course
			},
			"class.created": func(p map[string]any) bool { return Int(t, p, "data.id") == class && Str(t, p, "data.title") == "Live" },
			"class.deleted": func(p map[string]any) bool { return Int(t, p, "data.id") == class },
		}
		for typ, ok := range want {
			p, found := got[typ]
			if !found {
				t.Errorf("no %s delivered", typ)
			} else if !ok(p) {
				t.Errorf("%s: %v", typ, p)
			}
		}
		if rc.Count() != 6 {
			t.Errorf("%d deliveries, want 6", rc.Count())
		}
	}, AllowPrivateWebhooks)
}

// Points through the gamification API that reach a badge raise
// badge.awarded.
func TestWebhookBadgeAwarded(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		rc := NewReceiver(t)
		_, secret := e.Hook(t, rc.URL(), "badge.awarded")
		uid := user(t, e, "hal@example.com")
		badge := create(t, e, "/gamification/badges", map[string]any{"description": "Bronze", "points_required": 10}, "data.id")
		if r := e.LMS("POST", "/gamification/points", map[string]any{"user_id": uid, "points": 15, "reason": "Welcome"}); r.Status != 200 {
			t.Fatalf("points: %d %s", r.Status, r.Body)
		}
		e.WaitForWebhooks(t, "badge.awarded", func() bool { return rc.Count() >= 1 })
		d := rc.Deliveries()[0]
		if err := VerifyWebhook(secret, d); err != nil {
			t.Fatal(err)
		}
		p := WebhookPayload(t, d)
		if p["type"] != "badge.awarded" || Int(t, p, "data.user_id") != uid || Int(t, p, "data.badge_id") != badge || Str(t, p, "data.description") != "Bronze" {
			t.Errorf("payload %s", d.Body)
		}
	}, AllowPrivateWebhooks)
}

// A checkout through the test gateway raises payment.succeeded, and each
// refund through the API payment.refunded with the amount it moved.
func TestWebhookPaymentEvents(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		rc := NewReceiver(t)
		_, secret := e.Hook(t, rc.URL(), "payment.succeeded", "payment.refunded")
		s := newShop(t, e)
		testGateway(t, e, e.Domain)
		r := e.LMS("POST", "/shoppingCart/checkout", checkoutBody(s, "pay@example.com", card("4242424242424242")))
		if r.Status != 200 {
			t.Fatalf("checkout: %d %s", r.Status, r.Body)
		}
		order := Int(t, r.JSON(t), "data.id")
		buyer, err := e.Store.UserByEmail(context.Background(), e.Domain.ID, "pay@example.com")
		if err != nil {
			t.Fatal(err)
		}
		paid := e.Delivered(t, rc, secret, "payment.succeeded")["payment.succeeded"]
		for path, want := range map[string]any{"data.order_id": order, "data.source": "checkout", "data.status": "paid",
			"data.email": "pay@example.com", "data.user_id": buyer.ID, "data.currency": "usd", "data.total_minor": "6900",
			"data.amount_minor": "6900", "data.refunded_minor": "0", "data.gateway": "test", "domain_id": e.Domain.ID} {
			if got, _ := Lookup(paid, path); !Equal(got, want) {
				t.Errorf("payment.succeeded %s = %v, want %v", path, got, want)
			}
		}

		for i, step := range []struct {
			amount                 any
			status, moved, refunds string
		}{{"9", "paid", "900", "900"}, {nil, "refunded", "6000", "6900"}} {
			body := map[string]any{}
			if step.amount != nil {
				body["amount"] = step.amount
			}
			if r := e.LMS("POST", "/orders/refund/"+itoa(order), body); r.Status != 200 {
				t.Fatalf("refund %d: %d %s", i+1, r.Status, r.Body)
			}
			e.WaitForWebhooks(t, "refund "+strconv.Itoa(i+1), func() bool { return rc.Count() == 2+i })
			d := rc.Deliveries()[1+i]
			if err := VerifyWebhook(secret, d); err != nil {
				t.Fatal(err)
			}
			p := WebhookPayload(t, d)
			for path, want := range map[string]any{"type": "payment.refunded", "data.order_id": order, "data.status": step.status,
				"data.amount_minor": step.moved, "data.refunded_minor": step.refunds, "data.total_minor": "6900"} {
				if got, _ := Lookup(p, path); !Equal(got, want) {
					t.Errorf("refund %d: %s = %v, want %v", i+1, path, got, want)
				}
			}
		}
	}, AllowPrivateWebhooks)
}

// Rotating an endpoint's secret answers a new one; for the grace period
// deliveries carry a signature of each secret, so a receiver verifying
// with either accepts them; after it, only the new secret verifies.
func TestWebhookSecretRotation(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		t0 := FutureTime()
		e.Clock.Set(t0)
		rc := NewReceiver(t)
		id, old := e.Hook(t, rc.URL(), "user.created")
		r := e.LMS("POST", "/webhooks/rotate/"+itoa(id), nil)
		if r.Status != 200 {
			t.Fatalf("rotate: %d %s", r.Status, r.Body)
		}
		body := r.JSON(t)
		secret := Str(t, body, "data.secret")
		until := t0.Add(webhook.RotationGrace).Format(time.RFC3339)
		if secret == old || !strings.HasPrefix(secret, "whsec_") || Str(t, body, "data.previous_secret_until") != until {
			t.Fatalf("rotate answered %s", r.Body)
		}
		if strings.Contains(string(r.Body), old) {
			t.Error("the answer carries the previous secret")
		}
		e.Scenarios(t, []Scenario{
			{Name: "get has the new secret", Request: api("GET", "/webhooks/get/"+itoa(id), nil), Status: 200,
				Want: map[string]any{"data.secret": secret, "data.previous_secret_until": until}},
			{Name: "unknown endpoint", Request: api("POST", "/webhooks/rotate/999999", nil), Status: 404},
			{Name: "bad id", Request: api("POST", "/webhooks/rotate/x", nil), Status: 400, Fields: []string{"webhook_id"}},
			{Name: "other domain", Request: other(e, "POST", "/webhooks/rotate/"+itoa(id), nil), Status: 404},
			{Name: "other domain did not rotate it", Request: api("GET", "/webhooks/get/"+itoa(id), nil), Status: 200,
				Want: map[string]any{"data.secret": secret}},
		})

		for i, step := range []struct {
			name     string
			at       time.Time
			oldValid bool
		}{
			{"during the grace period", t0.Add(webhook.RotationGrace - time.Second), true},
			{"at its end", t0.Add(webhook.RotationGrace), false},
		} {
			e.Clock.Set(step.at)
			user(t, e, "rot"+strconv.Itoa(i)+"@example.com")
			e.WaitForWebhooks(t, step.name, func() bool { return rc.Count() == 2*i+1 })
			d := rc.Deliveries()[2*i]
			if err := VerifyWebhook(secret, d); err != nil {
				t.Errorf("%s: the new secret: %v", step.name, err)
			}
			if err := VerifyWebhook(old, d); (err == nil) != step.oldValid {
				t.Errorf("%s: the previous secret verifies: %v, want %v (signature %q)", step.name, err == nil, step.oldValid,
					d.Header.Get("Webhook-Signature"))
			}
			test := e.LMS("POST", "/webhooks/test/"+itoa(id), nil)
			if test.Status != 200 || rc.Count() != 2*i+2 {
				t.Fatalf("%s: test delivery %d %s", step.name, test.Status, test.Body)
			}
			if err := VerifyWebhook(old, rc.Deliveries()[2*i+1]); (err == nil) != step.oldValid {
				t.Errorf("%s: the previous secret verifies the test delivery: %v, want %v", step.name, err == nil, step.oldValid)
			}
		}
	}, AllowPrivateWebhooks)
}
