package lmsapi_test

import (
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

func TestBundles(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		b := create(t, e, "/bundles/create", map[string]any{"bundle_name": "Starter", "description": "All you need"}, "data.id")
		c := create(t, e, "/courses/create", map[string]any{"course_name": "C"}, "data.course_id")
		ts := create(t, e, "/tests/create", map[string]any{"tests_name": "T"}, "data.id")
		cl := create(t, e, "/liveClasses/create", map[string]any{"title": "L", "date": "2030-01-02", "startTime": "10", "endTime": "11", "timezone": "28"}, "data.id")
		path := "/bundles/get/" + itoa(b)
		e.Scenarios(t, []Scenario{
			{Name: "create with name", Request: api("POST", "/bundles/create", map[string]any{"name": "Second"}), Status: 200,
				Want: map[string]any{"data.bundle_name": "Second", "data.description": "", "data.courses.#": 0}},
			{Name: "create without a name", Request: api("POST", "/bundles/create", nil), Status: 400, Fields: []string{"bundle_name"}},
			{Name: "create without auth", Request: Request{Method: "POST", Path: "/api/v1/bundles/create", NoAuth: true}, Status: 401},
			{Name: "add a course", Request: api("POST", "/bundles/addItem", map[string]any{"bundleId": b, "courseId": c}), Status: 200,
				Want: map[string]any{"data.courses.0": c}},
			{Name: "add a test", Request: api("POST", "/bundles/addItem", map[string]any{"bundleId": b, "testId": ts}), Status: 200},
			{Name: "add a class", Request: api("POST", "/bundles/addItem", map[string]any{"bundleId": b, "classId": itoa(cl)}), Status: 200},
			{Name: "add twice", Request: api("POST", "/bundles/addItem", map[string]any{"bundleId": b, "courseId": c}), Status: 200,
				Want: map[string]any{"data.courses.#": 1}},
			{Name: "add needs one item", Request: api("POST", "/bundles/addItem", map[string]any{"bundleId": b, "courseId": c, "testId": ts}),
				Status: 400, Fields: []string{"courseId"}},
			{Name: "add unknown course", Request: api("POST", "/bundles/addItem", map[string]any{"bundleId": b, "courseId": 999999}), Status: 404},
			{Name: "add to another domain's bundle", Request: other(e, "POST", "/bundles/addItem", map[string]any{"bundleId": b, "courseId": c}), Status: 404},
			{Name: "get", Request: api("GET", path, nil), Status: 200, Want: map[string]any{"data.id": b, "data.bundle_id": b,
				"data.bundle_name": "Starter", "data.description": "All you need", "data.courses.0": c, "data.tests.0": ts, "data.classes.0": cl}},
			{Name: "get other domain", Request: other(e, "GET", path, nil), Status: 404},
			{Name: "get bad id", Request: api("GET", "/bundles/get/x", nil), Status: 400, Fields: []string{"bundle_id"}},
			{Name: "update", Request: api("PUT", "/bundles/update/"+itoa(b), map[string]any{"bundle_name": "Starter pack"}), Status: 200,
				Want: map[string]any{"data.bundle_name": "Starter pack", "data.description": "All you need"}},
			{Name: "update blank name", Request: api("PUT", "/bundles/update/"+itoa(b), map[string]any{"bundle_name": ""}), Status: 400,
				Fields: []string{"bundle_name"}},
			{Name: "update other domain", Request: other(e, "PUT", "/bundles/update/"+itoa(b), map[string]any{"bundle_name": "x"}), Status: 404},
			{Name: "list", Request: api("POST", "/bundles/list", nil), Status: 200, Want: map[string]any{"total": 2, "data.0.id": b,
				"data.0.bundle_id": b, "data.0.bundle_name": "Starter pack"}},
			{Name: "list wrong method", Request: api("GET", "/bundles/list", nil), Status: 405},
			{Name: "remove an item", Request: api("POST", "/bundles/removeItem", map[string]any{"bundleId": b, "testId": ts}), Status: 200,
				Want: map[string]any{"data.tests.#": 0}},
			{Name: "remove an item not in it", Request: api("POST", "/bundles/removeItem", map[string]any{"bundleId": b, "testId": ts}), Status: 404},
			{Name: "deleting a member course leaves the bundle", Request: api("DELETE", "/courses/delete/"+itoa(c), nil), Status: 200},
			{Name: "the course is out of the bundle", Request: api("GET", path, nil), Status: 200, Want: map[string]any{"data.courses.#": 0, "data.classes.#": 1}},
			{Name: "delete other domain", Request: other(e, "DELETE", "/bundles/delete/"+itoa(b), nil), Status: 404},
			{Name: "delete", Request: api("DELETE", "/bundles/delete/"+itoa(b), nil), Status: 200, Want: map[string]any{"data.id": b}},
			{Name: "deleted is gone", Request: api("GET", path, nil), Status: 404},
		})
	})
}
