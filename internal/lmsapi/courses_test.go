package lmsapi_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

func TestCourses(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		id := create(t, e, "/courses/create", map[string]any{"course_name": "Go 101", "subtitle": "Basics",
			"instructor_description": "Ann", "highlight": "Fast", "description": "Learn Go"}, "data.course_id")
		create(t, e, "/courses/create", map[string]any{"course_name": "Go 102"}, "data.course_id")
		ann := user(t, e, "ann@example.com")
		e.LMS("POST", "/courses/enroll", map[string]any{"courseId": id, "email": "ann@example.com"})
		path := "/courses/get/" + itoa(id)

		e.Scenarios(t, []Scenario{
			{Name: "create answers the seed's result", Request: api("POST", "/courses/create", map[string]any{
				"course_name": "Go 103", "subtitle": "s", "instructor_description": "i", "highlight": "h", "description": "d"}),
				Status: 200, Want: map[string]any{"message": "Course created", "data.course_name": "Go 103", "data.subtitle": "s",
					"data.instructor_description": "i", "data.highlight": "h", "data.description": "d", "data.alias": Absent, "data.#": 6}},
			{Name: "create without name", Request: api("POST", "/courses/create", map[string]any{"subtitle": "x"}),
				Status: 400, Fields: []string{"course_name"}},
			{Name: "create name too long", Request: api("POST", "/courses/create", map[string]any{"course_name": strings.Repeat("x", 256)}),
				Status: 400, Fields: []string{"course_name"}},
			{Name: "create without auth", Request: Request{Method: "POST", Path: "/api/v1/courses/create", NoAuth: true}, Status: 401},
			{Name: "create wrong method", Request: api("GET", "/courses/create", nil), Status: 405},
			{Name: "list", Request: api("POST", "/courses/list", nil), Status: 200,
				Want: map[string]any{"data.#": 3, "total": 3, "data.0.id": id, "data.0.course_id": id, "data.0.course_name": "Go 101"}},
			{Name: "list paginates", Request: api("POST", "/courses/list", map[string]any{"limit": 1, "page": 3}), Status: 200,
				Want: map[string]any{"data.#": 1, "total": 3, "data.0.course_name": "Go 103"}},
			{Name: "list other domain is empty", Request: other(e, "POST", "/courses/list", nil), Status: 200, Want: map[string]any{"total": 0}},
			{Name: "get", Request: api("GET", path, nil), Status: 200,
				Want: map[string]any{"data.id": id, "data.title": "Go 101", "data.subtitle": "Basics"}},
			{Name: "get bad id", Request: api("GET", "/courses/get/abc", nil), Status: 400, Fields: []string{"course_id"}},
			{Name: "get unknown", Request: api("GET", "/courses/get/999999", nil), Status: 404},
			{Name: "get other domain", Request: other(e, "GET", path, nil), Status: 404},
			{Name: "get wrong method", Request: api("POST", path, nil), Status: 405},
			{Name: "update the example's body", Request: api("PUT", "/courses/update", map[string]any{
				"course_id": itoa(id), "course_name": "Go 101 (2nd ed.)", "alias": "go-101", "subtitle": "Basics, again"}),
				Status: 200, Want: map[string]any{"data.course_id": id, "data.course_name": "Go 101 (2nd ed.)", "data.alias": "go-101",
					"data.subtitle": "Basics, again", "data.description": "Learn Go", "data.highlight": "Fast"}},
			{Name: "update without id", Request: api("PUT", "/courses/update", map[string]any{"course_name": "x"}),
				Status: 400, Fields: []string{"course_id"}},
			{Name: "update blank name", Request: api("PUT", "/courses/update", map[string]any{"course_id": id, "course_name": " "}),
				Status: 400, Fields: []string{"course_name"}},
			{Name: "update other domain", Request: other(e, "PUT", "/courses/update", map[string]any{"course_id": id, "course_name": "x"}), Status: 404},
			{Name: "publish", Request: api("POST", "/courses/publish/"+itoa(id), nil), Status: 200,
				Want: map[string]any{"data.id": id, "data.status": "published"}},
			{Name: "unpublish", Request: api("POST", "/courses/unpublish/"+itoa(id), nil), Status: 200,
				Want: map[string]any{"data.id": id, "data.status": "Unpublished"}},
			{Name: "publish other domain", Request: other(e, "POST", "/courses/publish/"+itoa(id), nil), Status: 404},
			{Name: "delete other domain", Request: other(e, "DELETE", "/courses/delete/"+itoa(id), nil), Status: 404},
			{Name: "delete", Request: api("DELETE", "/courses/delete/"+itoa(id), nil), Status: 200, Want: map[string]any{"data.id": id}},
			{Name: "deleted is gone", Request: api("GET", path, nil), Status: 404},
			{Name: "delete again", Request: api("DELETE", "/courses/delete/"+itoa(id), nil), Status: 404},
		})
		got, err := e.Store.Course(context.Background(), e.Domain.ID, id+1)
		if err != nil || got.Status != lms.Unpublished {
			t.Errorf("a new course is %q (%v), want Unpublished", got.Status, err)
		}
		if in, _ := e.Store.IsEnrolled(context.Background(), e.Domain.ID, ann, lms.KindCourse, id); in {
			t.Error("deleting the course left its enrollment")
		}
	})
}
