package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

// The endpoints emit takes from memory are always those the database
// holds: after each change to them, by this process, by another one on the
// same file, and after a write that created one was rolled back, the next
// user created raises its event for exactly the endpoints subscribed to
// it.
func TestHookCacheFollowsEveryChange(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	server := openSQLiteStoreIn(t, dir)
	command := openSQLiteStoreIn(t, dir) // a `lectern` command on the same file
	d, _, err := server.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	hook := func(st *Store, events ...string) int64 {
		w, err := st.CreateWebhook(ctx, d.ID, WebhookEndpoint{URL: "https://example.com/hook", Events: events, Secret: "s"})
		if err != nil {
			t.Fatal(err)
		}
		return w.ID
	}
	subscribe := func(id int64, events ...string) {
		if _, err := server.UpdateWebhook(ctx, d.ID, id, func(w *WebhookEndpoint) { w.Events = events }); err != nil {
			t.Fatal(err)
		}
	}
	var a, b int64
	steps := []struct {
		name string
		do   func()
		want func() []int64 // the endpoints the next user.created goes to
	}{
		{"no endpoint", func() {}, func() []int64 { return nil }},
		{"one created", func() { a = hook(server, event.UserCreated) }, func() []int64 { return []int64{a} }},
		{"unsubscribed", func() { subscribe(a, event.CourseCreated) }, func() []int64 { return nil }},
		{"subscribed again", func() { subscribe(a, event.CourseCreated, event.UserCreated) }, func() []int64 { return []int64{a} }},
		{"one created by another process", func() { b = hook(command, event.UserCreated) }, func() []int64 { return []int64{a, b} }},
		{"one deleted by another process", func() {
			if err := command.DeleteWebhook(ctx, d.ID, b); err != nil {
				t.Fatal(err)
			}
		}, func() []int64 { return []int64{a} }},
		{"one created in a write rolled back", func() {
			err := server.tx(ctx, func(tx db) error {
				if _, err := tx.insert(ctx, `INSERT INTO webhook_endpoints (domain_id, url, description, events, secret,
					enabled, created_at, updated_at) VALUES (?, 'https://example.com/gone', '', ' user.created ', 's', 1, '', '')`,
					d.ID); err != nil {
					return err
				}
				// Its event is raised in the same write, from memory.
				if err := emit(ctx, tx, d.ID, event.UserCreatedEvent(lms.User{ID: 1})); err != nil {
					return err
				}
				return errors.New("rolled back")
			})
			if err == nil || err.Error() != "rolled back" {
				t.Fatalf("the write: %v", err)
			}
		}, func() []int64 { return []int64{a} }},
		{"deleted", func() {
			if err := server.DeleteWebhook(ctx, d.ID, a); err != nil {
				t.Fatal(err)
			}
		}, func() []int64 { return nil }},
	}
	claimAt := time.Now().Add(time.Hour) // every message is due; a claimed one is not claimed again
	for i, s := range steps {
		s.do()
		if _, err := server.CreateUser(ctx, d.ID, lms.User{Name: "U", Username: "u", Email: fmt.Sprintf("u%d@example.com", i)}); err != nil {
			t.Fatalf("%s: creating a user: %v", s.name, err)
		}
		msgs, err := server.ClaimWebhookMessages(ctx, claimAt, time.Hour, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, m := range msgs {
			if m.EventType == event.UserCreated {
				got = append(got, m.EndpointID)
			}
		}
		if want := s.want(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: user.created went to endpoints %v, want %v", s.name, got, want)
		}
	}
}
