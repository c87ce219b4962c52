package portal_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

var csrfRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func jsonReq(t *testing.T, c *http.Client, method, u, csrf string, body any) (int, map[string]any) {
	t.Helper()
	var h = map[string]string{"Accept": "application/json"}
	var p page
	if body != nil {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, u, strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	p = fetch(t, c, method, u, nil, h)
	var m map[string]any
	json.Unmarshal([]byte(p.Body), &m)
	return p.Status, m
}

func TestAttemptPages(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		newUser(t, e, "bob@example.com")
		r := e.LMS("POST", "/tests/create", map[string]any{"tests_name": "Safety quiz", "test_instructions": "No notes allowed.",
			"tests_alloted_time_test_mode": "00:20:00"})
		testID := Int(t, r.JSON(t), "data.id")
		q := e.LMS("POST", "/questions/create", map[string]any{"type": "single_choice", "text_md": "Pick **A**",
			"data": map[string]any{"choices": []map[string]any{{"text": "A", "correct": true}, {"text": "B"}}}})
		qid := Int(t, q.JSON(t), "data.id")
		e.LMS("POST", "/tests/addQuestion", map[string]any{"testId": testID, "questionId": qid})
		e.LMS("PUT", "/tests/settings/"+itoa(testID), map[string]any{"attempts_allowed": 2, "pass_percent": 50})
		e.LMS("POST", "/tests/enroll", map[string]any{"testId": testID, "email": "ann@example.com"})

		b := browser(t)
		signIn(t, e, b, link(t, e, map[string]any{"email": "ann@example.com"}))
		base := portalURL(e, e.Domain)
		start := get(t, b, base+"/tests/"+itoa(testID))
		for _, want := range []string{"Safety quiz", "No notes allowed.", "20 min", `id="attempts-left">2<`} {
			if start.Status != 200 || !strings.Contains(start.Body, want) {
				t.Fatalf("start page lacks %q: %d %s", want, start.Status, start.Body)
			}
		}
		m := csrfRe.FindStringSubmatch(start.Body)
		if m == nil {
			t.Fatal("no csrf field on the start page")
		}
		csrf := m[1]
		if p := fetch(t, b, "POST", base+"/tests/"+itoa(testID)+"/attempts", url.Values{"mode": {"test"}}, nil); p.Status != 403 {
			t.Fatalf("start without csrf: %d", p.Status)
		}
		p := fetch(t, b, "POST", base+"/tests/"+itoa(testID)+"/attempts", url.Values{"mode": {"test"}, "csrf": {csrf}}, nil)
		if p.Status != http.StatusSeeOther || !strings.Contains(p.Header.Get("Location"), "/attempts/") {
			t.Fatalf("start: %d %v", p.Status, p.Header)
		}
		attemptURL := e.URL + p.Header.Get("Location")
		// A second start (another tab) lands on the same attempt.
		p2 := fetch(t, b, "POST", base+"/tests/"+itoa(testID)+"/attempts", url.Values{"mode": {"test"}, "csrf": {csrf}}, nil)
		if e.URL+p2.Header.Get("Location") != attemptURL {
			t.Fatalf("second start went to %s, want %s", p2.Header.Get("Location"), attemptURL)
		}
		html := get(t, b, attemptURL)
		if html.Status != 200 || !strings.Contains(html.Body, `role="timer"`) || !strings.Contains(html.Body, "<strong>A</strong>") {
			t.Fatalf("attempt page: %d %s", html.Status, html.Body)
		}
		status, v := jsonReq(t, b, "GET", attemptURL, "", nil)
		if status != 200 || v["deadline"] == nil || v["server_now_ms"] == nil {
			t.Fatalf("attempt JSON: %d %v", status, v)
		}
		choices := v["questions"].([]any)[0].(map[string]any)["choices"].([]any)
		right := ""
		for _, c := range choices {
			c := c.(map[string]any)
			if _, has := c["correct"]; has {
				t.Fatalf("choice carries its key: %v", c)
			}
			if c["text"] == "A" {
				right = c["id"].(string)
			}
		}
		if st, _ := jsonReq(t, b, "PUT", attemptURL+"/answers", "", map[string]any{"slot": 1, "response": map[string]any{"choice": right}, "seq": 1}); st != 403 {
			t.Fatalf("save without csrf: %d", st)
		}
		st, res := jsonReq(t, b, "PUT", attemptURL+"/answers", csrf, map[string]any{"slot": 1, "response": map[string]any{"choice": right}, "seq": 1})
		if st != 200 || res["saved"] != true {
			t.Fatalf("save: %d %v", st, res)
		}
		st, res = jsonReq(t, b, "PUT", attemptURL+"/answers", csrf, map[string]any{"slot": 1, "response": map[string]any{"choice": "zz"}, "seq": 2})
		if st != 400 {
			t.Fatalf("bad save: %d %v", st, res)
		}
		// Bob cannot see Ann's attempt.
		bob := browser(t)
		signIn(t, e, bob, link(t, e, map[string]any{"email": "bob@example.com"}))
		if p := get(t, bob, attemptURL); p.Status != 404 {
			t.Fatalf("another learner's attempt: %d", p.Status)
		}
		if p := get(t, bob, base+"/tests/"+itoa(testID)); p.Status != 404 {
			t.Fatalf("start page for a learner not enrolled: %d", p.Status)
		}
		if p := fetch(t, b, "POST", attemptURL+"/submit", url.Values{"csrf": {csrf}}, nil); p.Status != http.StatusSeeOther {
			t.Fatalf("submit: %d %s", p.Status, p.Body)
		}
		result := get(t, b, attemptURL)
		if !strings.Contains(result.Body, `id="score"`) || !strings.Contains(result.Body, "Passed") {
			t.Fatalf("result page: %s", result.Body)
		}
		if start := get(t, b, base+"/tests/"+itoa(testID)); !strings.Contains(start.Body, `id="attempts-left">1<`) {
			t.Fatalf("attempts left after one: %s", start.Body)
		}
		// Another domain's portal has neither the test nor the attempt.
		if p := get(t, b, portalURL(e, e.Other)+"/tests/"+itoa(testID)); p.Status == 200 {
			t.Fatalf("other domain's start page: %d", p.Status)
		}
	})
}
