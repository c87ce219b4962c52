package lmsapi_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
)

// TestTextParameters: every parameter must be UTF-8 text without NUL, on
// every endpoint (read-only ones included) and whatever the body type;
// both databases answer the same 400 naming the field (issue 12, items 1
// and 6).
func TestTextParameters(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		e.Scenarios(t, []Scenario{
			{Name: "NUL in a JSON string", Request: api("POST", "/users/create", map[string]any{"username": "a\u0000b", "email": "nul@example.com"}),
				Status: 400, Fields: []string{"username"}},
			{Name: "NUL in the query of a read", Request: Request{Method: "POST", Path: "/api/v1/users/list?search=a%00"},
				Status: 400, Fields: []string{"search"}},
			{Name: "invalid UTF-8 in a form body", Request: Request{Method: "POST", Path: "/api/v1/courses/create", Body: nil,
				Form: url.Values{"course_name": {"\xff\xfeab"}}}, Status: 400, Fields: []string{"course_name"}},
			{Name: "invalid UTF-8 in a JSON body", Request: api("POST", "/courses/create", "{\"course_name\":\"\xff\xfeab\"}"),
				Status: 400, Fields: []string{"body"}},
			{Name: "invalid UTF-8 in the path", Request: api("GET", "/users/getuserbyEmail/%FF%FE", nil),
				Status: 400, Fields: []string{"email"}},
			{Name: "text after the JSON object", Request: api("POST", "/courses/create", `{"course_name":"x"} junk`),
				Status: 400, Fields: []string{"body"}},
			{Name: "a second object", Request: api("POST", "/courses/create", `{"course_name":"x"}{"course_name":"y"}`),
				Status: 400, Fields: []string{"body"}},
			{Name: "object for a string", Request: api("POST", "/courses/create", map[string]any{"course_name": map[string]any{"a": 1}}),
				Status: 400, Fields: []string{"course_name"}},
			{Name: "boolean for a string", Request: api("POST", "/courses/create", map[string]any{"course_name": true}),
				Status: 400, Fields: []string{"course_name"}},
			{Name: "array for a string", Request: api("POST", "/courses/create", map[string]any{"course_name": []any{"a"}}),
				Status: 400, Fields: []string{"course_name"}},
			{Name: "null body is an empty one", Request: api("POST", "/courses/create", `null`), Status: 400, Fields: []string{"course_name"}},
			{Name: "text is still text", Request: api("POST", "/courses/create", map[string]any{"course_name": "Ça va — 日本"}),
				Status: 200, Want: map[string]any{"data.course_name": "Ça va — 日本"}},
		})
	})
}

// TestIntegerRanges: integers are checked against their field's limit on
// input, so PostgreSQL's 32-bit columns never overflow (items 5 and 9).
func TestIntegerRanges(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		course := create(t, e, "/courses/create", map[string]any{"course_name": "Ranges"}, "data.course_id")
		pricing := func(days any) map[string]any {
			return map[string]any{"course_id": course, "scheme_price": "10", "scheme_days": days}
		}
		disc := func(limit any) map[string]any {
			return map[string]any{"course_id": course, "discount_type": "flat", "special_price": "1", "is_no_limit": 0, "discount_limit": limit}
		}
		e.Scenarios(t, []Scenario{
			{Name: "scheme_days 2^31", Request: api("POST", "/shoppingCart/courses/addpricing", pricing(int64(1)<<31)), Status: 400, Fields: []string{"scheme_days"}},
			{Name: "scheme_days 2^63", Request: api("POST", "/shoppingCart/courses/addpricing", pricing("9223372036854775807")), Status: 400, Fields: []string{"scheme_days"}},
			{Name: "scheme_days over the shared limit", Request: api("POST", "/shoppingCart/courses/addpricing", pricing(36501)), Status: 400, Fields: []string{"scheme_days"}},
			{Name: "scheme_days at the limit", Request: api("POST", "/shoppingCart/courses/addpricing", pricing(36500)), Status: 200, Want: map[string]any{"data.scheme_days": 36500}},
			{Name: "discount_limit 2^31", Request: api("POST", "/discounts/addCourseDiscount", disc(int64(1)<<31)), Status: 400, Fields: []string{"discount_limit"},
				Check: func(t *testing.T, r *Response) {
					if strings.Contains(string(r.Body), "unless is_no_limit") && !strings.Contains(string(r.Body), "1000000000") {
						t.Errorf("message does not give the range: %s", r.Body)
					}
				}},
			{Name: "numbertimes 2^31", Request: api("POST", "/shoppingCart/courses/addpricing", map[string]any{"course_id": course, "scheme_price": "1", "scheme_days": 1, "numbertimes": int64(1) << 31}),
				Status: 400, Fields: []string{"numbertimes"}},
			{Name: "id past 32 bits is still an id", Request: api("GET", "/courses/get/4294967296", nil), Status: 404},
		})
	})
}

// TestCharacterLimits: limits count characters, not bytes (item 15).
func TestCharacterLimits(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		e.Scenarios(t, []Scenario{
			{Name: "255 é is 255 characters", Request: api("POST", "/courses/create", map[string]any{"course_name": strings.Repeat("é", 255)}),
				Status: 200, Want: map[string]any{"data.course_name": strings.Repeat("é", 255)}},
			{Name: "256 é is too long", Request: api("POST", "/courses/create", map[string]any{"course_name": strings.Repeat("é", 256)}),
				Status: 400, Fields: []string{"course_name"}},
			{Name: "user name of 255 é", Request: api("POST", "/users/create", map[string]any{"username": "e@example.com", "email": "e@example.com", "name": strings.Repeat("é", 255)}),
				Status: 200},
		})
	})
}

// TestLiveClassRules: the LMS API applies the domain's plan (item 10),
// keeps a sitting in a DST gap as long as asked (item 3) and bounds dates
// (item 4), the same as /v2.
func TestLiveClassRules(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		cls := func(date, start, end string) map[string]any {
			return map[string]any{"title": "Rules", "date": date, "startTime": start, "endTime": end, "timezone": "28"}
		}
		id := create(t, e, "/liveClasses/create", cls("2027-03-28", "01:00", "02:00"), "data.id")
		c, err := e.Store.LiveClass(context.Background(), e.Domain.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if o := c.Occurrences[0]; o.Start.Format(time.RFC3339) != "2027-03-28T01:00:00Z" || o.End.Sub(o.Start) != time.Hour {
			t.Errorf("01:00-02:00 London on 2027-03-28 stored %v-%v, want 01:00Z for one hour", o.Start, o.End)
		}
		id = create(t, e, "/liveClasses/create", cls("2027-03-28", "01:30", "02:00"), "data.id")
		c, _ = e.Store.LiveClass(context.Background(), e.Domain.ID, id)
		if o := c.Occurrences[0]; o.End.Sub(o.Start) != 30*time.Minute {
			t.Errorf("01:30-02:00 stored %v-%v, want 30 minutes", o.Start, o.End)
		}
		e.Scenarios(t, []Scenario{
			{Name: "date past 9999", Request: api("POST", "/liveClasses/create", cls("10000-01-01", "10:00", "11:00")), Status: 400, Fields: []string{"date"}},
			{Name: "date 9999-12-31", Request: api("POST", "/liveClasses/create", cls("9999-12-31", "10:00", "11:00")), Status: 400, Fields: []string{"date"}},
			{Name: "signed time", Request: api("POST", "/liveClasses/create", cls("2030-01-01", "+9:+5", "11:00")), Status: 400, Fields: []string{"startTime"}},
			{Name: "negative zero time", Request: api("POST", "/liveClasses/create", cls("2030-01-01", "-0:00", "11:00")), Status: 400, Fields: []string{"startTime"}},
		})
		course := create(t, e, "/courses/create", map[string]any{"course_name": "Dated"}, "data.course_id")
		e.Scenarios(t, []Scenario{
			{Name: "discount ending 9999-12-31", Request: api("POST", "/discounts/addCourseDiscount", map[string]any{"course_id": course,
				"discount_type": "flat", "special_price": "1", "is_no_limit": 1, "start_date": "2030-01-01", "end_date": "9999-12-31"}),
				Status: 400, Fields: []string{"end_date"}},
		})
		if err := e.Store.SetDomainPlan(context.Background(), e.Domain.ID, "free"); err != nil {
			t.Fatal(err)
		}
		e.Scenarios(t, []Scenario{
			{Name: "free plan: 2-hour class refused", Request: api("POST", "/liveClasses/create", cls("2030-01-01", "10:00", "12:00")),
				Status: 400, Fields: []string{"endTime"}},
			{Name: "free plan: 30-minute class", Request: api("POST", "/liveClasses/create", cls("2030-01-01", "10:00", "10:30")), Status: 200},
		})
	})
}

// TestDeleteUserDeletesAttendance: deleting a user deletes their
// attendance rows, as docs/api/users.md says, and no one else's (item 18).
func TestDeleteUserDeletesAttendance(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ann := user(t, e, "ann@example.com")
		bob := user(t, e, "bob@example.com")
		class := create(t, e, "/liveClasses/create", map[string]any{"title": "Attended", "date": "2030-01-01", "startTime": "10:00",
			"endTime": "11:00", "timezone": "28"}, "data.id")
		at := time.Date(2030, 1, 1, 10, 5, 0, 0, time.UTC)
		ctx := context.Background()
		for _, ref := range []int64{ann, bob} {
			if err := e.Store.AddAttendance(ctx, e.Domain.ID, lms.AttendanceEvent{ClassID: class, OccurrenceSeq: 1, UserRef: itoa(ref),
				UserName: "x", Kind: lms.AttendanceJoin, At: at}); err != nil {
				t.Fatal(err)
			}
		}
		if r := e.Do(api("DELETE", "/users/delete", map[string]any{"email": "ANN@example.com"})); r.Status != 200 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if evs, err := e.Store.Attendance(ctx, e.Domain.ID, class, itoa(ann)); err != nil || len(evs) != 0 {
			t.Errorf("deleted user's attendance: %v %v", evs, err)
		}
		if evs, err := e.Store.Attendance(ctx, e.Domain.ID, class, itoa(bob)); err != nil || len(evs) != 1 {
			t.Errorf("other user's attendance: %v %v", evs, err)
		}
	})
}

// TestFailedAuthRateLimit: wrong keys from one address are limited: after
// httpx.AuthFailBurst failures the address gets 429 on both APIs, before
// any key is checked, so a right key cannot be told apart (item 17).
func TestFailedAuthRateLimit(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		wrong := e.Domain
		wrong.LMSKey = "wrong-key"
		for i := 0; i < httpx.AuthFailBurst; i++ {
			if r := e.Do(Request{Method: "POST", Path: "/api/v1/users/list", Domain: &wrong}); r.Status != 401 {
				t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Body)
			}
		}
		e.Scenarios(t, []Scenario{
			{Name: "one more wrong key", Request: Request{Method: "POST", Path: "/api/v1/users/list", Domain: &wrong}, Status: 429,
				Check: func(t *testing.T, r *Response) {
					if r.Header.Get("Retry-After") == "" {
						t.Error("no Retry-After")
					}
				}},
			{Name: "the right key from the same address", Request: api("POST", "/users/list", nil), Status: 429},
		})
		if r := e.VC("listclass", url.Values{"apikey": {e.Domain.ClassroomKey}}); r.Status != 429 {
			t.Errorf("classroom API from the same address: %d %s", r.Status, r.Body)
		}
	}, func(c *config.Config) { c.RateLimit, c.RateBurst = 1000, 1000 })
}

// TestOneClock: the store reads the same injected clock as the APIs, so
// a discount's expiry and stored times follow it (item 13).
func TestOneClock(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		course := create(t, e, "/courses/create", map[string]any{"course_name": "Clocked"}, "data.course_id")
		disc := map[string]any{"course_id": course, "discount_code": "ONCE", "is_use_discount_code": 1, "discount_type": "flat",
			"special_price": "1", "is_no_limit": 1, "start_date": "2040-01-01", "end_date": "2040-01-31"}
		e.Clock.Set(time.Date(2040, 1, 10, 12, 0, 0, 0, time.UTC))
		defer e.Clock.Set(time.Time{})
		e.Scenarios(t, []Scenario{
			{Name: "first", Request: api("POST", "/discounts/addCourseDiscount", disc), Status: 200},
			{Name: "same code while live", Request: api("POST", "/discounts/addCourseDiscount", disc), Status: 409},
		})
		e.Clock.Set(time.Date(2040, 3, 1, 12, 0, 0, 0, time.UTC))
		e.Scenarios(t, []Scenario{
			{Name: "same code once expired on the injected clock", Request: api("POST", "/discounts/addCourseDiscount", disc), Status: 200},
		})
		u, err := e.Store.CreateUser(context.Background(), e.Domain.ID, lms.User{Username: "c@example.com", Email: "c@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if u.CreatedAt.Year() != 2040 {
			t.Errorf("created_at %v does not follow the injected clock", u.CreatedAt)
		}
	})
}

// TestConcurrentCourseUpdates: two partial updates of a course at once
// both survive on both databases (item 11: a row lock on PostgreSQL).
func TestConcurrentCourseUpdates(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		course := create(t, e, "/courses/create", map[string]any{"course_name": "C0"}, "data.course_id")
		for round := 1; round <= 15; round++ {
			name, sub := "C"+itoa(int64(round)), "S"+itoa(int64(round))
			var wg sync.WaitGroup
			for _, b := range []map[string]any{{"course_id": course, "course_name": name}, {"course_id": course, "subtitle": sub}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if r := e.Do(api("PUT", "/courses/update", b)); r.Status != 200 {
						t.Errorf("update %v: %d %s", b, r.Status, r.Body)
					}
				}()
			}
			wg.Wait()
			r := e.LMS("GET", "/courses/get/"+itoa(course), nil)
			body := r.Object(t)
			if got, _ := Lookup(body, "data.title"); got != name {
				t.Fatalf("round %d: title %v, want %s (an update was lost): %s", round, got, name, r.Body)
			}
			if got, _ := Lookup(body, "data.subtitle"); got != sub {
				t.Fatalf("round %d: subtitle %v, want %s (an update was lost): %s", round, got, sub, r.Body)
			}
		}
	})
}

// TestSearchFoldsLikeBothDatabases: searches fold every letter, not only
// ASCII, with the same results on SQLite and PostgreSQL (item 12).
func TestSearchFoldsLikeBothDatabases(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		for _, u := range []map[string]any{
			{"username": "elodie@example.com", "email": "elodie@example.com", "name": "Élodie Çelik"},
			{"username": "sigma@example.com", "email": "sigma@example.com", "name": "ΣΩΚΡΆΤΗΣ"},
			{"username": "plain@example.com", "email": "plain@example.com", "name": "Plain Name"},
		} {
			create(t, e, "/users/create", u, "id")
		}
		create(t, e, "/liveClasses/create", map[string]any{"title": "Études ÉLÉMENTAIRES", "date": "2030-01-01", "startTime": "10:00",
			"endTime": "11:00", "timezone": "28"}, "data.id")
		e.Scenarios(t, []Scenario{
			{Name: "lower finds upper", Request: api("POST", "/users/list", map[string]any{"name": "élodie"}), Status: 200, Want: map[string]any{"total": 1}},
			{Name: "upper finds mixed", Request: api("POST", "/users/list", map[string]any{"name": "ÉLODIE ÇEL"}), Status: 200, Want: map[string]any{"total": 1}},
			{Name: "greek", Request: api("POST", "/users/list", map[string]any{"name": "σωκράτ"}), Status: 200, Want: map[string]any{"total": 1}},
			{Name: "ascii still", Request: api("POST", "/users/list", map[string]any{"name": "PLAIN"}), Status: 200, Want: map[string]any{"total": 1}},
		})
		if got := Int(t, e.VC("listclass", url.Values{"search": {"études élé"}}).JSON(t), "total"); got != 1 {
			t.Errorf("listclass search études élé: total %d, want 1", got)
		}
	})
}
