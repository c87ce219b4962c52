package store

import (
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/lms"
)

// TestUnpackCorrupt: a packed value not of its integers and the texts
// they measure is an error naming what it holds, never fields shifted.
func TestUnpackCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    string
		want string
	}{
		{"no texts", "7,2,3", "not 3 integers and 3 texts"},
		{"two integers", "7,2,ab,cde,f", "not 3 integers and 3 texts"},
		{"empty", "", "not 3 integers and 3 texts"},
		{"a word", "x,2,3,ab,cde,f", "not 3 integers and 3 texts"},
		{"an empty integer", ",2,3,ab,cde,f", "not 3 integers and 3 texts"},
		{"a text too long", "7,9,3,ab,cde,f", "text 1 is not 9 bytes and a comma"},
		{"a text too short", "7,1,3,ab,cde,f", "text 1 is not 1 bytes and a comma"},
		{"a negative length", "7,-2,3,ab,cde,f", "text 1 is not -2 bytes"},
		{"no last text", "7,2,3,ab,cde", "text 2 is not 3 bytes and a comma"},
	} {
		var n [3]int64
		var texts [3]string
		if err := unpack(tc.s, n[:], texts[:]); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	var n [3]int64
	var texts [3]string
	for _, tc := range []struct {
		s     string
		texts [3]string
	}{
		{"7,2,3,ab,cde,f", [3]string{"ab", "cde", "f"}},
		{"7,3,1,a,b,,,", [3]string{"a,b", ",", ""}},
		{"7,0,0,,,", [3]string{"", "", ""}},
	} {
		if err := unpack(tc.s, n[:], texts[:]); err != nil || n[0] != 7 || texts != tc.texts {
			t.Errorf("%q: %v, %v %q", tc.s, err, n, texts)
		}
	}
	for _, v := range []any{int64(3), nil} {
		if _, err := packedText(v); err == nil {
			t.Errorf("%#v: read as text", v)
		}
	}
}

// TestPackedRecords: a class's packed value lands in its fields, from
// text or bytes; an instant that does not parse is an error.
func TestPackedRecords(t *testing.T) {
	ints := strings.Repeat("1,", 19) + "2,"
	class := ints + "5,0,10,3,0,0,3,2,20,Title,,2030-01-02,UTC,,,usd,kw,2030-01-01T10:00:00Z,2030-01-01T11:00:00Z"
	for _, v := range []any{class, []byte(class)} {
		var c lms.LiveClass
		err := classFields{&c}.Scan(v)
		if err != nil || c.Published != 2 || !c.IsRecurring || c.Title != "Title" || c.Date != "2030-01-02" ||
			c.TimezoneName != "UTC" || c.Currency != "usd" || c.Keyword != "kw" || c.Description != "" ||
			c.CreatedAt.Hour() != 10 || c.UpdatedAt.Hour() != 11 {
			t.Errorf("class: %v, %+v", err, c)
		}
	}
	var c lms.LiveClass
	if err := (classFields{&c}).Scan(class[:len(class)-3]); err == nil || !strings.Contains(err.Error(), "cannot parse") {
		t.Errorf("a class with a cut instant: %v", err)
	}
}
