package lmsapi_test

import (
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

func TestTests(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		id := create(t, e, "/tests/create", map[string]any{"tests_name": "Quiz", "tests_description": "First quiz",
			"test_instructions": "No notes", "tests_alloted_time_demo_mode": "00:10:00", "tests_alloted_time_test_mode": "01:30:00"}, "data.id")
		second := create(t, e, "/tests/create", map[string]any{"tests_name": "Final"}, "data.id")
		path := "/tests/" + itoa(id)

		e.Scenarios(t, []Scenario{
			{Name: "create answers id and the three texts", Request: api("POST", "/tests/create", map[string]any{
				"tests_name": "Mid", "tests_description": "d", "test_instructions": "i", "tests_alloted_time_demo_mode": "00:05:00",
				"tests_alloted_time_test_mode": "00:45:00"}),
				Status: 200, Want: map[string]any{"data.tests_name": "Mid", "data.tests_description": "d", "data.test_instructions": "i", "data.#": 4}},
			{Name: "create needs a name", Request: api("POST", "/tests/create", map[string]any{}), Status: 400, Fields: []string{"tests_name"}},
			{Name: "create checks both times", Request: api("POST", "/tests/create", map[string]any{"tests_name": "x",
				"tests_alloted_time_demo_mode": "10:00", "tests_alloted_time_test_mode": "00:61:00"}),
				Status: 400, Fields: []string{"tests_alloted_time_demo_mode", "tests_alloted_time_test_mode"}},
			{Name: "create without auth", Request: Request{Method: "POST", Path: "/api/v1/tests/create", NoAuth: true}, Status: 401},
			{Name: "get starts unpublished", Request: api("GET", path, nil), Status: 200,
				Want: map[string]any{"data.id": id, "data.tests_name": "Quiz", "data.tests_description": "First quiz", "data.status": 0}},
			{Name: "get other domain", Request: other(e, "GET", path, nil), Status: 404},
			{Name: "get bad id", Request: api("GET", "/tests/x1", nil), Status: 400, Fields: []string{"test_id"}},
			{Name: "post to a test is 405", Request: api("POST", path, nil), Status: 405},
			{Name: "get list is 405", Request: api("GET", "/tests/list", nil), Status: 405},
			{Name: "publish", Request: api("POST", "/tests/publish/"+itoa(id), nil), Status: 200,
				Want: map[string]any{"data.id": id, "data.status": "Published"}},
			{Name: "published get says 1", Request: api("GET", path, nil), Status: 200, Want: map[string]any{"data.status": 1}},
			{Name: "unpublish", Request: api("POST", "/tests/unpublish/"+itoa(id), nil), Status: 200,
				Want: map[string]any{"data.status": "Unpublished"}},
			{Name: "publish other domain", Request: other(e, "POST", "/tests/publish/"+itoa(id), nil), Status: 404},
			{Name: "update some fields", Request: api("PUT", path, map[string]any{"tests_name": "Quiz 1", "tests_alloted_time_test_mode": "02:00:00"}),
				Status: 200, Want: map[string]any{"data.id": id, "data.tests_name": "Quiz 1", "data.tests_description": "First quiz", "data.test_instructions": "No notes"}},
			{Name: "update bad time", Request: api("PUT", path, map[string]any{"tests_alloted_time_demo_mode": "1:00:00"}),
				Status: 400, Fields: []string{"tests_alloted_time_demo_mode"}},
			{Name: "update other domain", Request: other(e, "PUT", path, map[string]any{"tests_name": "x"}), Status: 404},
			{Name: "list", Request: api("POST", "/tests/list", nil), Status: 200,
				Want: map[string]any{"total": 3, "data.0.id": id, "data.0.testId": id, "data.0.test_name": "Quiz 1"}},
			{Name: "remove from catalog", Request: api("DELETE", "/tests/removeFromCatalog/"+itoa(id), nil), Status: 200, Want: map[string]any{"data.id": id}},
			{Name: "hidden from the list", Request: api("POST", "/tests/list", nil), Status: 200,
				Want: map[string]any{"total": 2, "data.0.id": second}},
			{Name: "still there by id", Request: api("GET", path, nil), Status: 200, Want: map[string]any{"data.tests_name": "Quiz 1"}},
			{Name: "remove from catalog other domain", Request: other(e, "DELETE", "/tests/removeFromCatalog/"+itoa(id), nil), Status: 404},
			{Name: "back in the catalog", Request: api("POST", "/tests/addToCatalog/"+itoa(id), nil), Status: 200},
			{Name: "listed again", Request: api("POST", "/tests/list", nil), Status: 200, Want: map[string]any{"total": 3}},
			{Name: "delete other domain", Request: other(e, "DELETE", path, nil), Status: 404},
			{Name: "delete", Request: api("DELETE", path, nil), Status: 200, Want: map[string]any{"data.id": id}},
			{Name: "deleted is gone", Request: api("GET", path, nil), Status: 404},
		})
	})
}
