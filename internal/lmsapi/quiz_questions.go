package lmsapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/quizsvc"
	"github.com/lectern-lms/lectern/internal/store"
)

// quizRoutes registers the test engine's management endpoints (docs/tests.md).
func (a *API) quizRoutes(rt *httpx.Router) {
	a.handle(rt, "POST", "/questions/create", a.createQuestion)
	a.handle(rt, "GET", "/questions/get/{question_id}", a.getQuestion)
	a.handle(rt, "PUT", "/questions/update/{question_id}", a.updateQuestion)
	a.handle(rt, "DELETE", "/questions/delete/{question_id}", a.deleteQuestion)
	a.handle(rt, "POST", "/questions/list", a.listQuestions)
	a.handle(rt, "POST", "/questions/import", a.importQuestions)

	a.handle(rt, "POST", "/tests/addQuestion", a.addQuestionSlot)
	a.handle(rt, "POST", "/tests/addRandom", a.addRandomSlot)
	a.handle(rt, "POST", "/tests/removeSlot", a.removeSlot)
	a.handle(rt, "GET", "/tests/layout/{test_id}", a.testLayout)
	a.handle(rt, "GET", "/tests/settings/{test_id}", a.getTestSettings)
	a.handle(rt, "PUT", "/tests/settings/{test_id}", a.setTestSettings)
	a.handle(rt, "POST", "/tests/overrides/set", a.setOverride)
	a.handle(rt, "POST", "/tests/overrides/list", a.listOverrides)

	a.handle(rt, "POST", "/tests/attempts/list", a.listAttempts)
	a.handle(rt, "GET", "/tests/attempts/get/{attempt_id}", a.getAttempt)
	a.handle(rt, "POST", "/tests/attempts/grade", a.gradeAttempt)
	a.handle(rt, "POST", "/tests/attempts/regrade", a.regrade)
	a.handle(rt, "DELETE", "/tests/attempts/delete/{attempt_id}", a.deleteAttempt)
	a.handle(rt, "POST", "/tests/results", a.testResults)
	a.handle(rt, "POST", "/tests/statistics", a.testStatistics)

	a.handle(rt, "POST", "/liveClasses/quiz/attach", a.attachClassQuiz)
	a.handle(rt, "POST", "/liveClasses/quiz/results", a.classQuizResults)
}

// quiz is the engine (one made here when the server did not set one).
func (a *API) quiz() *quizsvc.Service {
	if a.Quiz == nil {
		a.Quiz = &quizsvc.Service{Store: a.Store, Logger: a.Logger, Now: a.Now}
	}
	return a.Quiz
}

const (
	maxCategory = 200
	maxTags     = 20
	maxTag      = 100
)

func rfc(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func questionJSON(q store.Question) map[string]any {
	var data any = json.RawMessage(q.Data)
	tags := q.Tags
	if tags == nil {
		tags = []string{}
	}
	return map[string]any{"id": q.ID, "version": q.Version, "version_id": q.VersionID, "type": q.Type, "text_md": q.Text,
		"points": quiz.Milli(q.PointsMilli), "category": q.Category, "tags": tags, "data": data,
		"created_at": rfc(q.CreatedAt), "updated_at": rfc(q.UpdatedAt)}
}

// readTags reads tags as a JSON array or a comma-separated string.
func readTags(c *call, v *lms.Validator) []string {
	raw := c.P.Raw("tags")
	var tags []string
	if strings.HasPrefix(strings.TrimSpace(raw), "[") {
		if err := json.Unmarshal([]byte(raw), &tags); err != nil {
			v.Add("tags", "must be an array of strings or a comma-separated string")
			return nil
		}
	} else if strings.TrimSpace(raw) != "" {
		tags = strings.Split(raw, ",")
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		v.Check(len(t) <= maxTag, "tags", "each tag must be at most 100 bytes")
		out = append(out, t)
	}
	v.Check(len(out) <= maxTags, "tags", "must be at most 20 tags")
	return out
}

// readQuestion reads and validates a question from the call. On update
// only the fields sent change; q holds the current version.
func readQuestion(c *call, q *store.Question, create bool) error {
	var v lms.Validator
	qq := quiz.Question{Type: q.Type, Text: q.Text, Points: quiz.Milli(q.PointsMilli)}
	if q.Data != "" {
		json.Unmarshal([]byte(q.Data), &qq.Data)
	}
	if create {
		qq.Points = 1000
		c.P.RequiredString(&v, "type")
	}
	if c.P.Sent("type") {
		qq.Type = c.P.Get("type")
	}
	if c.P.Sent("text_md") {
		qq.Text = c.P.Raw("text_md")
	}
	if c.P.Has("points") {
		p, err := quiz.ParseMilli(c.P.Get("points"))
		if err != nil {
			v.Add("points", err.Error())
		}
		qq.Points = p
	}
	if c.P.Sent("category") {
		q.Category = c.P.Get("category")
		checkLen(&v, "category", q.Category, maxCategory)
	}
	if c.P.Sent("tags") {
		q.Tags = readTags(c, &v)
	}
	if c.P.Sent("data") {
		qq.Data = quiz.Data{}
		dec := json.NewDecoder(strings.NewReader(c.P.Raw("data")))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&qq.Data); err != nil {
			v.Add("data", "must be an object with the fields of the question type (docs/tests.md): "+jsonErr(err))
		}
	} else if create {
		v.Check(c.P.Get("type") == quiz.Essay || c.P.Get("type") == quiz.Description, "data", "is required for this question type")
	}
	if v.Valid() {
		qq.Normalize()
		qq.Validate(&v)
	}
	if err := v.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(qq.Data)
	if err != nil {
		return err
	}
	q.Type, q.Text, q.PointsMilli, q.Data = qq.Type, qq.Text, int64(qq.Points), string(b)
	return nil
}

func jsonErr(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "json: ")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// POST /questions/create {type, text_md, points (default 1), category,
// tags, data}.
func (a *API) createQuestion(w http.ResponseWriter, r *http.Request, c *call) error {
	var q store.Question
	if err := readQuestion(c, &q, true); err != nil {
		return err
	}
	q, err := a.Store.CreateQuestion(r.Context(), c.Domain.ID, q)
	if err != nil {
		return err
	}
	return ok(w, "Question created", questionJSON(q))
}

// GET /questions/get/{question_id}: the current version.
func (a *API) getQuestion(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "question_id")
	if err != nil {
		return err
	}
	q, err := a.Store.Question(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Question found", questionJSON(q))
}

// PUT /questions/update/{question_id}: a new version; attempts keep theirs.
func (a *API) updateQuestion(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "question_id")
	if err != nil {
		return err
	}
	q, err := a.Store.UpdateQuestion(r.Context(), c.Domain.ID, id, func(q *store.Question) error {
		return readQuestion(c, q, false)
	})
	if err != nil {
		return err
	}
	return ok(w, "Question updated", questionJSON(q))
}

// DELETE /questions/delete/{question_id}: removed from the bank and from
// the tests that use it; attempts keep the versions they showed.
func (a *API) deleteQuestion(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "question_id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteQuestion(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	return ok(w, "Question deleted", map[string]any{"id": id})
}

// POST /questions/list {category?, tag?, type?, page, limit}.
func (a *API) listQuestions(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	f := store.QuestionFilter{Category: c.P.Get("category"), Tag: c.P.Get("tag"), Type: c.P.Get("type")}
	v.Check(f.Type == "" || quiz.ValidType(f.Type), "type", "must be one of "+strings.Join(quiz.Types, ", "))
	if err := v.Err(); err != nil {
		return err
	}
	qs, total, err := a.Store.ListQuestions(r.Context(), c.Domain.ID, f, pg.store())
	if err != nil {
		return err
	}
	data := make([]map[string]any, len(qs))
	for i, q := range qs {
		data[i] = questionJSON(q)
	}
	return writeJSON(w, pg.body("Questions", data, total))
}

// POST /questions/import {format: gift | qti12, file (the file's text),
// category?, points? (default 1)}: {created, skipped: [{item, reason}]}.
func (a *API) importQuestions(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	format := c.P.RequiredString(&v, "format")
	v.Check(format == "" || format == "gift" || format == "qti12", "format", "must be gift or qti12")
	file := c.P.Raw("file")
	v.Check(strings.TrimSpace(file) != "", "file", "is required: the text of the file")
	points := quiz.Milli(1000)
	if c.P.Has("points") {
		p, err := quiz.ParseMilli(c.P.Get("points"))
		if err != nil {
			v.Add("points", err.Error())
		}
		points = p
	}
	category := c.P.Get("category")
	checkLen(&v, "category", category, maxCategory)
	if err := v.Err(); err != nil {
		return err
	}
	var got []quiz.Imported
	var skipped []quiz.Skipped
	if format == "gift" {
		got, skipped = quiz.ParseGIFT(file, points)
	} else {
		var err error
		if got, skipped, err = quiz.ParseQTI12([]byte(file), points); err != nil {
			return lms.Invalidf("file", "%s", err.Error())
		}
	}
	qs := make([]store.Question, 0, len(got))
	for _, g := range got {
		b, err := json.Marshal(g.Q.Data)
		if err != nil {
			return err
		}
		cat := g.Category
		if category != "" {
			cat = category
		}
		if len(cat) > maxCategory {
			cat = cat[:maxCategory]
		}
		qs = append(qs, store.Question{Category: cat, Type: g.Q.Type, Text: g.Q.Text, PointsMilli: int64(g.Q.Points), Data: string(b)})
	}
	created, err := a.Store.CreateQuestions(r.Context(), c.Domain.ID, qs)
	if err != nil {
		return err
	}
	items := make([]map[string]any, len(created))
	for i, q := range created {
		items[i] = map[string]any{"item": got[i].Item, "id": q.ID, "type": q.Type}
	}
	if skipped == nil {
		skipped = []quiz.Skipped{}
	}
	return ok(w, "Questions imported", map[string]any{"created": len(created), "questions": items, "skipped": skipped})
}
