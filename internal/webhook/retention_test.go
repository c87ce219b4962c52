package webhook_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
	"github.com/lectern-lms/lectern/internal/webhook"
)

// The worker's sweep deletes delivered and failed messages and log lines
// once they are older than the retention period, by the store's clock,
// and never a pending message, however old.
func TestSweepDeletesOnlyOldFinishedRecords(t *testing.T) {
	const retention = 30 * 24 * time.Hour
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			t0 := time.Date(2031, 1, 1, 12, 0, 0, 0, time.UTC)
			clock := &apitest.Clock{}
			clock.Set(t0)
			st.Now = clock.Now
			w := &webhook.Worker{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clock.Now, Retention: retention}
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			ep := func(event string) int64 {
				e, err := st.CreateWebhook(ctx, d.ID, store.WebhookEndpoint{URL: "https://hooks.example.com/" + event,
					Events: []string{event}, Secret: webhook.NewSecret()})
				if err != nil {
					t.Fatal(err)
				}
				return e.ID
			}
			delivered, failed, pending := ep("user.created"), ep("course.created"), ep("course.deleted")
			if _, err := st.CreateUser(ctx, d.ID, lms.User{Email: "a@example.com", Name: "A", Username: "a"}); err != nil {
				t.Fatal(err)
			}
			c, err := st.CreateCourse(ctx, d.ID, lms.Course{Name: "Go"})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.DeleteCourse(ctx, d.ID, c.ID); err != nil {
				t.Fatal(err)
			}
			// The first two messages: one delivered at t0, one given up a
			// day later. The third stays pending, due since t0.
			msgs, err := st.ClaimWebhookMessages(ctx, t0, webhook.Lease, 2)
			if err != nil || len(msgs) != 2 || msgs[0].EndpointID != delivered || msgs[1].EndpointID != failed {
				t.Fatalf("claimed %+v (%v)", msgs, err)
			}
			record := func(m store.WebhookMessage, ok bool, at time.Time) {
				t.Helper()
				a := store.WebhookAttempt{MessageID: m.ID, EventID: m.EventID, EventType: m.EventType, Attempt: m.Attempts + 1, Success: ok, At: at}
				if _, err := st.RecordWebhookAttempt(ctx, m, store.WebhookResult{Attempt: a}); err != nil {
					t.Fatal(err)
				}
			}
			record(msgs[0], true, t0)
			gaveUp := t0.Add(webhook.RetryFor)
			record(msgs[1], false, gaveUp)

			for _, step := range []struct {
				name                  string
				at                    time.Time
				messages, attempts    int64
				deliveredLog, failLog int64
			}{
				{"a second before the first is due", t0.Add(retention), 0, 0, 1, 1},
				{"the delivered message and its line", t0.Add(retention + time.Second), 1, 1, 0, 1},
				{"the failed message and its line", gaveUp.Add(retention + time.Second), 1, 1, 0, 0},
				{"years later: nothing more", gaveUp.Add(10 * retention), 0, 0, 0, 0},
			} {
				clock.Set(step.at)
				m, a, err := w.Sweep(ctx)
				if err != nil || m != step.messages || a != step.attempts {
					t.Errorf("%s: swept %d messages, %d lines (%v), want %d, %d", step.name, m, a, err, step.messages, step.attempts)
				}
				for id, want := range map[int64]int64{delivered: step.deliveredLog, failed: step.failLog} {
					if _, n, _ := st.WebhookAttempts(ctx, d.ID, id, store.Page{Limit: 10}); n != want {
						t.Errorf("%s: endpoint %d has %d log lines, want %d", step.name, id, n, want)
					}
				}
			}
			// The pending message, due for years, is still there to deliver.
			left, err := st.ClaimWebhookMessages(ctx, clock.Now(), webhook.Lease, 10)
			if err != nil || len(left) != 1 || left[0].EndpointID != pending {
				t.Errorf("after the sweeps the claimable messages are %+v (%v), want the pending one", left, err)
			}
		})
	}
}

// DeleteOldWebhookRecords deletes at most limit rows of each kind per
// call.
func TestDeleteOldWebhookRecordsIsBounded(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			t0 := time.Date(2031, 1, 1, 12, 0, 0, 0, time.UTC)
			st.Now = func() time.Time { return t0 }
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.CreateWebhook(ctx, d.ID, store.WebhookEndpoint{URL: "https://hooks.example.com/",
				Events: []string{"user.created"}, Secret: webhook.NewSecret()}); err != nil {
				t.Fatal(err)
			}
			for _, e := range []string{"a@example.com", "b@example.com", "c@example.com"} {
				if _, err := st.CreateUser(ctx, d.ID, lms.User{Email: e, Name: e, Username: e}); err != nil {
					t.Fatal(err)
				}
			}
			msgs, err := st.ClaimWebhookMessages(ctx, t0, webhook.Lease, 10)
			if err != nil || len(msgs) != 3 {
				t.Fatalf("claimed %d (%v)", len(msgs), err)
			}
			for _, m := range msgs {
				a := store.WebhookAttempt{MessageID: m.ID, EventID: m.EventID, EventType: m.EventType, Attempt: 1, Success: true, At: t0}
				if _, err := st.RecordWebhookAttempt(ctx, m, store.WebhookResult{Attempt: a}); err != nil {
					t.Fatal(err)
				}
			}
			for i, want := range []int64{2, 1, 0} {
				m, a, err := st.DeleteOldWebhookRecords(ctx, t0.Add(time.Second), 2)
				if err != nil || m != want || a != want {
					t.Errorf("call %d: deleted %d messages and %d lines (%v), want %d of each", i+1, m, a, err, want)
				}
			}
		})
	}
}
