package portal_test

import (
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
		newUser(t, e, "ann@example.com")
		r := e.LMS("POST", "/tests/create", map[string]any{"tests_name": "Safety quiz", "tests_alloted_time_test_mode": "01:30:00"})
		testID := Int(t, r.JSON(t), "data.id")
		q := e.LMS("POST", "/questions/create", map[string]any{"type": "true_false", "text_md": "Water is wet", "data": map[string]any{"correct": true}})
		e.LMS("POST", "/tests/addQuestion", map[string]any{"testId": testID, "questionId": Int(t, q.JSON(t), "data.id")})
		e.LMS("POST", "/tests/enroll", map[string]any{"testId": testID, "email": "ann@example.com"})
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
