package lms

import (
	"net/url"
	"strings"
	"time"
)

// Login link lifetimes: a link lives DefaultLinkTTL unless the caller asks
// for between MinLinkTTL and MaxLinkTTL.
const (
	MinLinkTTL     = 30 * time.Second
	MaxLinkTTL     = 10 * time.Minute
	DefaultLinkTTL = 2 * time.Minute
)

// ReturnPath checks a return_to (or error_url) of the learner portal: a
// path inside the portal such as /courses/7/lessons/3?x=1, never a URL
// that could lead elsewhere. It returns the path ("/" for "") or a reason
// it is refused. Refused: absolute URLs (https://evil, javascript:...),
// scheme-relative //host, any backslash (browsers read /\host as //host),
// control characters and spaces, ".." segments, and paths over 2048 bytes.
func ReturnPath(s string) (string, string) {
	if s == "" {
		return "/", ""
	}
	if len(s) > 2048 {
		return "", "must be at most 2048 characters"
	}
	if !strings.HasPrefix(s, "/") {
		return "", "must be a path inside the portal starting with /, not an absolute URL"
	}
	if strings.HasPrefix(s, "//") {
		return "", "must be a path inside the portal, not a scheme-relative URL (//host)"
	}
	for _, r := range s {
		if r == '\\' {
			return "", "must not contain a backslash"
		}
		if r <= ' ' || r == 0x7f {
			return "", "must not contain spaces or control characters"
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "", "must be a path inside the portal starting with /"
	}
	if strings.HasPrefix(u.Path, "//") || strings.Contains(u.Path, "\\") {
		return "", "must be a path inside the portal, not an encoded host"
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == ".." || seg == "." {
			return "", "must not contain . or .. segments"
		}
	}
	return s, ""
}

// PortalHost checks the host name of a domain's own learner portal, such
// as learn.school.com: a DNS name of at least two labels (letters, digits,
// hyphens), no port, no IP address. It returns the name in lower case
// ("" for "", which removes the host) or a reason it is refused.
func PortalHost(s string) (string, string) {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "."))
	if h == "" {
		return "", ""
	}
	if len(h) > 253 {
		return "", "must be at most 253 characters"
	}
	if strings.Contains(h, ":") || strings.Contains(h, "/") {
		return "", "must be a host name only, without scheme, port or path (such as learn.school.com)"
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return "", "must have at least two labels, such as learn.school.com"
	}
	allDigits := true
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", "must be a valid host name (labels of 1-63 letters, digits or inner hyphens)"
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return "", "must be a valid host name (letters, digits, hyphens and dots only)"
			}
			if r < '0' || r > '9' {
				allDigits = false
			}
		}
	}
	if allDigits {
		return "", "must be a host name, not an IP address"
	}
	return h, ""
}
