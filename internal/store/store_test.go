package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

func TestLiveClassRoundTrip(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			in := lms.LiveClass{Title: "Algebra", Date: "2030-01-02", StartMinute: 540, EndMinute: 600, TimezoneID: 28,
				TimezoneName: "Europe/London", IsRecurring: true, Repeat: 4, Currency: "usd", Published: 1,
				Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}, {Start: start.AddDate(0, 0, 7), End: start.AddDate(0, 0, 7).Add(time.Hour), Cancelled: true}}}
			c, err := st.CreateLiveClass(ctx, d.ID, in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.LiveClass(ctx, d.ID, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != "Algebra" || !got.IsRecurring || got.Repeat != 4 || len(got.Occurrences) != 2 ||
				!got.Occurrences[0].Start.Equal(start) || !got.Occurrences[1].Cancelled || got.Occurrences[0].Cancelled {
				t.Fatalf("round trip: %+v", got)
			}
			other, _, _ := st.CreateDomain(ctx, "B")
			if _, err := st.LiveClass(ctx, other.ID, c.ID); !lms.IsNotFound(err) {
				t.Fatalf("other domain sees class: %v", err)
			}
			if err := st.DeleteLiveClass(ctx, d.ID, c.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := st.LiveClass(ctx, d.ID, c.ID); !lms.IsNotFound(err) {
				t.Fatalf("deleted class still there: %v", err)
			}
		})
	}
}

// A read whose context has already ended is not run, on both databases
// (on SQLite reads run without their context's cancellation once started;
// store.go, uninterrupted).
func TestReadWithEndedContext(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			id := createClasses(t, st, d.ID, nil, "Algebra")[0]
			if _, err := st.LiveClass(ctx, d.ID, id); err != nil {
				t.Fatalf("live context: %v", err)
			}
			ended, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := st.LiveClass(ended, d.ID, id); !errors.Is(err, context.Canceled) {
				t.Errorf("point read with an ended context: %v, want context.Canceled", err)
			}
			if _, _, err := st.ListLiveClasses(ended, d.ID, store.ClassFilter{}, store.Page{Limit: 10}); !errors.Is(err, context.Canceled) {
				t.Errorf("page with an ended context: %v, want context.Canceled", err)
			}
		})
	}
}
