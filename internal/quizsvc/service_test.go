package quizsvc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/quizsvc"
	"github.com/lectern-lms/lectern/internal/store"
)

// fixture is a test with questions and an enrolled learner.
type fixture struct {
	e      *apitest.Env
	svc    *quizsvc.Service
	d      int64
	testID int64
	userID int64
}

func mustID(t *testing.T, r *apitest.Response, path string) int64 {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	return apitest.Int(t, r.JSON(t), path)
}

// newFixture makes a test (test mode 30 minutes, demo 10) with one single
// choice question worth 1 ("A" is right) and the given extra questions.
func newFixture(t *testing.T, e *apitest.Env, extra ...map[string]any) *fixture {
	t.Helper()
	f := &fixture{e: e, svc: e.Main.Quiz, d: e.Domain.ID}
	f.testID = mustID(t, e.LMS("POST", "/tests/create", map[string]any{"tests_name": "Quiz",
		"tests_alloted_time_test_mode": "00:30:00", "tests_alloted_time_demo_mode": "00:10:00"}), "data.id")
	qs := append([]map[string]any{{"type": "single_choice", "text_md": "Pick A",
		"data": map[string]any{"choices": []map[string]any{{"text": "A", "correct": true}, {"text": "B"}}}}}, extra...)
	for _, q := range qs {
		qid := mustID(t, e.LMS("POST", "/questions/create", q), "data.id")
		mustID(t, e.LMS("POST", "/tests/addQuestion", map[string]any{"testId": f.testID, "questionId": qid}), "data.slotId")
	}
	f.userID = mustID(t, e.LMS("POST", "/users/create", map[string]any{"username": "ann", "email": "ann@example.com", "name": "Ann"}), "id")
	if r := e.LMS("POST", "/tests/enroll", map[string]any{"testId": f.testID, "email": "ann@example.com"}); r.Status != 200 {
		t.Fatalf("enroll: %s", r.Body)
	}
	return f
}

func (f *fixture) settings(t *testing.T, body map[string]any) {
	t.Helper()
	if r := f.e.LMS("PUT", fmt.Sprintf("/tests/settings/%d", f.testID), body); r.Status != 200 {
		t.Fatalf("settings: %s", r.Body)
	}
}

// choice is the display id of the choice with text in slot of a.
func (f *fixture) choice(t *testing.T, attemptID int64, slot int, text string) string {
	t.Helper()
	v, err := f.svc.LearnerView(context.Background(), f.d, attemptID, f.userID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Questions[slot-1].Choices {
		if c.Text == text {
			return c.ID
		}
	}
	t.Fatalf("no choice %q", text)
	return ""
}

func TestStartResumeAndLimits(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		f.settings(t, map[string]any{"attempts_allowed": 1})
		a, created, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil || !created {
			t.Fatalf("start: %v %v", created, err)
		}
		b, created, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil || created || b.ID != a.ID || b.Layout != a.Layout {
			t.Fatalf("second start did not resume: %v %v %v", b.ID, created, err)
		}
		if _, err := f.svc.Submit(ctx, f.d, a.ID, f.userID); err != nil {
			t.Fatal(err)
		}
		_, _, err = f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if lms.ErrorCode(err) != lms.CodeForbidden || !strings.Contains(err.Error(), "no attempts left: 1 of 1") {
			t.Fatalf("start over the limit: %v", err)
		}
		// Demo attempts never count and are not limited.
		for i := 0; i < 2; i++ {
			d, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeDemo)
			if err != nil {
				t.Fatalf("demo start: %v", err)
			}
			if _, err := f.svc.Submit(ctx, f.d, d.ID, f.userID); err != nil {
				t.Fatal(err)
			}
		}
		acc, err := f.svc.Access(ctx, f.d, f.testID, f.userID)
		if err != nil || acc.Used != 1 || acc.Left() != 0 {
			t.Fatalf("access after demos: used %d left %d %v", acc.Used, acc.Left(), err)
		}
		// An override grants one more.
		if r := e.LMS("POST", "/tests/overrides/set", map[string]any{"testId": f.testID, "email": "ann@example.com", "extra_attempts": 1}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		if _, created, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest); err != nil || !created {
			t.Fatalf("start with an extra attempt: %v", err)
		}
	})
}

func TestNumberTimesCapsAttempts(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		// attempts_allowed 0 (unlimited), but the learner bought a scheme
		// with numbertimes 1.
		p, err := e.Store.AddPricingScheme(ctx, f.d, lms.PricingScheme{Kind: lms.KindTest, ItemID: f.testID, Price: 500, Lifetime: true, NumberTimes: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r := e.LMS("POST", "/tests/overrides/set", map[string]any{"testId": f.testID, "email": "ann@example.com", "scheme_id": p.ID}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		a, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		f.svc.Submit(ctx, f.d, a.ID, f.userID)
		if _, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest); lms.ErrorCode(err) != lms.CodeForbidden {
			t.Fatalf("numbertimes 1 allowed a second attempt: %v", err)
		}
	})
}

func TestStartRefusals(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		other := mustID(t, e.LMS("POST", "/users/create", map[string]any{"username": "bob", "email": "bob@example.com", "name": "Bob"}), "id")
		for _, mode := range []string{quiz.ModeTest, quiz.ModeDemo} {
			if _, _, err := f.svc.Start(ctx, f.d, f.testID, other, mode); err == nil || !strings.Contains(err.Error(), "not enrolled") {
				t.Fatalf("unenrolled %s start: %v", mode, err)
			}
		}
		now := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
		e.Clock.Set(now)
		f.settings(t, map[string]any{"open_at": "2030-03-01T10:00:00Z"})
		if _, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest); err == nil || !strings.Contains(err.Error(), "opens at") {
			t.Fatalf("start before open: %v", err)
		}
		f.settings(t, map[string]any{"open_at": "", "close_at": "2030-03-01T09:10:00Z", "delay_between_s": 3600})
		a, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Capped || !a.Deadline.Equal(now.Add(10*time.Minute)) {
			t.Fatalf("deadline %v capped %v, want the close time", a.Deadline, a.Capped)
		}
		f.svc.Submit(ctx, f.d, a.ID, f.userID)
		if _, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest); err == nil || !strings.Contains(err.Error(), "next attempt may start") {
			t.Fatalf("start within the delay: %v", err)
		}
		e.Clock.Set(now.Add(2 * time.Hour))
		if _, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Fatalf("start after close: %v", err)
		}
	})
}

func TestAccommodationDeadline(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		now := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
		e.Clock.Set(now)
		e.LMS("POST", "/tests/overrides/set", map[string]any{"testId": f.testID, "email": "ann@example.com", "time_multiplier": "1.5", "extra_time_s": 60})
		a, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		if want := now.Add(46 * time.Minute); !a.Deadline.Equal(want) {
			t.Fatalf("deadline %v, want %v (30 min × 1.5 + 1 min)", a.Deadline, want)
		}
		d, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeDemo)
		if err != nil || !d.Deadline.Equal(now.Add(16*time.Minute)) {
			t.Fatalf("demo deadline %v %v, want 16 min", d.Deadline, err)
		}
	})
}

// TestConcurrentStart: several starts at once make one attempt.
func TestConcurrentStart(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		const n = 8
		ids := make([]int64, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				a, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
				ids[i], errs[i] = a.ID, err
			}(i)
		}
		close(start)
		wg.Wait()
		for i := range ids {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Fatalf("start %d: id %d err %v; first id %d", i, ids[i], errs[i], ids[0])
			}
		}
		as, total, err := e.Store.ListAttempts(ctx, f.d, store.AttemptFilter{TestID: f.testID}, store.Page{})
		if err != nil || total != 1 || len(as) != 1 {
			t.Fatalf("%d attempts, want 1 (%v)", total, err)
		}
	})
}

// TestConcurrentSaves: saves racing from several tabs keep the highest seq.
func TestConcurrentSaves(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, map[string]any{"type": "short_answer", "text_md": "Say hi", "data": map[string]any{"answers": []string{"hi"}}})
		a, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		const n = 20
		var wg sync.WaitGroup
		for i := n; i >= 1; i-- {
			wg.Add(1)
			go func(seq int) {
				defer wg.Done()
				if _, err := f.svc.Save(ctx, f.d, a.ID, f.userID, 2, quiz.Response{Text: fmt.Sprint("answer ", seq)}, int64(seq)); err != nil {
					t.Errorf("save %d: %v", seq, err)
				}
			}(i)
		}
		wg.Wait()
		res, err := f.svc.Save(ctx, f.d, a.ID, f.userID, 2, quiz.Response{Text: "stale"}, 3)
		if err != nil || res.Saved || res.Seq != n {
			t.Fatalf("stale save: %+v %v", res, err)
		}
		v, err := f.svc.LearnerView(ctx, f.d, a.ID, f.userID)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Answers) != 1 || v.Answers[0].Seq != n || v.Answers[0].Response.Text != fmt.Sprint("answer ", n) {
			t.Fatalf("answers %+v, want seq %d's text", v.Answers, n)
		}
	})
}

// TestSweeperFinishesWithSavedAnswers: nobody submits; the sweeper
// finishes the attempt after its deadline plus the network grace, with
// the answer saved, and a late save is refused as time_up.
func TestSweeperFinishesWithSavedAnswers(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		f.settings(t, map[string]any{"pass_percent": 100})
		t0 := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
		e.Clock.Set(t0)
		a, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, a.ID, 1, "A")}, 1); err != nil {
			t.Fatal(err)
		}
		deadline := t0.Add(30 * time.Minute)
		e.Clock.Set(deadline.Add(5 * time.Second))
		if _, err := f.svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.Store.Attempt(ctx, f.d, a.ID); got.State != quiz.InProgress {
			t.Fatalf("state %s within the network grace, want in_progress", got.State)
		}
		// A save 5 s after the deadline is still taken.
		if _, err := f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, a.ID, 1, "A")}, 2); err != nil {
			t.Fatalf("save in the network grace: %v", err)
		}
		e.Clock.Set(deadline.Add(11 * time.Second))
		_, err = f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, a.ID, 1, "B")}, 3)
		if lms.ErrorCode(err) != quizsvc.ErrCodeTimeUp {
			t.Fatalf("late save: %v, want time_up", err)
		}
		if _, err := f.svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		got, _ := e.Store.Attempt(ctx, f.d, a.ID)
		if got.State != quiz.Finished || got.ScoreMilli != 1000 || !got.FinishedAt.Equal(deadline.Add(11*time.Second)) {
			t.Fatalf("after sweep: state %s score %d finished %v", got.State, got.ScoreMilli, got.FinishedAt)
		}
		res, err := f.svc.LearnerResult(ctx, f.d, f.testID, f.userID)
		if err != nil || !res.Passed {
			t.Fatalf("result %+v %v", res, err)
		}
	})
}

func TestGraceExpiry(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		f.settings(t, map[string]any{"on_expiry": "grace", "grace_s": 300})
		t0 := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
		e.Clock.Set(t0)
		a, _, _ := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		e.Clock.Set(t0.Add(31 * time.Minute))
		f.svc.Sweep(ctx)
		if got, _ := e.Store.Attempt(ctx, f.d, a.ID); got.State != quiz.Overdue {
			t.Fatalf("state %s, want overdue", got.State)
		}
		if _, err := f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: "c1"}, 1); lms.ErrorCode(err) != quizsvc.ErrCodeTimeUp {
			t.Fatalf("save while overdue: %v", err)
		}
		if got, err := f.svc.Submit(ctx, f.d, a.ID, f.userID); err != nil || got.State != quiz.Finished {
			t.Fatalf("submit while overdue: %v %v", got.State, err)
		}
	})
}

// TestPointsOnceAndDemoNever: passing twice gives test_passed once; a demo
// pass gives nothing and no completion call.
func TestPointsOnceAndDemoNever(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		var mu sync.Mutex
		var calls []bool
		f.svc.TestResult = func(ctx context.Context, domainID, userID, testID int64, passed bool, at time.Time) error {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, passed)
			return nil
		}
		if _, err := e.Store.SetPointRule(ctx, f.d, store.EventTestPassed, 10); err != nil {
			t.Fatal(err)
		}
		d, _, _ := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeDemo)
		f.svc.Save(ctx, f.d, d.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, d.ID, 1, "A")}, 1)
		f.svc.Submit(ctx, f.d, d.ID, f.userID)
		if pts, _ := e.Store.UserPoints(ctx, f.d, f.userID); pts != 0 || len(calls) != 0 {
			t.Fatalf("demo gave %d points, %d completion calls", pts, len(calls))
		}
		for i := 0; i < 2; i++ {
			a, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
			if err != nil {
				t.Fatal(err)
			}
			f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, a.ID, 1, "A")}, 1)
			if _, err := f.svc.Submit(ctx, f.d, a.ID, f.userID); err != nil {
				t.Fatal(err)
			}
		}
		if pts, _ := e.Store.UserPoints(ctx, f.d, f.userID); pts != 10 {
			t.Fatalf("points %d, want 10 once", pts)
		}
		if len(calls) != 2 || !calls[0] || !calls[1] {
			t.Fatalf("completion calls %v", calls)
		}
	})
}

// TestRegradeAfterFix: the key was wrong; after the question is fixed a
// regrade rescores the attempt and the learner now passes.
func TestRegradeAfterFix(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		f.settings(t, map[string]any{"pass_percent": 100})
		a, _, _ := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, a.ID, 1, "B")}, 1)
		a, _ = f.svc.Submit(ctx, f.d, a.ID, f.userID)
		if a.ScoreMilli != 0 {
			t.Fatalf("score %d", a.ScoreMilli)
		}
		slots, _ := e.Store.Slots(ctx, f.d, f.testID)
		fix := e.LMS("PUT", fmt.Sprintf("/questions/update/%d", slots[0].QuestionID), map[string]any{"data": map[string]any{
			"choices": []map[string]any{{"text": "A"}, {"text": "B", "correct": true}}}})
		if fix.Status != 200 {
			t.Fatal(string(fix.Body))
		}
		as, changes, err := f.svc.RegradeReport(ctx, f.d, []int64{a.ID})
		if err != nil || as[0].ScoreMilli != 1000 {
			t.Fatalf("regrade: %+v %v", as, err)
		}
		want := []quizsvc.ResultChange{{UserID: f.userID, TestID: f.testID, Before: false, After: true}}
		if fmt.Sprint(changes) != fmt.Sprint(want) {
			t.Fatalf("result changes %+v, want %+v", changes, want)
		}
		if res, _ := f.svc.LearnerResult(ctx, f.d, f.testID, f.userID); !res.Passed {
			t.Fatalf("not passed after regrade: %+v", res)
		}
	})
}

// forbiddenKeys are the JSON keys that carry a key or review data.
var forbiddenKeys = map[string]bool{"correct": true, "answers": true, "value": true, "tolerance": true, "feedback": true,
	"right_answer": true, "right_text": true, "scoring": true, "case_sensitive": true, "wildcard": true, "mark": true}

// scan walks v and reports every forbidden key and every string holding
// SECRET or the numerical key.
func scan(v any, path string, found *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if path+"."+k == ".review.shows" {
				continue // the review's own flags: what it shows, not data
			}
			if forbiddenKeys[k] {
				*found = append(*found, path+"."+k)
			}
			scan(val, path+"."+k, found)
		}
	case []any:
		for i, val := range x {
			scan(val, fmt.Sprintf("%s.%d", path, i), found)
		}
	case string:
		if strings.Contains(x, "SECRET") || strings.Contains(x, "987.654") {
			*found = append(*found, path+"="+x)
		}
	case json.Number:
		if strings.Contains(x.String(), "987.654") {
			*found = append(*found, path+"="+x.String())
		}
	}
}

func viewJSON(t *testing.T, v quizsvc.AttemptView) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoKeyBeforeReview: with every question type (keys marked SECRET),
// the learner's attempt JSON holds no key while in progress, nor after
// submitting when review shows nothing; once review allows right answers
// the scan finds them (the scan can fail).
func TestNoKeyBeforeReview(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e,
			map[string]any{"type": "true_false", "text_md": "T?", "data": map[string]any{"correct": true, "feedback": "SECRET fb"}},
			map[string]any{"type": "multiple_choice", "text_md": "M?", "data": map[string]any{"choices": []map[string]any{
				{"text": "x", "correct": true}, {"text": "y"}, {"text": "z", "correct": true}}}},
			map[string]any{"type": "short_answer", "text_md": "S?", "data": map[string]any{"answers": []string{"SECRET1"}}},
			map[string]any{"type": "numerical", "text_md": "N?", "data": map[string]any{"value": "987.654", "tolerance": "0.001"}},
			map[string]any{"type": "fill_in_blanks", "text_md": "F [[1]] and [[2]]", "data": map[string]any{"blanks": []map[string]any{
				{"answers": []string{"SECRET2"}}, {"answers": []string{"up"}, "options": []string{"up", "down"}}}}},
			map[string]any{"type": "matching", "text_md": "Match", "data": map[string]any{"pairs": []map[string]any{
				{"left": "a", "right": "1"}, {"left": "b", "right": "2"}, {"left": "c", "right": "3"}}}},
			map[string]any{"type": "ordering", "text_md": "Order", "data": map[string]any{"items": []map[string]any{
				{"text": "first"}, {"text": "second"}, {"text": "third"}}}},
			map[string]any{"type": "essay", "text_md": "E?"},
			map[string]any{"type": "description", "text_md": "Read."},
		)
		none := map[string]any{"correctness": false, "marks": false, "feedback": false, "right_answer": false}
		f.settings(t, map[string]any{"review": map[string]any{"after": none, "later": none, "after_close": none}})
		a, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := f.svc.LearnerView(ctx, f.d, a.ID, f.userID)
		var found []string
		scan(viewJSON(t, v), "", &found)
		if len(found) > 0 {
			t.Fatalf("in progress: keys in attempt JSON: %v", found)
		}
		// Matching rights and ordering items are not in their right order
		// under guessable ids.
		for _, q := range v.Questions {
			if q.Type == quiz.Ordering && q.Items[0].Text == "first" && q.Items[1].Text == "second" && q.Items[2].Text == "third" {
				t.Fatalf("ordering shown in its right order: %+v", q.Items)
			}
		}
		f.svc.Save(ctx, f.d, a.ID, f.userID, 5, quiz.Response{Text: "wrong"}, 1)
		f.svc.Submit(ctx, f.d, a.ID, f.userID)
		v, _ = f.svc.LearnerView(ctx, f.d, a.ID, f.userID)
		found = nil
		scan(viewJSON(t, v), "", &found)
		if len(found) > 0 || v.Review == nil {
			t.Fatalf("review shows nothing, yet the JSON has: %v", found)
		}
		all := map[string]any{"correctness": true, "marks": true, "feedback": true, "right_answer": true}
		f.settings(t, map[string]any{"review": map[string]any{"after": all}})
		v, _ = f.svc.LearnerView(ctx, f.d, a.ID, f.userID)
		found = nil
		scan(viewJSON(t, v), "", &found)
		if len(found) == 0 {
			t.Fatal("review allows right answers but the scan found none: the scan is blind")
		}
	})
}

func TestSaveRefusals(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		a, _, _ := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		other := mustID(t, e.LMS("POST", "/users/create", map[string]any{"username": "bob", "email": "bob@example.com", "name": "Bob"}), "id")
		if _, err := f.svc.Save(ctx, f.d, a.ID, other, 1, quiz.Response{Choice: "c1"}, 1); !lms.IsNotFound(err) {
			t.Fatalf("another learner's save: %v", err)
		}
		if _, err := f.svc.Save(ctx, e.Other.ID, a.ID, f.userID, 1, quiz.Response{Choice: "c1"}, 1); !lms.IsNotFound(err) {
			t.Fatalf("another domain's save: %v", err)
		}
		var le *lms.Error
		_, err := f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: "1"}, 1)
		if !errors.As(err, &le) || le.Fields[0].Field != "response.choice" {
			t.Fatalf("canonical id accepted: %v", err)
		}
		if _, err := f.svc.Save(ctx, f.d, a.ID, f.userID, 9, quiz.Response{}, 1); lms.ErrorCode(err) != lms.CodeInvalid {
			t.Fatalf("bad slot: %v", err)
		}
		f.svc.Submit(ctx, f.d, a.ID, f.userID)
		if _, err := f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: "c1"}, 2); lms.ErrorCode(err) != lms.CodeConflict {
			t.Fatalf("save after submit: %v", err)
		}
		if _, err := f.svc.Submit(ctx, f.d, a.ID, f.userID); lms.ErrorCode(err) != lms.CodeConflict {
			t.Fatalf("second submit: %v", err)
		}
	})
}

// TestSweeperSkipsABrokenAttempt: an attempt that cannot be finished is
// logged and left; the sweeper still finishes the others.
func TestSweeperSkipsABrokenAttempt(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		bob := mustID(t, e.LMS("POST", "/users/create", map[string]any{"username": "bob", "email": "bob@example.com", "name": "Bob"}), "id")
		e.LMS("POST", "/tests/enroll", map[string]any{"testId": f.testID, "email": "bob@example.com"})
		t0 := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
		e.Clock.Set(t0)
		broken, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		good, _, err := f.svc.Start(ctx, f.d, f.testID, bob, quiz.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		db, _ := e.RawDB()
		if _, err := db.Exec("UPDATE quiz_attempts SET layout = 'not json' WHERE id = " + fmt.Sprint(broken.ID)); err != nil {
			t.Fatal(err)
		}
		e.Clock.Set(t0.Add(time.Hour))
		if _, err := f.svc.Sweep(ctx); err != nil {
			t.Fatalf("sweep: %v", err)
		}
		if a, _ := e.Store.Attempt(ctx, f.d, good.ID); a.State != quiz.Finished {
			t.Fatalf("the good attempt is %s, want finished", a.State)
		}
		if a, _ := e.Store.Attempt(ctx, f.d, broken.ID); a.State != quiz.InProgress {
			t.Fatalf("the broken attempt is %s", a.State)
		}
	})
}

// An attempt the sweeper found due may be closed before the sweeper's
// finish: by its learner's submit, or by its room's close of a live quiz.
// The sweeper's finish then changes nothing and is no failure; the
// attempt keeps the grade it was closed with.
func TestSweeperFindsAnAttemptClosedMeanwhile(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		t0 := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
		e.Clock.Set(t0)
		a, _, err := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, a.ID, 1, "A")}, 1); err != nil {
			t.Fatal(err)
		}
		submitted, err := f.svc.Submit(ctx, f.d, a.ID, f.userID)
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Set(t0.Add(time.Hour))
		if err := f.svc.Expire(ctx, store.AttemptRef{DomainID: f.d, ID: a.ID}); err != nil {
			t.Fatalf("expiring an attempt submitted meanwhile: %v", err)
		}
		got, err := e.Store.Attempt(ctx, f.d, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != submitted.State || !got.FinishedAt.Equal(submitted.FinishedAt) || got.ScoreMilli != submitted.ScoreMilli {
			t.Errorf("after the expiry: %s at %v, score %d; submitted: %s at %v, score %d",
				got.State, got.FinishedAt, got.ScoreMilli, submitted.State, submitted.FinishedAt, submitted.ScoreMilli)
		}
		// An attempt that cannot be finished is still a failure.
		if err := f.svc.Expire(ctx, store.AttemptRef{DomainID: f.d, ID: a.ID + 1000}); err == nil {
			t.Error("expiring an attempt that does not exist: no error")
		}
	})
}

// TestDeleteRecomputesResult: deleting the only passed attempt tells the
// learner side the test is no longer passed.
func TestDeleteRecomputesResult(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := newFixture(t, e)
		var calls []bool
		f.svc.TestResult = func(ctx context.Context, domainID, userID, testID int64, passed bool, at time.Time) error {
			calls = append(calls, passed)
			return nil
		}
		a, _, _ := f.svc.Start(ctx, f.d, f.testID, f.userID, quiz.ModeTest)
		f.svc.Save(ctx, f.d, a.ID, f.userID, 1, quiz.Response{Choice: f.choice(t, a.ID, 1, "A")}, 1)
		f.svc.Submit(ctx, f.d, a.ID, f.userID)
		if r := e.LMS("DELETE", fmt.Sprintf("/tests/attempts/delete/%d", a.ID), nil); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		if fmt.Sprint(calls) != "[true false]" {
			t.Fatalf("completion calls %v, want [true false]", calls)
		}
	})
}
