package lmsapi_test

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
)

func TestAuthentication(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		path := "/api/v1/users/list"
		id := fmt.Sprint(e.Domain.ID)
		e.Scenarios(t, []Scenario{
			{Name: "no headers", Request: Request{Method: "POST", Path: path, NoAuth: true}, Status: 401,
				Want: map[string]any{"code": "unauthorized"}},
			{Name: "key without domain id", Request: Request{Method: "POST", Path: path, NoAuth: true,
				Header: map[string]string{"Authorization": e.Domain.LMSKey}}, Status: 401,
				Want: map[string]any{"message": "missing x-domain-id header"}},
			{Name: "domain id without key", Request: Request{Method: "POST", Path: path, NoAuth: true,
				Header: map[string]string{"x-domain-id": id}}, Status: 401},
			{Name: "wrong key", Request: Request{Method: "POST", Path: path, NoAuth: true,
				Header: map[string]string{"Authorization": "lk_wrong", "x-domain-id": id}}, Status: 401},
			{Name: "another domain's key", Request: Request{Method: "POST", Path: path, NoAuth: true,
				Header: map[string]string{"Authorization": e.Other.LMSKey, "x-domain-id": id}}, Status: 401},
			{Name: "classroom key is not an LMS key", Request: Request{Method: "POST", Path: path, NoAuth: true,
				Header: map[string]string{"Authorization": e.Domain.ClassroomKey, "x-domain-id": id}}, Status: 401},
			{Name: "unknown domain", Request: Request{Method: "POST", Path: path, NoAuth: true,
				Header: map[string]string{"Authorization": e.Domain.LMSKey, "x-domain-id": "999999"}}, Status: 401},
			{Name: "non-numeric domain id", Request: Request{Method: "POST", Path: path, NoAuth: true,
				Header: map[string]string{"Authorization": e.Domain.LMSKey, "x-domain-id": "abc"}}, Status: 401},
			{Name: "raw key", Request: Request{Method: "POST", Path: path, NoAuth: true,
				Header: map[string]string{"Authorization": e.Domain.LMSKey, "x-domain-id": id}}, Status: 200},
			{Name: "Bearer key and odd header case", Request: Request{Method: "POST", Path: path, NoAuth: true,
				Header: map[string]string{"authorization": "Bearer " + e.Domain.LMSKey, "x-Domain-id": id}}, Status: 200},
		})
	})
}

func TestProtocolErrors(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		e.Scenarios(t, []Scenario{
			{Name: "unknown path is 404", Request: Request{Method: "POST", Path: "/api/v1/nothing/here"}, Status: 404,
				Want: map[string]any{"code": "not_found"}},
			{Name: "known path wrong method is 405 with Allow", Request: Request{Method: "DELETE", Path: "/api/v1/users/getuser"}, Status: 405,
				Check: func(t *testing.T, r *Response) {
					if got := r.Header.Get("Allow"); got != "GET, HEAD, POST" {
						t.Errorf("Allow = %q", got)
					}
				}},
			{Name: "Accept ruling out JSON is 406", Request: Request{Method: "POST", Path: "/api/v1/users/list",
				Header: map[string]string{"Accept": "text/html"}}, Status: 406},
			{Name: "Accept with JSON among others", Request: Request{Method: "POST", Path: "/api/v1/users/list",
				Header: map[string]string{"Accept": "text/html, application/json;q=0.5"}}, Status: 200},
			{Name: "Accept JSON with q=0 is 406", Request: Request{Method: "POST", Path: "/api/v1/users/list",
				Header: map[string]string{"Accept": "application/json;q=0"}}, Status: 406},
			{Name: "malformed JSON names the body", Request: Request{Method: "POST", Path: "/api/v1/users/create", Body: `{"username": `},
				Status: 400, Fields: []string{"body"}},
			{Name: "unsupported content type is 415", Request: Request{Method: "POST", Path: "/api/v1/users/create", Body: "username=x",
				Header: map[string]string{"Content-Type": "text/plain"}}, Status: 415},
			{Name: "body over the limit is 413", Request: Request{Method: "POST", Path: "/api/v1/users/create",
				Body: `{"username":"` + strings.Repeat("x", 5000) + `"}`}, Status: 413},
			{Name: "every response carries a request id", Request: Request{Method: "POST", Path: "/api/v1/users/list"}, Status: 200,
				Check: func(t *testing.T, r *Response) {
					if len(r.Header.Get("X-Request-Id")) != 16 {
						t.Errorf("X-Request-Id = %q", r.Header.Get("X-Request-Id"))
					}
				}},
			{Name: "error body's request id matches the header", Request: Request{Method: "POST", Path: "/api/v1/nope"}, Status: 404,
				Check: func(t *testing.T, r *Response) {
					if Str(t, r.JSON(t), "request_id") != r.Header.Get("X-Request-Id") {
						t.Errorf("request ids differ: %s vs %s", r.Body, r.Header.Get("X-Request-Id"))
					}
				}},
		})
	}, func(c *config.Config) { c.MaxBodyBytes = 4096 })
}

func TestRateLimit(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		// A burst of 3 at a rate too slow to refill during the test.
		for i := 0; i < 3; i++ {
			r := e.LMS("POST", "/users/list", nil)
			if r.Status != 200 {
				t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
			}
			if got, want := r.Header.Get("X-RateLimit-Remaining"), fmt.Sprint(2-i); got != want {
				t.Errorf("request %d: X-RateLimit-Remaining = %q, want %q", i, got, want)
			}
			if r.Header.Get("X-RateLimit-Limit") != "3" || r.Header.Get("X-RateLimit-Reset") == "" {
				t.Errorf("request %d: headers %v", i, r.Header)
			}
		}
		r := e.LMS("POST", "/users/list", nil)
		if r.Status != 429 {
			t.Fatalf("fourth request: %d %s", r.Status, r.Body)
		}
		ExpectErrorShape(t, r.JSON(t))
		if r.Header.Get("Retry-After") == "" || r.Header.Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("429 headers: %v", r.Header)
		}
		// Another domain has its own bucket.
		if r := e.Do(Request{Method: "POST", Path: "/api/v1/users/list", Domain: &e.Other}); r.Status != 200 {
			t.Errorf("other domain limited too: %d", r.Status)
		}
	}, func(c *config.Config) { c.RateLimit = 0.001; c.RateBurst = 3 })
}
