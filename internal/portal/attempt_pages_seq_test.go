package portal_test

import (
	"net/http"
	"net/url"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

// TestSequentialNavigation: with sequential navigation the server, not just
// the page, keeps the learner on their page: the JSON has only that page's
// questions, saves elsewhere are refused, and pages move forward one at a
// time.
func TestSequentialNavigation(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		newUser(t, e, "bob@example.com")
		r := e.LMS("POST", "/tests/create", map[string]any{"tests_name": "Steps"})
		testID := Int(t, r.JSON(t), "data.id")
		for i := 0; i < 3; i++ {
			q := e.LMS("POST", "/questions/create", map[string]any{"type": "short_answer", "text_md": "Say yes",
				"data": map[string]any{"answers": []string{"yes"}}})
			e.LMS("POST", "/tests/addQuestion", map[string]any{"testId": testID, "questionId": Int(t, q.JSON(t), "data.id")})
		}
		e.LMS("PUT", "/tests/settings/"+itoa(testID), map[string]any{"navigation": "sequential", "per_page": 1})
		e.LMS("POST", "/tests/enroll", map[string]any{"testId": testID, "email": "ann@example.com"})
		e.LMS("POST", "/tests/enroll", map[string]any{"testId": testID, "email": "bob@example.com"})

		b := browser(t)
		signIn(t, e, b, link(t, e, map[string]any{"email": "ann@example.com"}))
		base := portalURL(e, e.Domain)
		csrf := csrfRe.FindStringSubmatch(get(t, b, base+"/tests/"+itoa(testID)).Body)[1]
		p := fetch(t, b, "POST", base+"/tests/"+itoa(testID)+"/attempts", url.Values{"mode": {"test"}, "csrf": {csrf}}, nil)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("start: %d", p.Status)
		}
		au := e.URL + p.Header.Get("Location")

		slots := func(want ...float64) {
			t.Helper()
			st, v := jsonReq(t, b, "GET", au, "", nil)
			if st != 200 {
				t.Fatalf("attempt JSON: %d %v", st, v)
			}
			var got []float64
			for _, q := range v["questions"].([]any) {
				got = append(got, q.(map[string]any)["slot"].(float64))
			}
			if len(got) != len(want) {
				t.Fatalf("questions in the JSON: slots %v, want %v", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("questions in the JSON: slots %v, want %v", got, want)
				}
			}
			if v["pages"] != float64(3) {
				t.Fatalf("pages = %v, want 3", v["pages"])
			}
		}
		save := func(slot int, seq int) int {
			st, _ := jsonReq(t, b, "PUT", au+"/answers", csrf, map[string]any{"slot": slot, "response": map[string]any{"text": "yes"}, "seq": seq})
			return st
		}
		move := func(page any) (int, map[string]any) {
			return jsonReq(t, b, "PUT", au+"/page", csrf, map[string]any{"page": page})
		}

		slots(1)
		steps := []struct {
			name string
			do   func() int
			want int
		}{
			{"save on the current page", func() int { return save(1, 1) }, 200},
			{"save on a page ahead", func() int { return save(2, 1) }, 409},
			{"skip a page", func() int { st, _ := move(2); return st }, 409},
			{"page out of range", func() int { st, _ := move(3); return st }, 400},
			{"page not a number", func() int { st, _ := move("x"); return st }, 400},
			{"move without csrf", func() int {
				st, _ := jsonReq(t, b, "PUT", au+"/page", "", map[string]any{"page": 1})
				return st
			}, 403},
			{"move to the next page", func() int { st, _ := move(1); return st }, 200},
			{"the same move again (another tab)", func() int { st, _ := move(1); return st }, 200},
			{"save on the page left", func() int { return save(1, 2) }, 409},
			{"save on the new page", func() int { return save(2, 1) }, 200},
			{"move back", func() int { st, _ := move(0); return st }, 409},
		}
		for _, s := range steps {
			if got := s.do(); got != s.want {
				t.Fatalf("%s: %d, want %d", s.name, got, s.want)
			}
		}
		slots(2)
		if st, m := move(0); st != 409 || m["fields"] == nil {
			t.Fatalf("move back: %d %v", st, m)
		}
		// Another learner cannot move Ann's attempt.
		bob := browser(t)
		signIn(t, e, bob, link(t, e, map[string]any{"email": "bob@example.com"}))
		bcsrf := csrfRe.FindStringSubmatch(get(t, bob, base+"/tests/"+itoa(testID)).Body)[1]
		if st, _ := jsonReq(t, bob, "PUT", au+"/page", bcsrf, map[string]any{"page": 2}); st != 404 {
			t.Fatalf("another learner's move: %d", st)
		}
		// After submitting, the review has every question, and what was
		// saved on the page left was kept.
		if p := fetch(t, b, "POST", au+"/submit", url.Values{"csrf": {csrf}}, nil); p.Status != http.StatusSeeOther {
			t.Fatalf("submit: %d", p.Status)
		}
		slots(1, 2, 3)
		_, v := jsonReq(t, b, "GET", au, "", nil)
		if n := len(v["saved"].([]any)); n != 2 {
			t.Fatalf("saved answers after submit: %d, want 2", n)
		}
		if st, _ := move(2); st != 409 {
			t.Fatalf("move after submit: %d", st)
		}
	})
}

// TestFreeNavigationHasNoPages: with free navigation every slot takes saves
// and there is no page to move to.
func TestFreeNavigationHasNoPages(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		newUser(t, e, "ann@example.com")
		r := e.LMS("POST", "/tests/create", map[string]any{"tests_name": "Free"})
		testID := Int(t, r.JSON(t), "data.id")
		for i := 0; i < 2; i++ {
			q := e.LMS("POST", "/questions/create", map[string]any{"type": "short_answer", "text_md": "Say yes",
				"data": map[string]any{"answers": []string{"yes"}}})
			e.LMS("POST", "/tests/addQuestion", map[string]any{"testId": testID, "questionId": Int(t, q.JSON(t), "data.id")})
		}
		e.LMS("PUT", "/tests/settings/"+itoa(testID), map[string]any{"navigation": "free", "per_page": 1})
		e.LMS("POST", "/tests/enroll", map[string]any{"testId": testID, "email": "ann@example.com"})
		b := browser(t)
		signIn(t, e, b, link(t, e, map[string]any{"email": "ann@example.com"}))
		base := portalURL(e, e.Domain)
		csrf := csrfRe.FindStringSubmatch(get(t, b, base+"/tests/"+itoa(testID)).Body)[1]
		p := fetch(t, b, "POST", base+"/tests/"+itoa(testID)+"/attempts", url.Values{"mode": {"test"}, "csrf": {csrf}}, nil)
		au := e.URL + p.Header.Get("Location")
		if st, v := jsonReq(t, b, "GET", au, "", nil); st != 200 || len(v["questions"].([]any)) != 2 {
			t.Fatalf("free JSON: %d %v", st, v)
		}
		for _, slot := range []int{2, 1} {
			if st, _ := jsonReq(t, b, "PUT", au+"/answers", csrf, map[string]any{"slot": slot, "response": map[string]any{"text": "yes"}, "seq": 1}); st != 200 {
				t.Fatalf("free save to slot %d: %d", slot, st)
			}
		}
		if st, _ := jsonReq(t, b, "PUT", au+"/page", csrf, map[string]any{"page": 1}); st != 400 {
			t.Fatalf("move with free navigation: %d", st)
		}
	})
}
