package quizsvc

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/store"
)

// In-class quizzes. A test attached to a live class is launched by the
// teacher in the room; each student who answers gets a normal attempt
// (source "live", mode "live", tagged with the class and sitting, the
// teacher's deadline) graded by the same scorers; closing finishes every
// attempt and gives the room the anonymous aggregate. The room keeps the
// LiveQuiz in memory between events: Launch, Answer, Close.

// ModeLive is the mode of in-class attempts: they never count towards the
// test's attempts, grade or completion; right answers give
// live_quiz_correct points once per question and sitting.
const ModeLive = "live"

// MaxLiveQuiz is the longest an in-class quiz runs. A quiz launched
// without a time limit gives its attempts a deadline MaxLiveQuiz after the
// launch: the room closes it long before, but a quiz the room could not
// close (the server restarted or its node died; an open quiz lives in the
// room's memory) is still finished by the expiry sweeper with the answers
// saved.
const MaxLiveQuiz = 24 * time.Hour

// LiveQuiz is one launch of a test in a sitting. Layout holds the keys'
// ids: the room never sends it to clients, only Questions.
type LiveQuiz struct {
	DomainID, ClassID, TestID int64
	Sitting                   int
	// LaunchedAt (whole seconds, as attempts store times) tells this
	// launch's attempts from earlier launches of the test in the sitting.
	LaunchedAt time.Time
	Deadline   time.Time // zero: until the teacher closes it
	Layout     []quiz.SlotLayout
	Questions  []quiz.View
}

// Launch prepares an in-class quiz: the test must be attached to the
// class; every student of the sitting gets the same questions in the same
// order. question 0 launches the whole test; n launches only its n-th
// question (numbered 1 in the quiz).
func (s *Service) Launch(ctx context.Context, domainID, classID int64, sitting int, testID int64, question int, deadline time.Time) (*LiveQuiz, error) {
	tests, err := s.Store.ClassTests(ctx, domainID, classID)
	if err != nil {
		return nil, err
	}
	attached := false
	for _, id := range tests {
		attached = attached || id == testID
	}
	if !attached {
		return nil, lms.NotFoundf("test %d is not attached to class %d", testID, classID)
	}
	_, st, err := s.Settings(ctx, domainID, testID)
	if err != nil {
		return nil, err
	}
	layout, _, err := s.buildLayout(ctx, domainID, testID, st)
	if err != nil {
		return nil, err
	}
	if question < 0 || question > len(layout) {
		return nil, lms.Invalidf("question", "must be 0 (the whole test) to %d", len(layout))
	}
	if question > 0 {
		one := layout[question-1]
		one.Slot = 1
		layout = []quiz.SlotLayout{one}
	}
	qs, err := s.versions(ctx, domainID, layout)
	if err != nil {
		return nil, err
	}
	lq := &LiveQuiz{DomainID: domainID, ClassID: classID, TestID: testID, Sitting: sitting, Deadline: deadline, Layout: layout,
		LaunchedAt: s.now().UTC().Truncate(time.Second)}
	for _, sl := range layout {
		lq.Questions = append(lq.Questions, quiz.ViewOf(sl, qs[sl.VersionID]))
	}
	return lq, nil
}

// ClassTest is a test attached to a live class as the teacher's room
// lists it: its name and the text of each question in order ("" for a
// question drawn at random at launch).
type ClassTest struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Questions []string `json:"questions"`
}

// ClassTests lists the tests attached to a class for the teacher's room.
func (s *Service) ClassTests(ctx context.Context, domainID, classID int64) ([]ClassTest, error) {
	ids, err := s.Store.ClassTests(ctx, domainID, classID)
	if err != nil {
		return nil, err
	}
	out := []ClassTest{}
	for _, id := range ids {
		t, err := s.Store.Test(ctx, domainID, id)
		if err != nil {
			return nil, err
		}
		slots, err := s.Store.Slots(ctx, domainID, id)
		if err != nil {
			return nil, err
		}
		ct := ClassTest{ID: id, Name: t.Name, Questions: []string{}}
		for _, sl := range slots {
			if sl.QuestionID == 0 {
				for range sl.DrawCount {
					ct.Questions = append(ct.Questions, "")
				}
				continue
			}
			q, err := s.Store.Question(ctx, domainID, sl.QuestionID)
			if err != nil {
				return nil, err
			}
			ct.Questions = append(ct.Questions, q.Text)
		}
		out = append(out, ct)
	}
	return out, nil
}

// Answer records a student's answer (display ids, as the room's client
// sends it) to one question, starting their live attempt on the first.
func (s *Service) Answer(ctx context.Context, lq *LiveQuiz, userID int64, slot int, resp quiz.Response, seq int64) (SaveResult, error) {
	lj, err := json.Marshal(lq.Layout)
	if err != nil {
		return SaveResult{}, err
	}
	var max int64
	for _, sl := range lq.Layout {
		max += sl.Points
	}
	now := s.now()
	a, _, err := s.Store.StartAttempt(ctx, lq.DomainID, lq.TestID, userID, func(prior []store.Attempt) (*store.Attempt, *store.Attempt, error) {
		for i := range prior {
			if lq.owns(prior[i]) {
				return &prior[i], nil, nil
			}
		}
		if !lq.Deadline.IsZero() && now.After(lq.Deadline) {
			return nil, nil, timeUp(lq.Deadline)
		}
		deadline := lq.Deadline
		if deadline.IsZero() {
			deadline = lq.LaunchedAt.Add(MaxLiveQuiz)
		}
		fresh := &store.Attempt{Mode: ModeLive, State: quiz.InProgress, Source: "live", ClassID: lq.ClassID, Sitting: lq.Sitting,
			Layout: string(lj), StartedAt: now, MaxMilli: max, Deadline: deadline, NextCheck: deadline.Add(quiz.NetworkGrace)}
		return nil, fresh, nil
	})
	if err != nil {
		return SaveResult{}, err
	}
	return s.Save(ctx, lq.DomainID, a.ID, userID, slot, resp, seq)
}

// owns reports whether a is this launch's attempt: live, of the class and
// sitting, started since the launch.
func (lq *LiveQuiz) owns(a store.Attempt) bool {
	return a.Source == "live" && a.ClassID == lq.ClassID && a.Sitting == lq.Sitting && !a.StartedAt.Before(lq.LaunchedAt)
}

// attempts lists this launch's attempts.
func (s *Service) attempts(ctx context.Context, lq *LiveQuiz, userID int64) ([]store.Attempt, error) {
	as, _, err := s.Store.ListAttempts(ctx, lq.DomainID, store.AttemptFilter{TestID: lq.TestID, UserID: userID, ClassID: lq.ClassID,
		Sitting: lq.Sitting, Mode: ModeLive}, store.Page{})
	return slices.DeleteFunc(as, func(a store.Attempt) bool { return !lq.owns(a) }), err
}

// Aggregate is the anonymous result of an in-class quiz for the room.
type Aggregate struct {
	Participants int         `json:"participants"`
	Slots        []SlotCount `json:"slots"`
}

// SlotCount counts one question's answers: how many answered, how many
// were fully right, and for choice questions how many chose each option
// (display ids).
type SlotCount struct {
	Slot     int            `json:"slot"`
	Answered int            `json:"answered"`
	Right    int            `json:"right"`
	Options  map[string]int `json:"options,omitempty"`
}

// Close finishes every live attempt of the launch with the answers saved
// and returns the aggregate.
func (s *Service) Close(ctx context.Context, lq *LiveQuiz) (Aggregate, error) {
	return s.aggregate(ctx, lq, true)
}

// Tally is the aggregate of the answers saved so far, the quiz still
// open: the teacher's live view. Nothing is finished or stored.
func (s *Service) Tally(ctx context.Context, lq *LiveQuiz) (Aggregate, error) {
	return s.aggregate(ctx, lq, false)
}

// aggregate counts the launch's live attempts, finishing them first when
// finish is set; otherwise saved answers are scored on the fly.
func (s *Service) aggregate(ctx context.Context, lq *LiveQuiz, finish bool) (Aggregate, error) {
	as, err := s.attempts(ctx, lq, 0)
	if err != nil {
		return Aggregate{}, err
	}
	agg := Aggregate{Participants: len(as), Slots: make([]SlotCount, len(lq.Layout))}
	for i, sl := range lq.Layout {
		agg.Slots[i] = SlotCount{Slot: sl.Slot}
	}
	var qs map[int64]*quiz.Question
	for _, a := range as {
		open := a.State == quiz.InProgress || a.State == quiz.Overdue
		if open && finish {
			if a, err = s.finish(ctx, lq.DomainID, a.ID, quiz.EvSubmit); lms.ErrorCode(err) == lms.CodeConflict {
				// The expiry sweeper finished it first.
				a, err = s.Store.Attempt(ctx, lq.DomainID, a.ID)
			}
			if err != nil {
				return agg, err
			}
			open = false
		}
		layout, err := decodeLayout(a)
		if err != nil {
			return agg, err
		}
		ans, err := s.Store.Answers(ctx, lq.DomainID, a.ID)
		if err != nil {
			return agg, err
		}
		if open {
			if qs == nil {
				if qs, err = s.versions(ctx, lq.DomainID, layout); err != nil {
					return agg, err
				}
			}
			saved := ans[:0:0]
			for _, x := range ans {
				if x.Seq > 0 {
					saved = append(saved, x)
				}
			}
			ans, _, _, _ = score(layout, qs, saved)
		}
		for _, x := range ans {
			if x.Slot < 1 || x.Slot > len(agg.Slots) || x.Seq == 0 {
				continue
			}
			c := &agg.Slots[x.Slot-1]
			c.Answered++
			if x.Correct == "right" {
				c.Right++
			}
			var r quiz.Response
			if json.Unmarshal([]byte(x.Response), &r) == nil {
				d := layout[x.Slot-1].ToDisplay(r)
				for _, id := range append(d.Choices, d.Choice) {
					if id == "" {
						continue
					}
					if c.Options == nil {
						c.Options = map[string]int{}
					}
					c.Options[id]++
				}
			}
		}
	}
	return agg, nil
}

// Mine returns the answers userID has saved in the launch (none before
// their first answer).
func (s *Service) Mine(ctx context.Context, lq *LiveQuiz, userID int64) ([]SavedAnswer, error) {
	as, err := s.attempts(ctx, lq, userID)
	if err != nil || len(as) == 0 {
		return nil, err
	}
	layout, err := decodeLayout(as[0])
	if err != nil {
		return nil, err
	}
	ans, err := s.Store.Answers(ctx, lq.DomainID, as[0].ID)
	if err != nil {
		return nil, err
	}
	return savedAnswers(layout, ans, func(int) bool { return true }), nil
}
