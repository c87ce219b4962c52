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
		{"one", "7,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0",
			[]lms.Occurrence{{ID: 7, Seq: 1, Start: at("2030-01-02T09:00:00Z"), End: at("2030-01-02T10:00:00Z")}}},
		{"several", "7,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0;8,2,2030-01-09T09:00:00Z,2030-01-09T10:00:00Z,1;9,3,2030-01-16T09:00:00Z,2030-01-16T10:00:00Z,0",
			[]lms.Occurrence{
				{ID: 7, Seq: 1, Start: at("2030-01-02T09:00:00Z"), End: at("2030-01-02T10:00:00Z")},
				{ID: 8, Seq: 2, Start: at("2030-01-09T09:00:00Z"), End: at("2030-01-09T10:00:00Z"), Cancelled: true},
				{ID: 9, Seq: 3, Start: at("2030-01-16T09:00:00Z"), End: at("2030-01-16T10:00:00Z")},
			}},
		{"out of seq order", "9,3,2030-01-16T09:00:00Z,2030-01-16T10:00:00Z,0;7,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0;8,2,2030-01-09T09:00:00Z,2030-01-09T10:00:00Z,1",
			[]lms.Occurrence{
				{ID: 7, Seq: 1, Start: at("2030-01-02T09:00:00Z"), End: at("2030-01-02T10:00:00Z")},
				{ID: 8, Seq: 2, Start: at("2030-01-09T09:00:00Z"), End: at("2030-01-09T10:00:00Z"), Cancelled: true},
				{ID: 9, Seq: 3, Start: at("2030-01-16T09:00:00Z"), End: at("2030-01-16T10:00:00Z")},
			}},
		{"cancelled", []byte("12,4,2030-02-01T23:30:00Z,2030-02-02T00:30:00Z,1"),
			[]lms.Occurrence{{ID: 12, Seq: 4, Start: at("2030-02-01T23:30:00Z"), End: at("2030-02-02T00:30:00Z"), Cancelled: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []lms.Occurrence{{ID: -1}} // overwritten, as a scan does
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
		"7,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0;",
		"7,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z",
		"7,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0,9",
		"x,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0",
		"7,,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,0",
		"7,1,yesterday,2030-01-02T10:00:00Z,0",
		"7,1,2030-01-02T09:00:00Z,10000-01-01T00:00:00Z,0",
		"7,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,2",
		"7,1,2030-01-02T09:00:00Z,2030-01-02T10:00:00Z,",
	} {
		var got []lms.Occurrence
		if err := (sittingsScanner{&got}).Scan(in); err == nil {
			t.Errorf("%q read as %+v, want an error", in, got)
		}
	}
}
