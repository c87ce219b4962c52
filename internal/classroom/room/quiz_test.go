package room_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/quizsvc"
	"github.com/lectern-lms/lectern/internal/store"
)

// TestInClassQuizInTheRoom: the teacher launches an attached test in the
// room, a portal learner answers over the room's messages, a student who
// is no LMS user is refused, the teacher closes it, and everyone (and a
// late joiner's snapshot) gets the anonymous aggregate; the answer is a
// live attempt of the class and sitting.
func TestInClassQuizInTheRoom(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		c, test, ann := quizFixture(t, e)
		e.clock.Set(start.Add(5 * 60e9))
		teacher := e.mustJoin(c, "t1", joinOpts{teacher: true})
		student := e.mustJoin(c, fmt.Sprint(ann.ID), joinOpts{})
		outsider := e.mustJoin(c, "ext-7", joinOpts{})

		student.send(map[string]any{"type": "quiz", "action": "launch", "testId": test.ID})
		if m := student.next("error", ""); m["code"] != "forbidden" {
			t.Fatalf("a student launched: %v", m)
		}
		teacher.send(map[string]any{"type": "quiz", "action": "launch", "testId": test.ID + 100})
		if m := teacher.next("error", ""); !strings.Contains(fmt.Sprint(m["message"]), "not attached") {
			t.Fatalf("an unattached test launched: %v", m)
		}
		if err := e.st.AttachClassTest(ctx, e.domain, c.ID, test.ID); err != nil {
			t.Fatal(err)
		}
		teacher.send(map[string]any{"type": "quiz", "action": "launch", "testId": test.ID, "seconds": 60})
		ev := student.next("event", "quiz")
		raw, _ := json.Marshal(ev)
		if strings.Contains(string(raw), `"correct"`) {
			t.Fatalf("the launched quiz carries its key: %s", raw)
		}
		qz := ev["quiz"].(map[string]any)
		choices := qz["questions"].([]any)[0].(map[string]any)["choices"].([]any)
		paris := ""
		for _, ch := range choices {
			if ch.(map[string]any)["text"] == "Paris" {
				paris = ch.(map[string]any)["id"].(string)
			}
		}
		if qz["open"] != true || paris == "" || qz["deadline"] == nil {
			t.Fatalf("launch event %v", ev)
		}
		student.send(map[string]any{"type": "quiz", "action": "answer", "slot": 1, "response": map[string]any{"choice": paris}, "seq": 1, "ref": 9})
		if m := student.next("quiz-answered", ""); m["saved"] != true || m["ref"] != float64(9) {
			t.Fatalf("answer ack %v", m)
		}
		outsider.send(map[string]any{"type": "quiz", "action": "answer", "slot": 1, "response": map[string]any{"choice": paris}, "seq": 1})
		if m := outsider.next("error", ""); m["code"] != "forbidden" {
			t.Fatalf("a non-LMS student's answer: %v", m)
		}
		teacher.send(map[string]any{"type": "quiz", "action": "close"})
		closed := student.next("event", "quiz")["quiz"].(map[string]any)
		agg := closed["aggregate"].(map[string]any)
		slot := agg["slots"].([]any)[0].(map[string]any)
		if closed["open"] != false || agg["participants"] != float64(1) || slot["right"] != float64(1) {
			t.Fatalf("close event %v", closed)
		}
		late := e.mustJoin(c, "late", joinOpts{})
		snap := late.welcome["snapshot"].(map[string]any)["quiz"].(map[string]any)
		if snap["aggregate"] == nil {
			t.Fatalf("late joiner's snapshot %v", snap)
		}
		as, total, err := e.st.ListAttempts(ctx, e.domain, store.AttemptFilter{ClassID: c.ID}, store.Page{})
		if err != nil || total != 1 || as[0].UserID != ann.ID || as[0].Sitting != c.Occurrences[0].Seq || as[0].ScoreMilli != 1000 {
			t.Fatalf("class attempts %+v (%v)", as, err)
		}
	})
}

// quizFixture makes a class, a one-question test (Paris is right) and the
// portal learner ann, with the room's quiz engine on the test clock.
func quizFixture(t *testing.T, e *env) (lms.LiveClass, lms.Test, lms.User) {
	t.Helper()
	ctx := context.Background()
	e.hub.Quiz = &quizsvc.Service{Store: e.st, Now: e.clock.Now}
	c := e.class(nil)
	test, err := e.st.CreateTest(ctx, e.domain, lms.Test{Name: "Pop quiz", TimeDemo: "00:00:00", TimeTest: "00:00:00"})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Capital of France?", "Capital of Italy?"} {
		data, _ := json.Marshal(quiz.Data{Choices: []quiz.Choice{{ID: "1", Text: "Paris", Correct: text == "Capital of France?"}, {ID: "2", Text: "Rome", Correct: text != "Capital of France?"}}})
		q, err := e.st.CreateQuestion(ctx, e.domain, store.Question{Type: quiz.SingleChoice, Text: text, PointsMilli: 1000, Data: string(data)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.AddSlot(ctx, e.domain, store.Slot{TestID: test.ID, QuestionID: q.ID, DrawCount: 1}); err != nil {
			t.Fatal(err)
		}
	}
	ann, err := e.st.CreateUser(ctx, e.domain, lms.User{Username: "ann", Email: "ann@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return c, test, ann
}

// choiceID returns the display id of the choice with text in a quiz
// event's question.
func choiceID(t *testing.T, qz map[string]any, slot int, text string) string {
	t.Helper()
	for _, ch := range qz["questions"].([]any)[slot-1].(map[string]any)["choices"].([]any) {
		if ch.(map[string]any)["text"] == text {
			return ch.(map[string]any)["id"].(string)
		}
	}
	t.Fatalf("no choice %q in %v", text, qz)
	return ""
}

// TestInClassQuizDeadline: the teacher's snapshot lists the attached
// tests (a student's does not), a launch of one question holds only that
// question, the room closes the quiz itself when the room's clock passes
// its deadline (the teacher has left: leaving closes nothing), the
// teacher gets the live tally while it is open, and the
// answer is a graded live attempt of the class.
func TestInClassQuizDeadline(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		c, test, ann := quizFixture(t, e)
		if err := e.st.AttachClassTest(ctx, e.domain, c.ID, test.ID); err != nil {
			t.Fatal(err)
		}
		e.clock.Set(start.Add(5 * time.Minute))
		teacher := e.mustJoin(c, "t1", joinOpts{teacher: true})
		student := e.mustJoin(c, fmt.Sprint(ann.ID), joinOpts{})
		tests, _ := teacher.welcome["snapshot"].(map[string]any)["quizTests"].([]any)
		if len(tests) != 1 || fmt.Sprint(tests[0].(map[string]any)["questions"]) != "[Capital of France? Capital of Italy?]" {
			t.Fatalf("teacher's quizTests %v", teacher.welcome["snapshot"])
		}
		if _, ok := student.welcome["snapshot"].(map[string]any)["quizTests"]; ok {
			t.Fatalf("a student sees the attached tests")
		}
		teacher.send(map[string]any{"type": "quiz", "action": "launch", "testId": test.ID, "question": 3})
		if m := teacher.next("error", ""); !strings.Contains(fmt.Sprint(m["message"]), "question") {
			t.Fatalf("launch of question 3 of 2: %v", m)
		}
		teacher.send(map[string]any{"type": "quiz", "action": "launch", "testId": test.ID, "question": 2, "seconds": 30})
		qz := student.next("event", "quiz")["quiz"].(map[string]any)
		qs := qz["questions"].([]any)
		if len(qs) != 1 || qs[0].(map[string]any)["text_md"] != "Capital of Italy?" || qs[0].(map[string]any)["slot"] != float64(1) {
			t.Fatalf("one-question launch %v", qz)
		}
		student.send(map[string]any{"type": "quiz", "action": "answer", "slot": 1, "response": map[string]any{"choice": choiceID(t, qz, 1, "Rome")}, "seq": 1})
		if m := student.next("quiz-answered", ""); m["saved"] != true {
			t.Fatalf("answer ack %v", m)
		}
		e.hub.CheckTimers()
		tally := teacher.next("quiz-tally", "")["aggregate"].(map[string]any)
		if ts := tally["slots"].([]any)[0].(map[string]any); tally["participants"] != float64(1) || ts["answered"] != float64(1) || ts["right"] != float64(1) {
			t.Fatalf("teacher's live tally %v", tally)
		}
		teacher.conn.Leave()
		student.next("event", "leave")
		e.clock.Set(start.Add(5*time.Minute + 29*time.Second))
		e.hub.CheckTimers()
		if r := e.hub.Room(room.Key{Domain: e.domain, Class: c.ID, Sitting: 1}); r == nil {
			t.Fatal("room closed")
		}
		as, _, err := e.st.ListAttempts(ctx, e.domain, store.AttemptFilter{ClassID: c.ID}, store.Page{})
		if err != nil || len(as) != 1 || as[0].State != quiz.InProgress {
			t.Fatalf("before the deadline: %+v (%v)", as, err)
		}
		e.clock.Set(start.Add(5*time.Minute + 30*time.Second))
		e.hub.CheckTimers()
		closed := student.next("event", "quiz")["quiz"].(map[string]any)
		slot := closed["aggregate"].(map[string]any)["slots"].([]any)[0].(map[string]any)
		if closed["open"] != false || slot["answered"] != float64(1) || slot["right"] != float64(1) {
			t.Fatalf("deadline close %v", closed)
		}
		as, _, err = e.st.ListAttempts(ctx, e.domain, store.AttemptFilter{ClassID: c.ID}, store.Page{})
		if err != nil || len(as) != 1 || as[0].State != quiz.Finished || as[0].ScoreMilli != 1000 || as[0].MaxMilli != 1000 {
			t.Fatalf("after the deadline: %+v (%v)", as, err)
		}
	})
}

// TestInClassQuizClosesWithTheRoom: a quiz without a deadline still open
// when the sitting ends is closed, its attempts finished.
func TestInClassQuizClosesWithTheRoom(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		c, test, ann := quizFixture(t, e)
		if err := e.st.AttachClassTest(ctx, e.domain, c.ID, test.ID); err != nil {
			t.Fatal(err)
		}
		e.clock.Set(start.Add(5 * time.Minute))
		teacher := e.mustJoin(c, "t1", joinOpts{teacher: true})
		student := e.mustJoin(c, fmt.Sprint(ann.ID), joinOpts{})
		teacher.send(map[string]any{"type": "quiz", "action": "launch", "testId": test.ID})
		qz := student.next("event", "quiz")["quiz"].(map[string]any)
		student.send(map[string]any{"type": "quiz", "action": "answer", "slot": 1, "response": map[string]any{"choice": choiceID(t, qz, 1, "Rome")}, "seq": 1})
		student.next("quiz-answered", "")
		e.clock.Set(start.Add(2 * time.Hour))
		e.hub.CheckTimers()
		if ev := student.next("event", "quiz")["quiz"].(map[string]any); ev["open"] != false {
			t.Fatalf("room end: %v", ev)
		}
		student.next("event", "ended")
		as, _, err := e.st.ListAttempts(ctx, e.domain, store.AttemptFilter{ClassID: c.ID}, store.Page{})
		if err != nil || len(as) != 1 || as[0].State != quiz.Finished || as[0].ScoreMilli != 0 || as[0].MaxMilli != 2000 {
			t.Fatalf("after the end: %+v (%v)", as, err)
		}
	})
}

// TestInClassQuizRelaunch: the teacher runs a test question by question
// (each launch of one question is slot 1); a reloaded student's snapshot
// holds their saved answer; each launch makes its own attempt and its own
// aggregate; each right question gives live_quiz_correct once.
func TestInClassQuizRelaunch(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		c, test, ann := quizFixture(t, e)
		if err := e.st.AttachClassTest(ctx, e.domain, c.ID, test.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.SetPointRule(ctx, e.domain, store.EventLiveQuizCorrect, 2); err != nil {
			t.Fatal(err)
		}
		e.clock.Set(start.Add(5 * time.Minute))
		teacher := e.mustJoin(c, "t1", joinOpts{teacher: true})
		student := e.mustJoin(c, fmt.Sprint(ann.ID), joinOpts{})
		for i, q := range []struct {
			question int
			answer   string
		}{{1, "Paris"}, {2, "Rome"}} {
			teacher.send(map[string]any{"type": "quiz", "action": "launch", "testId": test.ID, "question": q.question})
			qz := student.next("event", "quiz")["quiz"].(map[string]any)
			id := choiceID(t, qz, 1, q.answer)
			student.send(map[string]any{"type": "quiz", "action": "answer", "slot": 1, "response": map[string]any{"choice": id}, "seq": 5})
			if m := student.next("quiz-answered", ""); m["saved"] != true {
				t.Fatalf("launch %d: answer %v", i+1, m)
			}
			again := e.mustJoin(c, fmt.Sprint(ann.ID), joinOpts{})
			mine := fmt.Sprint(again.welcome["snapshot"].(map[string]any)["quizMine"])
			if want := fmt.Sprintf("[map[response:map[choice:%s] seq:5 slot:1]]", id); mine != want {
				t.Fatalf("launch %d: quizMine %s, want %s", i+1, mine, want)
			}
			student = again
			e.clock.Set(e.clock.Now().Add(2 * time.Second))
			teacher.send(map[string]any{"type": "quiz", "action": "close"})
			agg := student.next("event", "quiz")["quiz"].(map[string]any)["aggregate"].(map[string]any)
			slot := agg["slots"].([]any)[0].(map[string]any)
			if agg["participants"] != float64(1) || slot["answered"] != float64(1) || slot["right"] != float64(1) {
				t.Fatalf("launch %d: aggregate %v", i+1, agg)
			}
		}
		as, _, err := e.st.ListAttempts(ctx, e.domain, store.AttemptFilter{ClassID: c.ID}, store.Page{})
		if err != nil || len(as) != 2 || as[0].State != quiz.Finished || as[1].State != quiz.Finished || as[0].ScoreMilli != 1000 || as[1].ScoreMilli != 1000 {
			t.Fatalf("class attempts %+v (%v)", as, err)
		}
		if pts, _ := e.st.UserPoints(ctx, e.domain, ann.ID); pts != 4 {
			t.Fatalf("ann has %d points, want 2 for each of the two questions", pts)
		}
	})
}
