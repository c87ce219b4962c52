package lmsapi

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
	"github.com/lectern-lms/lectern/internal/webhook"
)

// maxURL bounds an endpoint's URL.
const maxURL = 2048

// replayWindow is how far back a replay reaches when it names no since.
const replayWindow = 7 * 24 * time.Hour

func (a *API) webhookRoutes(rt *httpx.Router) {
	a.handle(rt, "POST", "/webhooks/create", a.createWebhook)
	a.handle(rt, "POST", "/webhooks/list", a.listWebhooks)
	a.handle(rt, "GET", "/webhooks/get/{webhook_id}", a.getWebhook)
	a.handle(rt, "PUT", "/webhooks/update/{webhook_id}", a.updateWebhook)
	a.handle(rt, "DELETE", "/webhooks/delete/{webhook_id}", a.deleteWebhook)
	a.handle(rt, "POST", "/webhooks/test/{webhook_id}", a.testWebhook)
	a.handle(rt, "POST", "/webhooks/deliveries/{webhook_id}", a.listWebhookDeliveries)
	a.handle(rt, "POST", "/webhooks/enable/{webhook_id}", a.enableWebhook)
	a.handle(rt, "POST", "/webhooks/replay/{webhook_id}", a.replayWebhook)
	a.handle(rt, "POST", "/webhooks/rotate/{webhook_id}", a.rotateWebhook)
}

// webhookJSON is an endpoint as the API writes it; the secret only where
// withSecret (create, get and rotate). previous_secret_until is when
// deliveries stop carrying a signature of the secret the last rotation
// replaced (null when none does); the previous secret itself is never
// written.
func webhookJSON(w store.WebhookEndpoint, withSecret bool, now time.Time) map[string]any {
	var until time.Time
	if len(webhook.Secrets(w.Secret, w.PreviousSecret, w.PreviousUntil, now)) > 1 {
		until = w.PreviousUntil
	}
	out := map[string]any{"id": w.ID, "webhook_id": w.ID, "url": w.URL, "description": w.Description,
		"events": w.Events, "enabled": w.Enabled, "disabled_at": rfc(w.DisabledAt), "disabled_reason": w.DisabledReason,
		"failing_since": rfc(w.FailingSince), "previous_secret_until": rfc(until), "created_at": rfc(w.CreatedAt), "updated_at": rfc(w.UpdatedAt)}
	if withSecret {
		out["secret"] = w.Secret
	}
	return out
}

// readWebhookURL checks url: absolute http or https, a host, no user
// name or password, and, unless the operator allows private addresses,
// not a literal address the delivery would refuse (names are checked when
// a delivery connects).
func (a *API) readWebhookURL(v *lms.Validator, raw string) {
	if lms.TooLong(raw, maxURL) {
		v.Add("url", "must be at most 2048 characters")
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		v.Add("url", "must be an absolute http:// or https:// URL such as https://example.com/hooks")
		return
	}
	if u.User != nil {
		v.Add("url", "must not hold a user name or password; authenticate deliveries by their signature")
		return
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !a.WebhookAllowPrivate && !webhook.Allowed(ip) {
		v.Add("url", "must not point to a private, loopback, link-local, multicast or unspecified address")
	}
}

// readEvents reads events: a JSON array of event type names, or the names
// comma-separated. Every name must be known.
func readEvents(c *call, v *lms.Validator) []string {
	raw := strings.TrimSpace(c.P.Raw("events"))
	var names []string
	if strings.HasPrefix(raw, "[") {
		if err := json.Unmarshal([]byte(raw), &names); err != nil {
			v.Add("events", "must be an array of event type names or a comma-separated string")
			return nil
		}
	} else if raw != "" {
		names = strings.Split(raw, ",")
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		if !event.Known(n) {
			v.Add("events", "unknown event type "+quote(n)+"; known types: "+strings.Join(event.Types, ", "))
			return nil
		}
		seen[n] = true
		out = append(out, n)
	}
	if len(out) == 0 {
		v.Add("events", "is required: name at least one event type ("+strings.Join(event.Types, ", ")+")")
	}
	return out
}

func quote(s string) string {
	if lms.TooLong(s, 100) {
		s = string([]rune(s)[:100]) + "..."
	}
	return `"` + s + `"`
}

// POST /webhooks/create: url, events (array or comma-separated),
// description. The answer carries the signing secret.
func (a *API) createWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	ep := store.WebhookEndpoint{URL: c.P.RequiredString(&v, "url"), Description: c.P.Get("description")}
	if ep.URL != "" {
		a.readWebhookURL(&v, ep.URL)
	}
	ep.Events = readEvents(c, &v)
	checkLen(&v, "description", ep.Description, maxName)
	if err := v.Err(); err != nil {
		return err
	}
	ep.Secret = webhook.NewSecret()
	ep, err := a.Store.CreateWebhook(r.Context(), c.Domain.ID, ep)
	if err != nil {
		return err
	}
	return ok(w, "Webhook created", webhookJSON(ep, true, a.now()))
}

// POST /webhooks/list: page, limit.
func (a *API) listWebhooks(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	eps, total, err := a.Store.ListWebhooks(r.Context(), c.Domain.ID, pg.store())
	if err != nil {
		return err
	}
	data := make([]map[string]any, len(eps))
	for i, ep := range eps {
		data[i] = webhookJSON(ep, false, a.now())
	}
	return writeJSON(w, pg.body("Webhooks", data, total))
}

// GET /webhooks/get/{webhook_id}: the endpoint with its secret.
func (a *API) getWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "webhook_id")
	if err != nil {
		return err
	}
	ep, err := a.Store.Webhook(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Webhook found", webhookJSON(ep, true, a.now()))
}

// PUT /webhooks/update/{webhook_id}: url, events, description; fields not
// sent keep their value.
func (a *API) updateWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "webhook_id")
	url := c.P.Get("url")
	if c.P.Sent("url") {
		if url == "" {
			v.Add("url", "must not be empty")
		} else {
			a.readWebhookURL(&v, url)
		}
	}
	var events []string
	if c.P.Sent("events") {
		events = readEvents(c, &v)
	}
	checkLen(&v, "description", c.P.Get("description"), maxName)
	if err := v.Err(); err != nil {
		return err
	}
	ep, err := a.Store.UpdateWebhook(r.Context(), c.Domain.ID, id, func(ep *store.WebhookEndpoint) {
		if c.P.Sent("url") {
			ep.URL = url
		}
		if c.P.Sent("events") {
			ep.Events = events
		}
		if c.P.Sent("description") {
			ep.Description = c.P.Get("description")
		}
	})
	if err != nil {
		return err
	}
	return ok(w, "Webhook updated", webhookJSON(ep, false, a.now()))
}

// DELETE /webhooks/delete/{webhook_id}: the endpoint, its queue and its
// log.
func (a *API) deleteWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "webhook_id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteWebhook(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	return ok(w, "Webhook deleted", map[string]any{"id": id})
}

// POST /webhooks/test/{webhook_id}: sends a webhook.test event now, once,
// and answers how it went (also written to the delivery log). A disabled
// endpoint can be tested.
func (a *API) testWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "webhook_id")
	if err != nil {
		return err
	}
	ep, err := a.Store.Webhook(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	evID := store.NewEventID()
	body, err := json.Marshal(event.NewPayload(evID, c.Domain.ID, a.now(), event.Event{Type: event.Test,
		Data: map[string]any{"webhook_id": ep.ID, "message": "This is a test event from Lectern."}}))
	if err != nil {
		return err
	}
	at := a.Webhooks.Attempt(r.Context(), ep.URL, webhook.Secrets(ep.Secret, ep.PreviousSecret, ep.PreviousUntil, a.now()), evID, body)
	at.EventType, at.Attempt = event.Test, 1
	if err := a.Store.LogWebhookTest(r.Context(), c.Domain.ID, ep.ID, at); err != nil {
		return err
	}
	msg := "Test event delivered"
	if !at.Success {
		msg = "Test event not delivered: " + at.Error
	}
	return ok(w, msg, deliveryJSON(at))
}

func deliveryJSON(at store.WebhookAttempt) map[string]any {
	var msgID any
	if at.MessageID != 0 {
		msgID = at.MessageID
	}
	return map[string]any{"id": at.ID, "message_id": msgID, "event_id": at.EventID, "event_type": at.EventType,
		"attempt": at.Attempt, "success": at.Success, "status": at.Status, "error": at.Error,
		"response_ms": at.Duration.Milliseconds(), "attempted_at": rfc(at.At)}
}

// POST /webhooks/deliveries/{webhook_id}: page, limit. The delivery log,
// newest attempt first.
func (a *API) listWebhookDeliveries(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "webhook_id")
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	log, total, err := a.Store.WebhookAttempts(r.Context(), c.Domain.ID, id, pg.store())
	if err != nil {
		return err
	}
	data := make([]map[string]any, len(log))
	for i, at := range log {
		data[i] = deliveryJSON(at)
	}
	return writeJSON(w, pg.body("Deliveries", data, total))
}

// POST /webhooks/enable/{webhook_id}: turns a disabled endpoint back on.
func (a *API) enableWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "webhook_id")
	if err != nil {
		return err
	}
	ep, err := a.Store.EnableWebhook(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Webhook enabled", webhookJSON(ep, false, a.now()))
}

// POST /webhooks/replay/{webhook_id}: since (RFC 3339; default 7 days
// ago). Queues again every undelivered message of the endpoint since
// then, due now.
func (a *API) replayWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "webhook_id")
	since := a.now().Add(-replayWindow)
	if s := c.P.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			v.Add("since", "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
		}
		since = t
	}
	if err := v.Err(); err != nil {
		return err
	}
	n, err := a.Store.ReplayWebhook(r.Context(), c.Domain.ID, id, since)
	if err != nil {
		return err
	}
	return ok(w, "Messages queued again", map[string]any{"webhook_id": id, "queued": n, "since": rfc(since)})
}

// POST /webhooks/rotate/{webhook_id}: gives the endpoint a new signing
// secret and answers it. For webhook.RotationGrace deliveries carry a
// signature of the new secret and one of the secret it replaced; then of
// the new one only.
func (a *API) rotateWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "webhook_id")
	if err != nil {
		return err
	}
	ep, err := a.Store.RotateWebhook(r.Context(), c.Domain.ID, id, webhook.NewSecret(), a.now().Add(webhook.RotationGrace))
	if err != nil {
		return err
	}
	return ok(w, "Webhook secret rotated", webhookJSON(ep, true, a.now()))
}
