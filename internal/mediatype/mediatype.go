// Package mediatype reads the media type of a Content-Type header. It
// imports only the standard library, so that the classroom API's wire
// package may use it too.
package mediatype

import (
	"mime"
	"strings"
)

// Parse returns the media type of a Content-Type, lower-cased, and its
// parameters, exactly as mime.ParseMediaType does; the type is "" when
// the header does not parse. A bare type/subtype of token characters,
// which is what clients send nearly always, is answered without
// ParseMediaType's map and copies: it ran twice for every classroom
// request with a body, once to see whether the body is JSON and once to
// read it.
// The parameters of a bare type are nil.
func Parse(ct string) (string, map[string]string) {
	if bare(ct) {
		return strings.ToLower(ct), nil
	}
	mt, params, _ := mime.ParseMediaType(ct)
	return mt, params
}

// bare reports whether ct is a token, a slash and a token, with nothing
// around them (RFC 2045's tokens, as mime reads them).
func bare(ct string) bool {
	slash := strings.IndexByte(ct, '/')
	if slash <= 0 || slash == len(ct)-1 {
		return false
	}
	for i := 0; i < len(ct); i++ {
		if i != slash && !token[ct[i]] {
			return false
		}
	}
	return true
}

// token holds the bytes that may be in a token: printable ASCII other
// than space and the tspecials.
var token = func() (t [256]bool) {
	for c := byte('!'); c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`()<>@,;:\"/[]?=`, rune(c))
	}
	return t
}()
