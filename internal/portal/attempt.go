package portal

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/quizsvc"
)

// The learner's side of the test engine, relative to the portal's base:
//
//	GET  /tests/{id}                 start page (instructions, modes, time, attempts left, close cap)
//	POST /tests/{id}/attempts        {mode}: start, or resume the attempt in progress
//	GET  /attempts/{aid}             the attempt page; with Accept: application/json its JSON
//	PUT  /attempts/{aid}/answers     {slot, response, seq}: autosave
//	PUT  /attempts/{aid}/page        {page}: move on to the next page (sequential navigation)
//	POST /attempts/{aid}/submit      submit
//	GET  /quiz/attempt.js            the attempt page's script
//
// Writes need the session's CSRF token (X-CSRF-Token or form field csrf).

var (
	attemptRoutesMu   sync.Mutex
	attemptRoutesDone = map[*http.ServeMux]bool{}
)

// attemptRoutes registers the attempt pages on mux (once per mux, so that
// both Register and pageRoutes may call it).
func (p *Portal) attemptRoutes(mux *http.ServeMux) {
	attemptRoutesMu.Lock()
	defer attemptRoutesMu.Unlock()
	if attemptRoutesDone[mux] {
		return
	}
	attemptRoutesDone[mux] = true
	need := func(h http.HandlerFunc) http.Handler { return p.requireLearner(h) }
	mux.Handle("GET /tests/{id}", need(p.testStartPage))
	mux.Handle("POST /tests/{id}/attempts", need(p.startAttempt))
	mux.Handle("GET /attempts/{aid}", need(p.attemptPage))
	mux.Handle("PUT /attempts/{aid}/answers", need(p.saveAnswer))
	mux.Handle("PUT /attempts/{aid}/page", need(p.movePage))
	mux.Handle("POST /attempts/{aid}/submit", need(p.submitAttempt))
	mux.HandleFunc("GET /quiz/attempt.js", p.attemptScript)
}

// quiz is the test engine as the portal uses it. The server's own engine
// runs the expiry sweeper; this one shares its store and clock.
func (p *Portal) quiz() *quizsvc.Service {
	s := &quizsvc.Service{Store: p.Store, Logger: p.Logger, Now: p.Now}
	if p.Learn != nil {
		s.TestResult = p.Learn.SetTestResult
	}
	return s
}

func attemptID(r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id, err == nil && id > 0
}

func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json") ||
		strings.Contains(r.Header.Get("Content-Type"), "application/json")
}

// attemptError writes the portal JSON's error shape.
func (p *Portal) attemptError(w http.ResponseWriter, r *http.Request, err error) {
	var le *lms.Error
	if !errors.As(err, &le) || le.Code == lms.CodeInternal {
		p.logger().Error("portal quiz", "path", r.URL.Path, "err", err)
		httpx.WriteJSON(w, http.StatusInternalServerError, map[string]any{"message": "internal server error", "code": "internal"})
		return
	}
	status := map[lms.Code]int{lms.CodeInvalid: 400, lms.CodeForbidden: 403, lms.CodeNotFound: 404, lms.CodeConflict: 409,
		quizsvc.ErrCodeTimeUp: 409}[le.Code]
	if status == 0 {
		status = 400
	}
	body := map[string]any{"message": le.Message, "code": string(le.Code)}
	if len(le.Fields) > 0 {
		body["fields"] = le.Fields
	}
	httpx.WriteJSON(w, status, body)
}

// startAttempt starts or resumes an attempt. A form post is redirected to
// the attempt page; a JSON post gets the attempt's JSON.
func (p *Portal) startAttempt(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	noStore(w)
	if !p.checkCSRF(r) {
		p.refuseCSRF(w, r)
		return
	}
	testID, ok := attemptID(r, "id")
	if !ok {
		p.notFound(w, r)
		return
	}
	mode := r.PostFormValue("mode")
	if wantsJSON(r) {
		var body struct {
			Mode string `json:"mode"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body); err != nil && err != io.EOF {
			p.attemptError(w, r, lms.Invalidf("body", "must be a JSON object {mode}"))
			return
		}
		mode = body.Mode
	}
	if mode == "" {
		mode = quiz.ModeTest
	}
	svc := p.quiz()
	a, _, err := svc.Start(r.Context(), l.DomainID, testID, l.UserID, mode)
	if err != nil {
		var le *lms.Error
		if errors.As(err, &le) && le.Code == lms.CodeForbidden {
			// The service refuses in English; say it in the learner's language.
			if acc, aerr := svc.Access(r.Context(), l.DomainID, testID, l.UserID); aerr == nil {
				if ref := acc.Refusal(mode, p.now()); ref.Reason != "" {
					le = &lms.Error{Code: le.Code, Message: refusalText(l.Lang, ref), Fields: le.Fields}
					err = le
				}
			}
		}
		if wantsJSON(r) {
			p.attemptError(w, r, err)
			return
		}
		if lms.IsNotFound(err) {
			p.notFound(w, r)
			return
		}
		if le != nil && le.Code != lms.CodeInternal {
			p.message(w, r, http.StatusForbidden, attemptText(l.Lang, "learn.quiz.cannotStart"), le.Message, p.base(r)+"/tests/"+strconv.FormatInt(testID, 10))
			return
		}
		p.internal(w, r, err)
		return
	}
	if wantsJSON(r) {
		v, err := svc.LearnerView(r.Context(), l.DomainID, a.ID, l.UserID)
		if err != nil {
			p.attemptError(w, r, err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, v)
		return
	}
	http.Redirect(w, r, p.base(r)+"/attempts/"+strconv.FormatInt(a.ID, 10), http.StatusSeeOther)
}

func (p *Portal) refuseCSRF(w http.ResponseWriter, r *http.Request) {
	if wantsJSON(r) {
		httpx.WriteJSON(w, http.StatusForbidden, map[string]any{"message": "missing or wrong CSRF token; reload the page", "code": "csrf"})
		return
	}
	p.message(w, r, http.StatusForbidden, "Please reload the page", "This form has expired. Reload the page and try again.", "")
}

// saveAnswer autosaves one slot: {slot, response, seq}. The answer is
// {saved, seq}; after the deadline it is 409 time_up.
func (p *Portal) saveAnswer(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	noStore(w)
	if !p.checkCSRF(r) {
		p.refuseCSRF(w, r)
		return
	}
	aid, ok := attemptID(r, "aid")
	if !ok {
		p.attemptError(w, r, lms.NotFoundf("attempt not found"))
		return
	}
	var body struct {
		Slot     int           `json:"slot"`
		Response quiz.Response `json:"response"`
		Seq      int64         `json:"seq"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 256<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		p.attemptError(w, r, lms.Invalidf("body", "must be a JSON object {slot, response, seq}"))
		return
	}
	res, err := p.quiz().Save(r.Context(), l.DomainID, aid, l.UserID, body.Slot, body.Response, body.Seq)
	if err != nil {
		p.attemptError(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"saved": res.Saved, "seq": res.Seq, "slot": body.Slot})
}

// movePage moves a sequential attempt on to its next page.
func (p *Portal) movePage(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	noStore(w)
	if !p.checkCSRF(r) {
		p.refuseCSRF(w, r)
		return
	}
	aid, ok := attemptID(r, "aid")
	if !ok {
		p.attemptError(w, r, lms.NotFoundf("attempt not found"))
		return
	}
	var body struct {
		Page *int `json:"page"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 4<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Page == nil {
		p.attemptError(w, r, lms.Invalidf("page", "must be the page to move to, a number from 0"))
		return
	}
	a, err := p.quiz().MovePage(r.Context(), l.DomainID, aid, l.UserID, *body.Page)
	if err != nil {
		p.attemptError(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"page": a.Page})
}

// submitAttempt submits; a form post is redirected to the attempt page,
// which then shows the result.
func (p *Portal) submitAttempt(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	noStore(w)
	if !p.checkCSRF(r) {
		p.refuseCSRF(w, r)
		return
	}
	aid, ok := attemptID(r, "aid")
	if !ok {
		p.notFound(w, r)
		return
	}
	svc := p.quiz()
	_, err := svc.Submit(r.Context(), l.DomainID, aid, l.UserID)
	if err != nil && lms.ErrorCode(err) != lms.CodeConflict {
		if wantsJSON(r) {
			p.attemptError(w, r, err)
			return
		}
		if lms.IsNotFound(err) {
			p.notFound(w, r)
			return
		}
		p.internal(w, r, err)
		return
	}
	// A conflict is an attempt already closed (the sweeper was first):
	// show it as it is.
	if wantsJSON(r) {
		v, err := svc.LearnerView(r.Context(), l.DomainID, aid, l.UserID)
		if err != nil {
			p.attemptError(w, r, err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, v)
		return
	}
	http.Redirect(w, r, p.base(r)+"/attempts/"+strconv.FormatInt(aid, 10), http.StatusSeeOther)
}
