package store

import (
	"reflect"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// TestParseSittings: the aggregated sittings column reads as the rows of
// class_occurrences read one by one did, in seq order whatever order the
// aggregate gave them in.
func TestParseSittings(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(timeFormat, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		in   any // as the driver gives it
		want []lms.Occurrence
	}{
		{"null", nil, nil},
		{"empty", "", nil},
		{"one", "1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0",
			[]lms.Occurrence{{Seq: 1, Start: at("2030-01-02T09:00:00Z"), End: at("2030-01-02T10:00:00Z")}}},
		{"several", "1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0;2,2030-01-09T09:00:00Z,2030-01-09T10:00:00Z,1;3,2030-01-16T09:00:00Z,2030-01-16T10:00:00Z,0",
			[]lms.Occurrence{
				{Seq: 1, Start: at("2030-01-02T09:00:00Z"), End: at("2030-01-02T10:00:00Z")},
				{Seq: 2, Start: at("2030-01-09T09:00:00Z"), End: at("2030-01-09T10:00:00Z"), Cancelled: true},
				{Seq: 3, Start: at("2030-01-16T09:00:00Z"), End: at("2030-01-16T10:00:00Z")},
			}},
		{"out of seq order", "3,2030-01-16T09:00:00Z,2030-01-16T10:00:00Z,0;1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0;2,2030-01-09T09:00:00Z,2030-01-09T10:00:00Z,1",
			[]lms.Occurrence{
				{Seq: 1, Start: at("2030-01-02T09:00:00Z"), End: at("2030-01-02T10:00:00Z")},
				{Seq: 2, Start: at("2030-01-09T09:00:00Z"), End: at("2030-01-09T10:00:00Z"), Cancelled: true},
				{Seq: 3, Start: at("2030-01-16T09:00:00Z"), End: at("2030-01-16T10:00:00Z")},
			}},
		{"cancelled", []byte("4,2030-02-01T23:30:00Z,2030-02-02T00:30:00Z,1"),
			[]lms.Occurrence{{Seq: 4, Start: at("2030-02-01T23:30:00Z"), End: at("2030-02-02T00:30:00Z"), Cancelled: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []lms.Occurrence{{Seq: -1}} // overwritten, as a scan does
			if err := (sittingsScanner{&got}).Scan(tc.in); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestParseSittingsMalformed: a malformed aggregate is an error, never a
// panic or a zero sitting.
func TestParseSittingsMalformed(t *testing.T) {
	for _, in := range []any{
		int64(3),
		";",
		"1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0;",
		"1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z",
		"1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0,9",
		"7,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0", // the five fields of before migration 0045
		"x,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0",
		",2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0",
		"1,yesterday,2030-01-02T10:00:00Z,0",
		"1,2030-01-02T09:00:00Z,10000-01-01T00:00:00Z,0",
		"1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,2",
		"1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,",
	} {
		var got []lms.Occurrence
		if err := (sittingsScanner{&got}).Scan(in); err == nil {
			t.Errorf("%q read as %+v, want an error", in, got)
		}
	}
}
