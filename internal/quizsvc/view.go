package quizsvc

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/store"
)

// SavedAnswer is a learner's saved response to a slot, in display ids.
type SavedAnswer struct {
	Slot     int           `json:"slot"`
	Response quiz.Response `json:"response"`
	Seq      int64         `json:"seq"`
}

// savedAnswers are the answers saved to the slots shown, in display ids.
func savedAnswers(layout []quiz.SlotLayout, ans []store.Answer, shown func(int) bool) []SavedAnswer {
	var out []SavedAnswer
	for _, x := range ans {
		if x.Seq == 0 || x.Slot < 1 || x.Slot > len(layout) || !shown(x.Slot) {
			continue
		}
		var r quiz.Response
		json.Unmarshal([]byte(x.Response), &r)
		out = append(out, SavedAnswer{Slot: x.Slot, Response: layout[x.Slot-1].ToDisplay(r), Seq: x.Seq})
	}
	return out
}

// SlotReview is what review shows of one slot, each part only when the
// review matrix allows it.
type SlotReview struct {
	Slot        int            `json:"slot"`
	Correct     string         `json:"correct,omitempty"`
	Mark        *quiz.Milli    `json:"mark,omitempty"`
	Max         *quiz.Milli    `json:"max,omitempty"`
	Feedback    string         `json:"feedback,omitempty"`
	Comment     string         `json:"comment,omitempty"`
	RightAnswer *quiz.Response `json:"right_answer,omitempty"`
	// RightText lists the accepted answers of short answer, numerical and
	// fill-in-the-blanks questions.
	RightText []string `json:"right_text,omitempty"`
}

// AttemptView is the learner's JSON of an attempt: the questions without
// keys, the saved answers, the server's deadline and clock, and, once
// closed, the review the settings allow.
type AttemptView struct {
	ID        int64      `json:"id"`
	TestID    int64      `json:"test_id"`
	Mode      string     `json:"mode"`
	AttemptNo int        `json:"attempt_no"`
	State     string     `json:"state"`
	StartedAt time.Time  `json:"started_at"`
	Deadline  *time.Time `json:"deadline"`
	Capped    bool       `json:"capped_by_close"`
	ServerNow time.Time  `json:"server_now"`
	// ServerNowMS is the server's clock in milliseconds, for the page's
	// countdown (server_now is whole seconds).
	ServerNowMS int64  `json:"server_now_ms"`
	Navigation  string `json:"navigation"`
	PerPage     int    `json:"per_page"`
	// Page and Pages: with sequential navigation, an attempt in progress
	// shows only the questions of the page the learner is on (Page,
	// 0-based, of Pages).
	Page      int           `json:"page"`
	Pages     int           `json:"pages"`
	Questions []quiz.View   `json:"questions"`
	Answers   []SavedAnswer `json:"saved"`
	Review    *Review       `json:"review,omitempty"`
}

// Review is the closed attempt's review.
type Review struct {
	Phase   string           `json:"phase"`
	Shows   quiz.ReviewItems `json:"shows"`
	Score   *quiz.Milli      `json:"score,omitempty"`
	Max     *quiz.Milli      `json:"max,omitempty"`
	Percent *int64           `json:"percent_x100,omitempty"`
	Passed  *bool            `json:"passed,omitempty"`
	Pending bool             `json:"pending_grading"`
	Slots   []SlotReview     `json:"slots"`
}

// LearnerView renders the learner's own attempt.
func (s *Service) LearnerView(ctx context.Context, domainID, attemptID, userID int64) (AttemptView, error) {
	a, err := s.ownAttempt(ctx, domainID, attemptID, userID)
	if err != nil {
		return AttemptView{}, err
	}
	_, st, err := s.Settings(ctx, domainID, a.TestID)
	if err != nil {
		return AttemptView{}, err
	}
	acc, err := s.Access(ctx, domainID, a.TestID, userID)
	if err != nil {
		return AttemptView{}, err
	}
	return s.view(ctx, domainID, a, st, acc.CloseAt)
}

func (s *Service) view(ctx context.Context, domainID int64, a store.Attempt, st quiz.Settings, closeAt *time.Time) (AttemptView, error) {
	layout, err := decodeLayout(a)
	if err != nil {
		return AttemptView{}, err
	}
	qs, err := s.versions(ctx, domainID, layout)
	if err != nil {
		return AttemptView{}, err
	}
	ans, err := s.Store.Answers(ctx, domainID, a.ID)
	if err != nil {
		return AttemptView{}, err
	}
	v := AttemptView{ID: a.ID, TestID: a.TestID, Mode: a.Mode, AttemptNo: a.AttemptNo, State: a.State, StartedAt: a.StartedAt,
		Capped: a.Capped, ServerNow: s.now(), ServerNowMS: s.nowMS(), Navigation: st.Navigation, PerPage: st.PerPage,
		Questions: make([]quiz.View, len(layout)), Answers: []SavedAnswer{}}
	if !a.Deadline.IsZero() {
		d := a.Deadline
		v.Deadline = &d
	}
	v.Page, v.Pages = a.Page, quiz.PageCount(len(layout), st.PerPage)
	// A sequential attempt in progress shows the learner's page only: the
	// pages ahead are not seen before they are reached.
	shown := func(slot int) bool {
		return quiz.Closed(a.State) || !sequential(a, st, len(layout)) || quiz.PageOf(slot, st.PerPage) == a.Page
	}
	v.Questions = v.Questions[:0]
	for _, sl := range layout {
		if shown(sl.Slot) {
			v.Questions = append(v.Questions, quiz.ViewOf(sl, qs[sl.VersionID]))
		}
	}
	bySlot := map[int]store.Answer{}
	for _, x := range ans {
		bySlot[x.Slot] = x
	}
	v.Answers = append(v.Answers, savedAnswers(layout, ans, shown)...)
	if !quiz.Closed(a.State) {
		return v, nil
	}
	phase := quiz.Phase(a.State, a.FinishedAt, s.now(), closeAt)
	shows := st.ReviewFor(a.Mode, phase)
	rv := &Review{Phase: phase, Shows: shows, Pending: a.State == quiz.NeedsGrading, Slots: []SlotReview{}}
	if shows.Marks {
		sc, mx := quiz.Milli(a.ScoreMilli), quiz.Milli(a.MaxMilli)
		pct := quiz.Percent(quiz.Scored{Score: sc, Max: mx})
		rv.Score, rv.Max, rv.Percent = &sc, &mx, &pct
		if a.Mode == quiz.ModeTest && a.State != quiz.NeedsGrading {
			p := quiz.Passed(quiz.Scored{Score: sc, Max: mx}, st.PassPercent)
			rv.Passed = &p
		}
	}
	for _, sl := range layout {
		q := qs[sl.VersionID]
		x := bySlot[sl.Slot]
		r := SlotReview{Slot: sl.Slot}
		if shows.Correctness {
			r.Correct = x.Correct
		}
		if shows.Marks {
			m, mx := quiz.Milli(x.MarkMilli), quiz.Milli(sl.Points)
			r.Mark, r.Max = &m, &mx
			r.Comment = x.Comment
		}
		if shows.Feedback {
			r.Feedback = q.Data.Feedback
		}
		if shows.RightAnswer {
			if key, ok := quiz.Key(q); ok {
				d := sl.ToDisplay(key)
				r.RightAnswer = &d
			}
			switch q.Type {
			case quiz.ShortAnswer:
				r.RightText = q.Data.Answers
			case quiz.Numerical:
				r.RightText = []string{q.Data.Value}
				if q.Data.Tolerance != "" {
					r.RightText[0] += " ± " + q.Data.Tolerance
				}
			case quiz.FillInBlanks:
				for _, b := range q.Data.Blanks {
					r.RightText = append(r.RightText, b.Answers[0])
				}
			}
		}
		rv.Slots = append(rv.Slots, r)
	}
	v.Review = rv
	return v, nil
}
