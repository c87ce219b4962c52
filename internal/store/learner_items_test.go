package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

// EnrolledTests and EnrolledClasses: directly and through a bundle, each
// once; unpublished tests and classes with no sitting left are not listed;
// another domain's learner sees none of it.
func TestEnrolledTestsAndClasses(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			dom, user := gamificationFixture(t, st, "A")
			other, otherUser := gamificationFixture(t, st, "B")
			now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

			test := func(name, status string) int64 {
				tt, err := st.CreateTest(ctx, dom, lms.Test{Name: name, TimeDemo: "00:00:00", TimeTest: "00:00:00"})
				if err != nil {
					t.Fatal(err)
				}
				if err := st.SetTestStatus(ctx, dom, tt.ID, status); err != nil {
					t.Fatal(err)
				}
				return tt.ID
			}
			class := func(title string, start time.Time) int64 {
				c, err := st.CreateLiveClass(ctx, dom, lms.LiveClass{Title: title, Date: start.Format("2006-01-02"), TimezoneName: "UTC",
					Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
				if err != nil {
					t.Fatal(err)
				}
				return c.ID
			}
			final := test("Final", lms.TestPublished)
			draft := test("Draft", lms.Unpublished)
			quiz := test("A quiz", lms.TestPublished)
			soon := class("Soon", now.Add(time.Hour))
			past := class("Past", now.Add(-3*time.Hour))
			enroll := func(kind string, id int64) {
				if _, err := st.Enroll(ctx, dom, kind, id, "ann@example.com"); err != nil {
					t.Fatal(err)
				}
			}
			enroll(lms.KindTest, final)
			enroll(lms.KindTest, draft)
			enroll(lms.KindClass, soon)
			enroll(lms.KindClass, past)
			bundle, err := st.CreateBundle(ctx, dom, lms.Bundle{Name: "Pack"})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []int64{final, quiz} {
				if _, err := st.AddBundleItem(ctx, dom, bundle.ID, lms.Item{Kind: lms.KindTest, ID: id}); err != nil {
					t.Fatal(err)
				}
			}
			enroll(lms.KindBundle, bundle.ID)

			tests, err := st.EnrolledTests(ctx, dom, user)
			if err != nil {
				t.Fatal(err)
			}
			if len(tests) != 2 || tests[0].ID != quiz || tests[1].ID != final {
				t.Errorf("tests %+v, want A quiz and Final, once each", tests)
			}
			classes, err := st.EnrolledClasses(ctx, dom, user, now)
			if err != nil {
				t.Fatal(err)
			}
			if len(classes) != 1 || classes[0].ID != soon || len(classes[0].Occurrences) != 1 {
				t.Errorf("classes %+v, want Soon with its sitting", classes)
			}
			// Domain B's learner, and domain B asking with A's learner's id.
			for _, q := range []struct{ dom, user int64 }{{other, otherUser}, {other, user}} {
				if ts, _ := st.EnrolledTests(ctx, q.dom, q.user); len(ts) != 0 {
					t.Errorf("domain %d user %d: tests %+v", q.dom, q.user, ts)
				}
				if cs, _ := st.EnrolledClasses(ctx, q.dom, q.user, now); len(cs) != 0 {
					t.Errorf("domain %d user %d: classes %+v", q.dom, q.user, cs)
				}
			}
		})
	}
}
