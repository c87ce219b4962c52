package cert

import (
	"crypto/rand"
	"strings"
)

// crockford is Crockford's base32 alphabet: digits and upper-case letters
// without I, L, O and U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// CodeLen is the length of a certificate code: 12 characters, 60 random
// bits.
const CodeLen = 12

// NewCode returns a fresh certificate code: 12 Crockford base32
// characters from crypto/rand.
func NewCode() string {
	var b [CodeLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	for i := range b {
		b[i] = crockford[b[i]&31]
	}
	return string(b[:])
}

// NormalizeCode turns a code as a person may type it (lower case, hyphens
// or spaces between groups, O for 0, I or L for 1) into its canonical
// form. ok is false when it cannot be a code.
func NormalizeCode(s string) (code string, ok bool) {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch r {
		case '-', ' ':
			continue
		case 'O':
			r = '0'
		case 'I', 'L':
			r = '1'
		}
		if r > 127 || !strings.ContainsRune(crockford, r) {
			return "", false
		}
		b.WriteRune(r)
	}
	if b.Len() != CodeLen {
		return "", false
	}
	return b.String(), true
}

// FormatCode groups a code for people: XXXX-XXXX-XXXX.
func FormatCode(code string) string {
	if len(code) != CodeLen {
		return code
	}
	return code[:4] + "-" + code[4:8] + "-" + code[8:]
}
