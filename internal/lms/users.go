package lms

import (
	"net/mail"
	"strings"
	"time"
)

// User is a learner or staff member of a domain.
type User struct {
	ID        int64
	Name      string
	Username  string
	Email     string
	CreatedAt time.Time
}

// EmailKey is the form an email is compared in: trimmed and lower-cased,
// so uniqueness per domain is case-insensitive.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// ValidEmail reports whether s is a plain address such as ann@example.com:
// no display name, a local part, an @, and a domain with a dot.
func ValidEmail(s string) bool {
	if len(s) > 254 || strings.ContainsAny(s, " \t\r\n<>") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	host := s[at+1:]
	return at > 0 && strings.Contains(host, ".") && !strings.HasPrefix(host, ".") && !strings.HasSuffix(host, ".")
}
