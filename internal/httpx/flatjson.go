package httpx

// A flat JSON object is what clients of the LMS API send nearly always:
// {"limit":50}, {"username":"ann","email":"ann@example.com"}. Reading
// one with encoding/json into a map cost a decoder, its buffer and a map
// filled by reflection, 1.4 KB a users/list (issue 13). flatObject reads
// that common shape by hand and leaves everything else to readJSON's
// encoding/json, so that the rare shapes and every error stay as they were.

// flatMaxFields is the most fields flatObject reads; a larger object is
// left to encoding/json.
const flatMaxFields = 16

// flatField is a field of a flat object: its name and value as offsets
// into the body, the value's quotes left out; null marks a JSON null.
type flatField struct {
	k0, k1, v0, v1 int
	null           bool
}

// flatObject reads body, a JSON object with surrounding space trimmed,
// when its values are strings or numbers written without escapes, or
// null, its names are written without escapes and appear once, and it has
// at most flatMaxFields fields. It reports false for anything else,
// malformed text included, having set nothing. set gets each field whose
// value is not null, the value as encoding/json with UseNumber reads it:
// a string's text, a number's literal.
func flatObject(body []byte, set func(k, v string)) bool {
	var fields [flatMaxFields]flatField
	n := 0
	i := skipSpace(body, 0)
	if i == len(body) || body[i] != '{' {
		return false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return skipSpace(body, i+1) == len(body)
	}
	for {
		if n == flatMaxFields {
			return false
		}
		f := &fields[n]
		var ok bool
		if f.k0, f.k1, i, ok = flatString(body, i); !ok {
			return false
		}
		i = skipSpace(body, i)
		if i == len(body) || body[i] != ':' {
			return false
		}
		i = skipSpace(body, i+1)
		if i == len(body) {
			return false
		}
		switch c := body[i]; {
		case c == '"':
			if f.v0, f.v1, i, ok = flatString(body, i); !ok {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			f.v0 = i
			if i, ok = flatNumber(body, i); !ok {
				return false
			}
			f.v1 = i
		case c == 'n' && len(body)-i >= 4 && string(body[i:i+4]) == "null":
			f.null = true
			i += 4
		default:
			return false
		}
		n++
		i = skipSpace(body, i)
		if i == len(body) {
			return false
		}
		if body[i] == '}' {
			if skipSpace(body, i+1) != len(body) {
				return false
			}
			break
		}
		if body[i] != ',' {
			return false
		}
		i = skipSpace(body, i+1)
	}
	// A name given twice takes its last value in encoding/json's map, a
	// null one too; rare enough to leave to it.
	for a := range n {
		for b := range a {
			if string(body[fields[a].k0:fields[a].k1]) == string(body[fields[b].k0:fields[b].k1]) {
				return false
			}
		}
	}
	// A string of its own for each name and value, not slices of one
	// string of the body: a value kept long after the request (a name in
	// a live room) would keep the whole body in memory.
	for _, f := range fields[:n] {
		if !f.null {
			set(string(body[f.k0:f.k1]), string(body[f.v0:f.v1]))
		}
	}
	return true
}

// skipSpace returns the offset of the first byte at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// flatString reads a JSON string without escapes at b[i]: the offsets of
// its text and of the byte after its closing quote. The body is valid
// UTF-8 already (readJSON), so any byte from 0x20 up but the quote and
// the backslash stands for itself.
func flatString(b []byte, i int) (start, end, next int, ok bool) {
	if i == len(b) || b[i] != '"' {
		return 0, 0, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return i + 1, j, j + 1, true
		case c == '\\' || c < 0x20:
			return 0, 0, 0, false
		}
	}
	return 0, 0, 0, false
}

// flatNumber reads a JSON number at b[i] and returns the offset after it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func flatNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i == len(b):
		return 0, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(i + 1)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}
