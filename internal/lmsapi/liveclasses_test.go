package lmsapi_test

import (
	"context"
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

func TestLiveClasses(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		body := func(kv ...string) map[string]any {
			m := map[string]any{"title": "Algebra", "date": "2026-07-01", "startTime": "10:00", "endTime": "11:30", "timezone": "28"}
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] == "" {
					delete(m, kv[i])
				} else {
					m[kv[i]] = kv[i+1]
				}
			}
			return m
		}
		e.Scenarios(t, []Scenario{
			{Name: "create", Request: api("POST", "/liveClasses/create", body()), Status: 200,
				Want: map[string]any{"data.class_name": "Algebra"},
				Check: func(t *testing.T, r *Response) {
					id := Int(t, r.JSON(t), "data.class_id")
					c, err := e.Store.LiveClass(context.Background(), e.Domain.ID, id)
					if err != nil {
						t.Fatal(err)
					}
					// 10:00 in London in July is 09:00 UTC.
					o := c.Occurrences[0]
					if o.Start.Format(time.RFC3339) != "2026-07-01T09:00:00Z" || o.End.Sub(o.Start) != 90*time.Minute {
						t.Errorf("sitting %v-%v", o.Start, o.End)
					}
					if c.TimezoneID != 28 || c.TimezoneName != "Europe/London" {
						t.Errorf("zone %d %s", c.TimezoneID, c.TimezoneName)
					}
				}},
			{Name: "hours only", Request: api("POST", "/liveClasses/create", body("startTime", "9", "endTime", "10")), Status: 200},
			{Name: "IANA zone", Request: api("POST", "/liveClasses/create", body("timezone", "America/New_York")), Status: 200,
				Check: func(t *testing.T, r *Response) {
					c, _ := e.Store.LiveClass(context.Background(), e.Domain.ID, Int(t, r.JSON(t), "data.id"))
					if c.TimezoneID != 23 || c.Occurrences[0].Start.Format(time.RFC3339) != "2026-07-01T14:00:00Z" {
						t.Errorf("zone %d start %v", c.TimezoneID, c.Occurrences[0].Start)
					}
				}},
			{Name: "missing everything", Request: api("POST", "/liveClasses/create", map[string]any{}), Status: 400,
				Fields: []string{"title", "date", "startTime", "endTime", "timezone"}},
			{Name: "not a real date", Request: api("POST", "/liveClasses/create", body("date", "2026-02-29")), Status: 400, Fields: []string{"date"}},
			{Name: "bad time", Request: api("POST", "/liveClasses/create", body("startTime", "25:00")), Status: 400, Fields: []string{"startTime"}},
			{Name: "end before start", Request: api("POST", "/liveClasses/create", body("endTime", "09:00")), Status: 400, Fields: []string{"endTime"}},
			{Name: "end equals start", Request: api("POST", "/liveClasses/create", body("endTime", "10:00")), Status: 400, Fields: []string{"endTime"}},
			{Name: "unknown timezone id", Request: api("POST", "/liveClasses/create", body("timezone", "1000")), Status: 400, Fields: []string{"timezone"}},
			{Name: "unknown zone name", Request: api("POST", "/liveClasses/create", body("timezone", "Europe/Atlantis")), Status: 400, Fields: []string{"timezone"}},
			{Name: "create without auth", Request: Request{Method: "POST", Path: "/api/v1/liveClasses/create", NoAuth: true}, Status: 401},
			{Name: "list", Request: api("POST", "/liveClasses/list", nil), Status: 200,
				Want: map[string]any{"total": 3, "data.0.class_name": "Algebra"},
				Check: func(t *testing.T, r *Response) {
					b := r.JSON(t)
					if Int(t, b, "data.0.id") != Int(t, b, "data.0.class_id") {
						t.Error("id and class_id differ")
					}
				}},
			{Name: "list other domain", Request: other(e, "POST", "/liveClasses/list", nil), Status: 200, Want: map[string]any{"total": 0}},
			{Name: "list wrong method", Request: api("DELETE", "/liveClasses/list", nil), Status: 405},
		})
	})
}
