package lmsapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
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
