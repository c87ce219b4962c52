package lmsapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/quizsvc"
	"github.com/lectern-lms/lectern/internal/store"
)

func attemptJSON(a store.Attempt, email string) map[string]any {
	return map[string]any{"id": a.ID, "testId": a.TestID, "user_id": a.UserID, "email": email, "mode": a.Mode,
		"attempt_no": a.AttemptNo, "state": a.State, "source": a.Source, "classId": a.ClassID, "sitting": a.Sitting,
		"started_at": rfc(a.StartedAt), "deadline": rfc(a.Deadline), "capped_by_close": a.Capped, "finished_at": rfc(a.FinishedAt),
		"score": quiz.Milli(a.ScoreMilli), "max": quiz.Milli(a.MaxMilli),
		"percent_x100": quiz.Percent(quiz.Scored{Score: quiz.Milli(a.ScoreMilli), Max: quiz.Milli(a.MaxMilli)})}
}

// emails caches user emails for a listing.
type emails struct {
	a    *API
	r    *http.Request
	d    int64
	seen map[int64]string
}

func (e *emails) of(id int64) string {
	if s, ok := e.seen[id]; ok {
		return s
	}
	u, err := e.a.Store.User(e.r.Context(), e.d, id)
	if err == nil {
		e.seen[id] = u.Email
	}
	return u.Email
}

// POST /tests/attempts/list {testId?, email?, classId?, sitting?, state?,
// mode?, page, limit}: newest first.
func (a *API) listAttempts(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	var f store.AttemptFilter
	if c.P.Has("testId") {
		f.TestID = c.P.ID(&v, "testId")
	}
	if c.P.Has("classId") {
		f.ClassID = c.P.ID(&v, "classId")
	}
	f.Sitting = int(c.P.Range(&v, "sitting", 0, 1, 1<<31-1))
	f.State, f.Mode = c.P.Get("state"), c.P.Get("mode")
	v.Check(f.State == "" || slices.Contains(quiz.States, f.State), "state", "must be one of "+strings.Join(quiz.States, ", "))
	v.Check(f.Mode == "" || f.Mode == quiz.ModeDemo || f.Mode == quiz.ModeTest || f.Mode == "live", "mode", "must be demo, test or live")
	if err := v.Err(); err != nil {
		return err
	}
	if email := c.P.Get("email"); email != "" {
		u, err := a.Store.UserByEmail(r.Context(), c.Domain.ID, email)
		if err != nil {
			return err
		}
		f.UserID = u.ID
	}
	if f.TestID != 0 {
		if _, err := a.Store.Test(r.Context(), c.Domain.ID, f.TestID); err != nil {
			return err
		}
	}
	as, total, err := a.Store.ListAttempts(r.Context(), c.Domain.ID, f, pg.store())
	if err != nil {
		return err
	}
	em := &emails{a: a, r: r, d: c.Domain.ID, seen: map[int64]string{}}
	data := make([]map[string]any, len(as))
	for i, at := range as {
		data[i] = attemptJSON(at, em.of(at.UserID))
	}
	return writeJSON(w, pg.body("Attempts", data, total))
}

// GET /tests/attempts/get/{attempt_id}: the attempt with every slot's
// question version, response, mark and comment (the management view:
// keys included).
func (a *API) getAttempt(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "attempt_id")
	if err != nil {
		return err
	}
	at, err := a.Store.Attempt(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	var layout []quiz.SlotLayout
	if err := json.Unmarshal([]byte(at.Layout), &layout); err != nil {
		return err
	}
	ids := make([]int64, len(layout))
	for i, sl := range layout {
		ids[i] = sl.VersionID
	}
	vs, err := a.Store.QuestionVersions(r.Context(), c.Domain.ID, ids)
	if err != nil {
		return err
	}
	ans, err := a.Store.Answers(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	bySlot := map[int]store.Answer{}
	for _, x := range ans {
		bySlot[x.Slot] = x
	}
	slots := make([]map[string]any, len(layout))
	for i, sl := range layout {
		x := bySlot[sl.Slot]
		var resp any = json.RawMessage("null")
		if x.Response != "" {
			resp = json.RawMessage(x.Response)
		}
		slots[i] = map[string]any{"slot": sl.Slot, "question": questionJSON(vs[sl.VersionID]), "max": quiz.Milli(sl.Points),
			"response": resp, "seq": x.Seq, "saved_at": rfc(x.SavedAt), "mark": quiz.Milli(x.MarkMilli), "correct": x.Correct,
			"pending": x.Pending, "manual": x.Manual, "comment": x.Comment}
	}
	u, _ := a.Store.User(r.Context(), c.Domain.ID, at.UserID)
	m := attemptJSON(at, u.Email)
	m["slots"] = slots
	return ok(w, "Attempt found", m)
}

// POST /tests/attempts/grade {attemptId, slot, points, comment?}: a
// person's mark for one slot (essays; any slot may be overridden).
func (a *API) gradeAttempt(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "attemptId")
	slot := int(c.P.RequiredInt(&v, "slot"))
	var points quiz.Milli
	if c.P.Has("points") {
		p, err := quiz.ParseMilli(c.P.Get("points"))
		if err != nil {
			v.Add("points", err.Error())
		}
		points = p
	} else {
		v.Add("points", "is required")
	}
	comment := c.P.Get("comment")
	checkLen(&v, "comment", comment, maxText)
	if err := v.Err(); err != nil {
		return err
	}
	at, err := a.quiz().Grade(r.Context(), c.Domain.ID, id, slot, points, comment)
	if err != nil {
		return err
	}
	u, _ := a.Store.User(r.Context(), c.Domain.ID, at.UserID)
	return ok(w, "Attempt graded", attemptJSON(at, u.Email))
}

// POST /tests/attempts/regrade {testId | attemptId}: rescores closed
// attempts against the questions' current versions.
func (a *API) regrade(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	var ids []int64
	switch {
	case c.P.Has("attemptId"):
		id := c.P.ID(&v, "attemptId")
		if err := v.Err(); err != nil {
			return err
		}
		if _, err := a.Store.Attempt(r.Context(), c.Domain.ID, id); err != nil {
			return err
		}
		ids = []int64{id}
	case c.P.Has("testId"):
		id := c.P.ID(&v, "testId")
		if err := v.Err(); err != nil {
			return err
		}
		if _, err := a.Store.Test(r.Context(), c.Domain.ID, id); err != nil {
			return err
		}
		as, _, err := a.Store.ListAttempts(r.Context(), c.Domain.ID, store.AttemptFilter{TestID: id}, store.Page{})
		if err != nil {
			return err
		}
		for _, at := range as {
			if quiz.Closed(at.State) {
				ids = append(ids, at.ID)
			}
		}
	default:
		return lms.Invalidf("testId", "send testId or attemptId")
	}
	as, changes, err := a.quiz().RegradeReport(r.Context(), c.Domain.ID, ids)
	if err != nil {
		return err
	}
	em := &emails{a: a, r: r, d: c.Domain.ID, seen: map[int64]string{}}
	data := make([]map[string]any, len(as))
	for i, at := range as {
		data[i] = attemptJSON(at, em.of(at.UserID))
	}
	changed := make([]map[string]any, len(changes))
	for i, ch := range changes {
		changed[i] = map[string]any{"user_id": ch.UserID, "email": em.of(ch.UserID), "testId": ch.TestID,
			"passed_before": ch.Before, "passed_after": ch.After}
	}
	return ok(w, "Attempts regraded", map[string]any{"regraded": len(as), "attempts": data, "result_changes": changed})
}

// DELETE /tests/attempts/delete/{attempt_id}: the attempt and its answers
// are gone; the learner's result is recomputed.
func (a *API) deleteAttempt(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "attempt_id")
	if err != nil {
		return err
	}
	at, err := a.Store.DeleteAttempt(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	a.quiz().AttemptDeleted(r.Context(), c.Domain.ID, at)
	return ok(w, "Attempt deleted", map[string]any{"id": id})
}

func resultJSON(res quizsvc.Result) map[string]any {
	m := map[string]any{"user_id": res.UserID, "email": res.Email, "attempts_used": res.AttemptsUsed, "graded": res.Graded,
		"pending_grading": res.Pending, "grade": nil, "max": nil, "percent_x100": nil, "passed": res.Passed}
	if res.Graded {
		m["grade"], m["max"], m["percent_x100"] = res.Grade.Score, res.Grade.Max, res.Percent
	}
	return m
}

// POST /tests/results {testId}: per learner, the final grade by the
// grading method, passed, attempts used (test mode only).
func (a *API) testResults(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "testId")
	if err := v.Err(); err != nil {
		return err
	}
	rs, err := a.quiz().Results(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	data := make([]map[string]any, len(rs))
	for i, res := range rs {
		data[i] = resultJSON(res)
	}
	return ok(w, "Test results", data)
}

// POST /tests/statistics {testId}: per question, over closed test-mode
// attempts: how often it was shown, answered, fully right, and the mean
// mark as a percentage of its maximum.
func (a *API) testStatistics(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "testId")
	if err := v.Err(); err != nil {
		return err
	}
	if _, err := a.Store.Test(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	as, _, err := a.Store.ListAttempts(r.Context(), c.Domain.ID, store.AttemptFilter{TestID: id, Mode: quiz.ModeTest}, store.Page{})
	if err != nil {
		return err
	}
	type stat struct {
		QuestionID int64 `json:"questionId"`
		Shown      int   `json:"shown"`
		Answered   int   `json:"answered"`
		Right      int   `json:"right"`
		markSum    int64
		maxSum     int64
		Percent    int64 `json:"mean_percent_x100"`
		RightPct   int64 `json:"right_percent_x100"`
	}
	stats := map[int64]*stat{}
	var order []int64
	closed := 0
	for _, at := range as {
		if !quiz.Closed(at.State) {
			continue
		}
		closed++
		var layout []quiz.SlotLayout
		if err := json.Unmarshal([]byte(at.Layout), &layout); err != nil {
			return err
		}
		ans, err := a.Store.Answers(r.Context(), c.Domain.ID, at.ID)
		if err != nil {
			return err
		}
		bySlot := map[int]store.Answer{}
		for _, x := range ans {
			bySlot[x.Slot] = x
		}
		for _, sl := range layout {
			st := stats[sl.QuestionID]
			if st == nil {
				st = &stat{QuestionID: sl.QuestionID}
				stats[sl.QuestionID] = st
				order = append(order, sl.QuestionID)
			}
			x := bySlot[sl.Slot]
			st.Shown++
			if x.Seq > 0 {
				st.Answered++
			}
			if x.Correct == "right" {
				st.Right++
			}
			st.markSum += x.MarkMilli
			st.maxSum += sl.Points
		}
	}
	slices.Sort(order)
	data := make([]*stat, len(order))
	for i, qid := range order {
		st := stats[qid]
		if st.maxSum > 0 {
			st.Percent = st.markSum * 10000 / st.maxSum
		}
		if st.Shown > 0 {
			st.RightPct = int64(st.Right) * 10000 / int64(st.Shown)
		}
		data[i] = st
	}
	return ok(w, "Test statistics", map[string]any{"testId": id, "attempts": closed, "questions": data})
}

// POST /liveClasses/quiz/attach {classId, testId}: the test may be
// launched in the class's room.
func (a *API) attachClassQuiz(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	classID, testID := c.P.ID(&v, "classId"), c.P.ID(&v, "testId")
	if err := v.Err(); err != nil {
		return err
	}
	if err := a.Store.AttachClassTest(r.Context(), c.Domain.ID, classID, testID); err != nil {
		return err
	}
	return ok(w, "Test attached to class", map[string]any{"classId": classID, "testId": testID})
}

// POST /liveClasses/quiz/results {classId, sitting?}: the in-class
// attempts of the class (of one sitting), with the attached tests.
func (a *API) classQuizResults(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	classID := c.P.ID(&v, "classId")
	sitting := int(c.P.Range(&v, "sitting", 0, 1, 1<<31-1))
	if err := v.Err(); err != nil {
		return err
	}
	tests, err := a.Store.ClassTests(r.Context(), c.Domain.ID, classID)
	if err != nil {
		return err
	}
	as, _, err := a.Store.ListAttempts(r.Context(), c.Domain.ID, store.AttemptFilter{ClassID: classID, Sitting: sitting}, store.Page{})
	if err != nil {
		return err
	}
	em := &emails{a: a, r: r, d: c.Domain.ID, seen: map[int64]string{}}
	data := make([]map[string]any, len(as))
	for i, at := range as {
		data[i] = attemptJSON(at, em.of(at.UserID))
	}
	if tests == nil {
		tests = []int64{}
	}
	return ok(w, "Class quiz results", map[string]any{"classId": classID, "tests": tests, "attempts": data})
}
