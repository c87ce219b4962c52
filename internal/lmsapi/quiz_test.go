package lmsapi_test

import (
	"context"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/quiz"
)

func TestQuizQuestions(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		single := map[string]any{"type": "single_choice", "text_md": "Capital of France?", "points": "2.5", "category": "geo",
			"tags": []string{"europe", "easy"}, "data": map[string]any{"choices": []map[string]any{
				{"text": "Paris", "correct": true}, {"text": "Lyon"}}}}
		id := create(t, e, "/questions/create", single, "data.id")
		path := "/questions/get/" + itoa(id)
		e.Scenarios(t, []Scenario{
			{Name: "create answers version 1", Request: api("POST", "/questions/create", single), Status: 200,
				Want: map[string]any{"data.version": 1, "data.points": 2.5, "data.category": "geo", "data.tags.0": "europe",
					"data.data.choices.0.id": "1"}},
			{Name: "create names bad fields", Request: api("POST", "/questions/create", map[string]any{"type": "single_choice",
				"text_md": "x", "points": "1.2345", "data": map[string]any{"choices": []map[string]any{{"text": "a"}, {"text": ""}}}}),
				Status: 400, Fields: []string{"points"}},
			{Name: "create names data fields", Request: api("POST", "/questions/create", map[string]any{"type": "single_choice",
				"text_md": "x", "data": map[string]any{"choices": []map[string]any{{"text": "a"}, {"text": ""}}}}),
				Status: 400, Fields: []string{"data.choices", "data.choices.1.text"}},
			{Name: "create unknown data field", Request: api("POST", "/questions/create", map[string]any{"type": "essay",
				"text_md": "x", "data": map[string]any{"nope": 1}}), Status: 400, Fields: []string{"data"}},
			{Name: "create needs type", Request: api("POST", "/questions/create", map[string]any{"text_md": "x"}), Status: 400,
				Fields: []string{"type"}},
			{Name: "get", Request: api("GET", path, nil), Status: 200, Want: map[string]any{"data.id": id, "data.type": "single_choice"}},
			{Name: "get other domain", Request: other(e, "GET", path, nil), Status: 404},
			{Name: "update makes version 2", Request: api("PUT", "/questions/update/"+itoa(id), map[string]any{"text_md": "Capital of France, please?"}),
				Status: 200, Want: map[string]any{"data.version": 2, "data.points": 2.5, "data.tags.0": "easy"}},
			{Name: "update other domain", Request: other(e, "PUT", "/questions/update/"+itoa(id), map[string]any{"text_md": "x"}), Status: 404},
			{Name: "update bad data", Request: api("PUT", "/questions/update/"+itoa(id), map[string]any{"type": "true_false"}),
				Status: 400, Fields: []string{"data.correct", "data.choices"}},
			{Name: "list by tag", Request: api("POST", "/questions/list", map[string]any{"tag": "easy"}), Status: 200,
				Want: map[string]any{"total": 2, "data.0.id": id}},
			{Name: "list by type none", Request: api("POST", "/questions/list", map[string]any{"type": "essay"}), Status: 200,
				Want: map[string]any{"total": 0}},
			{Name: "list bad type", Request: api("POST", "/questions/list", map[string]any{"type": "poll"}), Status: 400, Fields: []string{"type"}},
			{Name: "list other domain sees none", Request: other(e, "POST", "/questions/list", nil), Status: 200, Want: map[string]any{"total": 0}},
			{Name: "delete other domain", Request: other(e, "DELETE", "/questions/delete/"+itoa(id), nil), Status: 404},
			{Name: "delete", Request: api("DELETE", "/questions/delete/"+itoa(id), nil), Status: 200},
			{Name: "deleted is gone", Request: api("GET", path, nil), Status: 404},
		})
	})
}

const giftFile = `$CATEGORY: imported
::A::2+2? {=4 ~3 ~5}

::B::Sky is blue. {T}

::C::Range {#1..5}`

func TestQuizImport(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		e.Scenarios(t, []Scenario{
			{Name: "gift reports skipped", Request: api("POST", "/questions/import", map[string]any{"format": "gift", "file": giftFile}),
				Status: 200, Want: map[string]any{"data.created": 2, "data.questions.0.type": "single_choice",
					"data.skipped.0.item": "question 3 (C)"}},
			{Name: "imported with category", Request: api("POST", "/questions/list", map[string]any{"category": "imported"}),
				Status: 200, Want: map[string]any{"total": 2}},
			{Name: "qti not xml", Request: api("POST", "/questions/import", map[string]any{"format": "qti12", "file": "<x"}),
				Status: 400, Fields: []string{"file"}},
			{Name: "bad format", Request: api("POST", "/questions/import", map[string]any{"format": "csv"}),
				Status: 400, Fields: []string{"format", "file"}},
		})
	})
}

// quizFixture makes a test with two fixed questions (a single choice worth
// 2 and an essay worth 1), a learner enrolled, and returns their ids.
func quizFixture(t *testing.T, e *Env) (testID, q1, q2, userID int64) {
	t.Helper()
	testID = create(t, e, "/tests/create", map[string]any{"tests_name": "Quiz", "tests_alloted_time_test_mode": "00:30:00"}, "data.id")
	q1 = create(t, e, "/questions/create", map[string]any{"type": "single_choice", "text_md": "Pick A", "points": 2, "category": "c1",
		"data": map[string]any{"choices": []map[string]any{{"text": "A", "correct": true}, {"text": "B"}}}}, "data.id")
	q2 = create(t, e, "/questions/create", map[string]any{"type": "essay", "text_md": "Discuss", "category": "c2"}, "data.id")
	create(t, e, "/tests/addQuestion", map[string]any{"testId": testID, "questionId": q1}, "data.slotId")
	create(t, e, "/tests/addQuestion", map[string]any{"testId": testID, "questionId": q2}, "data.slotId")
	userID = create(t, e, "/users/create", map[string]any{"username": "ann", "email": "ann@example.com", "name": "Ann Lee"}, "id")
	if r := e.LMS("POST", "/tests/enroll", map[string]any{"testId": testID, "email": "ann@example.com"}); r.Status != 200 {
		t.Fatalf("enroll: %d %s", r.Status, r.Body)
	}
	return
}

func TestQuizComposition(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		testID, q1, _, _ := quizFixture(t, e)
		other2 := create(t, e, "/tests/create", map[string]any{"tests_name": "Other"}, "data.id")
		_ = other2
		slot := create(t, e, "/tests/addRandom", map[string]any{"testId": testID, "category": "c1", "count": 1, "points": 3}, "data.slotId")
		e.Scenarios(t, []Scenario{
			{Name: "layout", Request: api("GET", "/tests/layout/"+itoa(testID), nil), Status: 200,
				Want: map[string]any{"data.slots.0.questionId": q1, "data.slots.2.kind": "random", "data.slots.2.pool_size": 1,
					"data.fixed_points": 3}},
			{Name: "layout other domain", Request: other(e, "GET", "/tests/layout/"+itoa(testID), nil), Status: 404},
			{Name: "add question other domain", Request: other(e, "POST", "/tests/addQuestion", map[string]any{"testId": testID, "questionId": q1}), Status: 404},
			{Name: "add question needs ids", Request: api("POST", "/tests/addQuestion", map[string]any{}), Status: 400,
				Fields: []string{"testId", "questionId"}},
			{Name: "add random needs one source", Request: api("POST", "/tests/addRandom", map[string]any{"testId": testID, "count": 1}),
				Status: 400, Fields: []string{"category"}},
			{Name: "add random other domain", Request: other(e, "POST", "/tests/addRandom", map[string]any{"testId": testID, "tag": "x", "count": 1}), Status: 404},
			{Name: "remove slot other domain", Request: other(e, "POST", "/tests/removeSlot", map[string]any{"testId": testID, "slotId": slot}), Status: 404},
			{Name: "remove slot", Request: api("POST", "/tests/removeSlot", map[string]any{"testId": testID, "slotId": slot}), Status: 200},
			{Name: "remove slot again", Request: api("POST", "/tests/removeSlot", map[string]any{"testId": testID, "slotId": slot}), Status: 404},
			{Name: "settings defaults", Request: api("GET", "/tests/settings/"+itoa(testID), nil), Status: 200,
				Want: map[string]any{"data.grading": "highest", "data.on_expiry": "submit", "data.attempts_allowed": 0,
					"data.tests_alloted_time_test_mode": "00:30:00"}},
			{Name: "settings other domain", Request: other(e, "GET", "/tests/settings/"+itoa(testID), nil), Status: 404},
			{Name: "settings set", Request: api("PUT", "/tests/settings/"+itoa(testID), map[string]any{"pass_percent": 60,
				"attempts_allowed": 2, "grading": "latest", "close_at": "2030-01-01T00:00:00Z", "review": map[string]any{
					"after": map[string]any{"marks": true}}}),
				Status: 200, Want: map[string]any{"data.pass_percent": 60, "data.grading": "latest", "data.close_at": "2030-01-01T00:00:00Z",
					"data.review.after.marks": true, "data.review.after.right_answer": false}},
			{Name: "settings bad", Request: api("PUT", "/tests/settings/"+itoa(testID), map[string]any{"pass_percent": 101,
				"grading": "best", "on_expiry": "grace", "close_at": "tomorrow"}),
				Status: 400, Fields: []string{"pass_percent", "close_at"}},
			{Name: "settings bad rules", Request: api("PUT", "/tests/settings/"+itoa(testID), map[string]any{"grading": "best", "on_expiry": "grace"}),
				Status: 400, Fields: []string{"grading", "grace_s"}},
			{Name: "settings put other domain", Request: other(e, "PUT", "/tests/settings/"+itoa(testID), map[string]any{"grading": "first"}), Status: 404},
			{Name: "override set", Request: api("POST", "/tests/overrides/set", map[string]any{"testId": testID, "email": "ann@example.com",
				"extra_time_s": 600, "time_multiplier": "1.5", "extra_attempts": 1}),
				Status: 200, Want: map[string]any{"data.time_multiplier": 1.5, "data.extra_attempts": 1}},
			{Name: "override bad", Request: api("POST", "/tests/overrides/set", map[string]any{"testId": testID, "email": "ann@example.com",
				"time_multiplier": "0.5", "extra_time_s": -1}), Status: 400, Fields: []string{"time_multiplier", "extra_time_s"}},
			{Name: "override unknown scheme", Request: api("POST", "/tests/overrides/set", map[string]any{"testId": testID, "email": "ann@example.com",
				"scheme_id": 999}), Status: 404},
			{Name: "override other domain", Request: other(e, "POST", "/tests/overrides/set", map[string]any{"testId": testID, "email": "ann@example.com"}), Status: 404},
			{Name: "overrides list", Request: api("POST", "/tests/overrides/list", map[string]any{"testId": testID}), Status: 200,
				Want: map[string]any{"data.0.email": "ann@example.com", "data.0.extra_time_s": 600}},
			{Name: "overrides list other domain", Request: other(e, "POST", "/tests/overrides/list", map[string]any{"testId": testID}), Status: 404},
		})
	})
}

func TestQuizAttemptsAPI(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ctx := context.Background()
		testID, _, _, userID := quizFixture(t, e)
		e.LMS("PUT", "/tests/settings/"+itoa(testID), map[string]any{"pass_percent": 50})
		svc := e.Main.Quiz
		a, created, err := svc.Start(ctx, e.Domain.ID, testID, userID, quiz.ModeTest)
		if err != nil || !created {
			t.Fatalf("start: %v %v", created, err)
		}
		if _, err := svc.Save(ctx, e.Domain.ID, a.ID, userID, 1, quiz.Response{Choice: firstChoice(t, e, a.ID, userID)}, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Save(ctx, e.Domain.ID, a.ID, userID, 2, quiz.Response{Text: "An essay"}, 1); err != nil {
			t.Fatal(err)
		}
		if a, err = svc.Submit(ctx, e.Domain.ID, a.ID, userID); err != nil || a.State != quiz.NeedsGrading {
			t.Fatalf("submit: %v %v", a.State, err)
		}
		aid := itoa(a.ID)
		classID := create(t, e, "/liveClasses/create", map[string]any{"title": "Live", "date": "2030-01-01", "startTime": "10:00", "endTime": "11:00",
			"timezone": "28"}, "data.class_id")
		e.Scenarios(t, []Scenario{
			{Name: "list by test", Request: api("POST", "/tests/attempts/list", map[string]any{"testId": testID}), Status: 200,
				Want: map[string]any{"total": 1, "data.0.state": "needs_grading", "data.0.email": "ann@example.com"}},
			{Name: "list by email and state", Request: api("POST", "/tests/attempts/list", map[string]any{"email": "ann@example.com", "state": "graded"}),
				Status: 200, Want: map[string]any{"total": 0}},
			{Name: "list bad state", Request: api("POST", "/tests/attempts/list", map[string]any{"state": "done"}), Status: 400, Fields: []string{"state"}},
			{Name: "list other domain test", Request: other(e, "POST", "/tests/attempts/list", map[string]any{"testId": testID}), Status: 404},
			{Name: "get", Request: api("GET", "/tests/attempts/get/"+aid, nil), Status: 200,
				Want: map[string]any{"data.slots.0.correct": "right", "data.slots.0.mark": 2, "data.slots.1.pending": true,
					"data.slots.1.response.text": "An essay"}},
			{Name: "get other domain", Request: other(e, "GET", "/tests/attempts/get/"+aid, nil), Status: 404},
			{Name: "grade too many points", Request: api("POST", "/tests/attempts/grade", map[string]any{"attemptId": a.ID, "slot": 2, "points": 5}),
				Status: 400, Fields: []string{"points"}},
			{Name: "grade other domain", Request: other(e, "POST", "/tests/attempts/grade", map[string]any{"attemptId": a.ID, "slot": 2, "points": 1}), Status: 404},
			{Name: "grade essay", Request: api("POST", "/tests/attempts/grade", map[string]any{"attemptId": a.ID, "slot": 2, "points": 0.5, "comment": "ok"}),
				Status: 200, Want: map[string]any{"data.state": "graded", "data.score": 2.5, "data.max": 3}},
			{Name: "results", Request: api("POST", "/tests/results", map[string]any{"testId": testID}), Status: 200,
				Want: map[string]any{"data.0.email": "ann@example.com", "data.0.grade": 2.5, "data.0.passed": true, "data.0.attempts_used": 1,
					"data.0.percent_x100": 8333}},
			{Name: "results other domain", Request: other(e, "POST", "/tests/results", map[string]any{"testId": testID}), Status: 404},
			{Name: "statistics", Request: api("POST", "/tests/statistics", map[string]any{"testId": testID}), Status: 200,
				Want: map[string]any{"data.attempts": 1, "data.questions.0.right": 1, "data.questions.0.right_percent_x100": 10000}},
			{Name: "statistics other domain", Request: other(e, "POST", "/tests/statistics", map[string]any{"testId": testID}), Status: 404},
			{Name: "regrade keeps the manual mark", Request: api("POST", "/tests/attempts/regrade", map[string]any{"testId": testID}), Status: 200,
				Want: map[string]any{"data.regraded": 1, "data.attempts.0.score": 2.5, "data.result_changes.0": Absent}},
			{Name: "regrade other domain", Request: other(e, "POST", "/tests/attempts/regrade", map[string]any{"attemptId": a.ID}), Status: 404},
			{Name: "regrade needs an id", Request: api("POST", "/tests/attempts/regrade", nil), Status: 400, Fields: []string{"testId"}},
			{Name: "attach", Request: api("POST", "/liveClasses/quiz/attach", map[string]any{"classId": classID, "testId": testID}), Status: 200},
			{Name: "attach other domain", Request: other(e, "POST", "/liveClasses/quiz/attach", map[string]any{"classId": classID, "testId": testID}), Status: 404},
			{Name: "class results", Request: api("POST", "/liveClasses/quiz/results", map[string]any{"classId": classID}), Status: 200,
				Want: map[string]any{"data.tests.0": testID}},
			{Name: "class results other domain", Request: other(e, "POST", "/liveClasses/quiz/results", map[string]any{"classId": classID}), Status: 404},
			{Name: "delete other domain", Request: other(e, "DELETE", "/tests/attempts/delete/"+aid, nil), Status: 404},
			{Name: "delete", Request: api("DELETE", "/tests/attempts/delete/"+aid, nil), Status: 200},
			{Name: "deleted", Request: api("GET", "/tests/attempts/get/"+aid, nil), Status: 404},
		})
	})
}

// firstChoice returns the display id of the right choice of slot 1 ("A").
func firstChoice(t *testing.T, e *Env, attemptID, userID int64) string {
	t.Helper()
	v, err := e.Main.Quiz.LearnerView(context.Background(), e.Domain.ID, attemptID, userID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Questions[0].Choices {
		if c.Text == "A" {
			return c.ID
		}
	}
	t.Fatalf("no choice A in %+v", v.Questions[0])
	return ""
}
