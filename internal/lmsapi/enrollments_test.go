package lmsapi_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

// TestEnrollment runs the same enrollment rules on courses, live classes,
// tests and bundles.
func TestEnrollment(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		user(t, e, "ann@example.com")
		e.Do(Request{Method: "POST", Path: "/api/v1/users/create", Domain: &e.Other, Body: map[string]any{"username": "zed", "email": "zed@example.com"}})
		kinds := []struct {
			name, create, param string
			body                map[string]any
			idPath              string
		}{
			{"courses", "/courses/create", "courseId", map[string]any{"course_name": "C"}, "data.course_id"},
			{"liveClasses", "/liveClasses/create", "classId", map[string]any{"title": "L", "date": "2030-01-02", "startTime": "10", "endTime": "11", "timezone": "28"}, "data.id"},
			{"tests", "/tests/create", "testId", map[string]any{"tests_name": "T"}, "data.id"},
			{"bundles", "/bundles/create", "bundleId", map[string]any{"bundle_name": "B"}, "data.id"},
		}
		for _, k := range kinds {
			id := create(t, e, k.create, k.body, k.idPath)
			enroll := "/" + k.name + "/enroll"
			unenroll := "/" + k.name + "/unenroll"
			body := func(kv ...any) map[string]any {
				m := map[string]any{}
				for i := 0; i < len(kv); i += 2 {
					m[kv[i].(string)] = kv[i+1]
				}
				return m
			}
			t.Run(k.name, func(t *testing.T) {
				e.Scenarios(t, []Scenario{
					{Name: "enroll", Request: api("POST", enroll, body(k.param, id, "email", "ann@example.com")), Status: 200,
						Want: map[string]any{"data.already_enrolled": false, "data." + k.param: id}},
					{Name: "enroll again does not duplicate and says so", Request: api("POST", enroll, body(k.param, itoa(id), "email", "Ann@Example.com")),
						Status: 200, Want: map[string]any{"data.already_enrolled": true},
						Check: func(t *testing.T, r *Response) {
							if !strings.Contains(Str(t, r.JSON(t), "message"), "already enrolled") {
								t.Errorf("message: %s", r.Body)
							}
						}},
					{Name: "enroll needs both", Request: api("POST", enroll, nil), Status: 400, Fields: []string{k.param, "email"}},
					{Name: "enroll unknown email", Request: api("POST", enroll, body(k.param, id, "email", "nobody@example.com")), Status: 404},
					{Name: "enroll unknown id", Request: api("POST", enroll, body(k.param, 999999, "email", "ann@example.com")), Status: 404},
					{Name: "enroll another domain's item", Request: other(e, "POST", enroll, body(k.param, id, "email", "zed@example.com")), Status: 404},
					{Name: "enroll another domain's user", Request: api("POST", enroll, body(k.param, id, "email", "zed@example.com")), Status: 404},
					{Name: "enroll without auth", Request: Request{Method: "POST", Path: "/api/v1" + enroll, NoAuth: true}, Status: 401},
					{Name: "enroll wrong method", Request: api("GET", enroll, nil), Status: 405},
					{Name: "unenroll", Request: api("POST", unenroll, body(k.param, id, "email", "ann@example.com")), Status: 200},
					{Name: "unenroll someone not enrolled", Request: api("POST", unenroll, body(k.param, id, "email", "ann@example.com")), Status: 409,
						Want: map[string]any{"code": "conflict"}},
					{Name: "unenroll unknown id", Request: api("POST", unenroll, body(k.param, 999999, "email", "ann@example.com")), Status: 404},
				})
			})
		}
	})
}

func TestBundleEnrollment(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ctx := context.Background()
		ann := user(t, e, "ann@example.com")
		c1 := create(t, e, "/courses/create", map[string]any{"course_name": "C1"}, "data.course_id")
		c2 := create(t, e, "/courses/create", map[string]any{"course_name": "C2"}, "data.course_id")
		t1 := create(t, e, "/tests/create", map[string]any{"tests_name": "T1"}, "data.id")
		b := create(t, e, "/bundles/create", map[string]any{"bundle_name": "Pack"}, "data.id")
		b2 := create(t, e, "/bundles/create", map[string]any{"bundle_name": "Other pack"}, "data.id")
		for _, it := range []map[string]any{{"courseId": c1}, {"testId": t1}} {
			it["bundleId"] = b
			if r := e.LMS("POST", "/bundles/addItem", it); r.Status != 200 {
				t.Fatalf("addItem: %d %s", r.Status, r.Body)
			}
		}
		e.LMS("POST", "/bundles/addItem", map[string]any{"bundleId": b2, "testId": t1})
		enrolled := func(kind string, id int64) bool {
			t.Helper()
			in, err := e.Store.IsEnrolled(ctx, e.Domain.ID, ann, kind, id)
			if err != nil {
				t.Fatal(err)
			}
			return in
		}
		step := func(path string, body map[string]any) {
			t.Helper()
			if r := e.LMS("POST", path, body); r.Status != 200 {
				t.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
		}
		// Ann is in C1 directly and in T1 through the other bundle.
		step("/courses/enroll", map[string]any{"courseId": c1, "email": "ann@example.com"})
		step("/bundles/enroll", map[string]any{"bundleId": b2, "email": "ann@example.com"})
		step("/bundles/enroll", map[string]any{"bundleId": b, "email": "ann@example.com"})
		if !enrolled(lms.KindCourse, c1) || !enrolled(lms.KindTest, t1) {
			t.Fatal("bundle enrollment did not enroll in every member")
		}
		// A course added later reaches the bundle's users; removing it takes
		// back only what the bundle gave.
		step("/bundles/addItem", map[string]any{"bundleId": b, "courseId": c2})
		if !enrolled(lms.KindCourse, c2) {
			t.Error("item added to the bundle was not given to its users")
		}
		step("/bundles/removeItem", map[string]any{"bundleId": b, "courseId": c2})
		if enrolled(lms.KindCourse, c2) {
			t.Error("item removed from the bundle kept the bundle's enrollment")
		}
		step("/bundles/unenroll", map[string]any{"bundleId": b, "email": "ann@example.com"})
		if !enrolled(lms.KindCourse, c1) {
			t.Error("unenrolling from the bundle removed the direct course enrollment")
		}
		if !enrolled(lms.KindTest, t1) {
			t.Error("unenrolling from the bundle removed the test the other bundle gives")
		}
		step("/bundles/enroll", map[string]any{"bundleId": b, "email": "ann@example.com"})
		if r := e.LMS("DELETE", "/bundles/delete/"+itoa(b2), nil); r.Status != 200 {
			t.Fatalf("delete bundle: %d %s", r.Status, r.Body)
		}
		step("/bundles/unenroll", map[string]any{"bundleId": b, "email": "ann@example.com"})
		if enrolled(lms.KindTest, t1) || enrolled(lms.KindBundle, b2) {
			t.Error("deleting a bundle left the enrollments it gave")
		}
		// Deleting a course takes its enrollments with it.
		if r := e.LMS("DELETE", "/courses/delete/"+itoa(c1), nil); r.Status != 200 {
			t.Fatalf("delete course: %d", r.Status)
		}
		if enrolled(lms.KindCourse, c1) {
			t.Error("deleting the course left its enrollment")
		}
	})
}

func TestEnrolledCounts(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ann := user(t, e, "ann@example.com")
		bob := user(t, e, "bob@example.com")
		user(t, e, "cy@example.com")
		c1 := create(t, e, "/courses/create", map[string]any{"course_name": "C1"}, "data.course_id")
		c2 := create(t, e, "/courses/create", map[string]any{"course_name": "C2"}, "data.course_id")
		b := create(t, e, "/bundles/create", map[string]any{"bundle_name": "Pack"}, "data.id")
		e.LMS("POST", "/bundles/addItem", map[string]any{"bundleId": b, "courseId": c1})
		for _, s := range []map[string]any{{"courseId": c1, "email": "ann@example.com"}, {"courseId": c2, "email": "ann@example.com"}, {"courseId": c2, "email": "bob@example.com"}} {
			e.LMS("POST", "/courses/enroll", s)
		}
		// Ann is also in C1 through the bundle: counted once.
		e.LMS("POST", "/bundles/enroll", map[string]any{"bundleId": b, "email": "ann@example.com"})
		const path = "/users/listUsersenrolledincourse"
		e.Scenarios(t, []Scenario{
			{Name: "a user's courses", Request: api("POST", path, map[string]any{"user_id": ann, "lms_domain_id": e.Domain.ID}), Status: 200,
				Want: map[string]any{"data.#": 1, "data.0.count": 2}},
			{Name: "another user's courses", Request: api("POST", path, map[string]any{"user_id": itoa(bob)}), Status: 200, Want: map[string]any{"data.0.count": 1}},
			{Name: "users in the domain's courses", Request: api("POST", path, nil), Status: 200, Want: map[string]any{"data.0.count": 2}},
			{Name: "users in one course", Request: api("POST", path, map[string]any{"course_id": c2}), Status: 200, Want: map[string]any{"data.0.count": 2}},
			{Name: "one user in one course", Request: api("POST", path, map[string]any{"course_id": c1, "user_id": bob}), Status: 200, Want: map[string]any{"data.0.count": 0}},
			{Name: "tests are counted apart", Request: api("POST", "/users/listUsersenrolledintest", map[string]any{"user_id": ann}), Status: 200,
				Want: map[string]any{"data.0.count": 0}},
			{Name: "classes are counted apart", Request: api("POST", "/users/listUsersenrolledinclass", map[string]any{"user_id": ann}), Status: 200,
				Want: map[string]any{"data.0.count": 0}},
			{Name: "another domain id is forbidden", Request: api("POST", path, map[string]any{"user_id": ann, "lms_domain_id": e.Other.ID}), Status: 403},
			{Name: "unknown user", Request: api("POST", path, map[string]any{"user_id": 999999}), Status: 404},
			{Name: "another domain's user", Request: other(e, "POST", path, map[string]any{"user_id": ann}), Status: 404},
			{Name: "bad user id", Request: api("POST", path, map[string]any{"user_id": "ann"}), Status: 400, Fields: []string{"user_id"}},
			{Name: "without auth", Request: Request{Method: "POST", Path: "/api/v1" + path, NoAuth: true}, Status: 401},
			{Name: "wrong method", Request: api("GET", path, nil), Status: 405},
		})
	})
}

func TestEnrollmentEarnsPoints(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ann := user(t, e, "ann@example.com")
		c := create(t, e, "/courses/create", map[string]any{"course_name": "C"}, "data.course_id")
		if r := e.LMS("PUT", "/gamification/rules", map[string]any{"event": "course_enrolled", "points": 15}); r.Status != 200 {
			t.Fatalf("set rule: %d %s", r.Status, r.Body)
		}
		for i := 0; i < 2; i++ { // the second enrollment changes nothing and earns nothing
			e.LMS("POST", "/courses/enroll", map[string]any{"courseId": c, "email": "ann@example.com"})
		}
		r := e.LMS("POST", "/gamification/user-points", map[string]any{"user_id": ann})
		if got := Int(t, r.JSON(t), "data.gamification_points"); got != 15 {
			t.Errorf("points after enrolling = %d, want 15; %s", got, r.Body)
		}
	})
}
