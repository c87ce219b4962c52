package store

import (
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/lms"
)

// TestClassIntsCorrupt: a class's integers column not of twenty integers
// is an error naming what it holds, never a class with fields shifted.
func TestClassIntsCorrupt(t *testing.T) {
	twenty := strings.Repeat("1,", 19) + "1"
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"nineteen", strings.Repeat("1,", 18) + "1", "19, not 20"},
		{"twenty-one", twenty + ",1", "more than 20"},
		{"empty", "", `"" is not an integer`},
		{"a word", strings.Replace(twenty, "1", "x", 1), `"x" is not an integer`},
		{"an empty field", strings.Replace(twenty, "1,", ",", 1), `"" is not an integer`},
		{"a number", int64(1), "int64, not text"},
		{"NULL", nil, `"" is not an integer`},
	} {
		var c lms.LiveClass
		err := classInts{&c}.Scan(tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	var c lms.LiveClass
	if err := (classInts{&c}).Scan([]byte(twenty)); err != nil || c.Published != 1 || !c.IsRecurring {
		t.Errorf("bytes: %v, %+v", err, c)
	}
}

// TestListedUserCorrupt: texts of a listed user not of the form
// "N,M,texts" are an error, never a user with its texts cut elsewhere.
func TestListedUserCorrupt(t *testing.T) {
	for _, v := range []any{"", "3,", "3,4", "a,1,xyz", "1,b,xyz", "-1,1,xyz", "1,-1,xyz", "2,2,abc", int64(3), nil} {
		var u lms.User
		if err := (listedUser{&u}).Scan(v); err == nil {
			t.Errorf("%#v: read as %+v, want an error", v, u)
		}
	}
	var u lms.User
	if err := (listedUser{&u}).Scan([]byte("2,1,abcd@e")); err != nil || u.Name != "ab" || u.Username != "c" || u.Email != "d@e" {
		t.Errorf("bytes: %v, %+v", err, u)
	}
	if err := (listedUser{&u}).Scan("0,0,"); err != nil || u.Name != "" || u.Username != "" || u.Email != "" {
		t.Errorf("empty: %v, %+v", err, u)
	}
}
