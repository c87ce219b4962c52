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
