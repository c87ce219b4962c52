package portal_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

// learnerSite is one domain's portal with a signed-in learner and a
// course: a text lesson, a video lesson (100 s), a text lesson that opens
// at a date, and a section title.
type learnerSite struct {
	e        *Env
	dom      Domain
	b        *http.Client
	base     string // the portal's URL
	path     string // the portal's base path, as pages link
	csrf     string
	course   int64
	text     int64
	video    int64
	dated    int64
	unlockAt time.Time
}

func pagesSignIn(t *testing.T, e *Env, dom Domain, email string) (*http.Client, string) {
	t.Helper()
	r := e.Do(Request{Method: "POST", Path: "/api/v1/users/create", Domain: &dom,
		Body: map[string]any{"username": email, "email": email, "name": "Ann Learner"}})
	if r.Status != 200 {
		t.Fatalf("create user: %d %s", r.Status, r.Body)
	}
	r = e.Do(Request{Method: "POST", Path: "/api/v1/users/loginLink", Domain: &dom, Body: map[string]any{"email": email}})
	if r.Status != 200 {
		t.Fatalf("loginLink: %d %s", r.Status, r.Body)
	}
	b := browser(t)
	p := get(t, b, Str(t, r.JSON(t), "data.url"))
	if p.Status != http.StatusSeeOther {
		t.Fatalf("consume: %d %s", p.Status, p.Body)
	}
	return b, e.URL + "/" + itoa(dom.ID) + "/learn"
}

func newSite(t *testing.T, e *Env, dom Domain, email string) *learnerSite {
	t.Helper()
	ctx := context.Background()
	s := &learnerSite{e: e, dom: dom}
	s.b, s.base = pagesSignIn(t, e, dom, email)
	s.path = strings.TrimPrefix(s.base, e.URL)
	lmsCall := func(path string, body map[string]any) *Response {
		r := e.Do(Request{Method: "POST", Path: "/api/v1" + path, Domain: &dom, Body: body})
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return r
	}
	s.course = Int(t, lmsCall("/courses/create", map[string]any{"course_name": "Go 101", "subtitle": "From zero",
		"highlight": "Ten short lessons", "description": "Learn Go.\nStep by step.", "instructor_description": "Ann teaches Go."}).JSON(t), "data.course_id")
	lmsCall("/courses/publish/"+itoa(s.course), nil)
	lmsCall("/courses/enroll", map[string]any{"courseId": s.course, "email": email})
	sec, err := e.Store.CreateSection(ctx, dom.ID, lms.Section{CourseID: s.course, Title: "Getting started"})
	if err != nil {
		t.Fatal(err)
	}
	add := func(l lms.Lesson) int64 {
		l.SectionID, l.IsRequired = sec.ID, true
		l, err := e.Store.CreateLesson(ctx, dom.ID, l)
		if err != nil {
			t.Fatal(err)
		}
		return l.ID
	}
	s.text = add(lms.Lesson{Title: "Welcome", Type: lms.LessonText, BodyMD: "# Hello\n\nRead **this**.\n\n<script>alert(1)</script>"})
	f, err := e.Store.CreateFile(ctx, dom.ID, lms.LearnFile{BlobKey: "learn/none.webm", Name: "intro.webm", ContentType: "video/webm", Size: 1234})
	if err != nil {
		t.Fatal(err)
	}
	s.video = add(lms.Lesson{Title: "Intro video", Type: lms.LessonVideo, FileID: f.ID, DurationS: 100})
	s.dated = add(lms.Lesson{Title: "Later", Type: lms.LessonText, BodyMD: "Later."})
	// Two days ahead: moving the clock past it keeps the session (7 days idle).
	s.unlockAt = time.Now().UTC().Add(48 * time.Hour).Truncate(time.Minute)
	if _, err := e.Store.SetUnlock(ctx, dom.ID, s.dated, lms.Unlock{At: s.unlockAt.Format(time.RFC3339), Days: -1}); err != nil {
		t.Fatal(err)
	}
	home := get(t, s.b, s.base+"/")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(home.Body)
	if m == nil {
		t.Fatalf("no CSRF token on the home page: %d %s", home.Status, home.Body)
	}
	s.csrf = m[1]
	return s
}

func (s *learnerSite) lessonURL(id int64) string {
	return s.base + "/courses/" + itoa(s.course) + "/lessons/" + itoa(id)
}

// link is the path of a lesson as pages write it.
func (s *learnerSite) link(id int64) string {
	return s.path + "/courses/" + itoa(s.course) + "/lessons/" + itoa(id)
}

func (s *learnerSite) post(t *testing.T, u string, form url.Values, header map[string]string) page {
	t.Helper()
	return fetch(t, s.b, "POST", u, form, header)
}

// report sends a progress report as learn.js does.
func (s *learnerSite) report(t *testing.T, lesson int64, body string, csrf string) page {
	t.Helper()
	req, err := http.NewRequest("POST", s.lessonURL(lesson)+"/watched", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	resp, err := s.b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return page{Status: resp.StatusCode, Header: resp.Header, Body: out.String()}
}

func mustContain(t *testing.T, what string, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

func TestPagesSignInLanding(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		base := e.URL + "/" + itoa(e.Domain.ID) + "/learn"
		for _, path := range []string{"/", "/courses/1", "/certificates"} {
			p := get(t, browser(t), base+path)
			if p.Status != http.StatusUnauthorized || p.Header.Get("Location") != "" {
				t.Fatalf("%s without a session: %d %v", path, p.Status, p.Header)
			}
			mustContain(t, path, p.Body, "Open this from your school&#39;s site", `lang="en" dir="ltr"`)
		}
		p := fetch(t, browser(t), "GET", base+"/", nil, map[string]string{"Accept-Language": "ar-EG,ar;q=0.9"})
		mustContain(t, "Arabic landing", p.Body, `lang="ar" dir="rtl"`, "افتح هذه الصفحة من موقع مدرستك")
	})
}

func TestPagesDashboard(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ctx := context.Background()
		s := newSite(t, e, e.Domain, "ann@example.com")
		r := e.Do(Request{Method: "POST", Path: "/api/v1/tests/create", Domain: &e.Domain, Body: map[string]any{"tests_name": "Final exam"}})
		testID := Int(t, r.JSON(t), "data.id")
		e.Do(Request{Method: "POST", Path: "/api/v1/tests/publish/" + itoa(testID), Domain: &e.Domain})
		e.Do(Request{Method: "POST", Path: "/api/v1/tests/enroll", Domain: &e.Domain, Body: map[string]any{"testId": testID, "email": "ann@example.com"}})
		now := time.Now().UTC().Truncate(time.Minute)
		live, err := e.Store.CreateLiveClass(ctx, e.Domain.ID, lms.LiveClass{Title: "Office hours", Date: now.Format("2006-01-02"),
			TimezoneName: "UTC", Occurrences: []lms.Occurrence{{Start: now.Add(-5 * time.Minute), End: now.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		later, err := e.Store.CreateLiveClass(ctx, e.Domain.ID, lms.LiveClass{Title: "Next week", Date: now.Format("2006-01-02"),
			TimezoneName: "UTC", Occurrences: []lms.Occurrence{{Start: now.Add(7 * 24 * time.Hour), End: now.Add(7*24*time.Hour + time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{live.ID, later.ID} {
			e.Do(Request{Method: "POST", Path: "/api/v1/liveClasses/enroll", Domain: &e.Domain, Body: map[string]any{"classId": id, "email": "ann@example.com"}})
		}

		p := get(t, s.b, s.base+"/")
		if p.Status != 200 {
			t.Fatalf("home: %d %s", p.Status, p.Body)
		}
		mustContain(t, "home", p.Body, "ann@example.com", "Go 101", `data-course-id="`+itoa(s.course)+`"`,
			`<progress class="progress" max="100" value="0"`, s.link(s.text), "Final exam",
			s.path+"/tests/"+itoa(testID), "Office hours", s.path+"/classes/"+itoa(live.ID)+"/join", "Next week")
		if strings.Contains(p.Body, "/classes/"+itoa(later.ID)+"/join") {
			t.Error("a class a week away offers Join")
		}
		if strings.Index(p.Body, "Office hours") > strings.Index(p.Body, "Next week") {
			t.Error("classes are not soonest first")
		}

		// Join redirects to the classroom's encrypted launch, made now.
		j := get(t, s.b, s.base+"/classes/"+itoa(live.ID)+"/join")
		if j.Status != http.StatusSeeOther || !strings.HasPrefix(j.Header.Get("Location"), e.URL+"/classroom/e/") {
			t.Fatalf("join: %d %v", j.Status, j.Header)
		}
		if c := get(t, browser(t), j.Header.Get("Location")); c.Status != 200 {
			t.Errorf("launch URL: %d", c.Status)
		}
		if j := get(t, s.b, s.base+"/classes/"+itoa(later.ID)+"/join"); j.Status != http.StatusConflict || !strings.Contains(j.Body, "10 minutes before") {
			t.Errorf("join a week early: %d", j.Status)
		}
		e.Clock.Set(now.Add(2 * time.Hour))
		if j := get(t, s.b, s.base+"/classes/"+itoa(live.ID)+"/join"); j.Status != http.StatusConflict || !strings.Contains(j.Body, "is over") {
			t.Errorf("join after the sitting: %d", j.Status)
		}
		e.Clock.Set(time.Time{})
		other, err := e.Store.CreateLiveClass(ctx, e.Domain.ID, lms.LiveClass{Title: "Not mine", Date: now.Format("2006-01-02"),
			TimezoneName: "UTC", Occurrences: []lms.Occurrence{{Start: now, End: now.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		if j := get(t, s.b, s.base+"/classes/"+itoa(other.ID)+"/join"); j.Status != http.StatusNotFound {
			t.Errorf("join a class not enrolled in: %d", j.Status)
		}

		// After the text lesson, Resume points at the video.
		s.post(t, s.lessonURL(s.text)+"/complete", url.Values{"csrf": {s.csrf}}, nil)
		p = get(t, s.b, s.base+"/")
		mustContain(t, "home after a lesson", p.Body, `value="33"`, "33% complete", s.link(s.video))

		c := get(t, s.b, s.base+"/certificates")
		if c.Status != 200 {
			t.Fatalf("certificates: %d", c.Status)
		}
		mustContain(t, "certificates", c.Body, `data-testid="no-certificates"`)

		// A certificate: on the home page and the certificates page, with
		// its PDF and verify links.
		tmpl := e.Do(Request{Method: "POST", Path: "/api/v1/certificates/templates/create", Domain: &e.Domain, Body: map[string]any{"name": "Default"}})
		e.Do(Request{Method: "PUT", Path: "/api/v1/courses/certificate/" + itoa(s.course), Domain: &e.Domain,
			Body: map[string]any{"template_id": Int(t, tmpl.JSON(t), "data.id")}})
		is := e.Do(Request{Method: "POST", Path: "/api/v1/certificates/issue", Domain: &e.Domain, Body: map[string]any{"courseId": s.course, "email": "ann@example.com"}})
		if is.Status != 200 {
			t.Fatalf("issue: %d %s", is.Status, is.Body)
		}
		code := Str(t, is.JSON(t), "data.code")
		c = get(t, s.b, s.base+"/certificates")
		mustContain(t, "certificates", c.Body, `data-code="`+code+`"`, "Go 101", `href="`+e.URL+"/verify/"+code+`.pdf"`,
			`value="`+e.URL+"/verify/"+code+`"`)
		if strings.Contains(c.Body, "no-certificates") {
			t.Error("certificates page says none")
		}
		mustContain(t, "home with a certificate", get(t, s.b, s.base+"/").Body, `data-testid="certificate"`)
		// Another learner does not see it.
		ob, oBase := pagesSignIn(t, e, e.Domain, "other@example.com")
		if strings.Contains(get(t, ob, oBase+"/certificates").Body, code) {
			t.Error("another learner sees the certificate")
		}
		// Revoked: the card says so and offers no PDF (it answers 410),
		// but keeps the verify link, which shows the revocation.
		id := Int(t, is.JSON(t), "data.id")
		if r := e.Do(Request{Method: "POST", Path: "/api/v1/certificates/revoke/" + itoa(id), Domain: &e.Domain, Body: map[string]any{"reason": "issued in error"}}); r.Status != 200 {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		c = get(t, s.b, s.base+"/certificates")
		mustContain(t, "revoked certificate", c.Body, `data-code="`+code+`"`, `value="`+e.URL+"/verify/"+code+`"`)
		if strings.Contains(c.Body, "/verify/"+code+".pdf") {
			t.Error("a revoked certificate still offers its PDF, which answers 410")
		}
	})
}

func TestPagesCourseAndLessons(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		s := newSite(t, e, e.Domain, "ann@example.com")
		c := get(t, s.b, s.base+"/courses/"+itoa(s.course))
		if c.Status != 200 {
			t.Fatalf("course: %d %s", c.Status, c.Body)
		}
		mustContain(t, "course page", c.Body, "Go 101", "From zero", "Ten short lessons", "Learn Go.\nStep by step.",
			"Ann teaches Go.", "Getting started", "3 lessons", `data-lesson-id="`+itoa(s.dated)+`" data-state="locked"`,
			`datetime="`+s.unlockAt.Format(time.RFC3339)+`"`)

		// The text lesson: sanitised body, and a form that completes it.
		l := get(t, s.b, s.lessonURL(s.text))
		if l.Status != 200 {
			t.Fatalf("text lesson: %d %s", l.Status, l.Body)
		}
		mustContain(t, "text lesson", l.Body, "<h2>Hello</h2>", "<strong>this</strong>", `action="`+s.link(s.text)+`/complete"`,
			"Complete and continue", `aria-current="page"`)
		if strings.Contains(l.Body, "<script>alert") {
			t.Error("the lesson body kept a script")
		}
		for _, h := range []string{"Content-Security-Policy", "Referrer-Policy", "X-Content-Type-Options"} {
			if l.Header.Get(h) == "" {
				t.Errorf("lesson page lacks %s", h)
			}
		}
		csp := l.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors") {
			t.Errorf("CSP %q", csp)
		}
		if l.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("Referrer-Policy %q", l.Header.Get("Referrer-Policy"))
		}

		// Without the CSRF token: refused, nothing recorded.
		if p := s.post(t, s.lessonURL(s.text)+"/complete", url.Values{}, nil); p.Status != http.StatusForbidden {
			t.Fatalf("complete without CSRF: %d", p.Status)
		}
		p := s.post(t, s.lessonURL(s.text)+"/complete", url.Values{"csrf": {s.csrf}}, nil)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/"+itoa(e.Domain.ID)+"/learn/courses/"+itoa(s.course)+"/lessons/"+itoa(s.video) {
			t.Fatalf("complete: %d %v", p.Status, p.Header)
		}
		l = get(t, s.b, s.lessonURL(s.text))
		mustContain(t, "done text lesson", l.Body, `data-state="done"`)
		if strings.Contains(l.Body, "/complete") {
			t.Error("a done lesson still offers Complete")
		}

		// The video lesson: the player, its signed media URL, the report URL.
		v := get(t, s.b, s.lessonURL(s.video))
		mustContain(t, "video lesson", v.Body, "<video", `src="/media/`, `data-report="`+s.link(s.video)+`/watched"`,
			`data-csrf="`+s.csrf+`"`, `data-position="0"`)
		if strings.Contains(v.Body, s.link(s.video)+"/complete") {
			t.Error("a video lesson offers a manual Complete")
		}
		// A video lesson cannot be marked complete by hand.
		if p := s.post(t, s.lessonURL(s.video)+"/complete", url.Values{"csrf": {s.csrf}}, nil); p.Status != http.StatusBadRequest {
			t.Errorf("mark a video: %d", p.Status)
		}

		// The dated lesson: the locked page, 403, with its date.
		d := get(t, s.b, s.lessonURL(s.dated))
		if d.Status != http.StatusForbidden {
			t.Fatalf("locked lesson: %d", d.Status)
		}
		mustContain(t, "locked page", d.Body, "This lesson is locked", "Opens on", `datetime="`+s.unlockAt.Format(time.RFC3339)+`"`)
		if strings.Contains(d.Body, "Later.") {
			t.Error("the locked page shows the lesson's body")
		}
		if p := s.post(t, s.lessonURL(s.dated)+"/complete", url.Values{"csrf": {s.csrf}}, nil); p.Status != http.StatusForbidden {
			t.Errorf("complete a locked lesson: %d", p.Status)
		}
		e.Clock.Set(s.unlockAt.Add(time.Minute))
		if d := get(t, s.b, s.lessonURL(s.dated)); d.Status != 200 {
			t.Errorf("after the date: %d", d.Status)
		}
		e.Clock.Set(time.Time{})

		// A lesson id of another course of the domain, or no such lesson.
		if p := get(t, s.b, s.base+"/courses/"+itoa(s.course+1000)+"/lessons/"+itoa(s.text)); p.Status != http.StatusNotFound {
			t.Errorf("lesson under another course id: %d", p.Status)
		}
		for _, path := range []string{"/courses/x", "/courses/0", "/courses/99999", "/courses/" + itoa(s.course) + "/lessons/99999", "/nothing"} {
			if p := get(t, s.b, s.base+path); p.Status != http.StatusNotFound {
				t.Errorf("%s: %d", path, p.Status)
			}
		}
	})
}

func TestPagesWatched(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		s := newSite(t, e, e.Domain, "ann@example.com")
		tests := []struct {
			name   string
			body   string
			csrf   string
			status int
			field  string
		}{
			{"no CSRF token", `{"ranges":[[0,10]],"position":10}`, "", http.StatusForbidden, ""},
			{"wrong CSRF token", `{"ranges":[[0,10]],"position":10}`, "00", http.StatusForbidden, ""},
			{"not JSON", `ranges=1`, s.csrf, http.StatusBadRequest, "body"},
			{"reversed range", `{"ranges":[[10,0]]}`, s.csrf, http.StatusBadRequest, "ranges"},
			{"negative position", `{"position":-1}`, s.csrf, http.StatusBadRequest, "position"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				p := s.report(t, s.video, tc.body, tc.csrf)
				if p.Status != tc.status {
					t.Fatalf("%d %s", p.Status, p.Body)
				}
				var body map[string]any
				if err := json.Unmarshal([]byte(p.Body), &body); err != nil {
					t.Fatalf("not JSON: %s", p.Body)
				}
				ExpectErrorShape(t, body)
				if tc.field != "" && !FieldNames(body)[tc.field] {
					t.Errorf("error does not name %s: %s", tc.field, p.Body)
				}
			})
		}

		// A seek to 95% and the last seconds played: not complete.
		p := s.report(t, s.video, `{"ranges":[[95,100]],"position":100}`, s.csrf)
		if p.Status != 200 || !strings.Contains(p.Body, `"lesson_done":false`) || !strings.Contains(p.Body, `"lesson_percent":5`) {
			t.Fatalf("seek to 95%%: %d %s", p.Status, p.Body)
		}
		// The position is kept for Resume.
		p = s.report(t, s.video, `{"ranges":[],"position":42}`, s.csrf)
		if !strings.Contains(p.Body, `"position":42`) {
			t.Fatalf("position: %s", p.Body)
		}
		v := get(t, s.b, s.lessonURL(s.video))
		mustContain(t, "video lesson after a report", v.Body, `data-position="42"`, "5% played")
		// Played from the start to 90 s in pieces: complete (90% of distinct seconds).
		p = s.report(t, s.video, `{"ranges":[[0,40],[40,85]],"position":85}`, s.csrf)
		if !strings.Contains(p.Body, `"lesson_done":true`) {
			t.Fatalf("90%% played: %s", p.Body)
		}
		// A locked lesson refuses reports.
		if p := s.report(t, s.dated, `{"ranges":[[0,1]]}`, s.csrf); p.Status != http.StatusForbidden || !strings.Contains(p.Body, `"code":"locked"`) {
			t.Errorf("report to a locked lesson: %d %s", p.Status, p.Body)
		}
		// Without a session: 401 JSON.
		req, _ := http.NewRequest("POST", s.lessonURL(s.video)+"/watched", strings.NewReader(`{}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("no session: %d", resp.StatusCode)
		}
	})
}

// Domain B's learner, on domain B's portal, asking for domain A's ids gets
// 404 everywhere; on domain A's portal, B's session is no session.
func TestPagesCrossTenant(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		a := newSite(t, e, e.Domain, "ann@example.com")
		bb, bBase := pagesSignIn(t, e, e.Other, "bob@example.com")
		for _, path := range []string{
			"/courses/" + itoa(a.course),
			"/courses/" + itoa(a.course) + "/lessons/" + itoa(a.text),
		} {
			if p := get(t, bb, bBase+path); p.Status != http.StatusNotFound {
				t.Errorf("B asks %s: %d", path, p.Status)
			}
		}
		home := get(t, bb, bBase+"/")
		csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(home.Body)[1]
		p := fetch(t, bb, "POST", bBase+"/courses/"+itoa(a.course)+"/lessons/"+itoa(a.text)+"/complete", url.Values{"csrf": {csrf}}, nil)
		if p.Status != http.StatusNotFound {
			t.Errorf("B completes A's lesson: %d", p.Status)
		}
		req, _ := http.NewRequest("POST", bBase+"/courses/"+itoa(a.course)+"/lessons/"+itoa(a.video)+"/watched", strings.NewReader(`{"ranges":[[0,100]]}`))
		req.Header.Set("X-CSRF-Token", csrf)
		resp, err := bb.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("B reports on A's video: %d", resp.StatusCode)
		}
		if p := get(t, bb, a.base+"/courses/"+itoa(a.course)); p.Status != http.StatusUnauthorized {
			t.Errorf("B's cookie on A's portal: %d", p.Status)
		}
		// A not enrolled learner of A sees a published course's landing
		// page, not its lessons.
		cb, cBase := pagesSignIn(t, e, e.Domain, "cid@example.com")
		p = get(t, cb, cBase+"/courses/"+itoa(a.course))
		if p.Status != 200 || !strings.Contains(p.Body, `data-testid="not-enrolled"`) {
			t.Errorf("not enrolled, course page: %d", p.Status)
		}
		if p := get(t, cb, cBase+"/courses/"+itoa(a.course)+"/lessons/"+itoa(a.text)); p.Status != http.StatusForbidden {
			t.Errorf("not enrolled, lesson: %d", p.Status)
		}
	})
}

// Each lesson type's page: embed, file, test, live class (Join through
// the lesson, then no Join once the sitting is over), and a free preview
// for a learner who is not enrolled.
func TestPagesLessonTypes(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		ctx := context.Background()
		s := newSite(t, e, e.Domain, "ann@example.com")
		secs, err := e.Store.Sections(ctx, e.Domain.ID, s.course)
		if err != nil {
			t.Fatal(err)
		}
		add := func(l lms.Lesson) int64 {
			l.SectionID = secs[0].ID
			l, err := e.Store.CreateLesson(ctx, e.Domain.ID, l)
			if err != nil {
				t.Fatal(err)
			}
			return l.ID
		}
		r := e.Do(Request{Method: "POST", Path: "/api/v1/tests/create", Domain: &e.Domain, Body: map[string]any{"tests_name": "Check"}})
		testID := Int(t, r.JSON(t), "data.id")
		f, err := e.Store.CreateFile(ctx, e.Domain.ID, lms.LearnFile{BlobKey: "learn/x.pdf", Name: "notes.pdf", ContentType: "application/pdf", Size: 250_000})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Minute)
		class, err := e.Store.CreateLiveClass(ctx, e.Domain.ID, lms.LiveClass{Title: "Live Q&A", Date: now.Format("2006-01-02"),
			TimezoneName: "UTC", Occurrences: []lms.Occurrence{{Start: now.Add(-time.Minute), End: now.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		embed := add(lms.Lesson{Title: "A talk", Type: lms.LessonEmbed, EmbedProvider: lms.EmbedYouTube, EmbedID: "dQw4w9WgXcQ", IsPreview: true})
		file := add(lms.Lesson{Title: "Notes", Type: lms.LessonFile, FileID: f.ID})
		test := add(lms.Lesson{Title: "Check yourself", Type: lms.LessonTest, TestID: testID})
		live := add(lms.Lesson{Title: "Ask anything", Type: lms.LessonLiveClass, ClassID: class.ID})

		p := get(t, s.b, s.lessonURL(embed))
		mustContain(t, "embed lesson", p.Body, `<iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"`, `title="Video on YouTube"`,
			`referrerpolicy="strict-origin-when-cross-origin"`, "mark this lesson as complete", `/complete"`)
		p = get(t, s.b, s.lessonURL(file))
		mustContain(t, "file lesson", p.Body, `data-testid="download"`, `href="/media/`, "Download notes.pdf", "250 KB", `/complete"`)
		p = get(t, s.b, s.lessonURL(test))
		mustContain(t, "test lesson", p.Body, `data-testid="test-card"`, `href="`+s.path+"/tests/"+itoa(testID)+`"`)
		if strings.Contains(p.Body, s.link(test)+"/complete") {
			t.Error("a test lesson offers a manual Complete")
		}
		p = get(t, s.b, s.lessonURL(live))
		join := s.path + "/classes/" + itoa(class.ID) + "/join?lesson=" + itoa(live)
		mustContain(t, "live lesson", p.Body, `data-testid="live"`, "Live now", `href="`+strings.ReplaceAll(join, "&", "&amp;")+`"`)
		j := get(t, s.b, e.URL+join)
		if j.Status != http.StatusSeeOther || !strings.HasPrefix(j.Header.Get("Location"), e.URL+"/classroom/e/") {
			t.Fatalf("join through the lesson: %d %v", j.Status, j.Header)
		}
		// Ann is not enrolled in the class itself: only through the lesson.
		if j := get(t, s.b, e.URL+s.path+"/classes/"+itoa(class.ID)+"/join"); j.Status != http.StatusNotFound {
			t.Errorf("join without the lesson: %d", j.Status)
		}
		if j := get(t, s.b, e.URL+s.path+"/classes/"+itoa(class.ID)+"/join?lesson="+itoa(s.text)); j.Status != http.StatusNotFound {
			t.Errorf("join through a lesson of another class: %d", j.Status)
		}
		e.Clock.Set(now.Add(2 * time.Hour))
		p = get(t, s.b, s.lessonURL(live))
		mustContain(t, "live lesson after the sitting", p.Body, "The recording will be here after the class.")
		if strings.Contains(p.Body, "/join") {
			t.Error("Join after the sitting ended")
		}
		e.Clock.Set(time.Time{})

		// A learner who is not enrolled: the preview opens, nothing else.
		cb, cBase := pagesSignIn(t, e, e.Domain, "cid@example.com")
		c := get(t, cb, cBase+"/courses/"+itoa(s.course))
		mustContain(t, "course page, not enrolled", c.Body, "Free preview", `href="`+s.link(embed)+`"`)
		if strings.Contains(c.Body, `href="`+s.link(s.text)+`"`) {
			t.Error("a lesson that is not a preview links for a learner not enrolled")
		}
		p = get(t, cb, cBase+"/courses/"+itoa(s.course)+"/lessons/"+itoa(embed))
		if p.Status != 200 || strings.Contains(p.Body, "/complete") {
			t.Errorf("preview: %d, offers Complete: %v", p.Status, strings.Contains(p.Body, "/complete"))
		}
		// An unpublished course shows nothing to a learner not enrolled,
		// not even its previews.
		e.Do(Request{Method: "POST", Path: "/api/v1/courses/unpublish/" + itoa(s.course), Domain: &e.Domain})
		for _, path := range []string{"/courses/" + itoa(s.course), "/courses/" + itoa(s.course) + "/lessons/" + itoa(embed),
			"/courses/" + itoa(s.course) + "/lessons/" + itoa(s.text)} {
			if p := get(t, cb, cBase+path); p.Status != http.StatusNotFound {
				t.Errorf("unpublished, not enrolled, %s: %d", path, p.Status)
			}
		}
		if p := get(t, s.b, s.lessonURL(embed)); p.Status != 200 {
			t.Errorf("unpublished, enrolled: %d", p.Status)
		}
	})
}
