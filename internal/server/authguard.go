package server

import "github.com/lectern-lms/lectern/internal/httpx"

// authGuard returns a limiter of failed authentications per client
// address, for both APIs to share (one per process, like the key
// limiter), or nil when rate limiting is off (--rate-limit 0).
func (m *Main) authGuard() *httpx.AuthGuard {
	if m.Config.RateLimit <= 0 {
		return nil
	}
	return httpx.NewAuthGuard(httpx.AuthFailRate, httpx.AuthFailBurst)
}
