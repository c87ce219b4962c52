package portal

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
)

// pageRoutes registers the learner's pages on the portal's mux, with paths
// relative to the portal's base. Every page needs a signed-in learner;
// without one it is the sign-in landing page (HTTP 401), which never
// redirects.
func (p *Portal) pageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /{$}", p.learnerPage(p.home))
	mux.Handle("GET /courses/{id}", p.learnerPage(p.course))
	mux.Handle("GET /courses/{id}/lessons/{lid}", p.learnerPage(p.lesson))
	mux.Handle("POST /courses/{id}/lessons/{lid}/complete", p.learnerPage(p.complete))
	mux.Handle("POST /courses/{id}/lessons/{lid}/watched", p.learnerJSON(p.watched))
	mux.Handle("GET /classes/{id}/join", p.learnerPage(p.join))
	mux.Handle("GET /certificates", p.learnerPage(p.certificatesPage))
}

// learnerPage runs h for a signed-in learner. Without a session it shows
// the sign-in landing page in the browser's language (HTTP 401); inside a
// frame it is the sign-in flow's "open in a new tab" page. Neither
// redirects, so nothing can loop.
func (p *Portal) learnerPage(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := LearnerFrom(r.Context()); !ok {
			if r.Header.Get("Sec-Fetch-Dest") == "iframe" {
				p.signInPage(w, r)
				return
			}
			p.showMessage(w, r, http.StatusUnauthorized, "learn.signin.title", "learn.signin.text", "learn.signin.again")
			return
		}
		if p.Learn == nil {
			p.pageError(w, r, errors.New("portal: no learn service"))
			return
		}
		h(w, r)
	})
}

// pageError answers err as a page: not found (also what a learner of
// another domain gets for this domain's ids), or a logged internal error.
func (p *Portal) pageError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case lms.IsNotFound(err):
		p.showMessage(w, r, http.StatusNotFound, "learn.notFound.title", "learn.notFound.text")
	case lms.ErrorCode(err) == lms.CodeForbidden:
		p.showMessage(w, r, http.StatusForbidden, "learn.lock.title", "learn.lock.enrol")
	case lms.ErrorCode(err) == lms.CodeInvalid:
		p.showMessage(w, r, http.StatusBadRequest, "learn.error.title", "learn.error.text")
	case errors.Is(err, context.Canceled):
	default:
		p.logger().Error("portal page", "path", r.URL.Path, "err", err)
		p.showMessage(w, r, http.StatusInternalServerError, "learn.error.title", "learn.error.text")
	}
}

// pathID reads a positive id from the path; anything else is not found.
func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, lms.NotFoundf("%s %q not found", name, r.PathValue(name))
	}
	return id, nil
}

func (p *Portal) home(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	d := p.newPage(r, "home", "home")
	body, err := p.dashboard(r, d, l)
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	d.Title, d.Body = d.S("learn.nav.home"), body
	p.renderPage(w, r, http.StatusOK, "home", d)
}

func (p *Portal) course(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	id, err := pathID(r, "id")
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	cv, err := p.outlineFor(r, l, id)
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	d := p.newPage(r, "course", "")
	d.Title, d.Body = cv.Course.Name, p.courseBody(d, cv)
	p.renderPage(w, r, http.StatusOK, "course", d)
}

// outlineFor is course id's outline for the learner. A course the learner
// is not enrolled in is shown only when published.
func (p *Portal) outlineFor(r *http.Request, l Learner, id int64) (learn.CourseView, error) {
	cv, err := p.Learn.Outline(r.Context(), l.DomainID, id, l.UserID)
	if err == nil && !cv.Enrolled && cv.Course.Status != lms.CoursePublished {
		err = lms.NotFoundf("course %d not found", id)
	}
	return cv, err
}

// lessonFor opens lesson lid of course id for the learner: not found when
// the lesson is in another course (or domain), learn.ErrLocked when it is
// locked.
func (p *Portal) lessonFor(r *http.Request, l Learner) (learn.LessonView, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return learn.LessonView{}, err
	}
	lid, err := pathID(r, "lid")
	if err != nil {
		return learn.LessonView{}, err
	}
	v, err := p.Learn.Lesson(r.Context(), l.DomainID, l.UserID, lid)
	if err == nil && v.CourseID != id {
		err = lms.NotFoundf("lesson %d not found", lid)
	}
	return v, err
}

func (p *Portal) lesson(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	v, err := p.lessonFor(r, l)
	var locked learn.ErrLocked
	if errors.As(err, &locked) {
		p.lockedPage(w, r, l, locked)
		return
	}
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	cv, err := p.outlineFor(r, l, v.CourseID)
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	d := p.newPage(r, "lesson", "")
	d.Title, d.Body = v.Title+" · "+v.CourseTitle, p.lessonBody(d, cv, v)
	p.renderPage(w, r, http.StatusOK, "lesson", d)
}

// lockedPage is a locked lesson's page (HTTP 403): why, and until when.
func (p *Portal) lockedPage(w http.ResponseWriter, r *http.Request, l Learner, locked learn.ErrLocked) {
	id, _ := pathID(r, "id")
	lid, _ := pathID(r, "lid")
	cv, err := p.outlineFor(r, l, id)
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	var item learn.LessonItem
	for _, it := range cv.Lessons() {
		if it.ID == lid {
			item = it
		}
	}
	if item.ID == 0 {
		p.pageError(w, r, lms.NotFoundf("lesson %d not found", lid))
		return
	}
	d := p.newPage(r, "locked", "")
	st := item.Status
	st.Reason, st.UnlockAt, st.After = locked.Reason, locked.At, locked.After
	body := lockedBody{ID: lid, Title: item.Title, CourseTitle: cv.Course.Name,
		CourseURL: d.Base + "/courses/" + strconv.FormatInt(cv.Course.ID, 10),
		Why:       lockReason(d, cv, st), Outline: p.outline(d, cv, lid)}
	d.Title, d.Body = d.S("learn.lock.title"), body
	p.renderPage(w, r, http.StatusForbidden, "locked", d)
}

// complete is "Complete and continue" (a form, works without JavaScript):
// marks a text, file or embed lesson complete, then goes on to the next
// lesson, or back to the lesson when it is the last.
func (p *Portal) complete(w http.ResponseWriter, r *http.Request) {
	if !p.checkCSRF(r) {
		p.showMessage(w, r, http.StatusForbidden, "learn.error.title", "learn.csrf")
		return
	}
	l, _ := LearnerFrom(r.Context())
	v, err := p.lessonFor(r, l)
	var locked learn.ErrLocked
	if errors.As(err, &locked) {
		p.lockedPage(w, r, l, locked)
		return
	}
	if err == nil {
		_, err = p.Learn.MarkComplete(r.Context(), l.DomainID, l.UserID, v.ID)
	}
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	next := p.base(r) + "/courses/" + strconv.FormatInt(v.CourseID, 10) + "/lessons/" + strconv.FormatInt(v.ID, 10)
	if v.NextLessonID != 0 {
		next = p.base(r) + "/courses/" + strconv.FormatInt(v.CourseID, 10) + "/lessons/" + strconv.FormatInt(v.NextLessonID, 10)
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}
