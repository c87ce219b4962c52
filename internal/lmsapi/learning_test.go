package lmsapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lmsapi"
)

// upload posts content as the multipart file part of /files/upload and
// returns the response.
func upload(t *testing.T, e *Env, d *Domain, name, ctype string, content []byte) *Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + name + `"`}
	if ctype != "" {
		h["Content-Type"] = []string{ctype}
	}
	pw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	pw.Write(content)
	mw.Close()
	return e.Do(Request{Method: "POST", Path: "/api/v1/files/upload", Body: buf.String(), Domain: d,
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
}

func TestLearningContent(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		course := create(t, e, "/courses/create", map[string]any{"course_name": "Go"}, "data.course_id")
		otherCourse := create(t, e, "/courses/create", map[string]any{"course_name": "Other"}, "data.course_id")
		test := create(t, e, "/tests/create", map[string]any{"tests_name": "Quiz"}, "data.id")
		class := create(t, e, "/liveClasses/create", map[string]any{"title": "Live", "date": "2030-01-02", "startTime": "10:00",
			"endTime": "11:00", "timezone": "Europe/Berlin"}, "data.id")
		s1 := create(t, e, "/sections/create", map[string]any{"course_id": course, "title": "Basics"}, "data.id")
		s2 := create(t, e, "/sections/create", map[string]any{"courseId": course, "title": "Advanced"}, "data.id")
		s0 := create(t, e, "/sections/create", map[string]any{"course_id": course, "title": "Welcome", "position": 1}, "data.id")
		sOther := create(t, e, "/sections/create", map[string]any{"course_id": otherCourse, "title": "Elsewhere"}, "data.id")
		up := upload(t, e, nil, "intro.mp4", "video/mp4", bytes.Repeat([]byte("v"), 4096))
		if up.Status != 200 {
			t.Fatalf("upload: %d %s", up.Status, up.Body)
		}
		file := Int(t, up.JSON(t), "data.file_id")
		text := create(t, e, "/lessons/create", map[string]any{"section_id": s1, "title": "Hello", "type": "text", "body_md": "# Hi"}, "data.id")
		video := create(t, e, "/lessons/create", map[string]any{"section_id": s1, "title": "Intro video", "type": "video",
			"file_id": file, "duration_s": 120}, "data.id")
		lid := itoa(text)
		// Domain B's own course, lesson and class, which domain A may not name.
		bCourse := Int(t, e.Do(other(e, "POST", "/courses/create", map[string]any{"course_name": "B"})).JSON(t), "data.course_id")
		bSection := Int(t, e.Do(other(e, "POST", "/sections/create", map[string]any{"course_id": bCourse, "title": "B"})).JSON(t), "data.id")
		bLesson := Int(t, e.Do(other(e, "POST", "/lessons/create", map[string]any{"section_id": bSection, "title": "B", "type": "text"})).JSON(t), "data.id")
		bClass := Int(t, e.Do(other(e, "POST", "/liveClasses/create", map[string]any{"title": "B", "date": "2030-01-02", "startTime": "10:00",
			"endTime": "11:00", "timezone": "UTC"})).JSON(t), "data.id")
		e.Scenarios(t, []Scenario{
			{Name: "unlock after another domain's lesson", Request: api("POST", "/lessons/unlock/set", map[string]any{"lesson_id": text,
				"after_lesson_ids": []int64{bLesson}}), Status: 404},
			{Name: "unlock after another domain's class", Request: api("POST", "/lessons/unlock/set", map[string]any{"lesson_id": text,
				"after_class_id": bClass}), Status: 404},
			{Name: "live lesson of another domain's class", Request: api("POST", "/lessons/create", map[string]any{"section_id": s1,
				"title": "x", "type": "live_class", "class_id": bClass}), Status: 404},
			{Name: "move into another domain's section", Request: api("POST", "/lessons/move", map[string]any{"lesson_id": text,
				"section_id": bSection}), Status: 404},
			{Name: "override of another domain's lesson", Request: api("POST", "/unlock/override", map[string]any{"course_id": course,
				"user_id": user(t, e, "ann@example.com"), "lesson_id": bLesson}), Status: 404, Want: map[string]any{"message": "lesson " + itoa(bLesson) + " not found"}},
		})
		e.Scenarios(t, []Scenario{
			{Name: "sections in order", Request: api("POST", "/sections/list", map[string]any{"course_id": course}), Status: 200,
				Want: map[string]any{"total": 3, "data.0.id": s0, "data.0.position": 1, "data.1.id": s1, "data.1.position": 2, "data.2.id": s2}},
			{Name: "section needs a title and course", Request: api("POST", "/sections/create", map[string]any{}), Status: 400,
				Fields: []string{"course_id", "title"}},
			{Name: "section of an unknown course", Request: api("POST", "/sections/create", map[string]any{"course_id": 999999, "title": "x"}), Status: 404},
			{Name: "section in another domain's course", Request: other(e, "POST", "/sections/create", map[string]any{"course_id": course, "title": "x"}), Status: 404},
			{Name: "sections of another domain's course", Request: other(e, "POST", "/sections/list", map[string]any{"course_id": course}), Status: 404},
			{Name: "move a section last", Request: api("PUT", "/sections/update/"+itoa(s0), map[string]any{"position": 9}), Status: 200,
				Want: map[string]any{"data.position": 3, "data.title": "Welcome"}},
			{Name: "sections renumbered", Request: api("POST", "/sections/list", map[string]any{"course_id": course}), Status: 200,
				Want: map[string]any{"data.0.id": s1, "data.0.position": 1, "data.1.id": s2, "data.1.position": 2, "data.2.id": s0, "data.2.position": 3}},
			{Name: "rename a section", Request: api("PUT", "/sections/update/"+itoa(s2), map[string]any{"title": "Deeper"}), Status: 200,
				Want: map[string]any{"data.title": "Deeper", "data.position": 2}},
			{Name: "blank section title", Request: api("PUT", "/sections/update/"+itoa(s2), map[string]any{"title": " "}), Status: 400, Fields: []string{"title"}},
			{Name: "update another domain's section", Request: other(e, "PUT", "/sections/update/"+itoa(s2), map[string]any{"title": "x"}), Status: 404},
			{Name: "delete another domain's section", Request: other(e, "DELETE", "/sections/delete/"+itoa(s2), nil), Status: 404},

			{Name: "lesson defaults", Request: api("GET", "/lessons/get/"+lid, nil), Status: 200, Want: map[string]any{
				"data.id": text, "data.course_id": course, "data.section_id": s1, "data.type": "text", "data.position": 1,
				"data.is_required": 1, "data.is_preview": 0, "data.body_md": "# Hi", "data.file_id": nil, "data.unlock.at": nil,
				"data.unlock.days_after_enroll": nil, "data.unlock.after_lesson_ids.#": 0}},
			{Name: "get another domain's lesson", Request: other(e, "GET", "/lessons/get/"+lid, nil), Status: 404},
			{Name: "lesson needs section, title, type", Request: api("POST", "/lessons/create", map[string]any{}), Status: 400,
				Fields: []string{"section_id", "title", "type"}},
			{Name: "unknown type", Request: api("POST", "/lessons/create", map[string]any{"section_id": s1, "title": "x", "type": "scorm"}),
				Status: 400, Fields: []string{"type"}},
			{Name: "video needs a file and a length", Request: api("POST", "/lessons/create", map[string]any{"section_id": s1, "title": "x", "type": "video"}),
				Status: 400, Fields: []string{"file_id", "duration_s"}},
			{Name: "embed needs a valid id", Request: api("POST", "/lessons/create", map[string]any{"section_id": s1, "title": "x", "type": "embed",
				"embed_provider": "youtube", "embed_id": "https://youtu.be/dQw4w9WgXcQ"}), Status: 400, Fields: []string{"embed_id"}},
			{Name: "embed of an unknown provider", Request: api("POST", "/lessons/create", map[string]any{"section_id": s1, "title": "x", "type": "embed",
				"embed_provider": "<iframe>", "embed_id": "x"}), Status: 400, Fields: []string{"embed_provider"}},
			{Name: "embed youtube", Request: api("POST", "/lessons/create", map[string]any{"section_id": s2, "title": "Talk", "type": "embed",
				"embed_provider": "youtube", "embed_id": "dQw4w9WgXcQ", "is_required": 0, "is_preview": true}), Status: 200,
				Want: map[string]any{"data.embed_provider": "youtube", "data.embed_id": "dQw4w9WgXcQ", "data.is_required": 0, "data.is_preview": 1}},
			{Name: "embed from a pasted address", Request: api("POST", "/lessons/create", map[string]any{"section_id": sOther, "title": "Clip",
				"type": "embed", "embed_url": "https://youtu.be/dQw4w9WgXcQ?si=x", "is_required": 0}), Status: 200,
				Want: map[string]any{"data.embed_provider": "youtube", "data.embed_id": "dQw4w9WgXcQ"}},
			{Name: "embed from another site's address", Request: api("POST", "/lessons/create", map[string]any{"section_id": s2, "title": "Clip",
				"type": "embed", "embed_url": "https://evil.example/watch?v=dQw4w9WgXcQ"}), Status: 400, Fields: []string{"embed_url"}},
			{Name: "a field of another type", Request: api("POST", "/lessons/create", map[string]any{"section_id": s1, "title": "x", "type": "text",
				"class_id": class}), Status: 400, Fields: []string{"class_id"}},
			{Name: "bad flag", Request: api("POST", "/lessons/create", map[string]any{"section_id": s1, "title": "x", "type": "text",
				"is_required": "maybe"}), Status: 400, Fields: []string{"is_required"}},
			{Name: "live class lesson", Request: api("POST", "/lessons/create", map[string]any{"section_id": s2, "title": "Live", "type": "live_class",
				"class_id": class, "class_sitting": 1}), Status: 200, Want: map[string]any{"data.class_id": class, "data.class_sitting": 1}},
			{Name: "test lesson", Request: api("POST", "/lessons/create", map[string]any{"section_id": s2, "title": "Quiz", "type": "test",
				"test_id": test}), Status: 200, Want: map[string]any{"data.test_id": test}},
			{Name: "test lesson of an unknown test", Request: api("POST", "/lessons/create", map[string]any{"section_id": s2, "title": "Quiz",
				"type": "test", "test_id": 999999}), Status: 404},
			{Name: "lesson in another domain's section", Request: other(e, "POST", "/lessons/create", map[string]any{"section_id": s1, "title": "x",
				"type": "text"}), Status: 404},
			{Name: "another domain's file", Request: other(e, "POST", "/lessons/create", map[string]any{"section_id": s1, "title": "x",
				"type": "file", "file_id": file}), Status: 404},
			{Name: "update title and required", Request: api("PUT", "/lessons/update/"+lid, map[string]any{"title": "Hello, world", "is_required": 0}),
				Status: 200, Want: map[string]any{"data.title": "Hello, world", "data.is_required": 0, "data.body_md": "# Hi"}},
			{Name: "update cannot move", Request: api("PUT", "/lessons/update/"+lid, map[string]any{"position": 2}), Status: 400, Fields: []string{"position"}},
			{Name: "update to video needs a file", Request: api("PUT", "/lessons/update/"+lid, map[string]any{"type": "video"}), Status: 400,
				Fields: []string{"file_id", "duration_s"}},
			{Name: "update another domain's lesson", Request: other(e, "PUT", "/lessons/update/"+lid, map[string]any{"title": "x"}), Status: 404},
			{Name: "move to the end of another section", Request: api("POST", "/lessons/move", map[string]any{"lesson_id": text, "section_id": s2}),
				Status: 200, Want: map[string]any{"data.section_id": s2, "data.position": 4}},
			{Name: "the video is first in its section now", Request: api("GET", "/lessons/get/"+itoa(video), nil), Status: 200,
				Want: map[string]any{"data.position": 1}},
			{Name: "move to the front", Request: api("POST", "/lessons/move", map[string]any{"lessonId": text, "sectionId": s2, "position": 1}),
				Status: 200, Want: map[string]any{"data.position": 1}},
			{Name: "move into another course", Request: api("POST", "/lessons/move", map[string]any{"lesson_id": text, "section_id": sOther}),
				Status: 400, Fields: []string{"section_id"}},
			{Name: "move another domain's lesson", Request: other(e, "POST", "/lessons/move", map[string]any{"lesson_id": text, "section_id": s2}), Status: 404},
			{Name: "lessons of a section", Request: api("POST", "/lessons/list", map[string]any{"section_id": s2}), Status: 200,
				Want: map[string]any{"total": 4, "data.0.id": text, "data.0.position": 1, "data.1.title": "Talk", "data.1.position": 2,
					"data.3.title": "Quiz", "data.3.position": 4}},
			{Name: "lessons of the course in outline order", Request: api("POST", "/lessons/list", map[string]any{"course_id": course}), Status: 200,
				Want: map[string]any{"total": 5, "data.0.id": video, "data.1.id": text}},
			{Name: "lessons need a course or section", Request: api("POST", "/lessons/list", nil), Status: 400, Fields: []string{"course_id"}},
			{Name: "lessons of another domain's course", Request: other(e, "POST", "/lessons/list", map[string]any{"course_id": course}), Status: 404},

			{Name: "unlock conditions", Request: api("POST", "/lessons/unlock/set", map[string]any{"lesson_id": text, "at": "2030-03-09T09:00",
				"days_after_enroll": 3, "after_lesson_ids": []int64{video}, "after_class_id": class, "after_class_sitting": 1}), Status: 200,
				Want: map[string]any{"data.unlock.at": "2030-03-09T09:00", "data.unlock.days_after_enroll": 3, "data.unlock.after_lesson_ids.0": video,
					"data.unlock.after_class_id": class, "data.unlock.after_class_sitting": 1}},
			{Name: "unlock: bad values", Request: api("POST", "/lessons/unlock/set", map[string]any{"lesson_id": text, "at": "soon",
				"days_after_enroll": -2, "after_lesson_ids": "a,b"}), Status: 400, Fields: []string{"at", "days_after_enroll", "after_lesson_ids"}},
			{Name: "unlock: a sitting the class lacks", Request: api("POST", "/lessons/unlock/set", map[string]any{"lesson_id": text,
				"after_class_id": class, "after_class_sitting": 5}), Status: 400, Fields: []string{"after_class_sitting"}},
			{Name: "unlock: itself", Request: api("POST", "/lessons/unlock/set", map[string]any{"lesson_id": text, "after_lesson_ids": []int64{text}}),
				Status: 400, Fields: []string{"after_lesson_ids"}},
			{Name: "unlock: another domain's lesson", Request: other(e, "POST", "/lessons/unlock/set", map[string]any{"lesson_id": text}), Status: 404},
			{Name: "clear unlock", Request: api("POST", "/lessons/unlock/set", map[string]any{"lesson_id": text}), Status: 200,
				Want: map[string]any{"data.unlock.at": nil, "data.unlock.days_after_enroll": nil, "data.unlock.after_lesson_ids.#": 0}},

			{Name: "settings", Request: api("PUT", "/courses/settings/"+itoa(course), map[string]any{"navigation": "sequential",
				"timezone": "America/New_York", "attendance_percent": 75}), Status: 200,
				Want: map[string]any{"data.navigation": "sequential", "data.timezone": "America/New_York", "data.attendance_percent": 75}},
			{Name: "settings keep what is not sent", Request: api("PUT", "/courses/settings/"+itoa(course), map[string]any{"attendance_percent": 60}),
				Status: 200, Want: map[string]any{"data.navigation": "sequential", "data.attendance_percent": 60}},
			{Name: "bad settings", Request: api("PUT", "/courses/settings/"+itoa(course), map[string]any{"navigation": "random",
				"timezone": "Mars/Olympus", "attendance_percent": 0}), Status: 400, Fields: []string{"navigation", "timezone", "attendance_percent"}},
			{Name: "settings of another domain's course", Request: other(e, "PUT", "/courses/settings/"+itoa(course), map[string]any{"navigation": "free"}), Status: 404},

			{Name: "outline", Request: api("GET", "/courses/outline/"+itoa(course), nil), Status: 200, Want: map[string]any{
				"data.course_id": course, "data.settings.navigation": "sequential", "data.sections.#": 3, "data.lessons_total": 5,
				"data.sections.0.id": s1, "data.sections.0.lessons.0.id": video, "data.sections.1.lessons.0.id": text,
				"data.sections.2.lessons.#": 0}},
			{Name: "outline of another domain's course", Request: other(e, "GET", "/courses/outline/"+itoa(course), nil), Status: 404},
			{Name: "outline of an unknown course", Request: api("GET", "/courses/outline/999999", nil), Status: 404},

			{Name: "delete a lesson", Request: api("DELETE", "/lessons/delete/"+lid, nil), Status: 200},
			{Name: "deleted lesson is gone", Request: api("GET", "/lessons/get/"+lid, nil), Status: 404},
			{Name: "delete another domain's lesson", Request: other(e, "DELETE", "/lessons/delete/"+itoa(video), nil), Status: 404},
			{Name: "positions close up", Request: api("POST", "/lessons/list", map[string]any{"section_id": s2}), Status: 200,
				Want: map[string]any{"total": 3, "data.0.title": "Talk", "data.0.position": 1, "data.2.position": 3}},
			{Name: "delete a section with its lessons", Request: api("DELETE", "/sections/delete/"+itoa(s2), nil), Status: 200},
			{Name: "its lessons are gone", Request: api("POST", "/lessons/list", map[string]any{"course_id": course}), Status: 200,
				Want: map[string]any{"total": 1, "data.0.id": video}},
			{Name: "delete the course", Request: api("DELETE", "/courses/delete/"+itoa(course), nil), Status: 200},
			{Name: "its outline is gone", Request: api("GET", "/courses/outline/"+itoa(course), nil), Status: 404},
			{Name: "its lessons are gone too", Request: api("GET", "/lessons/get/"+itoa(video), nil), Status: 404},
			{Name: "its sections are gone too", Request: api("PUT", "/sections/update/"+itoa(s1), map[string]any{"title": "x"}), Status: 404},
		})
	})
}

func TestLearningFilesUpload(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		r := upload(t, e, nil, `C:\Videos\lecture one.webm`, "", []byte("\x1a\x45\xdf\xa3 not really webm"))
		e.Expect(t, r, Scenario{Status: 200, Want: map[string]any{"data.name": "lecture one.webm", "data.content_type": "video/webm",
			"data.size": 20}})
		key := Str(t, r.JSON(t), "data.key")
		if !strings.HasPrefix(key, "learn/") {
			t.Errorf("key %q is not under learn/", key)
		}
		// A 2.5-second WAV: its length comes back rounded up when ffprobe
		// is installed (CI installs it), else 0; a PDF never has one.
		want := 3
		if _, err := exec.LookPath("ffprobe"); err != nil {
			want = 0
		}
		e.Expect(t, upload(t, e, nil, "tone.wav", "audio/wav", wav(8000, 20000)), Scenario{Status: 200,
			Want: map[string]any{"data.content_type": "audio/wav", "data.duration_s": want}})
		e.Expect(t, upload(t, e, nil, "notes.pdf", "application/pdf", []byte("%PDF-1.4")), Scenario{Status: 200,
			Want: map[string]any{"data.duration_s": 0}})
		e.Expect(t, upload(t, e, nil, "empty.pdf", "application/pdf", nil), Scenario{Status: 400, Fields: []string{"file"}})
		e.Expect(t, e.Do(Request{Method: "POST", Path: "/api/v1/files/upload", Body: map[string]any{"file": "x"}}),
			Scenario{Status: 415})
		e.Expect(t, e.Do(Request{Method: "POST", Path: "/api/v1/files/upload", Multipart: map[string][]string{"name": {"x"}}}),
			Scenario{Status: 400, Fields: []string{"file"}})
		e.Expect(t, e.Do(Request{Method: "POST", Path: "/api/v1/files/upload", NoAuth: true}), Scenario{Status: 401})
		// A file uploaded by the other domain cannot be used here.
		ro := upload(t, e, &e.Other, "theirs.pdf", "application/pdf", []byte("%PDF-1.4"))
		theirs := Int(t, ro.JSON(t), "data.id")
		course := create(t, e, "/courses/create", map[string]any{"course_name": "C"}, "data.course_id")
		sec := create(t, e, "/sections/create", map[string]any{"course_id": course, "title": "S"}, "data.id")
		e.Expect(t, e.LMS("POST", "/lessons/create", map[string]any{"section_id": sec, "title": "x", "type": "file", "file_id": theirs}),
			Scenario{Status: 404})
	})
}

// wav is a mono 8-bit PCM WAV file of n samples at rate.
func wav(rate, n int) []byte {
	var b bytes.Buffer
	le := func(v uint32, size int) {
		for i := 0; i < size; i++ {
			b.WriteByte(byte(v >> (8 * i)))
		}
	}
	b.WriteString("RIFF")
	le(uint32(36+n), 4)
	b.WriteString("WAVEfmt ")
	le(16, 4)
	le(1, 2) // PCM
	le(1, 2) // mono
	le(uint32(rate), 4)
	le(uint32(rate), 4) // bytes per second
	le(1, 2)            // block align
	le(8, 2)            // bits per sample
	b.WriteString("data")
	le(uint32(n), 4)
	for i := 0; i < n; i++ {
		b.WriteByte(byte(128 + 60*((i/20)%2)))
	}
	return b.Bytes()
}

func TestLearningFilesUploadLimit(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		// The same API on the same store, with a 1000-byte limit.
		api := &lmsapi.API{Store: e.Store, Learn: e.Main.Learn, MaxUpload: 1000, MaxBody: 1 << 20,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Limiter: httpx.NewRateLimiter(0, 0)}
		mux := http.NewServeMux()
		api.Register(mux)
		srv := httptest.NewServer(mux)
		defer srv.Close()
		small := *e
		small.URL = srv.URL
		if r := uploadTo(t, &small, "/api/v1/files/upload", bytes.Repeat([]byte("x"), 1000)); r.Status != 200 {
			t.Fatalf("1000 bytes: %d %s", r.Status, r.Body)
		}
		r := uploadTo(t, &small, "/api/v1/files/upload", bytes.Repeat([]byte("x"), 1001))
		small.Expect(t, r, Scenario{Status: 413, Want: map[string]any{"code": "body_too_large"}})
		r = uploadTo(t, &small, "/api/v1/files/upload", bytes.Repeat([]byte("x"), 3<<20))
		small.Expect(t, r, Scenario{Status: 413})
	})
}

// uploadTo posts content as a multipart file to path and returns the
// response.
func uploadTo(t *testing.T, e *Env, path string, content []byte) *Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "big.bin")
	fw.Write(content)
	mw.Close()
	return e.Do(Request{Method: "POST", Path: path, Body: buf.String(), Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
}

// fixture is a course with one section and lessons, and an enrolled user.
type fixture struct {
	course, section, user   int64
	text, video, embed, tst int64
	testID                  int64
}

func newFixture(t *testing.T, e *Env) fixture {
	t.Helper()
	var f fixture
	f.course = create(t, e, "/courses/create", map[string]any{"course_name": "Go"}, "data.course_id")
	f.testID = create(t, e, "/tests/create", map[string]any{"tests_name": "Final"}, "data.id")
	f.section = create(t, e, "/sections/create", map[string]any{"course_id": f.course, "title": "S"}, "data.id")
	up := upload(t, e, nil, "v.mp4", "video/mp4", bytes.Repeat([]byte("0123456789"), 1000))
	file := Int(t, up.JSON(t), "data.id")
	f.text = create(t, e, "/lessons/create", map[string]any{"section_id": f.section, "title": "Read", "type": "text", "body_md": "Hi"}, "data.id")
	f.video = create(t, e, "/lessons/create", map[string]any{"section_id": f.section, "title": "Watch", "type": "video", "file_id": file,
		"duration_s": 100}, "data.id")
	f.embed = create(t, e, "/lessons/create", map[string]any{"section_id": f.section, "title": "Extra", "type": "embed",
		"embed_provider": "vimeo", "embed_id": "76979871", "is_required": 0}, "data.id")
	f.tst = create(t, e, "/lessons/create", map[string]any{"section_id": f.section, "title": "Final test", "type": "test",
		"test_id": f.testID}, "data.id")
	f.user = user(t, e, "ann@example.com")
	if r := e.LMS("POST", "/courses/enroll", map[string]any{"courseId": f.course, "email": "ann@example.com"}); r.Status != 200 {
		t.Fatalf("enroll: %d %s", r.Status, r.Body)
	}
	return f
}

func TestLearningProgress(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		f := newFixture(t, e)
		ctx := context.Background()
		svc := e.Main.Learn
		var hooks atomic.Int32
		svc.OnCourseCompleted = func(ctx context.Context, domainID, courseID, userID int64, at time.Time) error {
			if domainID != e.Domain.ID || courseID != f.course || userID != f.user {
				t.Errorf("hook for domain %d course %d user %d", domainID, courseID, userID)
			}
			hooks.Add(1)
			return nil
		}
		for ev, pts := range map[string]int{"lesson_completed": 5, "course_completed": 50} {
			if r := e.LMS("PUT", "/gamification/rules", map[string]any{"event": ev, "points": pts}); r.Status != 200 {
				t.Fatalf("rule: %s", r.Body)
			}
		}
		get := map[string]any{"courseId": f.course, "email": "ann@example.com"}
		points := func(want int) Scenario {
			return Scenario{Name: "points", Request: api("POST", "/gamification/user-points", map[string]any{"user_id": f.user}), Status: 200,
				Want: map[string]any{"data.gamification_points": want}}
		}
		e.Scenarios(t, []Scenario{
			{Name: "nothing done", Request: api("POST", "/progress/get", get), Status: 200, Want: map[string]any{
				"data.percent_complete": 0, "data.required_total": 3, "data.completed_at": nil, "data.next_lesson_id": f.text,
				"data.lessons.#": 4, "data.lessons.0.state": "available", "data.lessons.0.completed_at": nil}},
			{Name: "progress by user_id", Request: api("POST", "/progress/get", map[string]any{"course_id": f.course, "user_id": f.user}), Status: 200},
			{Name: "progress needs course and learner", Request: api("POST", "/progress/get", nil), Status: 400,
				Fields: []string{"courseId", "user_id", "email"}},
			{Name: "progress of someone not enrolled", Request: api("POST", "/progress/get", map[string]any{"courseId": f.course,
				"user_id": user(t, e, "bob@example.com")}), Status: 409},
			{Name: "progress in another domain", Request: other(e, "POST", "/progress/get", get), Status: 404},
			{Name: "progress list in another domain", Request: other(e, "POST", "/progress/list", map[string]any{"courseId": f.course}), Status: 404},
			{Name: "mark in another domain", Request: other(e, "POST", "/progress/markComplete", map[string]any{"lessonId": f.text,
				"email": "ann@example.com"}), Status: 404},
			{Name: "reset in another domain", Request: other(e, "POST", "/progress/reset", get), Status: 404},
			{Name: "override in another domain", Request: other(e, "POST", "/unlock/override", map[string]any{"course_id": f.course,
				"email": "ann@example.com", "all": 1}), Status: 404},
		})

		// The learner marks the text lesson; a mark on the video is refused.
		if _, err := svc.MarkComplete(ctx, e.Domain.ID, f.user, f.text); err != nil {
			t.Fatalf("mark text: %v", err)
		}
		if _, err := svc.MarkComplete(ctx, e.Domain.ID, f.user, f.video); err == nil || !strings.Contains(err.Error(), "watching") {
			t.Errorf("mark video: %v, want refused", err)
		}
		// Seeking to the end is not watching it.
		p, err := svc.Watched(ctx, e.Domain.ID, f.user, f.video, [][2]int{{0, 5}, {95, 100}}, 100)
		if err != nil || p.State == learn.Done || p.WatchedPercent != 10 {
			t.Fatalf("seek to end: %+v %v", p, err)
		}
		p, err = svc.Watched(ctx, e.Domain.ID, f.user, f.video, [][2]int{{5, 60}, {60, 85}}, 85)
		if err != nil || p.State != learn.Done || p.WatchedPercent != 90 || p.CoursePercent != 66 {
			t.Fatalf("90%% distinct seconds: %+v", p)
		}
		if hooks.Load() != 0 {
			t.Fatalf("hook ran before the course was complete")
		}
		e.Scenarios(t, []Scenario{
			{Name: "two of three required", Request: api("POST", "/progress/get", get), Status: 200, Want: map[string]any{
				"data.percent_complete": 66, "data.required_done": 2, "data.next_lesson_id": f.embed, "data.lessons.1.state": "done",
				"data.lessons.1.watched_percent": 90, "data.lessons.1.position": 85}},
			points(10),
		})
		// The test engine reports a pass: the last required lesson and the
		// course complete, once.
		if err := svc.SetTestResult(ctx, e.Domain.ID, f.user, f.testID, true, time.Time{}); err != nil {
			t.Fatal(err)
		}
		r := e.LMS("POST", "/progress/get", get)
		e.Expect(t, r, Scenario{Status: 200, Want: map[string]any{"data.percent_complete": 100, "data.lessons.3.state": "done"}})
		completedAt := Str(t, r.JSON(t), "data.completed_at")
		if hooks.Load() != 1 {
			t.Fatalf("hook ran %d times, want 1", hooks.Load())
		}
		e.Scenarios(t, []Scenario{points(65)})

		// A fail afterwards un-completes the test lesson; the course keeps
		// its completion and the hook does not run again.
		if err := svc.SetTestResult(ctx, e.Domain.ID, f.user, f.testID, false, time.Time{}); err != nil {
			t.Fatal(err)
		}
		e.Scenarios(t, []Scenario{
			{Name: "fail keeps the course's completed_at", Request: api("POST", "/progress/get", get), Status: 200, Want: map[string]any{
				"data.percent_complete": 66, "data.completed_at": completedAt, "data.lessons.3.state": "available"}},
		})
		if err := svc.SetTestResult(ctx, e.Domain.ID, f.user, f.testID, true, time.Time{}); err != nil {
			t.Fatal(err)
		}
		e.Scenarios(t, []Scenario{
			{Name: "pass again: completed_at unchanged", Request: api("POST", "/progress/get", get), Status: 200,
				Want: map[string]any{"data.percent_complete": 100, "data.completed_at": completedAt}},
			points(65),
			{Name: "list", Request: api("POST", "/progress/list", map[string]any{"courseId": f.course}), Status: 200, Want: map[string]any{
				"total": 1, "page": 1, "data.0.user_id": f.user, "data.0.email": "ann@example.com", "data.0.percent_complete": 100,
				"data.0.completed_at": completedAt, "data.0.lessons": Absent}},
			{Name: "list paging", Request: api("POST", "/progress/list", map[string]any{"courseId": f.course, "page": 2, "limit": 1}), Status: 200,
				Want: map[string]any{"total": 1, "data.#": 0, "page": 2, "limit": 1}},
			{Name: "list bad paging", Request: api("POST", "/progress/list", map[string]any{"courseId": f.course, "limit": 0}), Status: 400,
				Fields: []string{"limit"}},
			{Name: "reset", Request: api("POST", "/progress/reset", get), Status: 200},
			{Name: "after reset only the passed test counts", Request: api("POST", "/progress/get", get), Status: 200, Want: map[string]any{
				"data.percent_complete": 33, "data.completed_at": nil, "data.lessons.0.state": "available", "data.lessons.1.watched_percent": 0}},
			{Name: "admin mark of the video", Request: api("POST", "/progress/markComplete", map[string]any{"lessonId": f.video,
				"email": "ann@example.com"}), Status: 200, Want: map[string]any{"data.state": "done", "data.percent_complete": 66}},
			{Name: "admin mark of the text completes again", Request: api("POST", "/progress/markComplete", map[string]any{"lesson_id": f.text,
				"user_id": f.user}), Status: 200, Want: map[string]any{"data.percent_complete": 100}},
			{Name: "points are given once per lesson and course, even after a reset", Request: api("POST", "/gamification/user-points",
				map[string]any{"user_id": f.user}), Status: 200, Want: map[string]any{"data.gamification_points": 65}},
			{Name: "admin mark needs a lesson", Request: api("POST", "/progress/markComplete", map[string]any{"email": "ann@example.com"}),
				Status: 400, Fields: []string{"lessonId"}},
			{Name: "admin mark of an unknown lesson", Request: api("POST", "/progress/markComplete", map[string]any{"lessonId": 999999,
				"email": "ann@example.com"}), Status: 404},
			{Name: "admin mark for someone not enrolled", Request: api("POST", "/progress/markComplete", map[string]any{"lessonId": f.text,
				"email": "bob@example.com"}), Status: 409},
		})
		if hooks.Load() != 2 {
			t.Errorf("hook ran %d times, want 2 (the first completion and the one after the reset)", hooks.Load())
		}

		// Deleting the user takes their progress with them.
		if r := e.LMS("DELETE", "/users/delete", map[string]any{"email": "ann@example.com"}); r.Status != 200 {
			t.Fatalf("delete user: %d %s", r.Status, r.Body)
		}
		e.Scenarios(t, []Scenario{
			{Name: "progress of a deleted user", Request: api("POST", "/progress/get", get), Status: 404},
			{Name: "list without them", Request: api("POST", "/progress/list", map[string]any{"courseId": f.course}), Status: 200,
				Want: map[string]any{"total": 0, "data.#": 0}},
		})
	})
}

func TestLearningLocksAndMedia(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		f := newFixture(t, e)
		ctx := context.Background()
		svc := e.Main.Learn
		start := time.Now().UTC().Truncate(time.Second)
		e.Clock.Set(start)
		// The video opens at a date one day ahead; the test lesson after
		// the text lesson.
		e.Scenarios(t, []Scenario{
			{Name: "drip the video", Request: api("POST", "/lessons/unlock/set", map[string]any{"lesson_id": f.video,
				"at": start.Add(24 * time.Hour).Format(time.RFC3339)}), Status: 200},
			{Name: "the test after the text", Request: api("POST", "/lessons/unlock/set", map[string]any{"lesson_id": f.tst,
				"after_lesson_ids": itoa(f.text)}), Status: 200},
			{Name: "locked states", Request: api("POST", "/progress/get", map[string]any{"courseId": f.course, "email": "ann@example.com"}),
				Status: 200, Want: map[string]any{"data.lessons.1.state": "locked", "data.lessons.1.reason": "date",
					"data.lessons.1.unlock_at": start.Add(24 * time.Hour).Format(time.RFC3339), "data.lessons.3.state": "locked",
					"data.lessons.3.reason": "prerequisites", "data.lessons.3.after_lesson_ids.0": f.text}},
		})
		var locked learn.ErrLocked
		if _, err := svc.Lesson(ctx, e.Domain.ID, f.user, f.video); !asLocked(err, &locked) || locked.Reason != "date" ||
			!locked.At.Equal(start.Add(24*time.Hour)) {
			t.Fatalf("open locked video: %v", err)
		}
		if _, err := svc.Watched(ctx, e.Domain.ID, f.user, f.video, [][2]int{{0, 100}}, 100); !asLocked(err, &locked) {
			t.Fatalf("progress write on a locked lesson: %v", err)
		}
		// A media link made for the locked lesson is refused.
		media := svc.MediaURL(e.Domain.ID, f.user, f.video, time.Hour)
		if r := e.Do(Request{Method: "GET", Path: media, NoAuth: true}); r.Status != 403 {
			t.Fatalf("media of a locked lesson: %d", r.Status)
		}
		// The clock passes the date: the lesson opens, its media plays
		// with ranges.
		e.Clock.Set(start.Add(24*time.Hour + time.Second))
		v, err := svc.Lesson(ctx, e.Domain.ID, f.user, f.video)
		if err != nil || v.MediaURL == "" || v.ContentType != "video/mp4" || v.NextLessonID != f.embed || v.PrevLessonID != f.text {
			t.Fatalf("open video: %+v %v", v, err)
		}
		r := e.Do(Request{Method: "GET", Path: v.MediaURL, NoAuth: true, Header: map[string]string{"Range": "bytes=10-19"}})
		if r.Status != http.StatusPartialContent || string(r.Body) != "0123456789" || r.Header.Get("Content-Type") != "video/mp4" {
			t.Fatalf("media range: %d %q %s", r.Status, r.Body, r.Header.Get("Content-Type"))
		}
		if r := e.Do(Request{Method: "GET", Path: v.MediaURL[:len(v.MediaURL)-3] + "AAA", NoAuth: true}); r.Status != 403 {
			t.Errorf("tampered media link: %d", r.Status)
		}
		// Another learner's link or a link past its time is refused.
		bob := user(t, e, "bob@example.com")
		if r := e.Do(Request{Method: "GET", Path: svc.MediaURL(e.Domain.ID, bob, f.video, time.Hour), NoAuth: true}); r.Status != 403 {
			t.Errorf("media for a learner not enrolled: %d", r.Status)
		}
		old := svc.MediaURL(e.Domain.ID, f.user, f.video, time.Minute)
		e.Clock.Set(start.Add(24*time.Hour + 2*time.Minute))
		if r := e.Do(Request{Method: "GET", Path: old, NoAuth: true}); r.Status != 403 {
			t.Errorf("expired media link: %d", r.Status)
		}
		// Another domain's id in a link signed for this one names nothing
		// there.
		if r := e.Do(Request{Method: "GET", Path: svc.MediaURL(e.Other.ID, f.user, f.video, time.Hour), NoAuth: true}); r.Status != 404 {
			t.Errorf("media link naming another domain: %d", r.Status)
		}

		// Watch it, then put the date back: a finished lesson never locks
		// again.
		if _, err := svc.Watched(ctx, e.Domain.ID, f.user, f.video, [][2]int{{0, 100}}, 100); err != nil {
			t.Fatal(err)
		}
		e.Clock.Set(start)
		if v, err := svc.Lesson(ctx, e.Domain.ID, f.user, f.video); err != nil || v.State != learn.Done {
			t.Fatalf("finished lesson before its date: %+v %v", v, err)
		}

		// Sequential navigation, then an override of everything.
		e.Scenarios(t, []Scenario{
			{Name: "sequential", Request: api("PUT", "/courses/settings/"+itoa(f.course), map[string]any{"navigation": "sequential"}), Status: 200},
			{Name: "override needs a lesson or all", Request: api("POST", "/unlock/override", map[string]any{"course_id": f.course,
				"email": "ann@example.com"}), Status: 400, Fields: []string{"lesson_id"}},
			{Name: "override of another course's lesson", Request: api("POST", "/unlock/override", map[string]any{"course_id": f.course,
				"email": "ann@example.com", "lesson_id": create(t, e, "/lessons/create", map[string]any{"section_id": create(t, e,
					"/sections/create", map[string]any{"course_id": create(t, e, "/courses/create", map[string]any{"course_name": "X"},
						"data.course_id"), "title": "X"}, "data.id"), "title": "X", "type": "text"}, "data.id")}), Status: 400,
				Fields: []string{"lesson_id"}},
		})
		if _, err := svc.Lesson(ctx, e.Domain.ID, f.user, f.tst); !asLocked(err, &locked) || locked.Reason != "prerequisites" {
			t.Fatalf("test lesson before the text: %v", err)
		}
		e.Scenarios(t, []Scenario{
			{Name: "override the test lesson", Request: api("POST", "/unlock/override", map[string]any{"course_id": f.course,
				"email": "ann@example.com", "lesson_id": f.tst}), Status: 200, Want: map[string]any{"data.lesson_id": f.tst}},
		})
		if _, err := svc.Lesson(ctx, e.Domain.ID, f.user, f.tst); err != nil {
			t.Fatalf("overridden lesson: %v", err)
		}
		e.Scenarios(t, []Scenario{
			{Name: "remove the override", Request: api("POST", "/unlock/override", map[string]any{"course_id": f.course,
				"email": "ann@example.com", "lesson_id": f.tst, "remove": 1}), Status: 200},
			{Name: "remove it again", Request: api("POST", "/unlock/override", map[string]any{"course_id": f.course,
				"email": "ann@example.com", "lesson_id": f.tst, "remove": 1}), Status: 404},
		})
		if _, err := svc.Lesson(ctx, e.Domain.ID, f.user, f.tst); !asLocked(err, &locked) {
			t.Fatalf("override removed: %v", err)
		}
		// A visitor sees free previews only, and records nothing.
		if r := e.LMS("PUT", "/lessons/update/"+itoa(f.embed), map[string]any{"is_preview": 1}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		if v, err := svc.Lesson(ctx, e.Domain.ID, bob, f.embed); err != nil || v.Enrolled || v.EmbedURL != "https://player.vimeo.com/video/76979871?dnt=1" {
			t.Fatalf("preview for a visitor: %+v %v", v, err)
		}
		if _, err := svc.MarkComplete(ctx, e.Domain.ID, bob, f.embed); err == nil {
			t.Errorf("a visitor's mark was accepted")
		}
		if _, err := svc.Lesson(ctx, e.Domain.ID, bob, f.text); !asLocked(err, &locked) || locked.Reason != "not_enrolled" {
			t.Errorf("non-preview for a visitor: %v", err)
		}
		// The text lesson renders sanitised Markdown.
		if v, err := svc.Lesson(ctx, e.Domain.ID, f.user, f.text); err != nil || !strings.Contains(string(v.HTML), "<p>Hi</p>") {
			t.Errorf("text lesson: %q %v", v.HTML, err)
		}
		// Dashboard: the course with its percentage.
		d, err := svc.Dashboard(ctx, e.Domain.ID, f.user)
		if err != nil || len(d.Courses) != 1 || d.Courses[0].Course.ID != f.course || d.Courses[0].Percent != 33 {
			t.Fatalf("dashboard: %+v %v", d, err)
		}
		// Domain B cannot open domain A's lessons through the service.
		if _, err := svc.Lesson(ctx, e.Other.ID, f.user, f.text); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("cross-domain lesson: %v", err)
		}
		if _, err := svc.Outline(ctx, e.Other.ID, f.course, 0); err == nil {
			t.Errorf("cross-domain outline: no error")
		}
	})
}

func asLocked(err error, target *learn.ErrLocked) bool {
	return errors.As(err, target)
}
