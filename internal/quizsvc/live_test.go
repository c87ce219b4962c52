package quizsvc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/quizsvc"
	"github.com/lectern-lms/lectern/internal/store"
)

// TestInClassQuiz drives an in-class quiz with simulated room events: the
// teacher launches an attached test, two students answer (one right, one
// wrong, one answering twice), the teacher closes it; the room gets the
// anonymous aggregate, the attempts are listed per class with their
// scores, live_quiz_correct is given once, and the attempts count for
// nothing on the test itself.
func TestInClassQuiz(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		bob := mustID(t, e.LMS("POST", "/users/create", map[string]any{"username": "bob", "email": "bob@example.com", "name": "Bob"}), "id")
		classID := mustID(t, e.LMS("POST", "/liveClasses/create", map[string]any{"title": "Live", "date": "2030-01-01",
			"startTime": "10:00", "endTime": "11:00", "timezone": "28"}), "data.class_id")
		if _, err := f.svc.Launch(ctx, f.d, classID, 1, f.testID, 0, time.Time{}); !lms.IsNotFound(err) {
			t.Fatalf("launch of an unattached test: %v", err)
		}
		if r := e.LMS("POST", "/liveClasses/quiz/attach", map[string]any{"classId": classID, "testId": f.testID}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		if _, err := e.Store.SetPointRule(ctx, f.d, store.EventLiveQuizCorrect, 3); err != nil {
			t.Fatal(err)
		}
		// launch
		lq, err := f.svc.Launch(ctx, f.d, classID, 1, f.testID, 0, e.Clock.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		right, wrong := "", ""
		for _, c := range lq.Questions[0].Choices {
			if c.Text == "A" {
				right = c.ID
			} else {
				wrong = c.ID
			}
		}
		// answer
		for _, ev := range []struct {
			user   int64
			choice string
			seq    int64
		}{{f.userID, wrong, 1}, {bob, wrong, 1}, {f.userID, right, 2}} {
			if _, err := f.svc.Answer(ctx, lq, ev.user, 1, quiz.Response{Choice: ev.choice}, ev.seq); err != nil {
				t.Fatalf("answer: %v", err)
			}
		}
		// close
		agg, err := f.svc.Close(ctx, lq)
		if err != nil {
			t.Fatal(err)
		}
		want := quizsvc.SlotCount{Slot: 1, Answered: 2, Right: 1, Options: map[string]int{right: 1, wrong: 1}}
		if agg.Participants != 2 || fmt.Sprint(agg.Slots[0]) != fmt.Sprint(want) {
			t.Fatalf("aggregate %+v, want 2 participants and %+v", agg, want)
		}
		// A late answer after close is refused.
		if _, err := f.svc.Answer(ctx, lq, bob, 1, quiz.Response{Choice: right}, 2); lms.ErrorCode(err) != lms.CodeConflict {
			t.Fatalf("answer after close: %v", err)
		}
		r := e.LMS("POST", "/tests/attempts/list", map[string]any{"classId": classID})
		body := r.JSON(t)
		if apitest.Int(t, body, "total") != 2 {
			t.Fatalf("class attempts: %s", r.Body)
		}
		res := e.LMS("POST", "/liveClasses/quiz/results", map[string]any{"classId": classID, "sitting": 1})
		scores := map[string]string{}
		for i := 0; i < 2; i++ {
			rb := res.JSON(t)
			scores[apitest.Str(t, rb, fmt.Sprintf("data.attempts.%d.email", i))] = fmt.Sprint(mustLookup(t, rb, fmt.Sprintf("data.attempts.%d.score", i)))
		}
		if scores["ann@example.com"] != "1" || scores["bob@example.com"] != "0" {
			t.Fatalf("scores %v", scores)
		}
		if pts, _ := e.Store.UserPoints(ctx, f.d, f.userID); pts != 3 {
			t.Fatalf("ann has %d points, want 3 once", pts)
		}
		if pts, _ := e.Store.UserPoints(ctx, f.d, bob); pts != 0 {
			t.Fatalf("bob has %d points", pts)
		}
		// Live attempts are not test attempts.
		acc, _ := f.svc.Access(ctx, f.d, f.testID, f.userID)
		if acc.Used != 0 {
			t.Fatalf("a live attempt used a test attempt")
		}
		if res, _ := f.svc.LearnerResult(ctx, f.d, f.testID, f.userID); res.Graded {
			t.Fatalf("a live attempt made a test grade: %+v", res)
		}
	})
}

func mustLookup(t *testing.T, body any, path string) any {
	t.Helper()
	v, ok := apitest.Lookup(body, path)
	if !ok {
		t.Fatalf("%s missing", path)
	}
	return v
}

// TestUnclosedLiveQuizIsSwept: a quiz launched without a time limit that
// the room never closes (its server restarted; the open quiz lived in the
// room's memory) is finished by the expiry sweeper MaxLiveQuiz after the
// launch, graded with the answer saved; not before.
func TestUnclosedLiveQuizIsSwept(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		t0 := time.Date(2030, 1, 1, 10, 5, 0, 0, time.UTC)
		e.Clock.Set(t0)
		classID := mustID(t, e.LMS("POST", "/liveClasses/create", map[string]any{"title": "Live", "date": "2030-01-01",
			"startTime": "10:00", "endTime": "11:00", "timezone": "28"}), "data.class_id")
		if r := e.LMS("POST", "/liveClasses/quiz/attach", map[string]any{"classId": classID, "testId": f.testID}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		lq, err := f.svc.Launch(ctx, f.d, classID, 1, f.testID, 0, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		right := ""
		for _, c := range lq.Questions[0].Choices {
			if c.Text == "A" {
				right = c.ID
			}
		}
		if _, err := f.svc.Answer(ctx, lq, f.userID, 1, quiz.Response{Choice: right}, 1); err != nil {
			t.Fatal(err)
		}
		as, _, err := e.Store.ListAttempts(ctx, f.d, store.AttemptFilter{ClassID: classID}, store.Page{})
		if err != nil || len(as) != 1 {
			t.Fatalf("attempts %v %v", as, err)
		}
		// The lost room never closes it. An hour later it is still open ...
		e.Clock.Set(t0.Add(time.Hour))
		if _, err := f.svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.Store.Attempt(ctx, f.d, as[0].ID); got.State != quiz.InProgress {
			t.Fatalf("state %s an hour after the launch, want in_progress", got.State)
		}
		// ... and past MaxLiveQuiz and the network grace the sweeper finishes it.
		e.Clock.Set(t0.Add(quizsvc.MaxLiveQuiz + quiz.NetworkGrace + time.Second))
		if _, err := f.svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		got, _ := e.Store.Attempt(ctx, f.d, as[0].ID)
		if got.State != quiz.Finished || got.ScoreMilli != got.MaxMilli || got.MaxMilli == 0 {
			t.Fatalf("after the sweep: state %s score %d of %d", got.State, got.ScoreMilli, got.MaxMilli)
		}
	})
}
