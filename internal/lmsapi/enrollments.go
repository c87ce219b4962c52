package lmsapi

import (
	"net/http"
	"strconv"

	"github.com/lectern-lms/lectern/internal/lms"
)

// enrollable describes one kind of item users enroll in: its kind, the
// parameter naming it in enroll/unenroll, and the word for messages.
type enrollable struct {
	kind, param, word string
}

var (
	enrollCourse = enrollable{lms.KindCourse, "courseId", "course"}
	enrollClass  = enrollable{lms.KindClass, "classId", "live class"}
	enrollBundle = enrollable{lms.KindBundle, "bundleId", "bundle"}
	enrollTest   = enrollable{lms.KindTest, "testId", "test"}
)

// read reads the item id and the email of an enroll or unenroll call.
func (e enrollable) read(c *call) (int64, string, error) {
	var v lms.Validator
	id := c.P.ID(&v, e.param)
	email := c.P.RequiredString(&v, "email")
	return id, email, v.Err()
}

// enroll serves POST /<items>/enroll: the item id parameter and email.
// Enrolling again is not an error: nothing is duplicated and the message
// and data.already_enrolled say so.
func (a *API) enroll(e enrollable) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		id, email, err := e.read(c)
		if err != nil {
			return err
		}
		res, err := a.Store.Enroll(r.Context(), c.Domain.ID, e.kind, id, email)
		if err != nil {
			return err
		}
		what := e.word + " " + strconv.FormatInt(id, 10)
		msg := res.User.Email + " enrolled in " + what
		if res.Already {
			msg = res.User.Email + " is already enrolled in " + what + "; nothing changed"
		}
		return ok(w, msg, map[string]any{"user_id": res.User.ID, e.param: id, "already_enrolled": res.Already})
	}
}

// unenroll serves POST /<items>/unenroll: the item id parameter and email.
func (a *API) unenroll(e enrollable) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		id, email, err := e.read(c)
		if err != nil {
			return err
		}
		u, err := a.Store.Unenroll(r.Context(), c.Domain.ID, e.kind, id, email)
		if err != nil {
			return err
		}
		return ok(w, u.Email+" unenrolled from "+e.word+" "+strconv.FormatInt(id, 10), nil)
	}
}

// enrolledCount serves POST /users/listUsersenrolledin{course,test,class}:
// optional user_id, optional item id (course_id, test_id or class_id),
// optional lms_domain_id (must be the caller's domain). See
// store.EnrollmentCount for what is counted.
func (a *API) enrolledCount(kind, itemParam string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		var v lms.Validator
		userID := c.P.Range(&v, "user_id", 0, 1, 1<<62)
		itemID := c.P.Range(&v, itemParam, 0, 1, 1<<62)
		domainID := c.P.Range(&v, "lms_domain_id", 0, 1, 1<<62)
		if err := v.Err(); err != nil {
			return err
		}
		if domainID != 0 && domainID != c.Domain.ID {
			return &lms.Error{Code: lms.CodeForbidden,
				Message: "lms_domain_id " + strconv.FormatInt(domainID, 10) + " is not the domain of your API key (x-domain-id " +
					strconv.FormatInt(c.Domain.ID, 10) + ")"}
		}
		n, err := a.Store.EnrollmentCount(r.Context(), c.Domain.ID, kind, userID, itemID)
		if err != nil {
			return err
		}
		return ok(w, "Enrollments counted", []map[string]int64{{"count": n}})
	}
}
