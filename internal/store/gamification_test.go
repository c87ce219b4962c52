package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

func gamificationFixture(t *testing.T, st *store.Store, name string) (domainID, userID int64) {
	t.Helper()
	ctx := context.Background()
	d, _, err := st.CreateDomain(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	u, err := st.CreateUser(ctx, d.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return d.ID, u.ID
}

func TestAwardEvent(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			dom, user := gamificationFixture(t, st, "A")
			other, otherUser := gamificationFixture(t, st, "B")

			// Unset rule: nothing happens.
			if err := st.AwardEvent(ctx, dom, user, store.EventCourseEnrolled, ""); err != nil {
				t.Fatal(err)
			}
			// Rule set to 0: nothing happens.
			if _, err := st.SetPointRule(ctx, dom, store.EventTestEnrolled, 0); err != nil {
				t.Fatal(err)
			}
			if err := st.AwardEvent(ctx, dom, user, store.EventTestEnrolled, ""); err != nil {
				t.Fatal(err)
			}
			if h, _ := st.PointsHistory(ctx, dom, user); len(h) != 0 {
				t.Fatalf("unset or zero rule wrote ledger rows: %+v", h)
			}

			if _, err := st.SetPointRule(ctx, dom, store.EventCourseEnrolled, 10); err != nil {
				t.Fatal(err)
			}
			if _, err := st.SetPointRule(ctx, dom, store.EventCourseEnrolled, 15); err != nil { // update
				t.Fatal(err)
			}
			badge, err := st.CreateBadge(ctx, dom, store.Badge{Description: "Starter", PointsRequired: 30})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.AwardEvent(ctx, dom, user, store.EventCourseEnrolled, "Enrolled in Algebra"); err != nil {
				t.Fatal(err)
			}
			if err := st.AwardEvent(ctx, dom, user, store.EventCourseEnrolled, ""); err != nil {
				t.Fatal(err)
			}
			total, err := st.UserPoints(ctx, dom, user)
			if err != nil || total != 30 {
				t.Fatalf("total = %d, %v; want 30", total, err)
			}
			h, err := st.PointsHistory(ctx, dom, user)
			if err != nil || len(h) != 2 || h[0].Reason != "Enrolled in Algebra" || h[1].Reason != store.EventCourseEnrolled ||
				h[0].Event != store.EventCourseEnrolled || h[0].Points != 15 {
				t.Fatalf("history = %+v, %v", h, err)
			}
			// Reaching the threshold through an event awards the badge.
			bs, err := st.UserBadges(ctx, dom, user)
			if err != nil || len(bs) != 1 || bs[0].ID != badge.ID || bs[0].AwardedAt.IsZero() {
				t.Fatalf("badges = %+v, %v", bs, err)
			}

			// Rules are per domain; the other domain's rule is unset.
			if err := st.AwardEvent(ctx, other, otherUser, store.EventCourseEnrolled, ""); err != nil {
				t.Fatal(err)
			}
			if n, _ := st.UserPoints(ctx, other, otherUser); n != 0 {
				t.Fatalf("other domain got %d points", n)
			}
			// Another domain's user is not found.
			if err := st.AwardEvent(ctx, other, user, store.EventCourseEnrolled, ""); err != nil {
				t.Fatalf("unset rule must be a no-op before looking at the user: %v", err)
			}
			if _, err := st.SetPointRule(ctx, other, store.EventCourseEnrolled, 5); err != nil {
				t.Fatal(err)
			}
			if err := st.AwardEvent(ctx, other, user, store.EventCourseEnrolled, ""); !lms.IsNotFound(err) {
				t.Fatalf("other domain's user: %v, want not found", err)
			}
			if err := st.AwardEvent(ctx, dom, user, "nonsense", ""); err == nil {
				t.Fatal("unknown event accepted")
			}
			rules, err := st.PointRules(ctx, dom)
			if err != nil || len(rules) != len(store.PointEvents) || rules[0] != (store.PointRule{Event: store.EventCourseEnrolled, Points: 15}) {
				t.Fatalf("rules = %+v, %v", rules, err)
			}
		})
	}
}

func TestBadgesAwardedOnce(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			dom, user := gamificationFixture(t, st, "A")
			b10, _ := st.CreateBadge(ctx, dom, store.Badge{Description: "Ten", PointsRequired: 10})
			b20, _ := st.CreateBadge(ctx, dom, store.Badge{Description: "Twenty", PointsRequired: 20})
			_, res, err := st.AddPoints(ctx, dom, store.PointsEntry{UserID: user, Points: 12, Reason: "r"})
			if err != nil || res.Total != 12 || len(res.Awarded) != 1 || res.Awarded[0].ID != b10.ID {
				t.Fatalf("first grant: %+v, %v", res, err)
			}
			_, res, _ = st.AddPoints(ctx, dom, store.PointsEntry{UserID: user, Points: -5, Reason: "r"})
			if res.Total != 7 || len(res.Awarded) != 0 {
				t.Fatalf("deduction: %+v", res)
			}
			_, res, _ = st.AddPoints(ctx, dom, store.PointsEntry{UserID: user, Points: 13, Reason: "r"})
			if res.Total != 20 || len(res.Awarded) != 1 || res.Awarded[0].ID != b20.ID {
				t.Fatalf("second badge: %+v", res)
			}
			res, err = st.EvaluateBadges(ctx, dom, user)
			if err != nil || res.Total != 20 || len(res.Awarded) != 0 {
				t.Fatalf("re-evaluation: %+v, %v", res, err)
			}
			if bs, _ := st.UserBadges(ctx, dom, user); len(bs) != 2 {
				t.Fatalf("badges = %+v", bs)
			}
			// Deleting the badge takes it from users.
			if err := st.DeleteBadge(ctx, dom, b10.ID); err != nil {
				t.Fatal(err)
			}
			if bs, _ := st.UserBadges(ctx, dom, user); len(bs) != 1 || bs[0].ID != b20.ID {
				t.Fatalf("after delete: %+v", bs)
			}
		})
	}
}

func TestGamificationConcurrency(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			dom, user := gamificationFixture(t, st, "A")
			if _, err := st.SetPointRule(ctx, dom, store.EventClassAttended, 3); err != nil {
				t.Fatal(err)
			}
			// Thresholds that many goroutines cross at about the same time.
			var badgeIDs []int64
			for _, need := range []int64{1, 50, 100, 150, 200} {
				bd, err := st.CreateBadge(ctx, dom, store.Badge{Description: "B", PointsRequired: need})
				if err != nil {
					t.Fatal(err)
				}
				badgeIDs = append(badgeIDs, bd.ID)
			}
			const workers = 40
			var wg sync.WaitGroup
			errs := make(chan error, workers*3)
			awarded := make(chan int64, workers*len(badgeIDs)*3)
			start := make(chan struct{})
			for i := 0; i < workers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, res, err := st.AddPoints(ctx, dom, store.PointsEntry{UserID: user, Points: 2, Reason: "grant"})
					if err != nil {
						errs <- err
						return
					}
					for _, a := range res.Awarded {
						awarded <- a.ID
					}
					if err := st.AwardEvent(ctx, dom, user, store.EventClassAttended, ""); err != nil {
						errs <- err
						return
					}
					res, err = st.EvaluateBadges(ctx, dom, user)
					if err != nil {
						errs <- err
						return
					}
					for _, a := range res.Awarded {
						awarded <- a.ID
					}
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			close(awarded)
			for err := range errs {
				t.Error(err)
			}
			total, err := st.UserPoints(ctx, dom, user)
			if err != nil || total != workers*5 {
				t.Fatalf("total = %d, %v; want %d", total, err, workers*5)
			}
			seen := map[int64]int{}
			for id := range awarded {
				seen[id]++
			}
			for _, id := range badgeIDs {
				// AwardEvent does not report its awards, so a badge may be
				// reported zero times here, but never twice.
				if seen[id] > 1 {
					t.Errorf("badge %d reported awarded %d times, want at most 1", id, seen[id])
				}
			}
			bs, err := st.UserBadges(ctx, dom, user)
			if err != nil || len(bs) != len(badgeIDs) {
				t.Fatalf("user has %d badges (%v), want %d", len(bs), err, len(badgeIDs))
			}
		})
	}
}

// Concurrent grants alone (no later evaluation) must award a badge whose
// threshold only their sum reaches: each grant evaluates after the ones
// before it have committed.
func TestConcurrentGrantsCrossThreshold(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			dom, _ := gamificationFixture(t, st, "A")
			const workers = 30
			bd, err := st.CreateBadge(ctx, dom, store.Badge{Description: "All", PointsRequired: workers})
			if err != nil {
				t.Fatal(err)
			}
			for round := 0; round < 5; round++ {
				u, err := st.CreateUser(ctx, dom, lms.User{Name: "U", Username: "u", Email: fmt.Sprintf("u%d@example.com", round)})
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := 0; i < workers; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						if _, _, err := st.AddPoints(ctx, dom, store.PointsEntry{UserID: u.ID, Points: 1, Reason: "r"}); err != nil {
							t.Error(err)
						}
					}()
				}
				close(start)
				wg.Wait()
				bs, err := st.UserBadges(ctx, dom, u.ID)
				if err != nil || len(bs) != 1 || bs[0].ID != bd.ID {
					t.Fatalf("round %d: badges %+v, %v; want the one badge", round, bs, err)
				}
			}
		})
	}
}

func TestLeaderboardPeriods(t *testing.T) {
	mon := time.Date(2030, 5, 13, 0, 0, 0, 0, time.UTC) // a Monday
	for _, c := range []struct {
		period string
		now    time.Time
		want   time.Time
	}{
		{"all", mon, time.Time{}},
		{"month", time.Date(2030, 5, 15, 23, 59, 0, 0, time.UTC), time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)},
		{"week", time.Date(2030, 5, 15, 10, 0, 0, 0, time.UTC), mon},
		{"week", mon, mon},
		{"week", time.Date(2030, 5, 19, 23, 0, 0, 0, time.UTC), mon},                                        // Sunday
		{"week", time.Date(2030, 6, 2, 1, 0, 0, 0, time.UTC), time.Date(2030, 5, 27, 0, 0, 0, 0, time.UTC)}, // across months
		{"week", time.Date(2030, 5, 13, 1, 0, 0, 0, time.FixedZone("X", 3*3600)), time.Date(2030, 5, 6, 0, 0, 0, 0, time.UTC)},
	} {
		got, ok := store.PeriodStart(c.period, c.now)
		if !ok || !got.Equal(c.want) {
			t.Errorf("PeriodStart(%s, %v) = %v, %v; want %v", c.period, c.now, got, ok, c.want)
		}
	}
	if _, ok := store.PeriodStart("year", mon); ok {
		t.Error("unknown period accepted")
	}

	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			dom, ann := gamificationFixture(t, st, "A")
			bob, _ := st.CreateUser(ctx, dom, lms.User{Name: "Bob", Username: "bob", Email: "bob@example.com"})
			cy, _ := st.CreateUser(ctx, dom, lms.User{Name: "Cy", Username: "cy", Email: "cy@example.com"})
			other, otherUser := gamificationFixture(t, st, "B")
			now := time.Date(2030, 5, 15, 12, 0, 0, 0, time.UTC) // Wednesday
			add := func(d, u, p int64, at time.Time) {
				t.Helper()
				if _, _, err := st.AddPoints(ctx, d, store.PointsEntry{UserID: u, Points: p, Reason: "r", CreatedAt: at}); err != nil {
					t.Fatal(err)
				}
			}
			add(dom, ann, 50, time.Date(2030, 4, 20, 0, 0, 0, 0, time.UTC))    // before the month
			add(dom, ann, 5, time.Date(2030, 5, 14, 8, 0, 0, 0, time.UTC))     // this week
			add(dom, bob.ID, 30, time.Date(2030, 5, 2, 0, 0, 0, 0, time.UTC))  // this month, not week
			add(dom, bob.ID, 25, time.Date(2030, 5, 13, 0, 0, 0, 0, time.UTC)) // Monday 00:00: this week
			add(dom, cy.ID, 55, time.Date(2030, 5, 3, 0, 0, 0, 0, time.UTC))   // ties with ann and bob overall
			add(other, otherUser, 1000, now)

			board := func(period string, offset, limit int) ([]store.LeaderboardEntry, int64) {
				t.Helper()
				since, _ := store.PeriodStart(period, now)
				es, total, err := st.Leaderboard(ctx, dom, store.LeaderboardQuery{Since: since}, store.Page{Offset: offset, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				return es, total
			}
			es, total := board("all", 0, 10)
			if total != 3 || len(es) != 3 || es[0].UserID != ann || es[1].UserID != bob.ID || es[2].UserID != cy.ID ||
				es[0].Points != 55 || es[0].Name != "Ann" || es[0].Rank != 1 || es[2].Rank != 3 ||
				!es[0].Latest.Equal(time.Date(2030, 5, 14, 8, 0, 0, 0, time.UTC)) {
				t.Fatalf("all: %d %+v", total, es)
			}
			es, total = board("all", 1, 1)
			if total != 3 || len(es) != 1 || es[0].UserID != bob.ID || es[0].Rank != 2 {
				t.Fatalf("page 2: %d %+v", total, es)
			}
			es, total = board("month", 0, 10)
			if total != 3 || es[0].UserID != bob.ID || es[1].UserID != cy.ID || es[1].Points != 55 || es[2].UserID != ann || es[2].Points != 5 {
				t.Fatalf("month: %d %+v", total, es)
			}
			es, total = board("week", 0, 10)
			if total != 2 || es[0].UserID != bob.ID || es[0].Points != 25 || es[1].UserID != ann || es[1].Points != 5 ||
				!es[0].Latest.Equal(time.Date(2030, 5, 13, 0, 0, 0, 0, time.UTC)) {
				t.Fatalf("week: %d %+v", total, es)
			}
		})
	}
}
