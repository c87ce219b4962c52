package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/domainfile"
)

// envArgs are the store flags of a running test server.
func envArgs(e *apitest.Env) []string {
	args := []string{"--data-dir", e.Main.Config.DataDir}
	if e.Main.Config.DatabaseURL != "" {
		args = append(args, "--database-url", e.Main.Config.DatabaseURL)
	}
	return args
}

// must calls the LMS API as d and requires a 200.
func must(t *testing.T, e *apitest.Env, d *apitest.Domain, method, path string, body any) any {
	t.Helper()
	r := e.Do(apitest.Request{Method: method, Path: "/api/v1" + path, Body: body, Domain: d})
	if r.Status != 200 {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	return r.JSON(t)
}

// idKey matches the names of fields that hold ids, which differ between
// the servers by design.
var idKey = regexp.MustCompile(`(?i)(^id$|_id$|id$|_ids$|^lms_user_id$)`)

// withoutIDs returns v with every id field's value replaced by "#".
func withoutIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if idKey.MatchString(k) {
				out[k] = "#"
			} else {
				out[k] = withoutIDs(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = withoutIDs(val)
		}
		return out
	}
	return v
}

// seedSchool fills e.Domain through the API (and the operator commands)
// and returns the ids of what later checks look up.
func seedSchool(t *testing.T, e *apitest.Env) (course, class int64) {
	d := &e.Domain
	id := func(body any, path string) int64 { return apitest.Int(t, body, path) }
	for _, u := range []string{"ann", "bob", "cy"} {
		must(t, e, d, "POST", "/users/create", map[string]any{"username": u, "email": u + "@example.com", "name": strings.ToUpper(u)})
	}
	g := id(must(t, e, d, "POST", "/groups/create", map[string]any{"name": "Morning", "description": "early"}), "data.id")
	must(t, e, d, "POST", "/groups/addUser", map[string]any{"groupId": g, "email": "ann@example.com"})
	must(t, e, d, "POST", "/groups/addUser", map[string]any{"groupId": g, "email": "cy@example.com"})
	course = id(must(t, e, d, "POST", "/courses/create", map[string]any{"course_name": "Go"}), "data.course_id")
	other := id(must(t, e, d, "POST", "/courses/create", map[string]any{"course_name": "Rust"}), "data.course_id")
	sec := id(must(t, e, d, "POST", "/sections/create", map[string]any{"course_id": course, "title": "Basics"}), "data.id")
	must(t, e, d, "POST", "/lessons/create", map[string]any{"section_id": sec, "title": "Hello", "type": "text", "body_md": "# Hi"})
	must(t, e, d, "POST", "/lessons/create", map[string]any{"section_id": sec, "title": "Next", "type": "text", "body_md": "more"})
	test := id(must(t, e, d, "POST", "/tests/create", map[string]any{"tests_name": "Quiz"}), "data.id")
	class = id(must(t, e, d, "POST", "/liveClasses/create", map[string]any{"title": "Live", "date": "2030-01-02", "startTime": "10:00",
		"endTime": "11:00", "timezone": "Europe/Berlin"}), "data.id")
	b := id(must(t, e, d, "POST", "/bundles/create", map[string]any{"name": "Pack"}), "data.id")
	must(t, e, d, "POST", "/bundles/addItem", map[string]any{"bundleId": b, "courseId": other})
	must(t, e, d, "POST", "/bundles/addItem", map[string]any{"bundleId": b, "testId": test})
	must(t, e, d, "POST", "/courses/enroll", map[string]any{"courseId": course, "email": "ann@example.com"})
	must(t, e, d, "POST", "/tests/enroll", map[string]any{"testId": test, "email": "cy@example.com"})
	must(t, e, d, "POST", "/liveClasses/enroll", map[string]any{"classId": class, "email": "bob@example.com"})
	scheme := id(must(t, e, d, "POST", "/shoppingCart/courses/addpricing", map[string]any{"course_id": course, "scheme_price": "20", "scheme_days": 30}), "data.id")
	must(t, e, d, "POST", "/discounts/addCourseDiscount", map[string]any{"course_id": course, "discount_type": "flat", "special_price": 15, "is_use_discount_code": 1, "discount_code": "SAVE5", "is_no_limit": 1})
	must(t, e, d, "POST", "/gamification/points", map[string]any{"user_id": id(must(t, e, d, "POST", "/users/list", map[string]any{"email": "ann@"}), "data.0.id"), "points": 25, "reason": "welcome"})
	must(t, e, d, "POST", "/gamification/badges", map[string]any{"description": "Starter", "points_required": 10})
	if code, _, errOut := lectern(t, append([]string{"domain", "set-payment", "--domain", fmt.Sprint(d.ID), "--gateway", "test"}, envArgs(e)...)...); code != 0 {
		t.Fatalf("set-payment: %s", errOut)
	}
	must(t, e, d, "POST", "/shoppingCart/checkout", map[string]any{"email": "bob@example.com", "items": []map[string]any{{"course_id": course, "price_scheme_id": scheme}},
		"card_number": "4242424242424242", "card_exp_month": 12, "card_exp_year": 2040, "card_cvc": "123"})
	rec := filepath.Join(t.TempDir(), "lecture.webm")
	os.WriteFile(rec, []byte("a recording's bytes"), 0o600)
	if code, _, errOut := lectern(t, append([]string{"recording", "import", "--class", fmt.Sprint(class), rec}, envArgs(e)...)...); code != 0 {
		t.Fatalf("recording import: %s", errOut)
	}
	return course, class
}

// TestDomainExportImportRoundTrip seeds a school through the API on a
// SQLite server, exports it, imports it into a fresh server on each
// backend (whose own rows make every id differ), and compares: the same
// answers from the list endpoints (ids aside), enrolments and members
// found through the new ids, the same row count per table when the
// imported domain is exported again, the file's bytes, and the school's
// API key working on the new server.
func TestDomainExportImportRoundTrip(t *testing.T) {
	src := apitest.Start(t, apitest.SQLite)
	course, _ := seedSchool(t, src)
	file := filepath.Join(t.TempDir(), "school.jsonl")
	code, out, errOut := lectern(t, append([]string{"domain", "export", "--domain", fmt.Sprint(src.Domain.ID), "--to", file}, envArgs(src)...)...)
	if code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	t.Log(strings.TrimSpace(out))
	f, _ := os.Open(file)
	sum, err := domainfile.Check(f)
	f.Close()
	if err != nil {
		t.Fatalf("the export does not check: %v", err)
	}
	for _, table := range []string{"users", "user_groups", "group_members", "courses", "course_sections", "lessons", "tests", "live_classes",
		"bundles", "bundle_items", "enrollments", "pricing_schemes", "discounts", "orders", "order_lines", "points_ledger", "badges", "recordings"} {
		if sum.Tables[table] == 0 {
			t.Errorf("the export has no %s rows", table)
		}
	}
	if sum.Blobs != 1 {
		t.Errorf("the export has %d files, want the recording's 1", sum.Blobs)
	}

	lists := []struct{ method, path string }{
		{"POST", "/users/list"}, {"POST", "/groups/list"}, {"POST", "/courses/list"}, {"POST", "/tests/list"},
		{"POST", "/liveClasses/list"}, {"POST", "/bundles/list"}, {"GET", "/orders/list"}, {"GET", "/gamification/badges"},
		{"GET", "/gamification/leaderboard"},
	}
	for _, b := range apitest.Backends(t) {
		t.Run("to "+b.Name, func(t *testing.T) {
			dst := apitest.Start(t, b)
			// Rows of another school first, so that no id lines up by chance.
			for i := range 3 {
				must(t, dst, &dst.Other, "POST", "/users/create", map[string]any{"username": fmt.Sprint(i), "email": fmt.Sprintf("x%d@example.com", i)})
				must(t, dst, &dst.Other, "POST", "/courses/create", map[string]any{"course_name": fmt.Sprint("other ", i)})
			}
			code, out, errOut := lectern(t, append([]string{"domain", "import", "--from", file, "--json"}, envArgs(dst)...)...)
			if code != 0 {
				t.Fatalf("import: %s", errOut)
			}
			var res struct {
				DomainID int64 `json:"domain_id"`
				Rows     int
				APIKey   string `json:"api_key"`
				Dangling int    `json:"dangling_references"`
			}
			json.Unmarshal([]byte(out), &res)
			if res.DomainID == 0 || res.Rows != sum.Rows-1 || res.APIKey != "" || res.Dangling != 0 {
				t.Fatalf("import answered %s (want every one of %d rows, the old keys, nothing dangling)", out, sum.Rows-1)
			}
			moved := apitest.Domain{ID: res.DomainID, LMSKey: src.Domain.LMSKey}
			for _, l := range lists {
				want := withoutIDs(must(t, src, &src.Domain, l.method, l.path, nil))
				got := withoutIDs(must(t, dst, &moved, l.method, l.path, nil))
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s differs after the move:\n got %v\nwant %v", l.method, l.path, got, want)
				}
			}
			// The references point at the new rows.
			newCourse := apitest.Int(t, must(t, dst, &moved, "POST", "/courses/list", map[string]any{"name": "Go"}), "data.0.id")
			if newCourse == course {
				t.Errorf("the course kept its id %d: ids were not reassigned", course)
			}
			for _, q := range []struct{ path, field string }{{"/users/listUsersenrolledincourse", "courseId"}, {"/sections/list", "course_id"}, {"/discounts/courses/", ""}} {
				var want, got any
				if q.field == "" {
					want = withoutIDs(must(t, src, &src.Domain, "GET", q.path+fmt.Sprint(course), nil))
					got = withoutIDs(must(t, dst, &moved, "GET", q.path+fmt.Sprint(newCourse), nil))
				} else {
					want = withoutIDs(must(t, src, &src.Domain, "POST", q.path, map[string]any{q.field: course}))
					got = withoutIDs(must(t, dst, &moved, "POST", q.path, map[string]any{q.field: newCourse}))
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s of the course differs after the move:\n got %v\nwant %v", q.path, got, want)
				}
			}
			// Every table, row for row: export the imported domain again.
			again := filepath.Join(t.TempDir(), "again.jsonl")
			if code, _, errOut := lectern(t, append([]string{"domain", "export", "--domain", fmt.Sprint(res.DomainID), "--to", again}, envArgs(dst)...)...); code != 0 {
				t.Fatalf("export again: %s", errOut)
			}
			f, _ := os.Open(again)
			sum2, err := domainfile.Check(f)
			f.Close()
			if err != nil || !reflect.DeepEqual(sum2.Tables, sum.Tables) || sum2.Blobs != sum.Blobs {
				t.Errorf("rows per table after the move: %v (%v), want %v", sum2.Tables, err, sum.Tables)
			}
			// Importing the same school twice makes new keys.
			code, out, errOut = lectern(t, append([]string{"domain", "import", "--from", file, "--json"}, envArgs(dst)...)...)
			if code != 0 || !strings.Contains(out, `"api_key":"lk_`) {
				t.Errorf("second import: %d %s %s", code, out, errOut)
			}
		})
	}
}

// TestDomainImportRefusesDamagedFile: a truncated export writes nothing.
func TestDomainImportRefusesDamagedFile(t *testing.T) {
	src := apitest.Start(t, apitest.SQLite)
	must(t, src, &src.Domain, "POST", "/users/create", map[string]any{"username": "a", "email": "a@example.com"})
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if code, _, errOut := lectern(t, append([]string{"domain", "export", "--domain", fmt.Sprint(src.Domain.ID), "--to", file}, envArgs(src)...)...); code != 0 {
		t.Fatal(errOut)
	}
	b, _ := os.ReadFile(file)
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(file, []byte(strings.Join(lines[:len(lines)-2], "")), 0o600)
	dst := apitest.Start(t, apitest.SQLite)
	code, _, errOut := lectern(t, append([]string{"domain", "import", "--from", file}, envArgs(dst)...)...)
	if code != 1 || !strings.Contains(errOut, "truncated") {
		t.Errorf("truncated import: %d %s", code, errOut)
	}
	code, out, _ := lectern(t, append([]string{"domain", "list", "--json"}, envArgs(dst)...)...)
	if code != 0 || strings.Count(out, "domain_id") != 2 {
		t.Errorf("a domain was created from a truncated file: %s", out)
	}
}
