package httpx

import (
	"net/http"
	"testing"
	"time"
)

func TestRateLimiterBucket(t *testing.T) {
	clock := time.Unix(1000, 0)
	l := NewRateLimiter(2, 3) // 2 per second, burst 3
	l.now = func() time.Time { return clock }
	steps := []struct {
		advance   time.Duration
		allowed   bool
		remaining int
	}{
		{0, true, 2}, {0, true, 1}, {0, true, 0}, {0, false, 0},
		{500 * time.Millisecond, true, 0}, // one token back after 0.5s
		{0, false, 0},
		{10 * time.Second, true, 2}, // refills to the burst, not beyond
	}
	for i, s := range steps {
		clock = clock.Add(s.advance)
		d := l.Allow("k")
		if d.Allowed != s.allowed || d.Remaining != s.remaining {
			t.Fatalf("step %d: allowed=%v remaining=%d, want %v %d", i, d.Allowed, d.Remaining, s.allowed, s.remaining)
		}
		if !d.Allowed && d.RetryAfter <= 0 {
			t.Fatalf("step %d: refused without a retry time", i)
		}
	}
	if d := l.Allow("other"); !d.Allowed || d.Remaining != 2 {
		t.Fatalf("keys share a bucket: %+v", d)
	}
	h := http.Header{}
	Decision{Allowed: false, Limit: 3, RetryAfter: 300 * time.Millisecond, Reset: 1500 * time.Millisecond}.SetHeaders(h)
	if h.Get("Retry-After") != "1" || h.Get("X-RateLimit-Reset") != "2" || h.Get("X-RateLimit-Limit") != "3" {
		t.Fatalf("headers %v", h)
	}
}

func TestRateLimiterDisabled(t *testing.T) {
	l := NewRateLimiter(0, 1)
	for i := 0; i < 100; i++ {
		if !l.Allow("k").Allowed {
			t.Fatal("a zero rate must disable limiting")
		}
	}
}
