package httpx

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RateLimiter is a token bucket per key: each key may burst up to Burst
// requests and then Rate requests per second. Buckets live in this
// process's memory; a fleet of processes behind a balancer each keep their
// own (see docs/configuration.md).
type RateLimiter struct {
	Rate  float64 // tokens per second; <= 0 disables limiting
	Burst int     // bucket size

	mu      sync.Mutex
	buckets map[string]*bucket
	sweep   time.Time
	now     func() time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewRateLimiter returns a limiter of rate requests per second with the
// given burst.
func NewRateLimiter(rate float64, burst int) *RateLimiter {
	if burst < 1 {
		burst = 1
	}
	return &RateLimiter{Rate: rate, Burst: burst, buckets: map[string]*bucket{}, now: time.Now}
}

// Decision is the outcome of one Allow call.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	// RetryAfter is how long until one token is available (0 if allowed).
	RetryAfter time.Duration
	// Reset is how long until the bucket is full again.
	Reset time.Duration
}

// Allow takes one token from key's bucket if it can.
func (l *RateLimiter) Allow(key string) Decision {
	if l == nil || l.Rate <= 0 {
		return Decision{Allowed: true, Limit: 0}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.sweepIdle(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: float64(l.Burst), last: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(float64(l.Burst), b.tokens+now.Sub(b.last).Seconds()*l.Rate)
	b.last = now
	d := Decision{Limit: l.Burst}
	if b.tokens >= 1 {
		b.tokens--
		d.Allowed = true
	} else {
		d.RetryAfter = time.Duration((1 - b.tokens) / l.Rate * float64(time.Second))
	}
	d.Remaining = int(b.tokens)
	d.Reset = time.Duration((float64(l.Burst) - b.tokens) / l.Rate * float64(time.Second))
	return d
}

// sweepIdle drops buckets that have refilled completely, at most once a
// minute, so memory stays bounded by the keys active in the last minute.
func (l *RateLimiter) sweepIdle(now time.Time) {
	if now.Sub(l.sweep) < time.Minute {
		return
	}
	l.sweep = now
	full := time.Duration(float64(l.Burst) / l.Rate * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.last) > full {
			delete(l.buckets, k)
		}
	}
}

// SetHeaders writes the X-RateLimit-* headers, and Retry-After when the
// request was refused. Times are whole seconds, rounded up.
func (d Decision) SetHeaders(h http.Header) {
	if d.Limit == 0 {
		return
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("X-RateLimit-Reset", strconv.Itoa(ceilSeconds(d.Reset)))
	if !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(d.RetryAfter))))
	}
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
