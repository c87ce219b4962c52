package classroomapi_test

import (
	"encoding/xml"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
)

// TestRequestStyles sends one operation in every way clients send it and
// expects the same answer.
func TestRequestStyles(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		key := e.Domain.ClassroomKey
		cases := []struct {
			name string
			req  apitest.Request
		}{
			{"query string on an empty POST", apitest.Request{Method: "POST", Path: "/v2/getservers?apikey=" + key}},
			{"empty body with a JSON content type", apitest.Request{Method: "POST", Path: "/v2/getservers?apikey=" + key,
				Header: map[string]string{"Content-Type": "application/json"}}},
			{"urlencoded body", apitest.Request{Method: "POST", Path: "/v2/getservers", Form: url.Values{"apikey": {key}}}},
			{"multipart body with a stray task", apitest.Request{Method: "POST", Path: "/v2/getservers",
				Multipart: url.Values{"apikey": {key}, "task": {"removeclass"}}}},
			{"JSON body", apitest.Request{Method: "POST", Path: "/v2/getservers", Body: map[string]any{"apikey": key}}},
			{"operation in another letter case", apitest.Request{Method: "POST", Path: "/v2/GetServers?apikey=" + key}},
			{"legacy /v2 with task", apitest.Request{Method: "POST", Path: "/v2", Form: url.Values{"task": {"getservers"}, "apikey": {key}}}},
			{"legacy /v1 with task", apitest.Request{Method: "POST", Path: "/v1", Form: url.Values{"task": {"getservers"}, "apikey": {key}}}},
			{"bare base path with task", apitest.Request{Method: "POST", Path: "/", Form: url.Values{"task": {"getServers"}, "apikey": {key}}}},
			{"body wins over query", apitest.Request{Method: "POST", Path: "/v2/getservers?apikey=wrong", Form: url.Values{"apikey": {key}}}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.req.NoAuth = true
				r := e.Do(c.req)
				if r.Status != 200 {
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
				if got := apitest.Str(t, r.JSON(t), "11.name"); got != "Middle East (Dubai)" {
					t.Fatalf("servers[11].name = %q; body %s", got, r.Body)
				}
			})
		}
	})
}

func TestErrors(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		cases := []struct {
			name   string
			req    apitest.Request
			status int
			want   string
		}{
			{"missing key", apitest.Request{Method: "POST", Path: "/v2/getservers"}, 200, "Invalid API KEY"},
			{"wrong key", apitest.Request{Method: "POST", Path: "/v2/getservers?apikey=nope"}, 200, "Invalid API KEY"},
			{"LMS key is not a classroom key", apitest.Request{Method: "POST", Path: "/v2/getservers?apikey=" + e.Domain.LMSKey}, 200, "Invalid API KEY"},
			{"unknown operation", apitest.Request{Method: "POST", Path: "/v2/nosuchthing?apikey=" + e.Domain.ClassroomKey}, 404, `unknown operation "nosuchthing"`},
			{"legacy without task", apitest.Request{Method: "POST", Path: "/v2?apikey=" + e.Domain.ClassroomKey}, 200, "task is required"},
			{"GET is refused", apitest.Request{Method: "GET", Path: "/v2/getservers?apikey=" + e.Domain.ClassroomKey}, 405, "every classroom API operation is a POST"},
			{"bad format", apitest.Request{Method: "POST", Path: "/v2/getservers?format=yaml&apikey=" + e.Domain.ClassroomKey}, 200, "format must be json or xml"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.req.NoAuth = true
				r := e.Do(c.req)
				if r.Status != c.status {
					t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
				}
				if got := apitest.Str(t, r.JSON(t), "0.status"); got != "error" {
					t.Fatalf("status field %q; body %s", got, r.Body)
				}
				if got := apitest.Str(t, r.JSON(t), "0.error"); !strings.Contains(got, c.want) {
					t.Fatalf("error %q does not contain %q", got, c.want)
				}
			})
		}
		t.Run("XML error uses errors element", func(t *testing.T) {
			r := e.Do(apitest.Request{Method: "POST", Path: "/v2/getservers?format=xml&apikey=bad", NoAuth: true})
			var rsp struct {
				Status string `xml:"status,attr"`
				Errors string `xml:"errors"`
			}
			if err := xml.Unmarshal(r.Body, &rsp); err != nil {
				t.Fatalf("not XML: %v: %s", err, r.Body)
			}
			if rsp.Status != "error" || rsp.Errors != "Invalid API KEY" {
				t.Fatalf("got %+v from %s", rsp, r.Body)
			}
		})
	}, seedStyle)
}
