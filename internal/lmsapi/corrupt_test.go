package lmsapi_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

// TestCorruptRowAnswers500: a stored time that does not parse fails the
// request with 500 in the API's error shape, logged, without the stored
// value in the answer (issue 12, item 14).
func TestCorruptRowAnswers500(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		course := create(t, e, "/courses/create", map[string]any{"course_name": "C"}, "data.course_id")
		raw, ph := e.RawDB()
		if _, err := raw.ExecContext(context.Background(), "UPDATE courses SET updated_at = 'garbage-time' WHERE id = "+ph, course); err != nil {
			t.Fatal(err)
		}
		r := e.LMS("GET", "/courses/get/"+itoa(course), nil)
		if r.Status != 500 {
			t.Fatalf("a corrupt course answered %d %s, want 500", r.Status, r.Body)
		}
		ExpectErrorShape(t, r.JSON(t))
		if strings.Contains(string(r.Body), "garbage-time") {
			t.Errorf("the answer shows the stored value: %s", r.Body)
		}
		if !strings.Contains(e.Logs.String(), "garbage-time") {
			t.Errorf("the corrupt value was not logged:\n%s", e.Logs.String())
		}
	})
}
