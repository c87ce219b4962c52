package lmsapi

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// writePage writes the bytes writeJSON writes of the same page: the users
// and courses lists' answers did not change when they stopped going
// through encoding/json.
func TestWritePageMatchesWriteJSON(t *testing.T) {
	texts := []string{"", "Ann", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnl\n\x00\x1f", "\u2028\u2029",
		"é 中文 🎓", "bad \xff utf8"}
	var users []lms.User
	for i, s := range texts {
		users = append(users, lms.User{ID: int64(i + 1), Name: s, Username: s + "u", Email: s + "@example.com"})
	}
	for _, c := range []struct {
		p     page
		users []lms.User
		total int64
	}{
		{page{Page: 1, Limit: 50}, users, 8},
		{page{Page: 3, Limit: 2}, users[:1], 1 << 40},
		{page{Page: 9, Limit: 500}, []lms.User{}, 0},
	} {
		data := make([]userJSON, len(c.users))
		for i, u := range c.users {
			data[i] = toUserJSON(u, true)
		}
		want := httptest.NewRecorder()
		writeJSON(want, c.p.body("Users", data, c.total))
		got := httptest.NewRecorder()
		writePage(got, c.p, "Users", c.total, len(c.users), func(b []byte, i int) []byte { return appendUserJSON(b, c.users[i]) })
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("page %+v:\n got %s\nwant %s", c.p, got.Body, want.Body)
		}
		if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("page %+v: status %d %q, want %d %q", c.p, got.Code, got.Header().Get("Content-Type"),
				want.Code, want.Header().Get("Content-Type"))
		}
	}

	// courses/list's items, as its handler made them before.
	type item struct {
		ID         int64  `json:"id"`
		CourseID   int64  `json:"course_id"`
		CourseName string `json:"course_name"`
	}
	var courses []store.CourseName
	var items []item
	for i, s := range texts {
		courses = append(courses, store.CourseName{ID: int64(i + 7), Name: s})
		items = append(items, item{int64(i + 7), int64(i + 7), s})
	}
	p := page{Page: 2, Limit: 8}
	want := httptest.NewRecorder()
	writeJSON(want, p.body("Courses", items, 99))
	got := httptest.NewRecorder()
	writePage(got, p, "Courses", 99, len(courses), func(b []byte, i int) []byte { return appendCourseItem(b, courses[i]) })
	if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
		t.Errorf("courses:\n got %s\nwant %s", got.Body, want.Body)
	}
}

// TestOkWithMatchesOk: users/getuser's and courses/get's answers, written
// by okWith, are the bytes ok wrote of the same data.
func TestOkWithMatchesOk(t *testing.T) {
	texts := []string{"", "Ann", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnl\n\x00\x1f", "\u2028\u2029",
		"é 中文 🎓", "bad \xff utf8"}
	same := func(what string, got, want *httptest.ResponseRecorder) {
		t.Helper()
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("%s:\n got %s\nwant %s", what, got.Body, want.Body)
		}
		if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") ||
			got.Header().Get("Content-Length") != want.Header().Get("Content-Length") {
			t.Errorf("%s: headers %v, want %v", what, got.Header(), want.Header())
		}
	}
	for i, s := range texts {
		u := lms.User{ID: int64(i) << 33, Name: s, Username: s + "u", Email: s + "@example.com"}
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		ok(want, "User found", []userJSON{toUserJSON(u, true)})
		okWith(got, "User found", func(b []byte) []byte { return append(appendUserJSON(append(b, '['), u), ']') })
		same("user "+s, got, want)

		co := lms.Course{ID: int64(i + 1), Name: s, Subtitle: "sub " + s}
		want, got = httptest.NewRecorder(), httptest.NewRecorder()
		ok(want, "Course found", map[string]any{"id": co.ID, "title": co.Name, "subtitle": co.Subtitle})
		okWith(got, "Course found", func(b []byte) []byte { return appendCourseFound(b, co) })
		same("course "+s, got, want)
	}
}

// TestWriteCreatedMatchesWriteJSON: users/create's answer, written by
// writeCreated, is the bytes writeJSON wrote of the same map.
func TestWriteCreatedMatchesWriteJSON(t *testing.T) {
	for _, c := range []struct {
		message string
		id      int64
	}{
		{"User created", 1},
		{"User created", 1 << 53},
		{`<b>"quoted"</b> & é`, 0},
	} {
		want := httptest.NewRecorder()
		writeJSON(want, map[string]any{"message": c.message, "id": c.id})
		got := httptest.NewRecorder()
		writeCreated(got, c.message, c.id)
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("got %q, want %q", got.Body, want.Body)
		}
		if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("status %d %q, want %d %q", got.Code, got.Header().Get("Content-Type"),
				want.Code, want.Header().Get("Content-Type"))
		}
	}
}
