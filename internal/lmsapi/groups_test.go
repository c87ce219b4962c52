package lmsapi_test

import (
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

func TestGroups(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		g := create(t, e, "/groups/create", map[string]any{"groupName": "Evening class", "description": "Tuesdays"}, "data.id")
		ann := user(t, e, "ann@example.com")
		bob := user(t, e, "bob@example.com")
		e.Do(Request{Method: "POST", Path: "/api/v1/users/create", Domain: &e.Other, Body: map[string]any{"username": "zed", "email": "zed@example.com"}})

		e.Scenarios(t, []Scenario{
			{Name: "create with name", Request: api("POST", "/groups/create", map[string]any{"name": "Morning"}), Status: 200,
				Want: map[string]any{"data.group_name": "Morning"}},
			{Name: "create without a name", Request: api("POST", "/groups/create", map[string]any{"description": "x"}), Status: 400,
				Fields: []string{"groupName"}},
			{Name: "create without auth", Request: Request{Method: "POST", Path: "/api/v1/groups/create", NoAuth: true}, Status: 401},
			{Name: "list", Request: api("POST", "/groups/list", nil), Status: 200,
				Want: map[string]any{"total": 2, "data.0.id": g, "data.0.group_id": g, "data.0.group_name": "Evening class"}},
			{Name: "list other domain", Request: other(e, "POST", "/groups/list", nil), Status: 200, Want: map[string]any{"total": 0}},
			{Name: "add by email", Request: api("POST", "/groups/addUser", map[string]any{"groupId": g, "email": "ANN@example.com"}), Status: 200,
				Want: map[string]any{"data.user_id": ann, "data.already_member": false}},
			{Name: "add by user id", Request: api("POST", "/groups/addUser", map[string]any{"groupId": itoa(g), "user_id": itoa(bob)}), Status: 200},
			{Name: "add twice", Request: api("POST", "/groups/addUser", map[string]any{"groupId": g, "user_id": ann}), Status: 200,
				Want: map[string]any{"data.already_member": true}},
			{Name: "add needs a user", Request: api("POST", "/groups/addUser", map[string]any{"groupId": g}), Status: 400, Fields: []string{"email"}},
			{Name: "add needs a group", Request: api("POST", "/groups/addUser", map[string]any{"email": "ann@example.com"}), Status: 400, Fields: []string{"groupId"}},
			{Name: "add email and id that disagree", Request: api("POST", "/groups/addUser", map[string]any{"groupId": g, "user_id": ann, "email": "bob@example.com"}),
				Status: 400, Fields: []string{"email"}},
			{Name: "add unknown user", Request: api("POST", "/groups/addUser", map[string]any{"groupId": g, "email": "nobody@example.com"}), Status: 404},
			{Name: "add another domain's user", Request: api("POST", "/groups/addUser", map[string]any{"groupId": g, "email": "zed@example.com"}), Status: 404},
			{Name: "add to unknown group", Request: api("POST", "/groups/addUser", map[string]any{"groupId": 999999, "user_id": ann}), Status: 404},
			{Name: "add to another domain's group", Request: other(e, "POST", "/groups/addUser", map[string]any{"groupId": g, "email": "zed@example.com"}), Status: 404},
			{Name: "listallusers", Request: api("POST", "/groups/listallusers", map[string]any{"groupId": g}), Status: 200,
				Want: map[string]any{"total": 2, "data.#": 2, "data.0.id": ann, "data.0.user_type": "learner", "data.0.name": "ann@example.com",
					"data.0.email": "ann@example.com", "data.0.thumb": "", "data.1.id": bob}},
			{Name: "listallusers without group", Request: api("POST", "/groups/listallusers", nil), Status: 400, Fields: []string{"groupId"}},
			{Name: "listallusers other domain", Request: other(e, "POST", "/groups/listallusers", map[string]any{"groupId": g}), Status: 404},
			{Name: "listallusers wrong method", Request: api("GET", "/groups/listallusers", nil), Status: 405},
			{Name: "deleting a user ends the membership", Request: api("DELETE", "/users/delete", map[string]any{"email": "bob@example.com"}), Status: 200},
			{Name: "one member left", Request: api("POST", "/groups/listallusers", map[string]any{"groupId": g}), Status: 200,
				Want: map[string]any{"total": 1, "data.0.id": ann}},
		})
		r := e.LMS("POST", "/groups/listallusers", map[string]any{"groupId": g})
		if aid := Int(t, r.JSON(t), "data.0.aid"); aid <= 0 {
			t.Errorf("aid = %d", aid)
		}
	})
}
