package lmsapi_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/store"
)

// newUser creates a user through the API as d (nil: e.Domain) and returns
// its id.
func newUser(t *testing.T, e *Env, d *Domain, username string) int64 {
	t.Helper()
	r := e.Do(Request{Method: "POST", Path: "/api/v1/users/create", Domain: d,
		Body: map[string]any{"username": username, "email": username + "@example.com", "name": strings.ToUpper(username[:1]) + username[1:]}})
	if r.Status != 200 {
		t.Fatalf("create user %s: %d %s", username, r.Status, r.Body)
	}
	return Int(t, r.JSON(t), "id")
}

func post(path string, body any) Request {
	return Request{Method: "POST", Path: "/api/v1" + path, Body: body}
}

func TestGamificationRules(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ann := newUser(t, e, nil, "ann")
		e.Scenarios(t, []Scenario{
			{Name: "list before any is set", Request: Request{Method: "GET", Path: "/api/v1/gamification/rules"}, Status: 200,
				Want: map[string]any{"message": "Point rules listed", "data.#": 9, "data.0.event": "course_enrolled", "data.0.points": 0,
					"data.1.event": "test_enrolled", "data.2.event": "class_enrolled", "data.3.event": "class_attended", "data.8.event": "live_quiz_correct"}},
			{Name: "set", Request: Request{Method: "PUT", Path: "/api/v1/gamification/rules", Body: map[string]any{"event": "course_enrolled", "points": 10}},
				Status: 200, Want: map[string]any{"message": "Point rule set", "data.event": "course_enrolled", "data.points": 10}},
			{Name: "set again (numeric string, form body)", Request: Request{Method: "PUT", Path: "/api/v1/gamification/rules",
				Form: url.Values{"event": {"class_attended"}, "points": {"7"}}}, Status: 200, Want: map[string]any{"data.points": 7}},
			{Name: "set to zero", Request: Request{Method: "PUT", Path: "/api/v1/gamification/rules", Body: map[string]any{"event": "test_enrolled", "points": 0}},
				Status: 200, Want: map[string]any{"data.points": 0}},
			{Name: "list shows them", Request: Request{Method: "GET", Path: "/api/v1/gamification/rules"}, Status: 200,
				Want: map[string]any{"data.0.points": 10, "data.3.points": 7, "data.1.points": 0}},
			{Name: "other domain has its own rules", Request: Request{Method: "GET", Path: "/api/v1/gamification/rules", Domain: &e.Other}, Status: 200,
				Want: map[string]any{"data.0.points": 0, "data.3.points": 0}},
			{Name: "set without fields", Request: Request{Method: "PUT", Path: "/api/v1/gamification/rules", Body: map[string]any{}},
				Status: 400, Fields: []string{"event", "points"}},
			{Name: "set unknown event", Request: Request{Method: "PUT", Path: "/api/v1/gamification/rules", Body: map[string]any{"event": "logged_in", "points": 1}},
				Status: 400, Fields: []string{"event"}},
			{Name: "set negative points", Request: Request{Method: "PUT", Path: "/api/v1/gamification/rules", Body: map[string]any{"event": "course_enrolled", "points": -1}},
				Status: 400, Fields: []string{"points"}},
			{Name: "set points not a number", Request: Request{Method: "PUT", Path: "/api/v1/gamification/rules", Body: map[string]any{"event": "course_enrolled", "points": "ten"}},
				Status: 400, Fields: []string{"points"}},
			{Name: "set without auth", Request: Request{Method: "PUT", Path: "/api/v1/gamification/rules", NoAuth: true,
				Body: map[string]any{"event": "course_enrolled", "points": 1}}, Status: 401},
			{Name: "list without auth", Request: Request{Method: "GET", Path: "/api/v1/gamification/rules", NoAuth: true}, Status: 401},
			{Name: "wrong method", Request: post("/gamification/rules", map[string]any{"event": "course_enrolled", "points": 1}), Status: 405,
				Check: func(t *testing.T, r *Response) {
					if r.Header.Get("Allow") != "GET, HEAD, PUT" {
						t.Errorf("Allow = %q", r.Header.Get("Allow"))
					}
				}},
		})

		// The store's AwardEvent applies the rules the API set.
		ctx := context.Background()
		for _, ev := range []string{store.EventCourseEnrolled, store.EventTestEnrolled, store.EventClassAttended} {
			if err := e.Store.AwardEvent(ctx, e.Domain.ID, ann, ev, ""); err != nil {
				t.Fatal(err)
			}
		}
		e.Scenarios(t, []Scenario{
			{Name: "events awarded by the rules", Request: post("/gamification/user-points", map[string]any{"user_id": ann}), Status: 200,
				Want: map[string]any{"data.gamification_points": 17}},
		})
	})
}

func TestGamificationPoints(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ann := newUser(t, e, nil, "ann")
		bob := newUser(t, e, nil, "bob")
		carol := newUser(t, e, &e.Other, "carol")
		e.Scenarios(t, []Scenario{
			{Name: "grant by user_id", Request: post("/gamification/points", map[string]any{"user_id": ann, "points": 20, "reason": "Welcome"}),
				Status: 200, Want: map[string]any{"message": "Points granted", "data.user_id": ann, "data.points": 20, "data.reason": "Welcome",
					"data.gamification_points": 20, "data.badges_awarded.#": 0},
				Check: func(t *testing.T, r *Response) {
					body := r.JSON(t)
					if Int(t, body, "data.id") <= 0 {
						t.Error("no ledger id")
					}
					if d := time.Now().Unix() - Int(t, body, "data.added"); d < -5 || d > 60 {
						t.Errorf("added is %d s off now", d)
					}
				}},
			{Name: "grant by email in any case", Request: post("/gamification/points", map[string]any{"email": "ANN@example.com", "points": "5", "reason": "Quiz"}),
				Status: 200, Want: map[string]any{"data.user_id": ann, "data.gamification_points": 25}},
			{Name: "deduct", Request: post("/gamification/points", map[string]any{"user_id": ann, "points": -10, "reason": "Refund"}),
				Status: 200, Want: map[string]any{"message": "Points deducted", "data.points": -10, "data.gamification_points": 15}},
			{Name: "deduct below zero is allowed", Request: post("/gamification/points", map[string]any{"user_id": bob, "points": -3, "reason": "Penalty"}),
				Status: 200, Want: map[string]any{"data.gamification_points": -3}},
			{Name: "userId alias, query string", Request: Request{Method: "POST", Path: "/api/v1/gamification/points?userId=" + itoa(bob) + "&points=4&reason=x"},
				Status: 200, Want: map[string]any{"data.user_id": bob, "data.gamification_points": 1}},
			{Name: "user_id and email of the same user", Request: post("/gamification/points", map[string]any{"user_id": bob, "email": "bob@example.com", "points": 1, "reason": "x"}),
				Status: 200, Want: map[string]any{"data.gamification_points": 2}},
			{Name: "neither user_id nor email", Request: post("/gamification/points", map[string]any{"points": 1, "reason": "x"}),
				Status: 400, Fields: []string{"user_id", "email"}},
			{Name: "nothing at all", Request: post("/gamification/points", map[string]any{}),
				Status: 400, Fields: []string{"user_id", "email", "points", "reason"}},
			{Name: "zero points", Request: post("/gamification/points", map[string]any{"user_id": ann, "points": 0, "reason": "x"}),
				Status: 400, Fields: []string{"points"}},
			{Name: "fractional points", Request: post("/gamification/points", map[string]any{"user_id": ann, "points": 1.5, "reason": "x"}),
				Status: 400, Fields: []string{"points"}},
			{Name: "too many points", Request: post("/gamification/points", map[string]any{"user_id": ann, "points": 2000000000, "reason": "x"}),
				Status: 400, Fields: []string{"points"}},
			{Name: "blank reason", Request: post("/gamification/points", map[string]any{"user_id": ann, "points": 1, "reason": "  "}),
				Status: 400, Fields: []string{"reason"}},
			{Name: "reason too long", Request: post("/gamification/points", map[string]any{"user_id": ann, "points": 1, "reason": strings.Repeat("r", 501)}),
				Status: 400, Fields: []string{"reason"}},
			{Name: "user_id not a number", Request: post("/gamification/points", map[string]any{"user_id": "ann", "points": 1, "reason": "x"}),
				Status: 400, Fields: []string{"user_id"}},
			{Name: "user_id not positive", Request: post("/gamification/points", map[string]any{"user_id": -4, "points": 1, "reason": "x"}),
				Status: 400, Fields: []string{"user_id"}},
			{Name: "user_id and email of different users", Request: post("/gamification/points", map[string]any{"user_id": ann, "email": "bob@example.com", "points": 1, "reason": "x"}),
				Status: 400, Fields: []string{"user_id", "email"}},
			{Name: "unknown user_id", Request: post("/gamification/points", map[string]any{"user_id": 999999, "points": 1, "reason": "x"}), Status: 404},
			{Name: "unknown email", Request: post("/gamification/points", map[string]any{"email": "nobody@example.com", "points": 1, "reason": "x"}), Status: 404},
			{Name: "other domain's user id", Request: post("/gamification/points", map[string]any{"user_id": carol, "points": 1, "reason": "x"}), Status: 404},
			{Name: "other domain's credentials", Request: Request{Method: "POST", Path: "/api/v1/gamification/points", Domain: &e.Other,
				Body: map[string]any{"user_id": ann, "points": 1, "reason": "x"}}, Status: 404},
			{Name: "without auth", Request: Request{Method: "POST", Path: "/api/v1/gamification/points", NoAuth: true,
				Body: map[string]any{"user_id": ann, "points": 1, "reason": "x"}}, Status: 401},
			{Name: "wrong method", Request: Request{Method: "GET", Path: "/api/v1/gamification/points"}, Status: 405},
			{Name: "totals unchanged by rejected calls", Request: post("/gamification/user-points", map[string]any{"user_id": ann}), Status: 200,
				Want: map[string]any{"data.gamification_points": 15}},
		})
		// That the ledger is append-only (one row per accepted call) is
		// checked by the store's TestAwardEvent and gamification tests.
	})
}

func TestGamificationBadges(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		create := func(d *Domain, desc string, need int) int64 {
			t.Helper()
			r := e.Do(Request{Method: "POST", Path: "/api/v1/gamification/badges", Domain: d, Body: map[string]any{"description": desc, "points_required": need}})
			if r.Status != 200 {
				t.Fatalf("create badge: %d %s", r.Status, r.Body)
			}
			return Int(t, r.JSON(t), "data.id")
		}
		gold := create(nil, "Gold", 500)
		bronze := create(nil, "Bronze", 10)
		foreign := create(&e.Other, "Theirs", 1)
		path := func(id int64) string { return "/api/v1/gamification/badges/" + itoa(id) }
		e.Scenarios(t, []Scenario{
			{Name: "create", Request: post("/gamification/badges", map[string]any{"description": "Silver", "points_required": 100}), Status: 200,
				Want: map[string]any{"message": "Badge created", "data.description": "Silver", "data.points_required": 100, "data.awarded_at": Absent}},
			{Name: "create with zero points_required", Request: post("/gamification/badges", map[string]any{"description": "Joined", "points_required": "0"}), Status: 200,
				Want: map[string]any{"data.points_required": 0}},
			{Name: "create without fields", Request: post("/gamification/badges", map[string]any{}), Status: 400,
				Fields: []string{"description", "points_required"}},
			{Name: "create negative points_required", Request: post("/gamification/badges", map[string]any{"description": "x", "points_required": -1}), Status: 400,
				Fields: []string{"points_required"}},
			{Name: "create points_required not an integer", Request: post("/gamification/badges", map[string]any{"description": "x", "points_required": "lots"}), Status: 400,
				Fields: []string{"points_required"}},
			{Name: "create description too long", Request: post("/gamification/badges", map[string]any{"description": strings.Repeat("d", 1001), "points_required": 1}), Status: 400,
				Fields: []string{"description"}},
			{Name: "create without auth", Request: Request{Method: "POST", Path: "/api/v1/gamification/badges", NoAuth: true,
				Body: map[string]any{"description": "x", "points_required": 1}}, Status: 401},
			{Name: "list by points_required", Request: Request{Method: "GET", Path: "/api/v1/gamification/badges"}, Status: 200,
				Want: map[string]any{"message": "Badges listed", "total": 4, "data.#": 4, "data.0.description": "Joined", "data.1.id": bronze,
					"data.3.id": gold, "page": 1, "limit": 50}},
			{Name: "list paginates", Request: Request{Method: "GET", Path: "/api/v1/gamification/badges?page=2&limit=3"}, Status: 200,
				Want: map[string]any{"total": 4, "data.#": 1, "data.0.id": gold, "page": 2, "limit": 3}},
			{Name: "list bad limit", Request: Request{Method: "GET", Path: "/api/v1/gamification/badges?limit=0"}, Status: 400, Fields: []string{"limit"}},
			{Name: "other domain lists its own", Request: Request{Method: "GET", Path: "/api/v1/gamification/badges", Domain: &e.Other}, Status: 200,
				Want: map[string]any{"total": 1, "data.0.id": foreign}},
			{Name: "list without auth", Request: Request{Method: "GET", Path: "/api/v1/gamification/badges", NoAuth: true}, Status: 401},
			{Name: "wrong method on collection", Request: Request{Method: "DELETE", Path: "/api/v1/gamification/badges"}, Status: 405},
			{Name: "get", Request: Request{Method: "GET", Path: path(gold)}, Status: 200,
				Want: map[string]any{"message": "Badge found", "data.id": gold, "data.description": "Gold", "data.points_required": 500}},
			{Name: "get unknown", Request: Request{Method: "GET", Path: path(999999)}, Status: 404},
			{Name: "get other domain's", Request: Request{Method: "GET", Path: path(foreign)}, Status: 404},
			{Name: "get bad id", Request: Request{Method: "GET", Path: "/api/v1/gamification/badges/abc"}, Status: 400, Fields: []string{"badge_id"}},
			{Name: "get without auth", Request: Request{Method: "GET", Path: path(gold), NoAuth: true}, Status: 401},
			{Name: "update description", Request: Request{Method: "PUT", Path: path(gold), Body: map[string]any{"description": "Golden"}}, Status: 200,
				Want: map[string]any{"message": "Badge updated", "data.description": "Golden", "data.points_required": 500}},
			{Name: "update points_required", Request: Request{Method: "PUT", Path: path(gold), Body: map[string]any{"points_required": 400}}, Status: 200,
				Want: map[string]any{"data.description": "Golden", "data.points_required": 400}},
			{Name: "update nothing", Request: Request{Method: "PUT", Path: path(gold), Body: map[string]any{}}, Status: 400,
				Fields: []string{"description", "points_required"}},
			{Name: "update negative", Request: Request{Method: "PUT", Path: path(gold), Body: map[string]any{"points_required": -5}}, Status: 400,
				Fields: []string{"points_required"}},
			{Name: "update other domain's", Request: Request{Method: "PUT", Path: path(foreign), Body: map[string]any{"description": "Mine"}}, Status: 404},
			{Name: "update unknown", Request: Request{Method: "PUT", Path: path(999999), Body: map[string]any{"description": "Mine"}}, Status: 404},
			{Name: "update without auth", Request: Request{Method: "PUT", Path: path(gold), NoAuth: true, Body: map[string]any{"description": "x"}}, Status: 401},
			{Name: "get after update", Request: Request{Method: "GET", Path: path(gold)}, Status: 200, Want: map[string]any{"data.points_required": 400}},
			{Name: "wrong method on item", Request: Request{Method: "POST", Path: path(gold)}, Status: 405,
				Check: func(t *testing.T, r *Response) {
					if r.Header.Get("Allow") != "DELETE, GET, HEAD, PUT" {
						t.Errorf("Allow = %q", r.Header.Get("Allow"))
					}
				}},
			{Name: "delete other domain's", Request: Request{Method: "DELETE", Path: path(foreign)}, Status: 404},
			{Name: "delete without auth", Request: Request{Method: "DELETE", Path: path(bronze), NoAuth: true}, Status: 401},
			{Name: "delete", Request: Request{Method: "DELETE", Path: path(bronze)}, Status: 200, Want: map[string]any{"data.id": bronze}},
			{Name: "deleted is gone", Request: Request{Method: "GET", Path: path(bronze)}, Status: 404},
			{Name: "delete again", Request: Request{Method: "DELETE", Path: path(bronze)}, Status: 404},
			{Name: "other domain's badge untouched", Request: Request{Method: "GET", Path: path(foreign), Domain: &e.Other}, Status: 200,
				Want: map[string]any{"data.description": "Theirs"}},
		})
	})
}

func TestGamificationUserPointsAndBadges(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ann := newUser(t, e, nil, "ann")
		bob := newUser(t, e, nil, "bob")
		carol := newUser(t, e, &e.Other, "carol")
		// Points first, badges afterwards: only an evaluation awards them.
		if r := e.LMS("POST", "/gamification/points", map[string]any{"user_id": ann, "points": 25, "reason": "x"}); r.Status != 200 {
			t.Fatalf("grant: %d %s", r.Status, r.Body)
		}
		var ids []int64
		for _, b := range []struct {
			desc string
			need int
		}{{"Ten", 10}, {"Twenty", 20}, {"Hundred", 100}} {
			r := e.LMS("POST", "/gamification/badges", map[string]any{"description": b.desc, "points_required": b.need})
			ids = append(ids, Int(t, r.JSON(t), "data.id"))
		}
		e.Do(Request{Method: "POST", Path: "/api/v1/gamification/badges", Domain: &e.Other, Body: map[string]any{"description": "Theirs", "points_required": 0}})

		e.Scenarios(t, []Scenario{
			{Name: "no badges before evaluation", Request: post("/gamification/user-badges", map[string]any{"user_id": ann}), Status: 200,
				Want: map[string]any{"message": "User badges listed", "data.#": 0}},
			{Name: "user-points evaluates", Request: post("/gamification/user-points", map[string]any{"user_id": ann}), Status: 200,
				Want: map[string]any{"message": "User points found; badges evaluated, 2 awarded", "data.user_id": ann, "data.gamification_points": 25,
					"data.badges_awarded.#": 2, "data.badges_awarded.0.id": ids[0], "data.badges_awarded.1.id": ids[1]}},
			{Name: "evaluating again awards nothing", Request: post("/gamification/user-points", map[string]any{"email": "ann@example.com"}), Status: 200,
				Want: map[string]any{"message": "User points found; badges evaluated, 0 awarded", "data.gamification_points": 25, "data.badges_awarded.#": 0}},
			{Name: "user-badges", Request: post("/gamification/user-badges", map[string]any{"user_id": ann}), Status: 200,
				Want: map[string]any{"data.#": 2, "data.0.id": ids[0], "data.0.description": "Ten", "data.0.points_required": 10, "data.1.description": "Twenty"},
				Check: func(t *testing.T, r *Response) {
					at := Str(t, r.JSON(t), "data.0.awarded_at")
					if _, err := time.Parse(time.RFC3339, at); err != nil {
						t.Errorf("awarded_at %q: %v", at, err)
					}
				}},
			{Name: "user-badges by email", Request: post("/gamification/user-badges", map[string]any{"email": "ANN@example.com"}), Status: 200,
				Want: map[string]any{"data.#": 2}},
			{Name: "user with no points", Request: post("/gamification/user-points", map[string]any{"user_id": bob}), Status: 200,
				Want: map[string]any{"data.gamification_points": 0, "data.badges_awarded.#": 0}},
			{Name: "user with no badges", Request: post("/gamification/user-badges", map[string]any{"user_id": bob}), Status: 200,
				Want: map[string]any{"data.#": 0}},
			{Name: "user-points neither", Request: post("/gamification/user-points", map[string]any{}), Status: 400, Fields: []string{"user_id", "email"}},
			{Name: "user-points bad id", Request: post("/gamification/user-points", map[string]any{"user_id": "x"}), Status: 400, Fields: []string{"user_id"}},
			{Name: "user-points mismatch", Request: post("/gamification/user-points", map[string]any{"user_id": ann, "email": "bob@example.com"}), Status: 400,
				Fields: []string{"user_id", "email"}},
			{Name: "user-points unknown id", Request: post("/gamification/user-points", map[string]any{"user_id": 999999}), Status: 404},
			{Name: "user-points unknown email", Request: post("/gamification/user-points", map[string]any{"email": "no@example.com"}), Status: 404},
			{Name: "user-points other domain's user", Request: post("/gamification/user-points", map[string]any{"user_id": carol}), Status: 404},
			{Name: "user-points other domain's credentials", Request: Request{Method: "POST", Path: "/api/v1/gamification/user-points", Domain: &e.Other,
				Body: map[string]any{"user_id": ann}}, Status: 404},
			{Name: "user-points without auth", Request: Request{Method: "POST", Path: "/api/v1/gamification/user-points", NoAuth: true,
				Body: map[string]any{"user_id": ann}}, Status: 401},
			{Name: "user-points wrong method", Request: Request{Method: "GET", Path: "/api/v1/gamification/user-points"}, Status: 405},
			{Name: "user-badges neither", Request: post("/gamification/user-badges", map[string]any{}), Status: 400, Fields: []string{"user_id", "email"}},
			{Name: "user-badges bad id", Request: post("/gamification/user-badges", map[string]any{"user_id": 0}), Status: 400, Fields: []string{"user_id"}},
			{Name: "user-badges unknown", Request: post("/gamification/user-badges", map[string]any{"user_id": 999999}), Status: 404},
			{Name: "user-badges other domain's user", Request: post("/gamification/user-badges", map[string]any{"user_id": carol}), Status: 404},
			{Name: "user-badges without auth", Request: Request{Method: "POST", Path: "/api/v1/gamification/user-badges", NoAuth: true,
				Body: map[string]any{"user_id": ann}}, Status: 401},
			{Name: "user-badges wrong method", Request: Request{Method: "PUT", Path: "/api/v1/gamification/user-badges"}, Status: 405},
			// A grant that crosses a threshold awards at once.
			{Name: "grant crossing a threshold", Request: post("/gamification/points", map[string]any{"user_id": ann, "points": 80, "reason": "x"}), Status: 200,
				Want: map[string]any{"data.gamification_points": 105, "data.badges_awarded.#": 1, "data.badges_awarded.0.id": ids[2]}},
			// Deductions never take a badge away.
			{Name: "deduct", Request: post("/gamification/points", map[string]any{"user_id": ann, "points": -100, "reason": "x"}), Status: 200,
				Want: map[string]any{"data.gamification_points": 5}},
			{Name: "badges kept", Request: post("/gamification/user-badges", map[string]any{"user_id": ann}), Status: 200,
				Want: map[string]any{"data.#": 3}},
		})
	})
}

func TestGamificationLeaderboard(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ann := newUser(t, e, nil, "ann")
		bob := newUser(t, e, nil, "bob")
		cy := newUser(t, e, nil, "cy")
		newUser(t, e, nil, "dee") // no ledger rows: not on the board
		carol := newUser(t, e, &e.Other, "carol")
		grant := func(d *Domain, user int64, points int) {
			t.Helper()
			r := e.Do(Request{Method: "POST", Path: "/api/v1/gamification/points", Domain: d, Body: map[string]any{"user_id": user, "points": points, "reason": "x"}})
			if r.Status != 200 {
				t.Fatalf("grant: %d %s", r.Status, r.Body)
			}
		}
		grant(nil, ann, 30)
		grant(nil, bob, 50)
		grant(nil, cy, 30)
		grant(&e.Other, carol, 1000)
		old := time.Now().UTC().AddDate(0, 0, -40) // before this month and this week
		if _, _, err := e.Store.AddPoints(context.Background(), e.Domain.ID, store.PointsEntry{UserID: cy, Points: 100, Reason: "old", CreatedAt: old}); err != nil {
			t.Fatal(err)
		}
		recent := func(path string) func(t *testing.T, r *Response) {
			return func(t *testing.T, r *Response) {
				if d := time.Now().Unix() - Int(t, r.JSON(t), path); d < -5 || d > 120 {
					t.Errorf("%s is %d s off now", path, d)
				}
			}
		}
		lb := "/api/v1/gamification/leaderboard"
		e.Scenarios(t, []Scenario{
			{Name: "all time", Request: Request{Method: "GET", Path: lb}, Status: 200,
				Want: map[string]any{"message": "Leaderboard listed", "period": "all", "total": 3, "page": 1, "limit": 50, "data.#": 3,
					"data.0.user_id": cy, "data.0.name": "Cy", "data.0.points": 130, "data.0.rank": 1,
					"data.1.user_id": bob, "data.1.points": 50, "data.2.user_id": ann, "data.2.points": 30, "data.2.rank": 3},
				Check: recent("data.0.added")},
			{Name: "this month: ties by user id", Request: Request{Method: "GET", Path: lb + "?period=month"}, Status: 200,
				Want: map[string]any{"period": "month", "total": 3, "data.0.user_id": bob, "data.1.user_id": ann, "data.1.points": 30,
					"data.2.user_id": cy, "data.2.points": 30}},
			{Name: "this week, POST body, paginated", Request: post("/gamification/leaderboard", map[string]any{"period": "WEEK", "page": 2, "limit": 1}), Status: 200,
				Want: map[string]any{"period": "week", "total": 3, "page": 2, "limit": 1, "data.#": 1, "data.0.user_id": ann, "data.0.rank": 2}},
			{Name: "past the last page", Request: Request{Method: "GET", Path: lb + "?page=9"}, Status: 200, Want: map[string]any{"total": 3, "data.#": 0}},
			{Name: "other domain's board", Request: Request{Method: "GET", Path: lb, Domain: &e.Other}, Status: 200,
				Want: map[string]any{"total": 1, "data.0.user_id": carol, "data.0.points": 1000}},
			{Name: "bad period", Request: Request{Method: "GET", Path: lb + "?period=year"}, Status: 400, Fields: []string{"period"},
				Check: func(t *testing.T, r *Response) {
					if !strings.Contains(string(r.Body), "all, month, week") {
						t.Errorf("error does not list the periods: %s", r.Body)
					}
				}},
			{Name: "bad paging", Request: post("/gamification/leaderboard", map[string]any{"page": 0, "limit": 501, "period": "day"}), Status: 400,
				Fields: []string{"page", "limit", "period"}},
			{Name: "without auth", Request: Request{Method: "GET", Path: lb, NoAuth: true}, Status: 401},
			{Name: "wrong method", Request: Request{Method: "DELETE", Path: lb}, Status: 405},
			{Name: "delete a user", Request: Request{Method: "DELETE", Path: "/api/v1/users/delete", Body: map[string]any{"email": "bob@example.com"}}, Status: 200},
			{Name: "deleted user's points are gone", Request: Request{Method: "GET", Path: lb}, Status: 200,
				Want: map[string]any{"total": 2, "data.0.user_id": cy, "data.1.user_id": ann}},
		})
	})
}

// The leaderboard entry's fields are numbers, as the seed types them.
func TestGamificationLeaderboardTypes(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ann := newUser(t, e, nil, "ann")
		e.LMS("POST", "/gamification/points", map[string]any{"user_id": ann, "points": 3, "reason": "x"})
		r := e.LMS("GET", "/gamification/leaderboard", nil)
		var body struct {
			Data []map[string]any `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Data) != 1 {
			t.Fatalf("%v %s", err, r.Body)
		}
		for _, k := range []string{"user_id", "points", "added", "rank"} {
			if _, ok := body.Data[0][k].(float64); !ok {
				t.Errorf("%s is %T, want a number", k, body.Data[0][k])
			}
		}
		if _, ok := body.Data[0]["name"].(string); !ok {
			t.Errorf("name is not a string")
		}
	})
}
