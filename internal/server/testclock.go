package server

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/internal/httpx"
)

// testClock is the server's clock under --test-clock: the real clock (or
// the one Main.Now had) moved by an offset that POST /_test/clock sets,
// so time keeps running from the instant a test asked for.
type testClock struct {
	base func() time.Time
	mu   sync.Mutex
	off  time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base().Add(c.off)
}

// openTestClock puts the settable clock in front of Main.Now when
// --test-clock is on, before anything copies Main.Now.
func (m *Main) openTestClock() {
	if !m.Config.TestClock || m.testClock != nil {
		return
	}
	base := m.Now
	if base == nil {
		base = time.Now
	}
	m.testClock = &testClock{base: base}
	m.Now = m.testClock.Now
}

// testClockRoutes adds POST /_test/clock {"now": RFC3339 | ""} when the
// test clock is on: the server's clock reads now from then on (and keeps
// running); "" returns it to real time. Tests only: Config.Check refuses
// --test-clock unless the server listens on loopback.
func (m *Main) testClockRoutes(mux *http.ServeMux) {
	if m.testClock == nil {
		return
	}
	mux.HandleFunc("POST /_test/clock", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Now *string `json:"now"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil || body.Now == nil {
			httpx.WriteJSON(w, http.StatusBadRequest, map[string]any{"message": `send {"now": "2026-01-02T15:04:05Z"} or {"now": ""}`,
				"code": "invalid_input", "fields": []map[string]string{{"field": "now", "message": "is required (RFC 3339 or \"\")"}}})
			return
		}
		c := m.testClock
		if *body.Now == "" {
			c.mu.Lock()
			c.off = 0
			c.mu.Unlock()
		} else {
			t, err := time.Parse(time.RFC3339, *body.Now)
			if err != nil {
				httpx.WriteJSON(w, http.StatusBadRequest, map[string]any{"message": "now must be RFC 3339, such as 2026-01-02T15:04:05Z",
					"code": "invalid_input", "fields": []map[string]string{{"field": "now", "message": "must be RFC 3339"}}})
				return
			}
			c.mu.Lock()
			c.off = t.Sub(c.base())
			c.mu.Unlock()
		}
		m.Logger.Warn("test clock moved", "now", c.Now().UTC().Format(time.RFC3339))
		httpx.WriteJSON(w, http.StatusOK, map[string]string{"now": c.Now().UTC().Format(time.RFC3339Nano)})
	})
}
