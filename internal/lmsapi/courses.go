package lmsapi

import (
	"net/http"
	"strconv"

	"github.com/lectern-lms/lectern/internal/jsonx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// courseResult is the seed's Course create/update result. Alias is sent
// by update only.
type courseResult struct {
	CourseID              int64   `json:"course_id"`
	CourseName            string  `json:"course_name"`
	Subtitle              string  `json:"subtitle"`
	InstructorDescription string  `json:"instructor_description"`
	Highlight             string  `json:"highlight"`
	Description           string  `json:"description"`
	Alias                 *string `json:"alias,omitempty"`
}

func toCourseResult(c lms.Course, withAlias bool) courseResult {
	r := courseResult{CourseID: c.ID, CourseName: c.Name, Subtitle: c.Subtitle,
		InstructorDescription: c.InstructorDescription, Highlight: c.Highlight, Description: c.Description}
	if withAlias {
		r.Alias = &c.Alias
	}
	return r
}

// courseText are the free-text course fields besides the name, by
// parameter name.
func courseText(c *lms.Course) map[string]*string {
	return map[string]*string{
		"subtitle":               &c.Subtitle,
		"instructor_description": &c.InstructorDescription,
		"highlight":              &c.Highlight,
		"description":            &c.Description,
		"alias":                  &c.Alias,
	}
}

// maxText bounds free-text fields; maxName bounds names and titles.
const (
	maxName = 255
	maxText = 65535
)

// checkLen records field in v when s has more than max characters.
func checkLen(v *lms.Validator, field, s string, max int) { lms.CheckLen(v, field, s, max) }

// POST /courses/create: course_name (required), subtitle,
// instructor_description, highlight, description, alias.
func (a *API) createCourse(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	var co lms.Course
	co.Name = c.P.RequiredString(&v, "course_name")
	checkLen(&v, "course_name", co.Name, maxName)
	for name, dst := range courseText(&co) {
		*dst = c.P.Get(name)
		checkLen(&v, name, *dst, maxText)
	}
	if err := v.Err(); err != nil {
		return err
	}
	co, err := a.Store.CreateCourse(r.Context(), c.Domain.ID, co)
	if err != nil {
		return err
	}
	return ok(w, "Course created", toCourseResult(co, false))
}

// POST /courses/list: page, limit.
func (a *API) listCourses(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	courses, total, err := a.Store.ListCourseNames(r.Context(), c.Domain.ID, pg.store())
	if err != nil {
		return err
	}
	defer a.Store.ReleaseCourseNames(courses)
	return writePage(w, pg, "Courses", total, len(courses), func(b []byte, i int) []byte {
		return appendCourseItem(b, courses[i])
	})
}

// appendCourseItem appends a course of courses/list: its id twice (id
// and course_id) and its name.
func appendCourseItem(b []byte, co store.CourseName) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, co.ID, 10)
	b = append(b, `,"course_id":`...)
	b = strconv.AppendInt(b, co.ID, 10)
	b = append(b, `,"course_name":`...)
	b = jsonx.AppendString(b, co.Name)
	return append(b, '}')
}

// GET /courses/get/{course_id}.
func (a *API) getCourse(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "course_id")
	if err != nil {
		return err
	}
	co, err := a.Store.Course(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return okWith(w, "Course found", func(b []byte) []byte { return appendCourseFound(b, co) })
}

// appendCourseFound appends courses/get's data, as encoding/json writes
// the map {"id", "title", "subtitle"}: keys sorted.
func appendCourseFound(b []byte, co lms.Course) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, co.ID, 10)
	b = append(b, `,"subtitle":`...)
	b = jsonx.AppendString(b, co.Subtitle)
	b = append(b, `,"title":`...)
	b = jsonx.AppendString(b, co.Name)
	return append(b, '}')
}

// PUT /courses/update: course_id and any of course_name, alias, subtitle,
// instructor_description, highlight, description. Fields not sent keep
// their value.
func (a *API) updateCourse(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "course_id")
	v.Check(!c.P.Sent("course_name") || c.P.Has("course_name"), "course_name", "must not be blank")
	checkLen(&v, "course_name", c.P.Get("course_name"), maxName)
	for name := range courseText(&lms.Course{}) {
		checkLen(&v, name, c.P.Get(name), maxText)
	}
	if err := v.Err(); err != nil {
		return err
	}
	co, err := a.Store.UpdateCourse(r.Context(), c.Domain.ID, id, func(co *lms.Course) {
		if c.P.Has("course_name") {
			co.Name = c.P.Get("course_name")
		}
		for name, dst := range courseText(co) {
			if c.P.Sent(name) {
				*dst = c.P.Get(name)
			}
		}
	})
	if err != nil {
		return err
	}
	return ok(w, "Course updated", toCourseResult(co, true))
}

// DELETE /courses/delete/{course_id}.
func (a *API) deleteCourse(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "course_id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteCourse(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	return ok(w, "Course deleted", map[string]any{"id": id})
}

// setCourseStatus serves POST /courses/publish/{course_id} and
// /courses/unpublish/{course_id}.
func (a *API) setCourseStatus(status string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		id, err := idParam(c, "course_id")
		if err != nil {
			return err
		}
		if err := a.Store.SetCourseStatus(r.Context(), c.Domain.ID, id, status); err != nil {
			return err
		}
		return ok(w, "Course status updated", map[string]any{"id": id, "status": status})
	}
}
