package server

import (
	"github.com/lectern-lms/lectern/internal/cert"
	"github.com/lectern-lms/lectern/internal/httpx"
)

// certificates is the certificate issuer: its public routes, the
// management API's issue and revoke, and the hook course completion calls
// (learn.Service.OnCourseCompleted).
func (m *Main) certificates(limiter *httpx.RateLimiter) *cert.Issuer {
	return &cert.Issuer{Store: m.Store, Now: m.Now, BaseURL: m.BaseURL, Secret: m.Secret, Logger: m.Logger, Limiter: limiter}
}
