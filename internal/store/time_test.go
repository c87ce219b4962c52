package store

import (
	"math/rand/v2"
	"testing"
	"time"
)

// parseTime must agree with time.Parse(timeFormat) on every input: the same
// instant for a valid one, an error for an invalid one.
func TestParseTimeAgreesWithTimeParse(t *testing.T) {
	inputs := []string{
		"2026-11-23T20:30:00Z", "2000-02-29T23:59:59Z", "1900-02-29T00:00:00Z", "2024-02-29T12:00:00Z",
		"2023-02-29T12:00:00Z", "2026-04-31T00:00:00Z", "2026-12-31T23:59:59Z", "0000-01-01T00:00:00Z",
		"2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z",
		"2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00+",
		"2026-1-01T00:00:00Z", "2026-01-01T00:00:00", "", "abcd-ef-ghTij:kl:mnZ", "+026-01-01T00:00:00Z",
		"2026-01-01T00:00:00.5Z", "9999-12-31T23:59:59Z",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		inputs = append(inputs, time.Unix(r.Int64N(1<<35)-1<<34, 0).UTC().Format(timeFormat))
	}
	for _, s := range inputs {
		got, gotErr := parseTime(s)
		want, wantErr := time.Parse(timeFormat, s)
		if (gotErr != nil) != (wantErr != nil) || !got.Equal(want) || got.Location() != want.Location() {
			t.Errorf("parseTime(%q) = %v, %v; time.Parse: %v, %v", s, got, gotErr, want, wantErr)
		}
	}
}

func BenchmarkParseTime(b *testing.B) {
	for b.Loop() {
		if _, err := parseTime("2026-11-23T20:30:00Z"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIntCol: an integer column scans into an int or an int64 from the
// drivers' int64 and from text holding a number, as database/sql's own
// conversion does; NULL, a float and text that is no number are errors.
func TestIntCol(t *testing.T) {
	for _, tc := range []struct {
		in      any
		want    int64
		wantErr bool
	}{
		{int64(0), 0, false},
		{int64(-7), -7, false},
		{int64(9223372036854775807), 9223372036854775807, false},
		{"42", 42, false},
		{[]byte("-3"), -3, false},
		{nil, 0, true},
		{1.5, 0, true},
		{"4x", 0, true},
		{"9223372036854775808", 0, true},
		{true, 0, true},
	} {
		var i int
		var i64 int64 = 99
		errInt := intDest(&i).Scan(tc.in)
		errInt64 := intDest(&i64).Scan(tc.in)
		if tc.wantErr {
			if errInt == nil || errInt64 == nil {
				t.Errorf("%#v scanned without an error: int %d, int64 %d", tc.in, i, i64)
			}
			continue
		}
		if errInt != nil || errInt64 != nil {
			t.Errorf("%#v: %v, %v", tc.in, errInt, errInt64)
			continue
		}
		if int64(i) != tc.want || i64 != tc.want {
			t.Errorf("%#v scanned as int %d, int64 %d; want %d", tc.in, i, i64, tc.want)
		}
	}
}
