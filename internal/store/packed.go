package store

import (
	"fmt"
	"strconv"
	"strings"
)

// A packed column is a record's integer and text fields read as one
// value, concat_ws(',', integers..., texts...), where the last integers
// are the byte lengths (octet_length) of every text but the last. On
// SQLite each column read is two or three calls into the driver, each
// taking the connection's mutex, and each text a string of its own: a
// page of ten classes read 310 columns. One concat_ws builds the value in
// one allocation (a chain of || allocated at every step: 14 % of a
// listclass at 1,000,000 classes). concat_ws is in SQLite from 3.44 and
// in PostgreSQL. Classes are read so (classCols); users are not
// (userListCols).

// unpack parses the packed value s into n (its integers, the texts'
// lengths last) and texts (which share s's memory). Anything not of that
// form is an error naming what it holds (TestUnpackCorrupt).
func unpack(s string, n []int64, texts []string) error {
	lengths := n[len(n)-(len(texts)-1):]
	rest := s
	for i := range n {
		var f string
		var more bool
		f, rest, more = strings.Cut(rest, ",")
		var err error
		if n[i], err = strconv.ParseInt(f, 10, 64); err != nil || !more {
			return fmt.Errorf("store: packed fields %q are not %d integers and %d texts", s, len(n), len(texts))
		}
	}
	for i, size := range lengths {
		if size < 0 || size >= int64(len(rest)) || rest[size] != ',' {
			return fmt.Errorf("store: packed fields %q: text %d is not %d bytes and a comma", s, i+1, size)
		}
		texts[i], rest = rest[:size], rest[size+1:]
	}
	texts[len(texts)-1] = rest
	return nil
}

// packedText is the text of a packed column as a driver gives it.
func packedText(v any) (string, error) {
	s, null, ok := scannedText(v)
	if !ok || null {
		return "", fmt.Errorf("store: packed fields are a %T, not text", v)
	}
	return s, nil
}
