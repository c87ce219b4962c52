package classroomapi_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/httpx"
)

// vcError returns the error text of a classroom API answer ("" if none).
func vcError(t *testing.T, r *apitest.Response) string {
	t.Helper()
	body := string(r.Body)
	if !strings.Contains(body, `"status":"error"`) {
		return ""
	}
	return body
}

// TestTextParameters: the classroom API refuses NUL and invalid UTF-8 in
// any parameter, naming it, on both databases (issue 12, item 1).
func TestTextParameters(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		cases := []struct {
			name, field string
			req         apitest.Request
		}{
			{"NUL in listclass search", "search", apitest.Request{Method: "POST", Path: "/v2/listclass?search=a%00&apikey=" + url.QueryEscape(e.Domain.ClassroomKey), NoAuth: true}},
			{"invalid UTF-8 in a form title", "title", apitest.Request{Method: "POST", Path: "/v2/schedule", NoAuth: true,
				Form: url.Values{"apikey": {e.Domain.ClassroomKey}, "title": {"\xff\xfeab"}, "date": {"2030-01-01"}, "start_time": {"10:00"}, "end_time": {"11:00"}, "timezone": {"28"}}}},
			{"object in a JSON body", "title", apitest.Request{Method: "POST", Path: "/v2/schedule", NoAuth: true,
				Body: map[string]any{"apikey": e.Domain.ClassroomKey, "title": map[string]any{"x": 1}}}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := e.Do(c.req)
				msg := vcError(t, r)
				if r.Status != 200 || msg == "" || !strings.Contains(msg, c.field) {
					t.Fatalf("status %d, body %s: want an API error naming %s", r.Status, r.Body, c.field)
				}
			})
		}
		t.Run("text after the JSON object", func(t *testing.T) {
			r := e.Do(apitest.Request{Method: "POST", Path: "/v2/listclass", NoAuth: true, Body: `{"apikey":"` + e.Domain.ClassroomKey + `"} x`})
			if vcError(t, r) == "" {
				t.Fatalf("accepted: %s", r.Body)
			}
		})
		t.Run("a 255-character title of é", func(t *testing.T) {
			r := e.VC("schedule", url.Values{"title": {strings.Repeat("é", 255)}, "date": {"2030-01-01"}, "start_time": {"10:00"},
				"end_time": {"11:00"}, "timezone": {"28"}})
			if msg := vcError(t, r); msg != "" {
				t.Fatalf("refused: %s", msg)
			}
		})
	})
}

// TestScheduleRules: /v2 sittings in a DST gap keep their length (item 3),
// dates are bounded (item 4), times refuse signs (item 7), on both
// databases.
func TestScheduleRules(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		params := func(date, start, end string, extra ...string) url.Values {
			v := url.Values{"title": {"Rules"}, "date": {date}, "start_time": {start}, "end_time": {end}, "timezone": {"28"}}
			for i := 0; i+1 < len(extra); i += 2 {
				v.Set(extra[i], extra[i+1])
			}
			return v
		}
		for _, tt := range []struct {
			start, end string
			want       time.Duration
		}{{"01:00", "02:00", time.Hour}, {"01:30", "02:00", 30 * time.Minute}} {
			id := scheduleID(t, e, params("2027-03-28", tt.start, tt.end, "is_recurring", "1", "repeat", "1", "end_classes_count", "3"))
			n, _ := strconv.ParseInt(id, 10, 64)
			c, err := e.Store.LiveClass(context.Background(), e.Domain.ID, n)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range c.Occurrences {
				if d := o.End.Sub(o.Start); d != tt.want {
					t.Errorf("%s-%s London from 2027-03-28: sitting %v-%v lasts %v, want %v", tt.start, tt.end, o.Start, o.End, d, tt.want)
				}
			}
		}
		for _, p := range []url.Values{
			params("10000-01-01", "10:00", "11:00"),
			params("9999-12-31", "23:00", "01:00"),
			params("2030-01-01", "+9:+5", "11:00"),
			params("2030-01-01", "-0:00", "11:00"),
			params("2030-01-01", "10:00", "11:00", "is_recurring", "1", "repeat", "1", "end_date", "10000-01-01"),
		} {
			if msg := vcErr(t, e, "schedule", p); msg == "" {
				t.Errorf("schedule %v accepted", p)
			}
		}
		cid := scheduleID(t, e, params("2030-01-01", "10:00", "11:00"))
		if msg := vcErr(t, e, "addSpecials", url.Values{"class_id": {cid}, "discount": {"1"}, "discount_type": {"flat"},
			"start_date": {"2030-01-01"}, "end_date": {"9999-12-31"}}); msg == "" {
			t.Error("a discount ending 9999-12-31 was accepted")
		}
	})
}

// TestWrongKeyFlood: wrong classroom keys from one address are limited
// (item 17): 300 tries no longer all get "Invalid API KEY".
func TestWrongKeyFlood(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		limited := 0
		for i := 0; i < 300; i++ {
			r := e.VC("listclass", url.Values{"apikey": {"wrong-" + strconv.Itoa(i)}})
			if r.Status == 429 {
				limited++
			}
		}
		if want := 300 - httpx.AuthFailBurst - 10; limited < want { // a few tokens may refill meanwhile
			t.Errorf("%d of 300 wrong keys limited, want at least %d", limited, want)
		}
	}, func(c *config.Config) { c.RateLimit, c.RateBurst = 1000, 1000 })
}

// TestConcurrentPartialUpdates: two updateclass calls changing different
// fields at once both survive, round after round (item 11).
func TestConcurrentPartialUpdates(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		id := scheduleID(t, e, url.Values{"title": {"T0"}, "date": {"2030-01-01"}, "start_time": {"10:00"}, "end_time": {"11:00"}, "timezone": {"28"}})
		n, _ := strconv.ParseInt(id, 10, 64)
		for round := 1; round <= 15; round++ {
			title, desc := "T"+strconv.Itoa(round), "D"+strconv.Itoa(round)
			var wg sync.WaitGroup
			for _, p := range []url.Values{{"id": {id}, "title": {title}}, {"id": {id}, "description": {desc}, "start_time": {"10:30"}}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if r := e.VC("updateclass", p); vcError(t, r) != "" || r.Status != 200 {
						t.Errorf("updateclass %v: %d %s", p, r.Status, r.Body)
					}
				}()
			}
			wg.Wait()
			c, err := e.Store.LiveClass(context.Background(), e.Domain.ID, n)
			if err != nil {
				t.Fatal(err)
			}
			if c.Title != title || c.Description != desc {
				t.Fatalf("round %d: title %q, description %q; want %q and %q (an update was lost)", round, c.Title, c.Description, title, desc)
			}
		}
	})
}
