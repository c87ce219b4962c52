package httpx

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestDrainingAnswers503(t *testing.T) {
	var down atomic.Bool
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	unavailable := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	h := Draining(&down, unavailable, ok)
	for _, c := range []struct {
		down bool
		want int
	}{{false, 200}, {true, 503}} {
		down.Store(c.down)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code != c.want {
			t.Errorf("shutting down=%v: %d, want %d", c.down, rec.Code, c.want)
		}
		if c.down && rec.Header().Get("Connection") != "close" {
			t.Errorf("503 without Connection: close")
		}
	}
}

func TestAcceptsJSON(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                              true,
		"*/*":                           true,
		"application/json":              true,
		"application/*":                 true,
		"text/html, application/json":   true,
		"application/json; q=0.1":       true,
		"application/json;q=0":          false,
		"text/html":                     false,
		"application/xml, text/plain":   false,
		"APPLICATION/JSON; charset=utf": true,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := AcceptsJSON(r); got != want {
			t.Errorf("Accept %q: %v, want %v", accept, got, want)
		}
	}
}
