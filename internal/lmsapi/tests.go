package lmsapi

import (
	"net/http"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/schedule"
)

// testText are the test fields by parameter name. The two allotted times
// are HH:MM:SS.
func testText(t *lms.Test) map[string]*string {
	return map[string]*string{
		"tests_name":                   &t.Name,
		"tests_description":            &t.Description,
		"test_instructions":            &t.Instructions,
		"tests_alloted_time_demo_mode": &t.TimeDemo,
		"tests_alloted_time_test_mode": &t.TimeTest,
	}
}

var testTimes = []string{"tests_alloted_time_demo_mode", "tests_alloted_time_test_mode"}

// readTest validates the test fields sent. On create tests_name is
// required; on update only the fields sent are checked.
func readTest(c *call, v *lms.Validator, create bool) {
	if create {
		c.P.RequiredString(v, "tests_name")
	} else {
		v.Check(!c.P.Sent("tests_name") || c.P.Has("tests_name"), "tests_name", "must not be blank")
	}
	checkLen(v, "tests_name", c.P.Get("tests_name"), maxName)
	checkLen(v, "tests_description", c.P.Get("tests_description"), maxText)
	checkLen(v, "test_instructions", c.P.Get("test_instructions"), maxText)
	for _, name := range testTimes {
		if c.P.Has(name) {
			_, err := schedule.ParseHMS(c.P.Get(name))
			v.Check(err == nil, name, "must be a duration HH:MM:SS such as 01:30:00")
		}
	}
}

// applyTest copies the sent fields into t; an allotted time left empty
// is 00:00:00 (untimed).
func applyTest(c *call, t *lms.Test) {
	fields := testText(t)
	for name, dst := range fields {
		if c.P.Sent(name) {
			*dst = c.P.Get(name)
		}
	}
	for _, name := range testTimes {
		if *fields[name] == "" {
			*fields[name] = "00:00:00"
		}
	}
}

func testResult(t lms.Test) map[string]any {
	return map[string]any{"id": t.ID, "tests_name": t.Name, "tests_description": t.Description,
		"test_instructions": t.Instructions}
}

// POST /tests/create: tests_name (required), tests_description,
// test_instructions, tests_alloted_time_demo_mode and
// tests_alloted_time_test_mode (HH:MM:SS, default 00:00:00: untimed).
func (a *API) createTest(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	readTest(c, &v, true)
	if err := v.Err(); err != nil {
		return err
	}
	var t lms.Test
	applyTest(c, &t)
	t, err := a.Store.CreateTest(r.Context(), c.Domain.ID, t)
	if err != nil {
		return err
	}
	return ok(w, "Test created", testResult(t))
}

// PUT /tests/{test_id}: any of the five fields; those not sent keep their
// value.
func (a *API) updateTest(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "test_id")
	readTest(c, &v, false)
	if err := v.Err(); err != nil {
		return err
	}
	t, err := a.Store.UpdateTest(r.Context(), c.Domain.ID, id, func(t *lms.Test) { applyTest(c, t) })
	if err != nil {
		return err
	}
	return ok(w, "Test updated", testResult(t))
}

// GET /tests/{test_id}. status is a number: 1 published, 0 not.
func (a *API) getTest(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "test_id")
	if err != nil {
		return err
	}
	t, err := a.Store.Test(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	status := 0
	if t.Status == lms.TestPublished {
		status = 1
	}
	return ok(w, "Test found", map[string]any{"id": t.ID, "tests_name": t.Name, "tests_description": t.Description,
		"status": status})
}

// POST /tests/list: tests in the catalog, page, limit.
func (a *API) listTests(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	tests, total, err := a.Store.ListTests(r.Context(), c.Domain.ID, pg.store())
	if err != nil {
		return err
	}
	type item struct {
		ID       int64  `json:"id"`
		TestID   int64  `json:"testId"`
		TestName string `json:"test_name"`
	}
	data := make([]item, len(tests))
	for i, t := range tests {
		data[i] = item{t.ID, t.ID, t.Name}
	}
	return writeJSON(w, pg.body("Tests", data, total))
}

// DELETE /tests/{test_id}: gone for good, with its enrollments.
func (a *API) deleteTest(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "test_id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteTest(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	return ok(w, "Test deleted", map[string]any{"id": id})
}

// setCatalog serves DELETE /tests/removeFromCatalog/{test_id} (hidden
// from tests/list, kept otherwise) and POST /tests/addToCatalog/{test_id}.
func (a *API) setCatalog(in bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		id, err := idParam(c, "test_id")
		if err != nil {
			return err
		}
		if _, err := a.Store.UpdateTest(r.Context(), c.Domain.ID, id, func(t *lms.Test) { t.InCatalog = in }); err != nil {
			return err
		}
		msg := "Test removed from catalog"
		if in {
			msg = "Test added to catalog"
		}
		return ok(w, msg, map[string]any{"id": id})
	}
}

// setTestStatus serves POST /tests/publish/{test_id} and
// /tests/unpublish/{test_id}.
func (a *API) setTestStatus(status string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		id, err := idParam(c, "test_id")
		if err != nil {
			return err
		}
		if err := a.Store.SetTestStatus(r.Context(), c.Domain.ID, id, status); err != nil {
			return err
		}
		return ok(w, "Test status updated", map[string]any{"id": id, "status": status})
	}
}
