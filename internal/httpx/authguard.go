package httpx

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Failed authentications allowed per client address: a burst of
// AuthFailBurst, then AuthFailRate per second.
const (
	AuthFailBurst = 30
	AuthFailRate  = 0.5
)

// AuthGuard limits failed authentications per client address, so that a
// flood of wrong keys from one address is refused before any key is
// checked. A nil *AuthGuard allows everything.
type AuthGuard struct {
	l *RateLimiter
}

// NewAuthGuard returns a guard allowing burst failures, then rate per
// second, per client address.
func NewAuthGuard(rate float64, burst int) *AuthGuard {
	return &AuthGuard{l: NewRateLimiter(rate, burst)}
}

// ClientAddr is the address a request came from (the peer's IP, without
// the port).
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Blocked reports whether r's address has used up its failures; when it
// has, retry is how long until it may try again. It takes nothing from the
// budget: Failed does.
func (g *AuthGuard) Blocked(r *http.Request) (retry time.Duration, blocked bool) {
	if g == nil || g.l.Rate <= 0 {
		return 0, false
	}
	l := g.l
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[ClientAddr(r)]
	if !ok {
		return 0, false
	}
	now := l.now()
	tokens := math.Min(float64(l.Burst), b.tokens+now.Sub(b.last).Seconds()*l.Rate)
	if tokens >= 1 {
		return 0, false
	}
	return time.Duration((1 - tokens) / l.Rate * float64(time.Second)), true
}

// Failed records a failed authentication from r's address.
func (g *AuthGuard) Failed(r *http.Request) {
	if g != nil {
		g.l.Allow(ClientAddr(r))
	}
}

// RetryAfter writes the Retry-After header for a blocked request.
func RetryAfter(h http.Header, retry time.Duration) {
	h.Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(retry))))
}
