package portal_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

// TestAttemptPagesArabic: the start and attempt pages speak the learner's
// language from the catalogues and run right to left in Arabic.
func TestAttemptPagesArabic(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		testID := safetyQuiz(t, e)
		b := browser(t)
		signIn(t, e, b, link(t, e, map[string]any{"email": "ann@example.com"}))
		ar := map[string]string{"Accept-Language": "ar-EG,ar;q=0.9"}
		base := portalURL(e, e.Domain)

		start := fetch(t, b, "GET", base+"/tests/"+itoa(testID), nil, ar)
		mustContain(t, "Arabic start page", start.Body, `lang="ar" dir="rtl"`, "<h2>الوضع</h2>", "الوقت المسموح: 1 س 30 د", "ابدأ</button>")
		m := csrfRe.FindStringSubmatch(start.Body)
		if m == nil {
			t.Fatal("no csrf field on the start page")
		}
		p := fetch(t, b, "POST", base+"/tests/"+itoa(testID)+"/attempts", url.Values{"mode": {"test"}, "csrf": {m[1]}}, ar)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("start: %d", p.Status)
		}
		page := fetch(t, b, "GET", e.URL+p.Header.Get("Location"), nil, ar)
		mustContain(t, "Arabic attempt page", page.Body, `lang="ar" dir="rtl"`, "المحاولة 1", "السؤال 1", "نقطة واحدة",
			">صح<", "الوقت المتبقي", "تم حفظ جميع الإجابات", `data-msg-minutes="بقيت {minutes} دقائق"`, "إرسال الإجابات")
		for _, english := range []string{"Question", "Time left", "Submit answers", "True"} {
			if strings.Contains(page.Body, english) {
				t.Errorf("the Arabic attempt page has English %q", english)
			}
		}
		// The same learner asking in English gets English.
		en := fetch(t, b, "GET", e.URL+p.Header.Get("Location"), nil, map[string]string{"Accept-Language": "en"})
		mustContain(t, "English attempt page", en.Body, `lang="en" dir="ltr"`, "Question 1", "1 point", "Submit answers")
	})
}

// TestStartRefusalLocalised: why an attempt cannot start is worded from
// the catalogues, on the start page and on the refused start, in the
// learner's language (the API keeps its English).
func TestStartRefusalLocalised(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		testID := safetyQuiz(t, e)
		if r := e.LMS("PUT", "/tests/settings/"+itoa(testID), map[string]any{"open_at": "2099-01-02T03:04:00Z"}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		b := browser(t)
		signIn(t, e, b, link(t, e, map[string]any{"email": "ann@example.com"}))
		base := portalURL(e, e.Domain)
		for _, c := range []struct{ lang, want, not string }{
			{"ar", "يُفتح الاختبار في 2099-01-02 03:04 UTC.", "the test opens"},
			{"de", "Der Test öffnet am 2099-01-02 03:04 UTC.", "the test opens"},
			{"en", "The test opens on 2099-01-02 03:04 UTC.", "öffnet"},
		} {
			h := map[string]string{"Accept-Language": c.lang}
			start := fetch(t, b, "GET", base+"/tests/"+itoa(testID), nil, h)
			mustContain(t, c.lang+" start page", start.Body, c.want)
			m := csrfRe.FindStringSubmatch(start.Body)
			if m == nil {
				t.Fatal("no csrf field on the start page")
			}
			p := fetch(t, b, "POST", base+"/tests/"+itoa(testID)+"/attempts", url.Values{"mode": {"test"}, "csrf": {m[1]}}, h)
			if p.Status != http.StatusForbidden {
				t.Fatalf("%s: refused start answered %d", c.lang, p.Status)
			}
			mustContain(t, c.lang+" refused start", p.Body, c.want)
			// The JSON start says it in the same words, in the API's error shape.
			req, _ := http.NewRequest("POST", base+"/tests/"+itoa(testID)+"/attempts", strings.NewReader(`{"mode":"test"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept-Language", c.lang)
			req.Header.Set("X-CSRF-Token", m[1])
			resp, err := b.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var j struct{ Message, Code string }
			json.NewDecoder(resp.Body).Decode(&j)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || j.Code != "forbidden" || j.Message != c.want {
				t.Errorf("%s: JSON start answered %d %+v, want 403 forbidden %q", c.lang, resp.StatusCode, j, c.want)
			}
			for _, body := range []string{start.Body, p.Body} {
				if strings.Contains(body, c.not) {
					t.Errorf("%s: the page has %q", c.lang, c.not)
				}
			}
		}
	})
}

// safetyQuiz makes a 90-minute one-question test and enrolls the new
// learner ann@example.com in it.
func safetyQuiz(t *testing.T, e *Env) int64 {
	t.Helper()
	newUser(t, e, "ann@example.com")
	r := e.LMS("POST", "/tests/create", map[string]any{"tests_name": "Safety quiz", "tests_alloted_time_test_mode": "01:30:00"})
	testID := Int(t, r.JSON(t), "data.id")
	q := e.LMS("POST", "/questions/create", map[string]any{"type": "true_false", "text_md": "Water is wet", "data": map[string]any{"correct": true}})
	e.LMS("POST", "/tests/addQuestion", map[string]any{"testId": testID, "questionId": Int(t, q.JSON(t), "data.id")})
	e.LMS("POST", "/tests/enroll", map[string]any{"testId": testID, "email": "ann@example.com"})
	return testID
}
