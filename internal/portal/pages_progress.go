package portal

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
)

// The lesson player's JSON (learn.js): progress reports of a video or audio
// lesson. Errors have the management API's shape: {"message", "code",
// "fields"}.

// maxProgressBody bounds a progress report (learn.MaxRanges ranges fit).
const maxProgressBody = 64 << 10

// learnerJSON runs h for a signed-in learner whose request carries the
// session's CSRF token; else 401 or 403 as JSON.
func (p *Portal) learnerJSON(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if _, ok := LearnerFrom(r.Context()); !ok {
			httpx.WriteError(w, r, http.StatusUnauthorized, httpx.ErrorBody{Message: "sign in first", Code: string(lms.CodeUnauthorized)})
			return
		}
		if !p.checkCSRF(r) {
			httpx.WriteError(w, r, http.StatusForbidden, httpx.ErrorBody{Message: "missing or wrong CSRF token (header X-CSRF-Token)", Code: string(lms.CodeForbidden)})
			return
		}
		if p.Learn == nil {
			p.jsonError(w, r, errors.New("portal: no learn service"))
			return
		}
		h(w, r)
	})
}

// jsonError answers err as JSON: the lms codes as the API maps them, a
// locked lesson as 403 "locked" with its reason, the rest a logged 500.
func (p *Portal) jsonError(w http.ResponseWriter, r *http.Request, err error) {
	var locked learn.ErrLocked
	var le *lms.Error
	switch {
	case errors.As(err, &locked):
		httpx.WriteError(w, r, http.StatusForbidden, httpx.ErrorBody{Message: "the lesson is locked (" + locked.Reason + ")", Code: "locked"})
	case errors.As(err, &le) && le.Code != lms.CodeInternal:
		httpx.WriteError(w, r, httpx.CodeStatus(le.Code), httpx.ErrorBody{Message: le.Message, Code: string(le.Code), Fields: le.Fields})
	default:
		p.logger().Error("portal json", "path", r.URL.Path, "err", err)
		httpx.WriteError(w, r, http.StatusInternalServerError, httpx.ErrorBody{Message: "internal server error", Code: "internal"})
	}
}

// progressJSON is a progress report's answer.
type progressJSON struct {
	LessonDone    bool  `json:"lesson_done"`
	LessonPercent int   `json:"lesson_percent"`
	Position      int   `json:"position"`
	CoursePercent int   `json:"course_percent"`
	CourseDone    bool  `json:"course_done"`
	NextLessonID  int64 `json:"next_lesson_id"`
}

func progressOf(pr learn.Progress) progressJSON {
	return progressJSON{LessonDone: pr.State == learn.Done, LessonPercent: pr.WatchedPercent, Position: pr.Position,
		CoursePercent: pr.CoursePercent, CourseDone: !pr.CourseCompletedAt.IsZero(), NextLessonID: pr.NextLessonID}
}

// watched takes {"ranges": [[start, end], ...], "position": s}: the
// seconds of a video or audio lesson (or a live class's recording) played
// since the page opened, as whole-second [start, end) ranges, and where
// playback stands. The learn service merges the ranges with what it has
// and decides completion (90% of distinct seconds).
func (p *Portal) watched(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	var in struct {
		Ranges   *[][2]int `json:"ranges"`
		Position *int      `json:"position"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxProgressBody))
	if err := dec.Decode(&in); err != nil {
		p.jsonError(w, r, lms.Invalidf("body", "must be a JSON object {\"ranges\": [[start, end], ...], \"position\": seconds}"))
		return
	}
	var ranges [][2]int
	if in.Ranges != nil {
		ranges = *in.Ranges
	}
	if len(ranges) > learn.MaxRanges {
		p.jsonError(w, r, lms.Invalidf("ranges", "has more than %d ranges", learn.MaxRanges))
		return
	}
	for _, rg := range ranges {
		if rg[0] < 0 || rg[1] < rg[0] {
			p.jsonError(w, r, lms.Invalidf("ranges", "must be [start, end] pairs of seconds with 0 <= start <= end"))
			return
		}
	}
	position := 0
	if in.Position != nil {
		if *in.Position < 0 {
			p.jsonError(w, r, lms.Invalidf("position", "must be 0 or more seconds"))
			return
		}
		position = *in.Position
	}
	v, err := p.lessonFor(r, l)
	if err != nil {
		p.jsonError(w, r, err)
		return
	}
	pr, err := p.Learn.Watched(r.Context(), l.DomainID, l.UserID, v.ID, ranges, position)
	if err != nil {
		p.jsonError(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"message": "progress saved", "data": progressOf(pr)})
}
