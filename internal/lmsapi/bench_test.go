package lmsapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

// The benchmarks run over real HTTP against a real server on SQLite. Each
// has a "bare" twin: a plain net/http handler that writes the same JSON,
// so the difference is Lectern's own cost (auth, parameters, store).
// Results are recorded in docs/performance.md.

func benchPost(b *testing.B, client *http.Client, url string, header map[string]string, body []byte) {
	b.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

func authHeader(d apitest.Domain) map[string]string {
	return map[string]string{"Authorization": d.LMSKey, "x-domain-id": fmt.Sprint(d.ID)}
}

func BenchmarkUsersCreate(b *testing.B) {
	b.Run("lectern", func(b *testing.B) {
		e := apitest.Start(b, apitest.Backend{Name: "sqlite"})
		client := &http.Client{}
		var n atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			body := fmt.Sprintf(`{"username":"u%d","email":"u%d@example.com"}`, n.Add(1), n.Load())
			benchPost(b, client, e.URL+"/api/v1/users/create", authHeader(e.Domain), []byte(body))
		}
	})
	b.Run("bare", func(b *testing.B) {
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var in map[string]any
			json.NewDecoder(r.Body).Decode(&in)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"message": "User created", "id": n.Add(1)})
		}))
		defer srv.Close()
		client := &http.Client{}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			benchPost(b, client, srv.URL, nil, []byte(`{"username":"u","email":"u@example.com"}`))
		}
	})
}

// BenchmarkCoursesList lists courses in a domain holding 1,000 of them:
// the default page (50) and the largest (500).
func BenchmarkCoursesList(b *testing.B) {
	e := apitest.Start(b, apitest.Backend{Name: "sqlite"})
	for i := 0; i < 1000; i++ {
		if _, err := e.Store.CreateCourse(context.Background(), e.Domain.ID, lms.Course{Name: fmt.Sprintf("Course %d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	type item struct {
		ID         int64  `json:"id"`
		CourseID   int64  `json:"course_id"`
		CourseName string `json:"course_name"`
	}
	for _, limit := range []int{50, 500} {
		body := []byte(fmt.Sprintf(`{"limit":%d}`, limit))
		b.Run(fmt.Sprintf("lectern/limit=%d", limit), func(b *testing.B) {
			client := &http.Client{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchPost(b, client, e.URL+"/api/v1/courses/list", authHeader(e.Domain), body)
			}
		})
		b.Run(fmt.Sprintf("bare/limit=%d", limit), func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				data := make([]item, limit)
				for i := range data {
					data[i] = item{int64(i + 1), int64(i + 1), fmt.Sprintf("Course %d", i)}
				}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"message": "Courses listed", "data": data, "total": 1000, "page": 1, "limit": limit})
			}))
			defer srv.Close()
			client := &http.Client{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchPost(b, client, srv.URL, nil, body)
			}
		})
	}
}

// BenchmarkHandlerGetUser runs the server's whole handler (middleware,
// routing, the LMS API) on a users/getuser request in memory, without a
// socket: the CPU and the allocations of Lectern's own code for one point
// read (classroomapi's BenchmarkHandler is the same for the classroom API).
func BenchmarkHandlerGetUser(b *testing.B) {
	e := apitest.Start(b, apitest.Backend{Name: "sqlite"})
	req, _ := http.NewRequest("POST", e.URL+"/api/v1/users/create", bytes.NewReader([]byte(`{"username":"ann","email":"ann@example.com"}`)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range authHeader(e.Domain) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	var created struct {
		ID int64 `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || created.ID == 0 {
		b.Fatalf("create a user: %v %+v", err, created)
	}
	h := e.Main.Handler()
	url := fmt.Sprintf("http://127.0.0.1:8080/api/v1/users/getuser?userId=%d", created.ID)
	b.ReportAllocs()
	for b.Loop() {
		r, _ := http.NewRequest("GET", url, nil)
		r.Header.Set("Authorization", e.Domain.LMSKey)
		r.Header.Set("X-Domain-Id", fmt.Sprint(e.Domain.ID))
		r.RemoteAddr = "127.0.0.1:50000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		e.Logs.Reset()
		if w.Code != http.StatusOK {
			b.Fatalf("getuser: %d %s", w.Code, w.Body)
		}
	}
}
