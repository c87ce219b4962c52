package classroomapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
)

// The benchmarks run over real HTTP against a real server on SQLite.
// Results are recorded in docs/performance.md.

func benchVC(b *testing.B, client *http.Client, e *apitest.Env, op string, params url.Values) {
	b.Helper()
	params.Set("apikey", e.Domain.ClassroomKey)
	resp, err := client.Post(e.URL+"/v2/"+op, "application/x-www-form-urlencoded", strings.NewReader(params.Encode()))
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(body), `"status":"error"`) {
		b.Fatalf("%s: %d %s", op, resp.StatusCode, body)
	}
}

func BenchmarkSchedule(b *testing.B) {
	e := apitest.Start(b, apitest.Backend{Name: "sqlite"})
	client := &http.Client{}
	for _, tc := range []struct {
		name   string
		params url.Values
	}{
		{"single", vals("title", "Algebra", "timezone", "28", "date", "2031-03-10", "start_time", "03:00 PM", "end_time", "04:00 PM")},
		{"weekly-52", vals("title", "Algebra", "timezone", "23", "date", "2031-03-10", "start_time", "03:00 PM", "end_time", "04:00 PM",
			"is_recurring", "1", "repeat", "4", "end_classes_count", "52")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				benchVC(b, client, e, "schedule", tc.params)
			}
		})
	}
}

func BenchmarkListClass(b *testing.B) {
	e := apitest.Start(b, apitest.Backend{Name: "sqlite"})
	for i := 0; i < 10000; i++ {
		makeClass(b, e, e.Domain, fmt.Sprintf("Class %d", i), start.Add(time.Duration(i)*time.Hour))
	}
	client := &http.Client{}
	for _, tc := range []struct {
		name   string
		params url.Values
	}{
		{"first-page", vals()},
		{"page-100-of-100", vals("limit", "100", "limitstart", "9900")},
		{"search", vals("search", "class 99")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				benchVC(b, client, e, "listclass", tc.params)
			}
		})
	}
}

func BenchmarkGetClassLaunch(b *testing.B) {
	e := apitest.Start(b, apitest.Backend{Name: "sqlite"})
	c := makeClass(b, e, e.Domain, "Launch", start)
	e.Clock.Set(start)
	client := &http.Client{}
	params := vals("class_id", itoa(c.ID), "userId", "7", "userName", "Ann", "isTeacher", "0", "lessonName", "L", "courseName", "C")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		benchVC(b, client, e, "getclasslaunch", params)
	}
}

func BenchmarkGetClass(b *testing.B) {
	e := apitest.Start(b, apitest.Backend{Name: "sqlite"})
	c := makeClass(b, e, e.Domain, "Get", start)
	e.Clock.Set(start)
	client := &http.Client{}
	params := vals("class_id", itoa(c.ID))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		benchVC(b, client, e, "getclass", params)
	}
}

// BenchmarkHandler runs the server's whole handler (middleware, routing,
// the classroom API) on a request in memory, without a socket: the CPU and
// the allocations of Lectern's own code for one request, which the
// benchmarks over HTTP above mix with the client's and the kernel's.
func BenchmarkHandler(b *testing.B) {
	e := apitest.Start(b, apitest.Backend{Name: "sqlite"})
	c := makeClass(b, e, e.Domain, "Launch", start)
	for i := range 9 { // listclass's first page: ten classes
		makeClass(b, e, e.Domain, fmt.Sprintf("Class %d", i), start.Add(time.Duration(i)*time.Hour))
	}
	e.Clock.Set(start)
	h := e.Main.Handler()
	for _, tc := range []struct{ op, body string }{
		{"getclass", "class_id=" + itoa(c.ID)},
		{"getclasslaunch", "class_id=" + itoa(c.ID) + "&userId=7&userName=Ann&isTeacher=0&lessonName=L&courseName=C"},
		{"listclass", ""},
	} {
		body := "apikey=" + e.Domain.ClassroomKey
		if tc.body != "" {
			body += "&" + tc.body
		}
		b.Run(tc.op, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, _ := http.NewRequest("POST", "http://127.0.0.1:8080/v2/"+tc.op, strings.NewReader(body))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r.RemoteAddr = "127.0.0.1:50000"
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				e.Logs.Reset()
				if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"status":"error"`)) {
					b.Fatalf("%s: %d %s", tc.op, w.Code, w.Body)
				}
			}
		})
	}
}
