package lmsapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/store"
)

func slotJSON(s store.Slot) map[string]any {
	m := map[string]any{"slotId": s.ID, "position": s.Position, "points": quiz.Milli(s.PointsMilli)}
	if s.QuestionID != 0 {
		m["kind"], m["questionId"] = "fixed", s.QuestionID
	} else {
		m["kind"], m["count"], m["category"], m["tag"] = "random", s.DrawCount, s.Category, s.Tag
	}
	return m
}

// readSlotPoints reads points (0 or absent: the questions' own).
func readSlotPoints(c *call, v *lms.Validator) int64 {
	if !c.P.Has("points") {
		return 0
	}
	p, err := quiz.ParseMilli(c.P.Get("points"))
	if err != nil {
		v.Add("points", err.Error())
	}
	v.Check(p <= quiz.MaxPoints, "points", "must be at most 1000")
	return int64(p)
}

// POST /tests/addQuestion {testId, questionId, points?, position?}.
func (a *API) addQuestionSlot(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	sl := store.Slot{TestID: c.P.ID(&v, "testId"), QuestionID: c.P.ID(&v, "questionId"), DrawCount: 1}
	sl.PointsMilli = readSlotPoints(c, &v)
	sl.Position = int(c.P.Range(&v, "position", 0, 0, 10000))
	if err := v.Err(); err != nil {
		return err
	}
	sl, err := a.Store.AddSlot(r.Context(), c.Domain.ID, sl)
	if err != nil {
		return err
	}
	return ok(w, "Question added to test", slotJSON(sl))
}

// POST /tests/addRandom {testId, category | tag, count, points?,
// position?}: count questions drawn at each attempt's start.
func (a *API) addRandomSlot(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	sl := store.Slot{TestID: c.P.ID(&v, "testId"), Category: c.P.Get("category"), Tag: c.P.Get("tag")}
	v.Check((sl.Category == "") != (sl.Tag == ""), "category", "send either category or tag (one of them)")
	sl.DrawCount = int(c.P.Range(&v, "count", 0, 1, 500))
	v.Check(c.P.Has("count"), "count", "is required")
	sl.PointsMilli = readSlotPoints(c, &v)
	sl.Position = int(c.P.Range(&v, "position", 0, 0, 10000))
	if err := v.Err(); err != nil {
		return err
	}
	sl, err := a.Store.AddSlot(r.Context(), c.Domain.ID, sl)
	if err != nil {
		return err
	}
	return ok(w, "Random questions added to test", slotJSON(sl))
}

// POST /tests/removeSlot {testId, slotId}.
func (a *API) removeSlot(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	testID, slotID := c.P.ID(&v, "testId"), c.P.ID(&v, "slotId")
	if err := v.Err(); err != nil {
		return err
	}
	if err := a.Store.RemoveSlot(r.Context(), c.Domain.ID, testID, slotID); err != nil {
		return err
	}
	return ok(w, "Slot removed", map[string]any{"testId": testID, "slotId": slotID})
}

// GET /tests/layout/{test_id}: the slots in order, with each fixed
// question and the size of each random pool.
func (a *API) testLayout(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "test_id")
	if err != nil {
		return err
	}
	slots, err := a.Store.Slots(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	data := make([]map[string]any, len(slots))
	var max int64
	for i, s := range slots {
		m := slotJSON(s)
		if s.QuestionID != 0 {
			q, err := a.Store.Question(r.Context(), c.Domain.ID, s.QuestionID)
			if err != nil {
				return err
			}
			m["question"] = questionJSON(q)
			pts := s.PointsMilli
			if pts == 0 {
				pts = q.PointsMilli
			}
			if q.Type != quiz.Description {
				max += pts
			}
		} else {
			pool, err := a.Store.QuestionPool(r.Context(), c.Domain.ID, s.Category, s.Tag)
			if err != nil {
				return err
			}
			m["pool_size"] = len(pool)
		}
		data[i] = m
	}
	return ok(w, "Test layout", map[string]any{"testId": id, "slots": data, "fixed_points": quiz.Milli(max)})
}

func settingsJSON(t lms.Test, s quiz.Settings) map[string]any {
	return map[string]any{"testId": t.ID, "pass_percent": s.PassPercent, "attempts_allowed": s.AttemptsAllowed,
		"grading": s.Grading, "shuffle_questions": s.ShuffleQuestions, "shuffle_answers": s.ShuffleAnswers,
		"navigation": s.Navigation, "per_page": s.PerPage, "open_at": timePtr(s.OpenAt), "close_at": timePtr(s.CloseAt),
		"on_expiry": s.OnExpiry, "grace_s": s.GraceS, "delay_between_s": s.DelayBetweenS, "review": s.Review, "demo": s.Demo,
		"tests_alloted_time_demo_mode": t.TimeDemo, "tests_alloted_time_test_mode": t.TimeTest}
}

func timePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// GET /tests/settings/{test_id}.
func (a *API) getTestSettings(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "test_id")
	if err != nil {
		return err
	}
	t, s, err := a.quiz().Settings(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Test settings", settingsJSON(t, s))
}

// readTime reads an RFC 3339 instant; "" (sent) clears it.
func readTime(c *call, v *lms.Validator, name string, dst **time.Time) {
	if !c.P.Sent(name) {
		return
	}
	s := c.P.Get(name)
	if s == "" {
		*dst = nil
		return
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		v.Add(name, "must be an RFC 3339 time such as 2026-09-01T09:00:00Z, or empty to clear")
		return
	}
	t = t.UTC().Truncate(time.Second)
	*dst = &t
}

func readBool(c *call, v *lms.Validator, name string, dst *bool) {
	if !c.P.Has(name) {
		return
	}
	switch strings.ToLower(c.P.Get(name)) {
	case "1", "true":
		*dst = true
	case "0", "false":
		*dst = false
	default:
		v.Add(name, "must be true or false (or 1 or 0)")
	}
}

func readInt(c *call, v *lms.Validator, name string, lo, hi int64, dst *int) {
	if c.P.Has(name) {
		*dst = int(c.P.Range(v, name, int64(*dst), lo, hi))
	}
}

// PUT /tests/settings/{test_id}: any settings field; those not sent keep
// their value. review is {phase: {correctness, marks, feedback,
// right_answer}} for phases after, later, after_close; demo is {enabled,
// show_answers}.
func (a *API) setTestSettings(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "test_id")
	if err != nil {
		return err
	}
	s, err := a.quiz().SetSettings(r.Context(), c.Domain.ID, id, func(s *quiz.Settings) error {
		var v lms.Validator
		readInt(c, &v, "pass_percent", 0, 100, &s.PassPercent)
		readInt(c, &v, "attempts_allowed", 0, quiz.MaxAttempts, &s.AttemptsAllowed)
		if c.P.Sent("grading") {
			s.Grading = c.P.Get("grading")
		}
		readBool(c, &v, "shuffle_questions", &s.ShuffleQuestions)
		readBool(c, &v, "shuffle_answers", &s.ShuffleAnswers)
		if c.P.Sent("navigation") {
			s.Navigation = c.P.Get("navigation")
		}
		readInt(c, &v, "per_page", 0, 1000, &s.PerPage)
		readTime(c, &v, "open_at", &s.OpenAt)
		readTime(c, &v, "close_at", &s.CloseAt)
		if c.P.Sent("on_expiry") {
			s.OnExpiry = c.P.Get("on_expiry")
		}
		readInt(c, &v, "grace_s", 0, quiz.MaxGraceS, &s.GraceS)
		readInt(c, &v, "delay_between_s", 0, quiz.MaxDelayS, &s.DelayBetweenS)
		if c.P.Sent("review") {
			var rv map[string]quiz.ReviewItems
			dec := json.NewDecoder(strings.NewReader(c.P.Raw("review")))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rv); err != nil {
				v.Add("review", "must be an object of phases (after, later, after_close) to {correctness, marks, feedback, right_answer}")
			}
			for k, items := range rv {
				s.Review[k] = items
			}
		}
		if c.P.Sent("demo") {
			dec := json.NewDecoder(strings.NewReader(c.P.Raw("demo")))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&s.Demo); err != nil {
				v.Add("demo", "must be an object {enabled, show_answers}")
			}
		}
		return v.Err()
	})
	if err != nil {
		return err
	}
	t, _, err := a.quiz().Settings(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Test settings updated", settingsJSON(t, s))
}

func overrideJSON(o store.QuizOverride) map[string]any {
	var closeAt any
	if !o.CloseAt.IsZero() {
		closeAt = o.CloseAt.UTC().Format(time.RFC3339)
	}
	mult := quiz.Milli(o.MultiplierPermille)
	if mult == 0 {
		mult = 1000
	}
	return map[string]any{"testId": o.TestID, "user_id": o.UserID, "email": o.Email, "extra_time_s": o.ExtraTimeS,
		"time_multiplier": mult, "extra_attempts": o.ExtraAttempts, "close_at": closeAt, "scheme_id": o.SchemeID}
}

// POST /tests/overrides/set {testId, email, extra_time_s?,
// time_multiplier?, extra_attempts?, close_at?, scheme_id?}: replaces the
// learner's override.
func (a *API) setOverride(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	o := store.QuizOverride{TestID: c.P.ID(&v, "testId"), Email: c.P.RequiredString(&v, "email")}
	readInt(c, &v, "extra_time_s", 0, int64(quiz.MaxExtraTime/time.Second), &o.ExtraTimeS)
	readInt(c, &v, "extra_attempts", 0, quiz.MaxAttempts, &o.ExtraAttempts)
	if c.P.Has("time_multiplier") {
		m, err := quiz.ParsePermille(c.P.Get("time_multiplier"))
		if err != nil || m < 1000 || m > quiz.MaxMultiplier {
			v.Add("time_multiplier", "must be 1 to 10, with at most three decimals, such as 1.5")
		}
		o.MultiplierPermille = int(m)
	}
	var closeAt *time.Time
	readTime(c, &v, "close_at", &closeAt)
	if closeAt != nil {
		o.CloseAt = *closeAt
	}
	if c.P.Has("scheme_id") {
		o.SchemeID = c.P.ID(&v, "scheme_id")
	}
	if err := v.Err(); err != nil {
		return err
	}
	o, err := a.Store.SetQuizOverride(r.Context(), c.Domain.ID, o)
	if err != nil {
		return err
	}
	return ok(w, "Override set", overrideJSON(o))
}

// POST /tests/overrides/list {testId}.
func (a *API) listOverrides(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "testId")
	if err := v.Err(); err != nil {
		return err
	}
	os, err := a.Store.QuizOverrides(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	data := make([]map[string]any, len(os))
	for i, o := range os {
		data[i] = overrideJSON(o)
	}
	return ok(w, "Overrides listed", data)
}
