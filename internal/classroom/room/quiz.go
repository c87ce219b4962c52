package room

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/quizsvc"
)

// QuizEngine runs in-class quizzes (quizsvc.Service): the room launches a
// test attached to the class, records each student's answers as their
// live attempt, and closes it for the aggregate (docs/tests.md).
type QuizEngine interface {
	Launch(ctx context.Context, domainID, classID int64, sitting int, testID int64, question int, deadline time.Time) (*quizsvc.LiveQuiz, error)
	Answer(ctx context.Context, lq *quizsvc.LiveQuiz, userID int64, slot int, resp quiz.Response, seq int64) (quizsvc.SaveResult, error)
	Close(ctx context.Context, lq *quizsvc.LiveQuiz) (quizsvc.Aggregate, error)
	Tally(ctx context.Context, lq *quizsvc.LiveQuiz) (quizsvc.Aggregate, error)
	Mine(ctx context.Context, lq *quizsvc.LiveQuiz, userID int64) ([]quizsvc.SavedAnswer, error)
	ClassTests(ctx context.Context, domainID, classID int64) ([]quizsvc.ClassTest, error)
}

// QuizState is the in-class quiz as every client sees it: the questions
// (no keys) while open, the anonymous aggregate once closed.
type QuizState struct {
	// LaunchedAt tells one launch from the next.
	LaunchedAt time.Time          `json:"launchedAt"`
	TestID     int64              `json:"testId"`
	Open       bool               `json:"open"`
	Questions  []quiz.View        `json:"questions"`
	Deadline   *time.Time         `json:"deadline,omitempty"`
	Aggregate  *quizsvc.Aggregate `json:"aggregate,omitempty"`
}

// quizMsg is a client's quiz message: the teacher's launch {testId,
// question?, seconds?} and close; a student's answer {slot, response, seq}.
type quizMsg struct {
	Action   string        `json:"action"`
	TestID   int64         `json:"testId"`
	Question int           `json:"question"`
	Seconds  int           `json:"seconds"`
	Slot     int           `json:"slot"`
	Response quiz.Response `json:"response"`
	Seq      int64         `json:"seq"`
}

// quizTally is the open quiz's aggregate so far, sent to the teachers
// only, at most once a second while answers come in.
type quizTally struct {
	Type      string            `json:"type"`
	Aggregate quizsvc.Aggregate `json:"aggregate"`
}

// quizAnswered acknowledges a student's answer to that student only.
type quizAnswered struct {
	Type  string `json:"type"`
	Ref   int64  `json:"ref,omitempty"`
	Slot  int    `json:"slot"`
	Seq   int64  `json:"seq"`
	Saved bool   `json:"saved"`
}

func (r *Room) quizState() *QuizState {
	if r.quiz == nil {
		return nil
	}
	s := &QuizState{LaunchedAt: r.quizAt, TestID: r.quiz.TestID, Open: r.quizAgg == nil, Questions: r.quiz.Questions, Aggregate: r.quizAgg}
	if !r.quiz.Deadline.IsZero() {
		d := r.quiz.Deadline
		s.Deadline = &d
	}
	return s
}

// quizOp runs a quiz message on the room goroutine.
func (r *Room) quizOp(c *Conn, u *user, m clientMsg, fail func(code, msg string)) {
	if r.hub.Quiz == nil {
		fail(ErrInvalid, "In-class quizzes are not available on this server.")
		return
	}
	var q quizMsg
	if err := json.Unmarshal(m.raw, &q); err != nil {
		fail(ErrInvalid, "The quiz message does not have the documented fields.")
		return
	}
	ctx := context.Background()
	switch q.Action {
	case "launch":
		if !r.can(u, permOp) {
			fail(ErrForbidden, "Only the teacher can launch a quiz.")
			return
		}
		if r.quiz != nil && r.quizAgg == nil {
			fail(ErrInvalid, "A quiz is already open; close it first.")
			return
		}
		if q.Seconds < 0 || q.Seconds > int(quizsvc.MaxLiveQuiz/time.Second) {
			fail(ErrInvalid, fmt.Sprintf("seconds must be 0 (until closed) to %d.", int(quizsvc.MaxLiveQuiz/time.Second)))
			return
		}
		var deadline time.Time
		if q.Seconds > 0 {
			deadline = r.now().Add(time.Duration(q.Seconds) * time.Second).Truncate(time.Second)
		}
		lq, err := r.hub.Quiz.Launch(ctx, r.key.Domain, r.key.Class, r.key.Sitting, q.TestID, q.Question, deadline)
		if err != nil {
			r.quizFail(err, fail)
			return
		}
		r.quiz, r.quizAgg, r.quizDirty, r.quizAt = lq, nil, true, r.now().Truncate(time.Millisecond)
		r.broadcast(eventMsg{Kind: "quiz", Quiz: r.quizState()}, nil, nil)
	case "answer":
		if r.quiz == nil || r.quizAgg != nil {
			fail(ErrInvalid, "No quiz is open.")
			return
		}
		id, err := strconv.ParseInt(u.id, 10, 64)
		if err != nil || id <= 0 {
			fail(ErrForbidden, "Quiz answers are recorded for learners who joined from the learner portal.")
			return
		}
		res, err := r.hub.Quiz.Answer(ctx, r.quiz, id, q.Slot, q.Response, q.Seq)
		if err != nil {
			if lms.IsNotFound(err) {
				fail(ErrForbidden, "Quiz answers are recorded for learners who joined from the learner portal.")
				return
			}
			r.quizFail(err, fail)
			return
		}
		r.quizDirty = true
		r.sendTo(c, quizAnswered{Type: "quiz-answered", Ref: m.Ref, Slot: q.Slot, Seq: res.Seq, Saved: res.Saved})
	case "close":
		if !r.can(u, permOp) {
			fail(ErrForbidden, "Only the teacher can close a quiz.")
			return
		}
		if r.quiz == nil || r.quizAgg != nil {
			fail(ErrInvalid, "No quiz is open.")
			return
		}
		if err := r.closeQuiz(); err != nil {
			r.quizFail(err, fail)
		}
	default:
		fail(ErrInvalid, "action must be launch, answer or close.")
	}
}

// quizFail shows a client error's message; anything else is logged.
func (r *Room) quizFail(err error, fail func(code, msg string)) {
	switch lms.ErrorCode(err) {
	case lms.CodeInvalid, lms.CodeNotFound, lms.CodeConflict, lms.CodeForbidden, quizsvc.ErrCodeTimeUp:
		fail(ErrInvalid, err.Error())
	default:
		r.hub.logger().Error("room quiz", "class", r.key.Class, "err", err)
		fail(ErrInvalid, "The quiz could not be saved; try again.")
	}
}

// closeQuiz finishes the open quiz's attempts and shows everyone the
// aggregate.
func (r *Room) closeQuiz() error {
	agg, err := r.hub.Quiz.Close(context.Background(), r.quiz)
	if err != nil {
		return err
	}
	r.quizAgg = &agg
	r.broadcast(eventMsg{Kind: "quiz", Quiz: r.quizState()}, nil, nil)
	return nil
}

// quizOpen reports whether a quiz is launched and not closed.
func (r *Room) quizOpen() bool { return r.quiz != nil && r.quizAgg == nil }

// checkQuiz closes the open quiz at its deadline (the room's clock, so
// the settable test clock moves it too), and at the end of the room
// whatever its deadline: the teacher leaving does not close it.
// Otherwise, when answers came in, the teachers get the tally so far.
func (r *Room) checkQuiz(now time.Time, ending bool) {
	if !r.quizOpen() {
		return
	}
	if ending || (!r.quiz.Deadline.IsZero() && !now.Before(r.quiz.Deadline)) {
		if err := r.closeQuiz(); err != nil {
			r.hub.logger().Error("room quiz close", "class", r.key.Class, "err", err)
		}
		return
	}
	if !r.quizDirty {
		return
	}
	var teachers []*Conn
	for _, c := range r.conns {
		if u := r.users[c.user]; u != nil && r.can(u, permOp) {
			teachers = append(teachers, c)
		}
	}
	if len(teachers) == 0 {
		return // kept dirty: a returning teacher gets the tally
	}
	agg, err := r.hub.Quiz.Tally(context.Background(), r.quiz)
	if err != nil {
		r.hub.logger().Error("room quiz tally", "class", r.key.Class, "err", err)
		return
	}
	r.quizDirty = false
	for _, c := range teachers {
		r.sendTo(c, quizTally{Type: "quiz-tally", Aggregate: agg})
	}
}

// quizTests lists the tests attached to the class for a teacher's
// snapshot; nil for everyone else.
func (r *Room) quizTests(u *user) []quizsvc.ClassTest {
	if r.hub.Quiz == nil || u.id == "" || !r.can(u, permOp) {
		return nil
	}
	r.quizDirty = r.quizDirty || r.quizOpen()
	ts, err := r.hub.Quiz.ClassTests(context.Background(), r.key.Domain, r.key.Class)
	if err != nil {
		r.hub.logger().Error("room quiz tests", "class", r.key.Class, "err", err)
		return nil
	}
	return ts
}

// quizMine is a student's saved answers to the open quiz for their
// snapshot, so a reloaded page shows them again.
func (r *Room) quizMine(u *user) []quizsvc.SavedAnswer {
	id, err := strconv.ParseInt(u.id, 10, 64)
	if !r.quizOpen() || err != nil || id <= 0 {
		return nil
	}
	mine, err := r.hub.Quiz.Mine(context.Background(), r.quiz, id)
	if err != nil {
		r.hub.logger().Error("room quiz answers", "class", r.key.Class, "err", err)
		return nil
	}
	return mine
}
