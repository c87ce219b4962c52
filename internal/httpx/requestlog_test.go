package httpx

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Paris on a machine without a zone database
)

// The request line LogHandler writes by hand must be the bytes slog's own
// handlers write for the same record, in both formats, including the lines
// it hands to slog because a value needs quoting or escaping.
func TestLogHandlerWritesWhatSlogWrites(t *testing.T) {
	at := time.Date(2026, 11, 29, 5, 14, 0, 123456789, time.FixedZone("", 3600))
	base := requestLine{time: at, method: "POST", path: "/v2/{operation}", status: 200,
		duration: 123456 * time.Nanosecond, domainID: 1, requestID: "0bb431558429c31a"}
	cases := []struct {
		name   string
		change func(*requestLine)
		byHand bool // the line is one LogHandler puts together itself
	}{
		{"plain", func(*requestLine) {}, true},
		{"ids", func(l *requestLine) { l.path = "/api/v1/courses/{id}"; l.ids = "id=42" }, true},
		{"two ids", func(l *requestLine) { l.ids = "class_id=5 user_id=7" }, true},
		{"ids without '='", func(l *requestLine) { l.ids = "7" }, true},
		{"whole milliseconds", func(l *requestLine) { l.time = at.Truncate(time.Second); l.duration = 3 * time.Second }, true},
		{"utc", func(l *requestLine) { l.time = at.UTC() }, true},
		{"no domain, error", func(l *requestLine) { l.domainID = 0; l.status = 500 }, true},
		{"starred path", func(l *requestLine) { l.path = "/c/*/join:x.y" }, true},
		{"odd method", func(l *requestLine) { l.method = "M E" }, false},
		{"empty method", func(l *requestLine) { l.method = "" }, false},
		{"quote in path", func(l *requestLine) { l.path = `/a"b` }, false},
		{"non-ASCII path", func(l *requestLine) { l.path = "/é" }, false},
		{"odd ids", func(l *requestLine) { l.ids = `a="b"` }, false},
		{"control byte", func(l *requestLine) { l.requestID = "a\nb" }, false},
	}
	for _, format := range []string{"text", "json"} {
		for _, c := range cases {
			t.Run(format+"/"+c.name, func(t *testing.T) {
				l := base
				c.change(&l)
				var want, got bytes.Buffer
				var slogHandler slog.Handler = slog.NewTextHandler(&want, nil)
				if format == "json" {
					slogHandler = slog.NewJSONHandler(&want, nil)
				}
				if err := slogHandler.Handle(context.Background(), l.record()); err != nil {
					t.Fatal(err)
				}
				if byHand := NewLogHandler(format, &got).logRequest(context.Background(), &l); byHand != c.byHand {
					t.Errorf("put together by hand: %v, want %v", byHand, c.byHand)
				}
				if got.String() != want.String() {
					t.Errorf("LogHandler wrote\n%s\nslog writes\n%s", got.String(), want.String())
				}
			})
		}
	}
}

// One LogHandler keeps the second it last wrote: lines of the same
// second, of the next, of the same second in another zone and across a
// day, a year and a zone's change to summer time show the time as slog
// does.
func TestLogHandlerTimeAcrossSeconds(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 31, 23, 59, 58, 999999999, time.UTC)
	times := []time.Time{
		at, at.Add(-time.Nanosecond), at.Add(-999999999 + 120000000), at.Add(-999999999), // the same second
		at.Add(1), at.Add(1 + 5e8), at.Add(1 + 1e9), // the next seconds, a new year
		at.In(paris), at.In(time.FixedZone("", -5*3600-30*60)), at, // the same second in other zones
		time.Date(2027, 3, 28, 1, 59, 59, 5e6, paris), time.Date(2027, 3, 28, 3, 0, 0, 5e6, paris), // summer time
		time.Date(2027, 3, 28, 1, 59, 59, 5e6, paris).Add(time.Second),
	}
	for _, format := range []string{"text", "json"} {
		var got bytes.Buffer
		h := NewLogHandler(format, &got)
		for _, tm := range times {
			l := requestLine{time: tm, method: "GET", path: "/healthz", status: 200, duration: time.Millisecond, requestID: "r"}
			var want bytes.Buffer
			if err := slogHandlerFor(format, &want).Handle(context.Background(), l.record()); err != nil {
				t.Fatal(err)
			}
			got.Reset()
			if !h.logRequest(context.Background(), &l) {
				t.Fatalf("%s: %v not written by hand", format, tm)
			}
			if got.String() != want.String() {
				t.Errorf("%s, %v: LogHandler wrote\n%s\nslog writes\n%s", format, tm, got.String(), want.String())
			}
		}
	}
}

// Through the middleware, a LogHandler logs each request once, with the
// route's pattern and ids, and any other handler gets the same record.
func TestLogWritesOneLinePerRequest(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var fast, slow bytes.Buffer
		for _, h := range []slog.Handler{NewLogHandler(format, &fast), slogHandlerFor(format, &slow)} {
			mux := http.NewServeMux()
			mux.HandleFunc("GET /courses/{id}", func(w http.ResponseWriter, r *http.Request) {
				RequestInfo(r.Context()).DomainID = 9
				w.WriteHeader(http.StatusTeapot)
			})
			srv := httptest.NewServer(Log(slog.New(h), mux))
			res, err := http.Get(srv.URL + "/courses/77")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			srv.Close()
		}
		// The lines differ only in their time, duration and request id.
		for _, out := range []string{fast.String(), slow.String()} {
			if n := strings.Count(out, "\n"); n != 1 {
				t.Fatalf("%s: %d lines, want 1:\n%s", format, n, out)
			}
			for _, want := range []string{"GET", "/courses/{id}", "418", "9", "id=77", "request_id"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: no %q in %s", format, want, out)
				}
			}
		}
	}
}

func slogHandlerFor(format string, w *bytes.Buffer) slog.Handler {
	if format == "json" {
		return slog.NewJSONHandler(w, nil)
	}
	return slog.NewTextHandler(w, nil)
}

// BenchmarkRequestLine is one request's log line: by hand through
// LogHandler, and through slog's text handler.
func BenchmarkRequestLine(b *testing.B) {
	l := requestLine{time: time.Now(), method: "POST", path: "/v2/{operation}", status: 200,
		duration: 123456 * time.Nanosecond, domainID: 1, requestID: "0bb431558429c31a", ids: "class_id=5"}
	var discard discardWriter
	b.Run("LogHandler", func(b *testing.B) {
		h := NewLogHandler("text", discard)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			h.logRequest(context.Background(), &l)
		}
	})
	b.Run("slog", func(b *testing.B) {
		h := slog.NewTextHandler(discard, nil)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			h.Handle(context.Background(), l.record())
		}
	})
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// Request ids are 16 lowercase hex digits, and a run of them repeats none.
func TestRequestIDs(t *testing.T) {
	seen := make(map[string]bool)
	for range 10000 {
		id := newRequestID()
		if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("request id %q: want 16 lowercase hex digits", id)
		}
		if seen[id] {
			t.Fatalf("request id %q came twice", id)
		}
		seen[id] = true
	}
}
