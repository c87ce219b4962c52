package server_test

import (
	"net/url"
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
	class := vc("schedule", url.Values{"title": {"Algebra"}, "timezone": {"Europe/Paris"}, "date": {"2031-03-10"},
		"start_time": {"09:00"}, "end_time": {"10:00"}})
	cid := strconv.FormatInt(Int(t, class.JSON(t), "class_id"), 10)
	vc("getclass", url.Values{"class_id": {cid}})
	vc("listclass", nil)
	vc("addSchemes", url.Values{"class_id": {cid}, "price": {"10"}, "scheme_days": {"30"}, "times": {"0"}})
	vc("listSchemes", url.Values{"class_id": {cid}})
	vc("getplan", nil)
	vc("getclass", url.Values{"class_id": {"abc"}})                                    // API-level error, HTTP 200
	vc("getclass", url.Values{"apikey": {"wrong"}, "class_id": {cid}})                 // Invalid API KEY
	vc("nosuch", nil)                                                                  // 404
	vc("getclass", url.Values{"class_id": {cid}, "format": {"xml"}})                   // XML
	do(Request{Method: "GET", Path: "/v2/getclass", NoAuth: true, Header: acceptJSON}) // 405
	return reqs, resps
}

// TestAnswersMatchOpenAPI validates real answers of both APIs, successes
// and errors, against docs/openapi on every backend; then it breaks the
// error schemas of a copy of the documents and checks that the same
// answers fail, so that a mismatch cannot pass unnoticed.
func TestAnswersMatchOpenAPI(t *testing.T) {
	good, err := NewChecker(nil)
	if err != nil {
		t.Fatal(err)
	}
	lms, _ := openapi.Files.ReadFile("lms.yaml")
	vc, _ := openapi.Files.ReadFile("classroom.yaml")
	// Broken copies: the LMS error shape wants a field the server never
	// sends; the classroom error object's status must be "failed".
	brokenLMS := strings.Replace(string(lms), "      required: [message, code, request_id]\n", "      required: [message, code, request_id, detail]\n", 1)
	brokenVC := strings.Replace(string(vc), "          const: error\n", "          const: failed\n", 1)
	if brokenLMS == string(lms) || brokenVC == string(vc) {
		t.Fatal("the error schemas moved: update the breakage")
	}
	broken, err := NewChecker(map[string][]byte{"lms.yaml": []byte(brokenLMS), "classroom.yaml": []byte(brokenVC)})
	if err != nil {
		t.Fatal(err)
	}
	Run(t, func(t *testing.T, e *Env) {
		reqs, resps := sample(t, e)
		statuses := map[int]bool{}
		brokenFailures, jsonErrors := 0, 0
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
	})
	if good.Checked["lms.yaml"] == 0 || good.Checked["classroom.yaml"] == 0 {
		t.Errorf("checked %v: both documents must be used", good.Checked)
	}
}
