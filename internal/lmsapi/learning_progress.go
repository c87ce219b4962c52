package lmsapi

import (
	"context"
	"net/http"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// optTime writes a zero time as null, else RFC 3339 UTC.
func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

type lessonProgressJSON struct {
	ID             int64   `json:"id"`
	LessonID       int64   `json:"lesson_id"`
	Title          string  `json:"title"`
	Type           string  `json:"type"`
	IsRequired     int     `json:"is_required"`
	State          string  `json:"state"`
	Reason         *string `json:"reason"`
	UnlockAt       *string `json:"unlock_at"`
	After          []int64 `json:"after_lesson_ids,omitempty"`
	CompletedAt    *string `json:"completed_at"`
	Position       int     `json:"position"`
	WatchedPercent int     `json:"watched_percent"`
}

type progressJSON struct {
	CourseID        int64                `json:"course_id"`
	UserID          int64                `json:"user_id"`
	EnrolledAt      *string              `json:"enrolled_at"`
	PercentComplete int                  `json:"percent_complete"`
	RequiredDone    int                  `json:"required_done"`
	RequiredTotal   int                  `json:"required_total"`
	CompletedAt     *string              `json:"completed_at"`
	NextLessonID    *int64               `json:"next_lesson_id"`
	Lessons         []lessonProgressJSON `json:"lessons,omitempty"`
}

// learnerProgress evaluates one enrolled learner's progress in a course;
// a learner who is not enrolled is a conflict.
func (a *API) learnerProgress(ctx context.Context, domainID, courseID, userID int64, withLessons bool) (progressJSON, error) {
	v, err := a.Learn.Outline(ctx, domainID, courseID, userID)
	if err != nil {
		return progressJSON{}, err
	}
	if !v.Enrolled {
		return progressJSON{}, lms.Conflictf("user %d is not enrolled in course %d", userID, courseID)
	}
	p := progressJSON{CourseID: courseID, UserID: userID, EnrolledAt: optTime(v.EnrolledAt), PercentComplete: v.Percent,
		RequiredDone: v.RequiredDone, RequiredTotal: v.RequiredTotal, CompletedAt: optTime(v.CompletedAt),
		NextLessonID: optInt64(v.NextLessonID)}
	if withLessons {
		p.Lessons = []lessonProgressJSON{}
		for _, l := range v.Lessons() {
			p.Lessons = append(p.Lessons, lessonProgressJSON{ID: l.ID, LessonID: l.ID, Title: l.Title, Type: l.Type,
				IsRequired: lms.Flag(l.IsRequired), State: string(l.State), Reason: optStr(l.Reason), UnlockAt: optTime(l.UnlockAt),
				After: l.After, CompletedAt: optTime(l.CompletedAt), Position: l.Position, WatchedPercent: l.WatchedPercent})
		}
	}
	return p, nil
}

// POST /progress/get: courseId (or course_id) and the learner (email or
// user_id).
func (a *API) progressGet(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	courseID := idAlias(c, &v, "courseId", "course_id")
	ref := readUserRef(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	userID, err := a.resolveUser(r.Context(), c.Domain.ID, ref)
	if err != nil {
		return err
	}
	p, err := a.learnerProgress(r.Context(), c.Domain.ID, courseID, userID, true)
	if err != nil {
		return err
	}
	return ok(w, "Progress found", p)
}

// POST /progress/list: courseId (or course_id), page, limit. One entry per
// enrolled learner, by user id, without the per-lesson list.
func (a *API) progressList(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	courseID := idAlias(c, &v, "courseId", "course_id")
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	learners, total, err := a.Store.CourseLearners(ctx, c.Domain.ID, courseID, pg.store())
	if err != nil {
		return err
	}
	type item struct {
		progressJSON
		Email string `json:"email"`
		Name  string `json:"name"`
	}
	data := make([]item, 0, len(learners))
	for _, e := range learners {
		u, err := a.Store.User(ctx, c.Domain.ID, e.UserID)
		if lms.IsNotFound(err) {
			continue // deleted meanwhile
		}
		if err != nil {
			return err
		}
		p, err := a.learnerProgress(ctx, c.Domain.ID, courseID, e.UserID, false)
		if lms.ErrorCode(err) == lms.CodeConflict {
			continue // unenrolled meanwhile
		}
		if err != nil {
			return err
		}
		data = append(data, item{progressJSON: p, Email: u.Email, Name: u.Name})
	}
	return writeJSON(w, pg.body("Progress", data, total))
}

// POST /progress/markComplete: lessonId (or lesson_id) and the learner
// (email or user_id). Completes the lesson whatever its type or lock (an
// administrator's override); the learner must be enrolled.
func (a *API) progressMarkComplete(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	lessonID := idAlias(c, &v, "lessonId", "lesson_id")
	ref := readUserRef(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	userID, err := a.resolveUser(ctx, c.Domain.ID, ref)
	if err != nil {
		return err
	}
	pr, err := a.Learn.AdminComplete(ctx, c.Domain.ID, userID, lessonID)
	if err != nil {
		return err
	}
	return ok(w, "Lesson marked complete", map[string]any{"lesson_id": lessonID, "user_id": userID, "state": pr.State,
		"completed_at": optTime(pr.CompletedAt), "percent_complete": pr.CoursePercent,
		"course_completed_at": optTime(pr.CourseCompletedAt), "next_lesson_id": optInt64(pr.NextLessonID)})
}

// POST /progress/reset: courseId (or course_id) and the learner (email or
// user_id). Deletes the learner's progress and completion in the course.
func (a *API) progressReset(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	courseID := idAlias(c, &v, "courseId", "course_id")
	ref := readUserRef(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	userID, err := a.resolveUser(ctx, c.Domain.ID, ref)
	if err != nil {
		return err
	}
	if err := a.Learn.Reset(ctx, c.Domain.ID, courseID, userID); err != nil {
		return err
	}
	return ok(w, "Progress reset", map[string]any{"course_id": courseID, "user_id": userID})
}
