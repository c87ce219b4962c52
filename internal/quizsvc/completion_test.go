package quizsvc_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
)

// TestPassCompletesTheTestLesson: with the server's own wiring (the engine
// reports to learn.Service.SetTestResult), passing the test completes the
// course's test lesson and so the course; a demo pass did not.
func TestPassCompletesTheTestLesson(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		f.settings(t, map[string]any{"pass_percent": 100})
		courseID := mustID(t, e.LMS("POST", "/courses/create", map[string]any{"course_name": "Safety"}), "data.course_id")
		e.LMS("POST", "/courses/publish/"+itoa(courseID), nil)
		if r := e.LMS("POST", "/courses/enroll", map[string]any{"courseId": courseID, "email": "ann@example.com"}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		sec, err := e.Store.CreateSection(ctx, f.d, lms.Section{CourseID: courseID, Title: "Final"})
		if err != nil {
			t.Fatal(err)
		}
		lesson, err := e.Store.CreateLesson(ctx, f.d, lms.Lesson{SectionID: sec.ID, Title: "Final test", Type: lms.LessonTest,
			TestID: f.testID, IsRequired: true})
		if err != nil {
			t.Fatal(err)
		}
		done := func() bool {
			v, err := e.Main.Learn.Outline(ctx, f.d, courseID, f.userID)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range v.Lessons() {
				if l.ID == lesson.ID {
					return l.State == learn.Done
				}
			}
			t.Fatal("lesson not in the outline")
			return false
		}
		d, _, _ := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeDemo)
		f.svc.Save(ctx, f.d, d.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, d.ID, 1, "A")}, 1)
		f.svc.Submit(ctx, f.d, d.ID, f.userID)
		if done() {
			t.Fatal("a demo pass completed the lesson")
		}
		a, _, _ := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, a.ID, 1, "A")}, 1)
		if _, err := f.svc.Submit(ctx, f.d, a.ID, f.userID); err != nil {
			t.Fatal(err)
		}
		if !done() {
			t.Fatal("passing the test did not complete its lesson")
		}
		v, _ := e.Main.Learn.Outline(ctx, f.d, courseID, f.userID)
		if v.Percent != 100 || v.CompletedAt.IsZero() {
			t.Fatalf("course %d%%, completed %v", v.Percent, v.CompletedAt)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
