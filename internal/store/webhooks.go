package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

// WebhookEndpoint is a URL of a domain that receives the events it
// subscribed to.
type WebhookEndpoint struct {
	ID          int64
	URL         string
	Description string
	Events      []string
	// Secret is the signing key, whsec_<base64>.
	Secret string
	// PreviousSecret is the secret a rotation replaced, which deliveries
	// also carry a signature of until PreviousUntil ("" when none).
	PreviousSecret string
	PreviousUntil  time.Time
	Enabled        bool
	DisabledAt     time.Time
	DisabledReason string
	// FailingSince is when the current run of failed attempts began (zero
	// while the last attempt succeeded).
	FailingSince time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// WebhookMessage is one event queued for one endpoint (a row of the
// outbox).
type WebhookMessage struct {
	ID         int64
	DomainID   int64
	EndpointID int64
	EventID    string
	EventType  string
	Payload    []byte
	Attempts   int
	RetryFrom  time.Time
	// URL, Secret, PreviousSecret and PreviousUntil are the endpoint's,
	// read when the message is claimed.
	URL            string
	Secret         string
	PreviousSecret string
	PreviousUntil  time.Time
}

// WebhookAttempt is one line of an endpoint's delivery log.
type WebhookAttempt struct {
	ID        int64
	MessageID int64 // 0 for a test delivery
	EventID   string
	EventType string
	Attempt   int
	Success   bool
	Status    int // the receiver's HTTP status, 0 when none came
	Error     string
	Duration  time.Duration
	At        time.Time
}

// Message states.
const (
	WebhookPending   = "pending"
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed"
)

const webhookCols = "id, url, description, events, secret, previous_secret, previous_until, enabled, disabled_at, disabled_reason, failing_since, created_at, updated_at"

func scanWebhook(row interface{ Scan(...any) error }) (WebhookEndpoint, error) {
	var w WebhookEndpoint
	var events string
	err := row.Scan(&w.ID, &w.URL, &w.Description, &events, &w.Secret, &w.PreviousSecret, optTimeCol(&w.PreviousUntil), &w.Enabled, optTimeCol(&w.DisabledAt),
		&w.DisabledReason, optTimeCol(&w.FailingSince), timeCol(&w.CreatedAt), timeCol(&w.UpdatedAt))
	w.Events = strings.Fields(events)
	return w, err
}

// eventsCol is how an endpoint's event types are stored: space-separated,
// with a space at each end.
func eventsCol(types []string) string { return " " + strings.Join(types, " ") + " " }

// CreateWebhook adds an endpoint to the domain.
func (s *Store) CreateWebhook(ctx context.Context, domainID int64, w WebhookEndpoint) (WebhookEndpoint, error) {
	w.CreatedAt, w.UpdatedAt, w.Enabled = s.now(), s.now(), true
	err := s.tx(ctx, func(tx db) error {
		var err error
		w.ID, err = tx.insert(ctx, `INSERT INTO webhook_endpoints (domain_id, url, description, events, secret, enabled, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 1, ?, ?)`, domainID, w.URL, w.Description, eventsCol(w.Events), w.Secret,
			formatTime(w.CreatedAt), formatTime(w.UpdatedAt))
		return err
	})
	return w, err
}

// Webhook returns one endpoint of the domain.
func (s *Store) Webhook(ctx context.Context, domainID, id int64) (WebhookEndpoint, error) {
	return webhook(ctx, s.read(), domainID, id)
}

func webhook(ctx context.Context, d db, domainID, id int64) (WebhookEndpoint, error) {
	w, err := scanWebhook(d.queryRow(ctx, "SELECT "+webhookCols+" FROM webhook_endpoints WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return w, lms.NotFoundf("webhook %d not found", id)
	}
	return w, err
}

// ListWebhooks returns one page of the domain's endpoints by id, and the
// number of all.
func (s *Store) ListWebhooks(ctx context.Context, domainID int64, p Page) ([]WebhookEndpoint, int64, error) {
	var out []WebhookEndpoint
	total, err := s.list(ctx, "webhook_endpoints", "domain_id = ?", []any{domainID}, webhookCols, p, func(r *sql.Rows) error {
		w, err := scanWebhook(r)
		out = append(out, w)
		return err
	})
	return out, total, err
}

// UpdateWebhook changes an endpoint's URL, description and event types
// through edit.
func (s *Store) UpdateWebhook(ctx context.Context, domainID, id int64, edit func(*WebhookEndpoint)) (WebhookEndpoint, error) {
	var w WebhookEndpoint
	err := s.tx(ctx, func(tx db) error {
		var err error
		if w, err = webhook(ctx, tx, domainID, id); err != nil {
			return err
		}
		edit(&w)
		w.UpdatedAt = s.now()
		_, err = tx.exec(ctx, "UPDATE webhook_endpoints SET url = ?, description = ?, events = ?, updated_at = ? WHERE domain_id = ? AND id = ?",
			w.URL, w.Description, eventsCol(w.Events), formatTime(w.UpdatedAt), domainID, id)
		return err
	})
	return w, err
}

// DeleteWebhook deletes an endpoint with its queue and log.
func (s *Store) DeleteWebhook(ctx context.Context, domainID, id int64) error {
	return s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "DELETE FROM webhook_endpoints WHERE domain_id = ? AND id = ?", domainID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.NotFoundf("webhook %d not found", id)
		}
		return nil
	})
}

// EnableWebhook turns a disabled endpoint back on and forgets its run of
// failures. Messages that gave up stay failed until ReplayWebhook.
func (s *Store) EnableWebhook(ctx context.Context, domainID, id int64) (WebhookEndpoint, error) {
	var w WebhookEndpoint
	err := s.tx(ctx, func(tx db) error {
		if _, err := tx.exec(ctx, `UPDATE webhook_endpoints SET enabled = 1, disabled_at = '', disabled_reason = '', failing_since = '',
			updated_at = ? WHERE domain_id = ? AND id = ?`, formatTime(s.now()), domainID, id); err != nil {
			return err
		}
		var err error
		w, err = webhook(ctx, tx, domainID, id)
		return err
	})
	return w, err
}

// RotateWebhook makes secret the endpoint's signing secret and keeps the
// one it replaces as PreviousSecret until graceUntil. A second rotation
// within the grace period drops the oldest secret: the previous one is
// always the secret just replaced.
func (s *Store) RotateWebhook(ctx context.Context, domainID, id int64, secret string, graceUntil time.Time) (WebhookEndpoint, error) {
	var w WebhookEndpoint
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, `UPDATE webhook_endpoints SET previous_secret = secret, secret = ?, previous_until = ?, updated_at = ?
			WHERE domain_id = ? AND id = ?`, secret, formatTime(graceUntil), formatTime(s.now()), domainID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.NotFoundf("webhook %d not found", id)
		}
		w, err = webhook(ctx, tx, domainID, id)
		return err
	})
	return w, err
}

// ReplayWebhook queues again, due now, every message of the endpoint
// created at or after since that is not delivered (failed or still
// pending), each with a fresh 24-hour window of retries. It returns how
// many it queued.
func (s *Store) ReplayWebhook(ctx context.Context, domainID, id int64, since time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx db) error {
		if _, err := webhook(ctx, tx, domainID, id); err != nil {
			return err
		}
		now := formatTime(s.now())
		res, err := tx.exec(ctx, `UPDATE webhook_messages SET state = 'pending', attempts = 0, next_attempt_at = ?, retry_from = ?, updated_at = ?
			WHERE domain_id = ? AND endpoint_id = ? AND state <> 'delivered' AND created_at >= ?`,
			now, now, now, domainID, id, formatTime(since))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// emit writes ev to the outbox of every enabled endpoint of the domain
// subscribed to its type, inside tx: the event is delivered exactly when
// the change that raised it commits. Store methods call it after their
// change; which event a change raises, and its payload, come from package
// event.
func emit(ctx context.Context, tx db, domainID int64, ev event.Event) error {
	endpoints, err := tx.s.hooks.targets(ctx, tx, domainID)
	if err != nil {
		return err
	}
	var targets []int64
	for _, ep := range endpoints {
		if strings.Contains(ep.events, " "+ev.Type+" ") {
			targets = append(targets, ep.id)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	now := tx.now()
	id := NewEventID()
	body, err := json.Marshal(event.NewPayload(id, domainID, now, ev))
	if err != nil {
		return fmt.Errorf("webhook payload %s: %w", ev.Type, err)
	}
	for _, ep := range targets {
		if err := enqueue(ctx, tx, domainID, ep, id, ev.Type, body, now); err != nil {
			return err
		}
	}
	return nil
}

func enqueue(ctx context.Context, tx db, domainID, endpointID int64, eventID, eventType string, body []byte, now time.Time) error {
	t := formatTime(now)
	_, err := tx.exec(ctx, `INSERT INTO webhook_messages (domain_id, endpoint_id, event_id, event_type, payload, state, attempts,
		next_attempt_at, retry_from, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?)`,
		domainID, endpointID, eventID, eventType, string(body), t, t, t, t)
	return err
}

// NewEventID returns a fresh event id: evt_ and 128 random bits in hex.
func NewEventID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "evt_" + hex.EncodeToString(b)
}

// ClaimWebhookMessages takes up to limit messages that are due at now on
// enabled endpoints and leases them until now+lease: another worker (on
// this node or another on the same PostgreSQL) does not take them before
// then, and a worker that dies leaves them due again. PostgreSQL skips
// rows another transaction is claiming (FOR UPDATE SKIP LOCKED); SQLite
// has a single writer.
func (s *Store) ClaimWebhookMessages(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]WebhookMessage, error) {
	var out []WebhookMessage
	lock := ""
	if s.pg {
		lock = " FOR UPDATE OF m SKIP LOCKED"
	}
	err := s.tx(ctx, func(tx db) error {
		rows, err := tx.query(ctx, `SELECT m.id, m.domain_id, m.endpoint_id, m.event_id, m.event_type, m.payload, m.attempts, m.retry_from,
			e.url, e.secret, e.previous_secret, e.previous_until FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id
			WHERE m.state = 'pending' AND m.next_attempt_at <= ? AND e.enabled = 1
			ORDER BY m.next_attempt_at, m.id LIMIT +?`+lock, formatTime(now), limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			var m WebhookMessage
			var payload string
			if err := rows.Scan(&m.ID, &m.DomainID, &m.EndpointID, &m.EventID, &m.EventType, &payload, &m.Attempts,
				timeCol(&m.RetryFrom), &m.URL, &m.Secret, &m.PreviousSecret, optTimeCol(&m.PreviousUntil)); err != nil {
				rows.Close()
				return err
			}
			m.Payload = []byte(payload)
			out = append(out, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		until := formatTime(now.Add(lease))
		for _, m := range out {
			if _, err := tx.exec(ctx, "UPDATE webhook_messages SET next_attempt_at = ? WHERE id = ?", until, m.ID); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// WebhookResult is what became of one attempt at a message, as the worker
// decided it.
type WebhookResult struct {
	Attempt WebhookAttempt
	// Next is when to try again; zero when the message is done (delivered
	// or given up, by Attempt.Success).
	Next time.Time
	// DisableAfter disables the endpoint when this attempt failed and its
	// run of failures began this long ago or more.
	DisableAfter time.Duration
}

// RecordWebhookAttempt logs an attempt at m and moves m on: delivered,
// due again at r.Next, or failed. A failure starts or continues the
// endpoint's run of failures, and a run as long as r.DisableAfter
// disables the endpoint and fails its pending messages; a success ends the
// run. disabled reports whether this attempt disabled the endpoint. The
// message moves on only from the attempt count m was claimed at, so a
// worker whose lease ran out cannot overwrite a later attempt's outcome.
func (s *Store) RecordWebhookAttempt(ctx context.Context, m WebhookMessage, r WebhookResult) (disabled bool, err error) {
	err = s.tx(ctx, func(tx db) error {
		a := r.Attempt
		if err := logAttempt(ctx, tx, m.DomainID, m.EndpointID, a); err != nil {
			return err
		}
		state, next := WebhookPending, formatTime(r.Next)
		switch {
		case a.Success:
			state, next = WebhookDelivered, formatTime(a.At)
		case r.Next.IsZero():
			state, next = WebhookFailed, formatTime(a.At)
		}
		if _, err := tx.exec(ctx, "UPDATE webhook_messages SET state = ?, attempts = ?, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'pending' AND attempts = ?",
			state, a.Attempt, next, formatTime(a.At), m.ID, m.Attempts); err != nil {
			return err
		}
		var err error
		disabled, err = s.endpointOutcome(ctx, tx, m.DomainID, m.EndpointID, a, r.DisableAfter)
		return err
	})
	return disabled, err
}

// endpointOutcome applies an attempt's result to its endpoint's run of
// failures.
func (s *Store) endpointOutcome(ctx context.Context, tx db, domainID, endpointID int64, a WebhookAttempt, disableAfter time.Duration) (bool, error) {
	if a.Success {
		_, err := tx.exec(ctx, "UPDATE webhook_endpoints SET failing_since = '' WHERE domain_id = ? AND id = ? AND failing_since <> ''", domainID, endpointID)
		return false, err
	}
	at := formatTime(a.At)
	if _, err := tx.exec(ctx, "UPDATE webhook_endpoints SET failing_since = ? WHERE domain_id = ? AND id = ? AND failing_since = ''",
		at, domainID, endpointID); err != nil {
		return false, err
	}
	if disableAfter <= 0 {
		return false, nil
	}
	res, err := tx.exec(ctx, `UPDATE webhook_endpoints SET enabled = 0, disabled_at = ?, disabled_reason = ?, updated_at = ?
		WHERE domain_id = ? AND id = ? AND enabled = 1 AND failing_since <> '' AND failing_since <= ?`,
		at, "every delivery failed for "+disableAfter.String()+"; last: "+a.Error, at, domainID, endpointID,
		formatTime(a.At.Add(-disableAfter)))
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	_, err = tx.exec(ctx, "UPDATE webhook_messages SET state = 'failed', next_attempt_at = ?, updated_at = ? WHERE domain_id = ? AND endpoint_id = ? AND state = 'pending'",
		at, at, domainID, endpointID)
	return true, err
}

func logAttempt(ctx context.Context, tx db, domainID, endpointID int64, a WebhookAttempt) error {
	_, err := tx.exec(ctx, `INSERT INTO webhook_attempts (domain_id, endpoint_id, message_id, event_id, event_type, attempt, success,
		status, error, duration_ms, attempted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		domainID, endpointID, a.MessageID, a.EventID, a.EventType, a.Attempt, lms.Flag(a.Success), a.Status, a.Error,
		a.Duration.Milliseconds(), formatTime(a.At))
	return err
}

// LogWebhookTest records a test delivery in the endpoint's log. A test
// does not count toward the endpoint's run of failures.
func (s *Store) LogWebhookTest(ctx context.Context, domainID, endpointID int64, a WebhookAttempt) error {
	return s.tx(ctx, func(tx db) error { return logAttempt(ctx, tx, domainID, endpointID, a) })
}

// WebhookAttempts returns one page of an endpoint's delivery log, newest
// first, and the number of all its lines.
func (s *Store) WebhookAttempts(ctx context.Context, domainID, endpointID int64, p Page) ([]WebhookAttempt, int64, error) {
	d := s.read()
	if _, err := webhook(ctx, d, domainID, endpointID); err != nil {
		return nil, 0, err
	}
	total, err := d.count(ctx, "SELECT COUNT(*) FROM webhook_attempts WHERE domain_id = ? AND endpoint_id = ?", domainID, endpointID)
	if err != nil {
		return nil, 0, err
	}
	rows, err := d.query(ctx, `SELECT id, message_id, event_id, event_type, attempt, success, status, error, duration_ms, attempted_at
		FROM webhook_attempts WHERE domain_id = ? AND endpoint_id = ? ORDER BY id DESC LIMIT +? OFFSET +?`,
		domainID, endpointID, p.Limit, p.Offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []WebhookAttempt
	for rows.Next() {
		var a WebhookAttempt
		var ms int64
		if err := rows.Scan(&a.ID, &a.MessageID, &a.EventID, &a.EventType, &a.Attempt, &a.Success, &a.Status, &a.Error,
			&ms, timeCol(&a.At)); err != nil {
			return nil, 0, err
		}
		a.Duration = time.Duration(ms) * time.Millisecond
		out = append(out, a)
	}
	return out, total, rows.Err()
}

// paymentEvent is payment.succeeded or payment.refunded for o; amount is
// what the event moved (the total, or one refund).
func paymentEvent(typ string, o Order, amount int64) event.Event {
	return event.PaymentEvent(typ, event.Payment{OrderID: o.ID, Source: o.Source, Status: o.Status, Email: o.BuyerEmail,
		UserID: o.UserID, Currency: o.Currency, Total: event.Minor(o.Total), Amount: event.Minor(amount),
		Refunded: event.Minor(o.Refunded), Gateway: o.Gateway})
}

// DeleteOldWebhookRecords deletes up to limit delivered or failed
// messages that finished before before (a finished message's
// next_attempt_at is when it finished), and up to limit delivery-log
// lines attempted before before, on every domain. Pending messages are
// never deleted. It returns how many of each it deleted; callers repeat
// while either is limit.
func (s *Store) DeleteOldWebhookRecords(ctx context.Context, before time.Time, limit int) (messages, attempts int64, err error) {
	t := formatTime(before)
	err = s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, `DELETE FROM webhook_messages WHERE id IN (SELECT id FROM webhook_messages
			WHERE state IN ('delivered', 'failed') AND next_attempt_at < ? ORDER BY next_attempt_at LIMIT +?)`, t, limit)
		if err != nil {
			return err
		}
		messages, _ = res.RowsAffected()
		res, err = tx.exec(ctx, `DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts
			WHERE attempted_at < ? ORDER BY attempted_at LIMIT +?)`, t, limit)
		if err != nil {
			return err
		}
		attempts, _ = res.RowsAffected()
		return nil
	})
	return messages, attempts, err
}

// WebhookBacklog counts the messages waiting for delivery, on every
// domain (a gauge for operators).
func (s *Store) WebhookBacklog(ctx context.Context) (int64, error) {
	return s.read().count(ctx, "SELECT COUNT(*) FROM webhook_messages WHERE state = 'pending'")
}
