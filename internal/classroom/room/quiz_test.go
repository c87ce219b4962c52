package room_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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
		e.hub.Quiz = &quizsvc.Service{Store: e.st, Now: e.clock.Now}
		c := e.class(nil)
		test, err := e.st.CreateTest(ctx, e.domain, lms.Test{Name: "Pop quiz", TimeDemo: "00:00:00", TimeTest: "00:00:00"})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(quiz.Data{Choices: []quiz.Choice{{ID: "1", Text: "Paris", Correct: true}, {ID: "2", Text: "Rome"}}})
		q, err := e.st.CreateQuestion(ctx, e.domain, store.Question{Type: quiz.SingleChoice, Text: "Capital of France?", PointsMilli: 1000, Data: string(data)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.AddSlot(ctx, e.domain, store.Slot{TestID: test.ID, QuestionID: q.ID, DrawCount: 1}); err != nil {
			t.Fatal(err)
		}
		ann, err := e.st.CreateUser(ctx, e.domain, lms.User{Username: "ann", Email: "ann@example.com"})
		if err != nil {
			t.Fatal(err)
		}
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
