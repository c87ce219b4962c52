package portal

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/classroomapi"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
)

// joinEarly is how long before a sitting a student may enter: the
// classroom API's rule, which the launch URL enforces.
const joinEarly = classroomapi.StudentEarlyEntry

// nextSitting is a class's sitting in progress or next (not cancelled),
// false when none is left.
func nextSitting(c lms.LiveClass, now time.Time) (lms.Occurrence, bool) {
	for _, o := range c.Occurrences {
		if !o.Cancelled && now.Before(o.End) {
			return o, true
		}
	}
	return lms.Occurrence{}, false
}

// classCards are the live classes the learner is enrolled in that still
// have a sitting, soonest first, with Join while it can be entered.
func (p *Portal) classCards(r *http.Request, d *pageData, l Learner) ([]classCard, error) {
	now := p.now()
	classes, err := p.Store.EnrolledClasses(r.Context(), l.DomainID, l.UserID, now)
	if err != nil {
		return nil, err
	}
	type next struct {
		c lms.LiveClass
		o lms.Occurrence
	}
	var list []next
	for _, c := range classes {
		if o, ok := nextSitting(c, now); ok {
			list = append(list, next{c, o})
		}
	}
	slices.SortStableFunc(list, func(a, b next) int { return a.o.Start.Compare(b.o.Start) })
	var out []classCard
	for _, n := range list {
		cc := classCard{ID: n.c.ID, Title: n.c.Title, Start: timeHTML(n.o.Start, true), End: timeHTML(n.o.End, true),
			Live: !now.Before(n.o.Start)}
		if !now.Before(n.o.Start.Add(-joinEarly)) {
			cc.JoinURL = d.Base + "/classes/" + itoa64(n.c.ID) + "/join"
		}
		out = append(out, cc)
	}
	return out, nil
}

// join sends the learner into a live class through the classroom's own
// launch (classroomapi.LaunchURL, the code path of getclasslaunch): the learner
// must be enrolled in the class, or, with ?lesson=, have that live-class
// lesson open. The launch URL is made on the click, so it is fresh, and is
// never written into a page.
func (p *Portal) join(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	ctx := r.Context()
	id, err := pathID(r, "id")
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	lessonName, courseName := "", ""
	allowed := false
	if s := r.URL.Query().Get("lesson"); s != "" {
		lid, err := strconv.ParseInt(s, 10, 64)
		if err != nil || lid <= 0 {
			p.pageError(w, r, lms.NotFoundf("lesson %q not found", s))
			return
		}
		v, err := p.Learn.Lesson(ctx, l.DomainID, l.UserID, lid)
		if err != nil {
			var locked learn.ErrLocked
			if errors.As(err, &locked) {
				p.showMessage(w, r, http.StatusForbidden, "learn.lock.title", "learn.lock.generic")
				return
			}
			p.pageError(w, r, err)
			return
		}
		if v.Type != lms.LessonLiveClass || v.ClassID != id || !v.Enrolled {
			p.pageError(w, r, lms.NotFoundf("class %d not found", id))
			return
		}
		allowed, lessonName, courseName = true, v.Title, v.CourseTitle
	} else if allowed, err = p.Store.IsEnrolled(ctx, l.DomainID, l.UserID, lms.KindClass, id); err != nil {
		p.pageError(w, r, err)
		return
	}
	if !allowed {
		p.pageError(w, r, lms.NotFoundf("class %d not found", id))
		return
	}
	c, err := p.Store.LiveClass(ctx, l.DomainID, id)
	if err != nil {
		p.pageError(w, r, err)
		return
	}
	if lessonName == "" {
		lessonName, courseName = c.Title, c.Title
	}
	now := p.now()
	o, ok := nextSitting(c, now)
	if ok && now.Before(o.Start.Add(-joinEarly)) {
		p.showMessage(w, r, http.StatusConflict, "learn.live.join", "learn.live.notYet")
		return
	}
	u, err := classroomapi.LaunchURL(p.BaseURL(), p.domain(r), c, classroomapi.LaunchUser{ID: itoa64(l.UserID), Name: l.Name,
		Lesson: lessonName, Course: courseName}, now)
	if err != nil {
		// Cancelled or over: nothing to enter.
		p.showMessage(w, r, http.StatusConflict, "learn.live.join", "learn.live.over")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, u, http.StatusSeeOther)
}
