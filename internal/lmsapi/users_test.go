package lmsapi_test

import (
	"net/url"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

func TestUsers(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		created := e.LMS("POST", "/users/create", map[string]any{"username": "ann", "email": "Ann@Example.com", "name": "Ann Lee"})
		if created.Status != 200 {
			t.Fatalf("create: %d %s", created.Status, created.Body)
		}
		id := Int(t, created.JSON(t), "id")
		e.LMS("POST", "/users/create", map[string]any{"username": "bob", "email": "bob@example.com"})
		other := e.Do(Request{Method: "POST", Path: "/api/v1/users/create", Domain: &e.Other,
			Body: map[string]any{"username": "ann", "email": "ann@example.com"}})
		if other.Status != 200 {
			t.Fatalf("same email in another domain: %d %s", other.Status, other.Body)
		}

		e.Scenarios(t, []Scenario{
			{Name: "create answers a top-level id", Request: Request{Method: "POST", Path: "/api/v1/users/create",
				Body: map[string]any{"username": "cy", "email": "cy@example.com"}},
				Status: 200, Want: map[string]any{"message": "User created", "data": Absent}},
			{Name: "create form body", Request: Request{Method: "POST", Path: "/api/v1/users/create",
				Form: url.Values{"username": {"dee"}, "email": {"dee@example.com"}}}, Status: 200},
			{Name: "create query string", Request: Request{Method: "POST", Path: "/api/v1/users/create?username=eve&email=eve%40example.com"}, Status: 200},
			{Name: "create missing fields", Request: Request{Method: "POST", Path: "/api/v1/users/create", Body: map[string]any{}},
				Status: 400, Fields: []string{"username", "email"}},
			{Name: "create bad email", Request: Request{Method: "POST", Path: "/api/v1/users/create",
				Body: map[string]any{"username": "x", "email": "not-an-email"}}, Status: 400, Fields: []string{"email"}},
			{Name: "create duplicate email any case", Request: Request{Method: "POST", Path: "/api/v1/users/create",
				Body: map[string]any{"username": "ann2", "email": "ANN@example.COM"}}, Status: 409,
				Want: map[string]any{"code": "conflict"}},
			{Name: "create without auth", Request: Request{Method: "POST", Path: "/api/v1/users/create", NoAuth: true,
				Body: map[string]any{"username": "x", "email": "x@example.com"}}, Status: 401},
			{Name: "create wrong method", Request: Request{Method: "GET", Path: "/api/v1/users/create"}, Status: 405,
				Check: func(t *testing.T, r *Response) {
					if r.Header.Get("Allow") != "POST" {
						t.Errorf("Allow = %q", r.Header.Get("Allow"))
					}
				}},
			{Name: "getuser GET with JSON body", Request: Request{Method: "GET", Path: "/api/v1/users/getuser", Body: map[string]any{"userId": id}},
				Status: 200, Want: map[string]any{"data.#": 1, "data.0.id": id, "data.0.lms_user_id": id, "data.0.email": "Ann@Example.com",
					"data.0.name": "Ann Lee", "data.0.username": "ann"}},
			{Name: "getuser POST numeric string", Request: Request{Method: "POST", Path: "/api/v1/users/getuser", Body: map[string]any{"userId": itoa(id)}},
				Status: 200, Want: map[string]any{"data.0.id": id}},
			{Name: "getuser not a number", Request: Request{Method: "GET", Path: "/api/v1/users/getuser?userId=abc"}, Status: 400, Fields: []string{"userId"}},
			{Name: "getuser unknown", Request: Request{Method: "GET", Path: "/api/v1/users/getuser?userId=999999"}, Status: 404},
			{Name: "getuser other domain", Request: Request{Method: "GET", Path: "/api/v1/users/getuser?userId=" + itoa(id), Domain: &e.Other}, Status: 404},
			{Name: "getuserbyEmail escaped", Request: Request{Method: "GET", Path: "/api/v1/users/getuserbyEmail/ann%40example.com"},
				Status: 200, Want: map[string]any{"data.0.id": id, "data.0.lms_user_id": Absent, "data.0.username": "ann"}},
			{Name: "getuserbyEmail plus sign", Request: Request{Method: "GET", Path: "/api/v1/users/getuserbyEmail/" + url.PathEscape("no+one@example.com")}, Status: 404},
			{Name: "list filters by partial name", Request: Request{Method: "POST", Path: "/api/v1/users/list", Body: map[string]any{"name": "ANN L"}},
				Status: 200, Want: map[string]any{"data.#": 1, "total": 1, "data.0.id": id}},
			{Name: "list filters by partial email", Request: Request{Method: "POST", Path: "/api/v1/users/list", Body: map[string]any{"email": "EXAMPLE"}},
				Status: 200, Want: map[string]any{"total": 5}},
			{Name: "list paginates", Request: Request{Method: "POST", Path: "/api/v1/users/list", Body: map[string]any{"limit": 2, "page": 2}},
				Status: 200, Want: map[string]any{"total": 5, "data.#": 2, "page": 2, "limit": 2}},
			{Name: "list limit bounded", Request: Request{Method: "POST", Path: "/api/v1/users/list", Body: map[string]any{"limit": 100000}},
				Status: 400, Fields: []string{"limit"}},
			{Name: "list wildcard is literal", Request: Request{Method: "POST", Path: "/api/v1/users/list", Body: map[string]any{"name": "%"}},
				Status: 200, Want: map[string]any{"total": 0}},
			{Name: "delete missing email", Request: Request{Method: "DELETE", Path: "/api/v1/users/delete", Body: map[string]any{}}, Status: 400, Fields: []string{"email"}},
			{Name: "delete other domain's user", Request: Request{Method: "DELETE", Path: "/api/v1/users/delete", Domain: &e.Other,
				Body: map[string]any{"email": "bob@example.com"}}, Status: 404},
			{Name: "delete", Request: Request{Method: "DELETE", Path: "/api/v1/users/delete", Body: map[string]any{"email": "BOB@example.com"}}, Status: 200},
			{Name: "deleted is gone", Request: Request{Method: "GET", Path: "/api/v1/users/getuserbyEmail/bob@example.com"}, Status: 404},
		})
	})
}
