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
