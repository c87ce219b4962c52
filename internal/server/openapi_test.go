package server_test

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/docs/openapi"
	. "github.com/lectern-lms/lectern/internal/apitest"
)

var acceptJSON = map[string]string{"Accept": "application/json"}

// sample sends a sample of the scenario tests' requests, successes and
// errors of both APIs, and returns each request with its answer.
func sample(t *testing.T, e *Env) (reqs []Request, resps []*Response) {
	do := func(r Request) *Response {
		resp := e.Do(r)
		reqs, resps = append(reqs, r), append(resps, resp)
		return resp
	}
	vc := func(op string, params url.Values) *Response {
		if params == nil {
			params = url.Values{}
		}
		if _, ok := params["apikey"]; !ok {
			params.Set("apikey", e.Domain.ClassroomKey)
		}
		// Accept names JSON, so compat answers are labelled
		// application/json, which the validator reads.
		return do(Request{Method: "POST", Path: "/v2/" + op, Form: params, NoAuth: true, Header: acceptJSON})
	}
	created := do(Request{Method: "POST", Path: "/api/v1/users/create", Body: map[string]any{"username": "ann", "email": "ann@example.com"}})
	id := strconv.FormatInt(Int(t, created.JSON(t), "id"), 10)
	course := do(Request{Method: "POST", Path: "/api/v1/courses/create", Body: map[string]any{"course_name": "Algebra"}})
	if course.Status != 200 {
		t.Fatalf("courses/create: %d %s", course.Status, course.Body)
	}
	for _, r := range []Request{
		{Method: "GET", Path: "/api/v1/users/getuser?userId=" + id},
		{Method: "POST", Path: "/api/v1/users/list", Body: map[string]any{"limit": 10}},
		{Method: "POST", Path: "/api/v1/courses/list", Form: url.Values{"page": {"1"}}},
		{Method: "POST", Path: "/api/v1/groups/create", Body: map[string]any{"group_name": "Group A"}},
		{Method: "POST", Path: "/api/v1/users/create", Body: map[string]any{}},                                            // 400 with fields
		{Method: "POST", Path: "/api/v1/users/create", Body: map[string]any{"username": "x", "email": "ann@example.com"}}, // 409
		{Method: "POST", Path: "/api/v1/users/create", NoAuth: true},                                                      // 401
		{Method: "GET", Path: "/api/v1/users/getuser?userId=999999"},                                                      // 404
		{Method: "GET", Path: "/api/v1/users/create"},                                                                     // 405
		{Method: "POST", Path: "/api/v1/users/list", Header: map[string]string{"Accept": "text/xml"}},                     // 406
		{Method: "POST", Path: "/api/v1/users/list", Body: "<x/>", Header: map[string]string{"Content-Type": "text/xml"}}, // 415
	} {
		do(r)
	}
	lmsFamilies(t, e, do, id, Int(t, course.JSON(t), "data.course_id"))
	class := vc("schedule", url.Values{"title": {"Algebra"}, "timezone": {"Europe/Paris"}, "date": {"2031-03-10"},
		"start_time": {"09:00"}, "end_time": {"10:00"}})
	cid := strconv.FormatInt(Int(t, class.JSON(t), "class_id"), 10)
	vc("getclass", url.Values{"class_id": {cid}})
	vc("listclass", nil)
	vc("addSchemes", url.Values{"class_id": {cid}, "price": {"10"}, "scheme_days": {"30"}, "times": {"0"}})
	vc("listSchemes", url.Values{"class_id": {cid}})
	vc("getplan", nil)
	vc("getclassrecording", url.Values{"class_id": {cid}}) // {"Recording": "No video recording available"}
	vc("getclassreport", url.Values{"classId": {cid}})
	vc("listpurchases", url.Values{"class_id": {cid}})
	do(Request{Method: "POST", Path: "/v2", Form: url.Values{"task": {"getclass"}, "apikey": {e.Domain.ClassroomKey}, "class_id": {cid}},
		NoAuth: true, Header: acceptJSON}) // the legacy entry point
	vc("getclass", url.Values{"class_id": {"abc"}})                                    // API-level error, HTTP 200
	vc("getclass", url.Values{"apikey": {"wrong"}, "class_id": {cid}})                 // Invalid API KEY
	vc("nosuch", nil)                                                                  // 404
	vc("getclass", url.Values{"class_id": {cid}, "format": {"xml"}})                   // XML
	do(Request{Method: "GET", Path: "/v2/getclass", NoAuth: true, Header: acceptJSON}) // 405
	return reqs, resps
}

// lmsFamilies sends one successful call or more to every family (tag) of
// the LMS API, so that each family's answer schemas are checked; userID and
// courseID name a user and a course made before.
func lmsFamilies(t *testing.T, e *Env, do func(Request) *Response, userID string, courseID int64) {
	t.Helper()
	// post sends a JSON body and returns data.id of a 200 answer.
	post := func(method, path string, body map[string]any) int64 {
		t.Helper()
		r := do(Request{Method: method, Path: "/api/v1" + path, Body: body})
		if r.Status != 200 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		if id, ok := Lookup(r.JSON(t), "data.id"); ok {
			n, _ := strconv.ParseInt(fmt.Sprint(id), 10, 64)
			return n
		}
		return 0
	}
	get := func(path string) { post("GET", path, nil) }
	uid, _ := strconv.ParseInt(userID, 10, 64)
	post("POST", "/groups/list", nil)
	post("POST", "/courses/enroll", map[string]any{"courseId": courseID, "email": "ann@example.com"})
	get(fmt.Sprintf("/courses/get/%d", courseID))
	post("POST", "/liveClasses/create", map[string]any{"title": "Live", "date": "2031-03-10", "startTime": "09:00",
		"endTime": "10:00", "timezone": "Europe/Paris"})
	post("POST", "/liveClasses/list", nil)
	bundle := post("POST", "/bundles/create", map[string]any{"bundle_name": "Starter"})
	post("POST", "/bundles/addItem", map[string]any{"bundleId": bundle, "courseId": courseID})
	test := post("POST", "/tests/create", map[string]any{"tests_name": "Quiz"})
	get(fmt.Sprintf("/tests/%d", test))
	question := post("POST", "/questions/create", map[string]any{"type": "essay", "text_md": "Why?"})
	post("POST", "/tests/addQuestion", map[string]any{"testId": test, "questionId": question})
	get(fmt.Sprintf("/tests/layout/%d", test))
	get(fmt.Sprintf("/tests/settings/%d", test))
	post("POST", "/tests/attempts/list", nil)
	product := post("POST", "/products/createProduct", map[string]any{"name": "Book", "price": "12.50", "product_type": 1, "sku": "B-1"})
	post("PUT", fmt.Sprintf("/products/%d/price", product), map[string]any{"price": "14"})
	get("/products/list")
	post("POST", "/gamification/badges", map[string]any{"description": "Starter", "points_required": 5})
	post("POST", "/gamification/points", map[string]any{"user_id": uid, "points": 10, "reason": "Welcome"})
	get("/gamification/leaderboard")
	scheme := post("POST", "/shoppingCart/courses/addpricing", map[string]any{"course_id": courseID, "scheme_price": "10", "scheme_days": 30})
	get(fmt.Sprintf("/shoppingCart/courses/pricing/%d", courseID))
	post("POST", "/discounts/addCourseDiscount", map[string]any{"course_id": courseID, "discount_type": "percentage",
		"special_price": "10", "is_no_limit": 1, "is_never_expire": 1})
	get(fmt.Sprintf("/discounts/courses/%d", courseID))
	post("POST", "/shoppingCart/quote", map[string]any{"course_id": courseID, "price_scheme_id": scheme})
	get("/orders/list")
	section := post("POST", "/sections/create", map[string]any{"course_id": courseID, "title": "Basics"})
	lesson := post("POST", "/lessons/create", map[string]any{"section_id": section, "type": "text", "title": "Hello", "body_md": "Hi"})
	post("POST", "/lessons/list", map[string]any{"course_id": courseID})
	get(fmt.Sprintf("/courses/outline/%d", courseID))
	post("POST", "/unlock/override", map[string]any{"course_id": courseID, "user_id": uid, "lesson_id": lesson})
	post("POST", "/progress/get", map[string]any{"courseId": courseID, "user_id": uid})
	post("POST", "/progress/list", map[string]any{"courseId": courseID})
	if r := do(Request{Method: "POST", Path: "/api/v1/files/upload", Multipart: url.Values{"file": {"notes"}}}); r.Status != 200 {
		t.Fatalf("files/upload: %d %s", r.Status, r.Body)
	}
	post("POST", "/certificates/templates/create", map[string]any{"name": "Default"})
	post("POST", "/certificates/list", nil)
	post("POST", "/users/loginLink", map[string]any{"user_id": uid})
	hook := post("POST", "/webhooks/create", map[string]any{"url": "https://hooks.example.com/lectern", "events": []string{"user.created"}})
	post("POST", "/webhooks/list", nil)
	get(fmt.Sprintf("/webhooks/get/%d", hook))
	post("PUT", fmt.Sprintf("/webhooks/update/%d", hook), map[string]any{"description": "CRM"})
	post("POST", fmt.Sprintf("/webhooks/rotate/%d", hook), nil)
	post("POST", fmt.Sprintf("/webhooks/deliveries/%d", hook), nil)
	post("POST", fmt.Sprintf("/webhooks/enable/%d", hook), nil)
	post("POST", fmt.Sprintf("/webhooks/replay/%d", hook), nil)
	post("DELETE", fmt.Sprintf("/webhooks/delete/%d", hook), nil)
}

// breakSchema returns doc with the first old after the line naming the
// component schema name replaced by new; it fails t when there is none.
func breakSchema(t *testing.T, doc, name, old, new string) string {
	t.Helper()
	at := strings.Index(doc, "\n    "+name+":\n")
	j := strings.Index(doc[max(at, 0):], old)
	if at < 0 || j < 0 {
		t.Fatalf("schema %s has no %q: update the breakage", name, old)
	}
	j += at
	return doc[:j] + new + doc[j+len(old):]
}

// TestAnswersMatchOpenAPI validates real answers of both APIs, successes
// and errors, against docs/openapi on every backend, and checks that every
// family (tag) of operations answered at least once with a success. Then
// it breaks copies of the documents and checks that exactly the answers
// the breakage concerns fail, so that a mismatch cannot pass unnoticed:
// the error schemas of both APIs, and LMS data schemas (a wrong type, a
// field the schema no longer names, a wrong type two references deep).
func TestAnswersMatchOpenAPI(t *testing.T) {
	good, err := NewChecker(nil)
	if err != nil {
		t.Fatal(err)
	}
	lmsDoc, _ := openapi.Files.ReadFile("lms.yaml")
	vcDoc, _ := openapi.Files.ReadFile("classroom.yaml")
	lms, vc := string(lmsDoc), string(vcDoc)
	// Broken copies: the LMS error shape wants a field the server never
	// sends; the classroom error object's status must be "failed".
	brokenLMS := strings.Replace(lms, "      required: [message, code, request_id]\n", "      required: [message, code, request_id, detail]\n", 1)
	brokenVC := strings.Replace(vc, "          const: error\n", "          const: failed\n", 1)
	if brokenLMS == lms || brokenVC == vc {
		t.Fatal("the error schemas moved: update the breakage")
	}
	broken, err := NewChecker(map[string][]byte{"lms.yaml": []byte(brokenLMS), "classroom.yaml": []byte(brokenVC)})
	if err != nil {
		t.Fatal(err)
	}
	// Broken data schemas, each with the successes it must fail (method
	// and path prefix); every other answer must still pass.
	dataBreaks := []struct {
		name string
		file string // the document broken
		doc  string
		fail []string
	}{
		{"User.email is an integer", "lms.yaml", breakSchema(t, lms, "User", "        email: {type: string}", "        email: {type: integer}"),
			[]string{"GET /api/v1/users/getuser", "POST /api/v1/users/list"}},
		{"CourseEnrollment no longer names already_enrolled", "lms.yaml",
			breakSchema(t, breakSchema(t, lms, "CourseEnrollment", "        already_enrolled:\n", "        already_enrolled_x:\n"),
				"CourseEnrollment", "required: [user_id, courseId, already_enrolled]", "required: [user_id, courseId]"),
			[]string{"POST /api/v1/courses/enroll"}},
		{"Lesson.unlock.after_class_sitting is a string", "lms.yaml",
			breakSchema(t, lms, "Unlock", "        after_class_sitting: {type: integer, minimum: 0}", "        after_class_sitting: {type: string}"),
			[]string{"POST /api/v1/lessons/create", "POST /api/v1/lessons/list", "GET /api/v1/courses/outline/"}},
		{"the classroom ClassRecord.title is an integer", "classroom.yaml",
			breakSchema(t, vc, "ClassRecord", "        title: {type: string}", "        title: {type: integer}"),
			[]string{"POST /v2/getclass", "POST /v2/listclass"}},
		{"the classroom price_id of addSchemes is a boolean", "classroom.yaml",
			breakSchema(t, vc, "PriceAction", "        Price id: {$ref: '#/components/schemas/WriteID'}", "        Price id: {type: boolean}"),
			[]string{"POST /v2/addSchemes"}},
	}
	dataCheckers := make([]*Checker, len(dataBreaks))
	for i, b := range dataBreaks {
		if dataCheckers[i], err = NewChecker(map[string][]byte{b.file: []byte(b.doc)}); err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
	}
	Run(t, func(t *testing.T, e *Env) {
		reqs, resps := sample(t, e)
		statuses := map[int]bool{}
		brokenFailures, jsonErrors := 0, 0
		dataFailures := make([]int, len(dataBreaks))
		for i, r := range reqs {
			statuses[resps[i].Status] = true
			if !strings.Contains(resps[i].Header.Get("Content-Type"), "xml") &&
				(resps[i].Status >= 400 || strings.Contains(string(resps[i].Body), `"status":"error"`)) {
				jsonErrors++
			}
			if msg := good.Check(r.Method, r.Path, resps[i]); msg != "" {
				t.Error(msg)
			}
			if broken.Check(r.Method, r.Path, resps[i]) != "" {
				brokenFailures++
			}
			for j, b := range dataBreaks {
				// A JSON success (not an error, which the classroom API
				// answers with 200 too) of an operation the break concerns:
				// a pattern ending in / is a prefix, others the whole path.
				op, _, _ := strings.Cut(r.Method+" "+r.Path, "?")
				want := resps[i].Status == 200 && !strings.Contains(resps[i].Header.Get("Content-Type"), "xml") &&
					!strings.Contains(string(resps[i].Body), `"status":"error"`) &&
					slices.ContainsFunc(b.fail, func(p string) bool { return op == p || strings.HasSuffix(p, "/") && strings.HasPrefix(op, p) })
				got := dataCheckers[j].Check(r.Method, r.Path, resps[i]) != ""
				if got != want {
					t.Errorf("%s: %s %s -> %d failed=%v, want %v", b.name, r.Method, r.Path, resps[i].Status, got, want)
				}
				if got {
					dataFailures[j]++
				}
			}
		}
		for _, s := range []int{200, 400, 401, 404, 405, 406, 409, 415} {
			if !statuses[s] {
				t.Errorf("the sample has no %d answer", s)
			}
		}
		// Every JSON error of the sample, and nothing else, fails against
		// the broken documents.
		if brokenFailures != jsonErrors || jsonErrors < 10 {
			t.Errorf("%d answers failed against the broken documents, want the %d JSON errors", brokenFailures, jsonErrors)
		}
		for j, b := range dataBreaks {
			if dataFailures[j] == 0 {
				t.Errorf("%s: no answer failed", b.name)
			}
		}
	})
	if good.Checked["lms.yaml"] == 0 || good.Checked["classroom.yaml"] == 0 {
		t.Errorf("checked %v: both documents must be used", good.Checked)
	}
	// Every family of both documents answered a success that matched.
	for _, doc := range []string{"lms.yaml", "classroom.yaml"} {
		tags := map[string][]string{}
		for op, tag := range good.Ops[doc] {
			if good.Covered[doc][op] {
				tags[tag] = append(tags[tag], op)
			} else if _, ok := tags[tag]; !ok {
				tags[tag] = nil
			}
		}
		for _, tag := range slices.Sorted(maps.Keys(tags)) {
			ops := tags[tag]
			slices.Sort(ops)
			if len(ops) == 0 {
				t.Errorf("%s: no success of the %s operations was checked", doc, tag)
			}
			t.Logf("%s %s: %d of the family's operations checked: %s", doc, tag, len(ops), strings.Join(ops, ", "))
		}
	}
}
