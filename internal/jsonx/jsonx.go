// Package jsonx writes JSON by appending to a byte slice, byte for byte
// as encoding/json writes it, for the answers on hot paths: without
// reflection, and without the allocations of a map or an interface per
// value. It imports only the standard library.
package jsonx

import "unicode/utf8"

// plain holds the ASCII bytes AppendString copies as they are.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendString appends s as a JSON string exactly as json.Marshal
// does: <, > and & as \u003c, \u003e, \u0026, U+2028 and U+2029 escaped,
// invalid UTF-8 as \ufffd.
func AppendString(b []byte, s string) []byte {
	return append(AppendEscaped(append(b, '"'), s), '"')
}

// AppendEscaped appends s escaped as AppendString does, without the
// quotes: for a JSON string put together from several texts. Texts
// escaped one after another read as their concatenation escaped when
// each but the last is valid UTF-8 (a rune split between two would be
// written as invalid bytes).
func AppendEscaped(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
