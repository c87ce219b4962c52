package lmsapi_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

func TestLoginLinkAPI(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		id := user(t, e, "ann@example.com")
		otherUser := create(t, e, "/users/create", map[string]any{"username": "bob", "email": "bob@example.com"}, "id")
		_ = otherUser
		now := time.Date(2030, 3, 4, 10, 0, 0, 0, time.UTC)
		e.Clock.Set(now)
		checkURL := func(want string) func(t *testing.T, r *Response) {
			return func(t *testing.T, r *Response) {
				u := Str(t, r.JSON(t), "data.url")
				pu, err := url.Parse(u)
				if err != nil || pu.Path != "/"+itoa(e.Domain.ID)+"/learn/sso/consume" || len(pu.Query().Get("t")) != 43 {
					t.Errorf("url %s: want %s/%d/learn/sso/consume?t=<43 characters>", u, e.URL, e.Domain.ID)
				}
				if got := Str(t, r.JSON(t), "data.expires_at"); got != want {
					t.Errorf("expires_at %s, want %s", got, want)
				}
			}
		}
		e.Scenarios(t, []Scenario{
			{Name: "by email, default ttl 120 s", Request: api("POST", "/users/loginLink", map[string]any{"email": "ann@example.com"}),
				Status: 200, Want: map[string]any{"data.user_id": id, "data.user_created": false}, Check: checkURL("2030-03-04T10:02:00Z")},
			{Name: "by user_id with ttl and return_to", Request: api("POST", "/users/loginLink", map[string]any{"user_id": id, "ttl": 600, "return_to": "/courses/7"}),
				Status: 200, Check: checkURL("2030-03-04T10:10:00Z")},
			{Name: "form body", Request: Request{Method: "POST", Path: "/api/v1/users/loginLink", Form: url.Values{"email": {"ann@example.com"}, "ttl": {"30"}}},
				Status: 200, Check: checkURL("2030-03-04T10:00:30Z")},
			{Name: "create_if_missing", Request: api("POST", "/users/loginLink", map[string]any{"email": "new@example.com", "create_if_missing": true, "name": "Nia New"}),
				Status: 200, Want: map[string]any{"data.user_created": true}},
			{Name: "create_if_missing again finds the user", Request: api("POST", "/users/loginLink", map[string]any{"email": "NEW@example.com", "create_if_missing": true}),
				Status: 200, Want: map[string]any{"data.user_created": false}},
			{Name: "unknown email", Request: api("POST", "/users/loginLink", map[string]any{"email": "nobody@example.com"}), Status: 404},
			{Name: "no user named", Request: api("POST", "/users/loginLink", map[string]any{}), Status: 400, Fields: []string{"user_id", "email"}},
			{Name: "ttl too short", Request: api("POST", "/users/loginLink", map[string]any{"email": "ann@example.com", "ttl": 29}), Status: 400, Fields: []string{"ttl"}},
			{Name: "ttl too long", Request: api("POST", "/users/loginLink", map[string]any{"email": "ann@example.com", "ttl": 601}), Status: 400, Fields: []string{"ttl"}},
			{Name: "ttl not a number", Request: api("POST", "/users/loginLink", map[string]any{"email": "ann@example.com", "ttl": "soon"}), Status: 400, Fields: []string{"ttl"}},
			{Name: "create_if_missing not a bool", Request: api("POST", "/users/loginLink", map[string]any{"email": "ann@example.com", "create_if_missing": "maybe"}), Status: 400, Fields: []string{"create_if_missing"}},
			{Name: "create_if_missing needs an email", Request: api("POST", "/users/loginLink", map[string]any{"user_id": 999, "create_if_missing": true}), Status: 400, Fields: []string{"email"}},
			{Name: "user_id and email disagree", Request: api("POST", "/users/loginLink", map[string]any{"user_id": otherUser, "email": "ann@example.com"}), Status: 400, Fields: []string{"user_id", "email"}},
			{Name: "other domain's user id is 404", Request: other(e, "POST", "/users/loginLink", map[string]any{"user_id": id}), Status: 404},
			{Name: "other domain's user email is 404", Request: other(e, "POST", "/users/loginLink", map[string]any{"email": "ann@example.com"}), Status: 404},
			{Name: "no auth", Request: Request{Method: "POST", Path: "/api/v1/users/loginLink", Body: map[string]any{"email": "ann@example.com"}, NoAuth: true}, Status: 401},
		})
	})
}

// TestLoginLinkReturnToRules: every way out of the portal is refused with
// a 400 naming return_to.
func TestLoginLinkReturnToRules(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		user(t, e, "ann@example.com")
		var ss []Scenario
		for _, bad := range []string{"https://evil.example/", "http:evil.example", "//evil.example", "/\\evil.example", "\\\\evil.example",
			"/%2F%2Fevil.example", "javascript:alert(1)", "evil.example/x", "/../../api/v1/users/list", "/a\r\nSet-Cookie: x=1"} {
			ss = append(ss, Scenario{Name: "refuses " + strings.ReplaceAll(bad, "/", "_"),
				Request: api("POST", "/users/loginLink", map[string]any{"email": "ann@example.com", "return_to": bad}), Status: 400, Fields: []string{"return_to"}})
		}
		for _, good := range []string{"/", "/courses/7/lessons/3", "/certificates?x=1#top"} {
			ss = append(ss, Scenario{Name: "accepts " + strings.ReplaceAll(good, "/", "_"),
				Request: api("POST", "/users/loginLink", map[string]any{"email": "ann@example.com", "return_to": good}), Status: 200})
		}
		e.Scenarios(t, ss)
	})
}

func TestLogoutAPI(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		id := user(t, e, "ann@example.com")
		e.Scenarios(t, []Scenario{
			{Name: "no sessions", Request: api("POST", "/users/logout", map[string]any{"email": "ann@example.com"}), Status: 200,
				Want: map[string]any{"data.sessions_ended": 0, "data.user_id": id}},
			{Name: "by user_id", Request: api("POST", "/users/logout", map[string]any{"user_id": id}), Status: 200},
			{Name: "unknown", Request: api("POST", "/users/logout", map[string]any{"email": "nobody@example.com"}), Status: 404},
			{Name: "nobody named", Request: api("POST", "/users/logout", map[string]any{}), Status: 400, Fields: []string{"user_id", "email"}},
			{Name: "other domain's user is 404", Request: other(e, "POST", "/users/logout", map[string]any{"user_id": id}), Status: 404},
		})
	})
}
