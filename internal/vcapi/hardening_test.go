package vcapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
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
