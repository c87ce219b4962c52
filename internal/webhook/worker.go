package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/store"
)

// Retry policy.
const (
	// RetryFor is how long a message is retried before it gives up, and
	// how long an endpoint may fail every attempt before it is disabled.
	RetryFor = 24 * time.Hour
	// FirstRetry is the wait after the first failed attempt; each further
	// failure doubles it, up to MaxRetry.
	FirstRetry = 30 * time.Second
	MaxRetry   = 4 * time.Hour
	// Lease is how long a claimed message stays with its worker before
	// another may take it (longer than an attempt's Timeout).
	Lease = 2 * time.Minute
	// Batch is how many messages one pass claims.
	Batch = 20
	// SweepBatch is how many old messages, and how many old log lines,
	// one statement of a retention sweep deletes.
	SweepBatch = 500
	// SweepEvery is how often Run sweeps (real time).
	SweepEvery = 10 * time.Minute
)

// Backoff is the wait after the n-th failed attempt (n from 1):
// FirstRetry doubled n-1 times, at most MaxRetry. Attempts are thus 30 s,
// 1 min, 2 min, ... apart, then every 4 hours, and a last one when
// RetryFor has passed since the event: 15 attempts in the day.
func Backoff(n int) time.Duration {
	d := FirstRetry
	for i := 1; i < n && d < MaxRetry; i++ {
		d *= 2
	}
	return min(d, MaxRetry)
}

// Observer receives the outcome of each attempt (package metrics
// implements it). result is success, failure (will retry) or gave_up;
// reason names the kind of failure (status_4xx, status_5xx, redirect,
// timeout, refused_address, connect, signing) and is "" on success.
type Observer interface {
	ObserveDelivery(result string, d time.Duration)
	ObserveDeliveryFailure(reason string)
}

// Worker delivers the outbox. Several may run, in one process or in
// several on one PostgreSQL: each claims its messages.
type Worker struct {
	Store  *store.Store
	Client *http.Client
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Observer, when set, counts deliveries and failures.
	Observer Observer
	// Retention is how long delivered and failed messages and delivery-log
	// lines are kept; 0 keeps them forever.
	Retention time.Duration
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Run delivers due messages every interval until ctx is done, and sweeps
// old records at the start and every SweepEvery.
func (w *Worker) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var swept time.Time
	for {
		if time.Since(swept) >= SweepEvery {
			swept = time.Now()
			if _, _, err := w.Sweep(ctx); err != nil && ctx.Err() == nil {
				w.Logger.Error("webhook retention sweep failed", "err", err)
			}
		}
		for {
			n, err := w.RunOnce(ctx)
			if err != nil && ctx.Err() == nil {
				w.Logger.Error("webhook delivery pass failed", "err", err)
			}
			if n < Batch || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep deletes the delivered and failed messages and the delivery-log
// lines older than Retention (on the worker's clock), SweepBatch at a
// time, until none is left; pending messages stay. It returns how many
// messages and log lines it deleted.
func (w *Worker) Sweep(ctx context.Context) (messages, attempts int64, err error) {
	if w.Retention <= 0 {
		return 0, 0, nil
	}
	before := w.now().Add(-w.Retention)
	for {
		m, a, err := w.Store.DeleteOldWebhookRecords(ctx, before, SweepBatch)
		messages, attempts = messages+m, attempts+a
		if err != nil || (m < SweepBatch && a < SweepBatch) {
			if messages+attempts > 0 {
				w.Logger.Info("webhook retention sweep", "messages", messages, "log_lines", attempts, "before", before)
			}
			return messages, attempts, err
		}
	}
}

// RunOnce claims the messages due now (up to Batch), attempts each once,
// and records the results. It returns how many it attempted.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	msgs, err := w.Store.ClaimWebhookMessages(ctx, w.now(), Lease, Batch)
	if err != nil {
		return 0, err
	}
	for _, m := range msgs {
		if err := w.deliver(ctx, m); err != nil {
			return len(msgs), err
		}
	}
	return len(msgs), nil
}

func (w *Worker) deliver(ctx context.Context, m store.WebhookMessage) error {
	a := w.Attempt(ctx, m.URL, Secrets(m.Secret, m.PreviousSecret, m.PreviousUntil, w.now()), m.EventID, m.Payload)
	a.MessageID, a.EventType, a.Attempt = m.ID, m.EventType, m.Attempts+1
	r := store.WebhookResult{Attempt: a, DisableAfter: RetryFor}
	result := "success"
	if !a.Success {
		result = "failure"
		if end := m.RetryFrom.Add(RetryFor); a.At.Before(end) {
			r.Next = a.At.Add(Backoff(a.Attempt))
			if r.Next.After(end) {
				r.Next = end
			}
		} else {
			result = "gave_up"
		}
	}
	disabled, err := w.Store.RecordWebhookAttempt(context.WithoutCancel(ctx), m, r)
	if err != nil {
		return err
	}
	if w.Observer != nil {
		w.Observer.ObserveDelivery(result, a.Duration)
	}
	if !a.Success {
		w.Logger.Warn("webhook delivery failed", "domain", m.DomainID, "endpoint", m.EndpointID, "event", m.EventID,
			"type", m.EventType, "attempt", a.Attempt, "status", a.Status, "err", a.Error, "result", result)
	}
	if disabled {
		w.Logger.Warn("webhook endpoint disabled after a day of failures", "domain", m.DomainID, "endpoint", m.EndpointID)
	}
	return nil
}

// Attempt sends one delivery of body (event id) to rawURL, signed with
// each of secrets, and says how it went. It never follows redirects; the
// answer's body is read up to MaxResponse and dropped.
func (w *Worker) Attempt(ctx context.Context, rawURL string, secrets []string, id string, body []byte) store.WebhookAttempt {
	start := time.Now()
	at := w.now()
	a := store.WebhookAttempt{EventID: id, At: at}
	fail := func(reason, msg string) store.WebhookAttempt {
		a.Error = msg
		a.Duration = time.Since(start)
		if w.Observer != nil {
			w.Observer.ObserveDeliveryFailure(reason)
		}
		return a
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return fail("connect", "bad URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Lectern-Webhooks/1")
	if err := SetHeaders(req.Header, secrets, id, at, body); err != nil {
		return fail("signing", "cannot sign: "+err.Error())
	}
	resp, err := w.Client.Do(req)
	if err != nil {
		reason, msg := describe(err)
		return fail(reason, msg)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponse))
	resp.Body.Close()
	a.Status = resp.StatusCode
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		a.Success = true
		a.Duration = time.Since(start)
		return a
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return fail("redirect", "answered "+strconv.Itoa(resp.StatusCode)+"; redirects are not followed")
	case resp.StatusCode < 500:
		return fail("status_4xx", "answered "+strconv.Itoa(resp.StatusCode))
	}
	return fail("status_5xx", "answered "+strconv.Itoa(resp.StatusCode))
}

// describe turns a transport error into a failure reason and a message
// for the delivery log (without the URL, which the log already names).
func describe(err error) (reason, msg string) {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		return "refused_address", err.Error()
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout"):
		return "timeout", "no answer within " + Timeout.String()
	}
	msg = err.Error()
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return "connect", msg
}
