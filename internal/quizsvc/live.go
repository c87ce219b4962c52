package quizsvc

import (
	"context"
	"encoding/json"
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

// LiveQuiz is one launch of a test in a sitting. Layout holds the keys'
// ids: the room never sends it to clients, only Questions.
type LiveQuiz struct {
	DomainID, ClassID, TestID int64
	Sitting                   int
	Deadline                  time.Time // zero: until the teacher closes it
	Layout                    []quiz.SlotLayout
	Questions                 []quiz.View
}

// Launch prepares an in-class quiz: the test must be attached to the
// class; every student of the sitting gets the same questions in the same
// order.
func (s *Service) Launch(ctx context.Context, domainID, classID int64, sitting int, testID int64, deadline time.Time) (*LiveQuiz, error) {
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
	qs, err := s.versions(ctx, domainID, layout)
	if err != nil {
		return nil, err
	}
	lq := &LiveQuiz{DomainID: domainID, ClassID: classID, TestID: testID, Sitting: sitting, Deadline: deadline, Layout: layout}
	for _, sl := range layout {
		lq.Questions = append(lq.Questions, quiz.ViewOf(sl, qs[sl.VersionID]))
	}
	return lq, nil
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
			if prior[i].Source == "live" && prior[i].ClassID == lq.ClassID && prior[i].Sitting == lq.Sitting {
				return &prior[i], nil, nil
			}
		}
		if !lq.Deadline.IsZero() && now.After(lq.Deadline) {
			return nil, nil, timeUp(lq.Deadline)
		}
		fresh := &store.Attempt{Mode: ModeLive, State: quiz.InProgress, Source: "live", ClassID: lq.ClassID, Sitting: lq.Sitting,
			Layout: string(lj), StartedAt: now, MaxMilli: max, Deadline: lq.Deadline}
		if !lq.Deadline.IsZero() {
			fresh.NextCheck = lq.Deadline.Add(quiz.NetworkGrace)
		}
		return nil, fresh, nil
	})
	if err != nil {
		return SaveResult{}, err
	}
	return s.Save(ctx, lq.DomainID, a.ID, userID, slot, resp, seq)
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
	as, _, err := s.Store.ListAttempts(ctx, lq.DomainID, store.AttemptFilter{TestID: lq.TestID, ClassID: lq.ClassID,
		Sitting: lq.Sitting, Mode: ModeLive}, store.Page{})
	if err != nil {
		return Aggregate{}, err
	}
	agg := Aggregate{Participants: len(as), Slots: make([]SlotCount, len(lq.Layout))}
	for i, sl := range lq.Layout {
		agg.Slots[i] = SlotCount{Slot: sl.Slot}
	}
	for _, a := range as {
		if a.State == quiz.InProgress || a.State == quiz.Overdue {
			if a, err = s.finish(ctx, lq.DomainID, a.ID, quiz.EvSubmit); err != nil {
				return agg, err
			}
		}
		layout, err := decodeLayout(a)
		if err != nil {
			return agg, err
		}
		ans, err := s.Store.Answers(ctx, lq.DomainID, a.ID)
		if err != nil {
			return agg, err
		}
		for _, x := range ans {
			if x.Slot < 1 || x.Slot > len(agg.Slots) {
				continue
			}
			c := &agg.Slots[x.Slot-1]
			if x.Seq > 0 {
				c.Answered++
			}
			if x.Correct == "right" {
				c.Right++
			}
			var r quiz.Response
			if json.Unmarshal([]byte(x.Response), &r) == nil && x.Seq > 0 {
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
