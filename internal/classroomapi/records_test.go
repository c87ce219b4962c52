package classroomapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Records drawn from one space never share room, stay intact when a
// later one makes the space take a new array, and a released space keeps
// nothing they pointed to.
func TestRecordSpace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reserve  int // records reserved first, 0 for none
		records  int
		keepsKVs bool // the space keeps its array when released
	}{
		{"one record", 0, 1, true},
		{"a default page", 0, 10, true},
		{"more than a page, growing", 0, 25, false},
		{"more than a page, reserved", 25, 25, false},
		{"a page, reserved", 10, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := new(recordSpace)
			if tc.reserve > 0 {
				s.reserve(tc.reserve)
			}
			var objs []obj
			for r := range tc.records {
				strs := s.strings(classRecordKeys)
				o := s.obj(classRecordKeys)
				for k := range classRecordKeys {
					o = append(o, kv{fmt.Sprint(k), strs.Value(fmt.Sprintf("%d/%d", r, k))})
				}
				objs = append(objs, o)
			}
			for r, o := range objs {
				if len(o) != classRecordKeys {
					t.Fatalf("record %d has %d keys", r, len(o))
				}
				for k, f := range o {
					if want := fmt.Sprintf("%d/%d", r, k); f.Key != fmt.Sprint(k) || *f.Value.(*string) != want {
						t.Fatalf("record %d key %d: %s = %q, want %d = %q", r, k, f.Key, *f.Value.(*string), k, want)
					}
				}
			}
			kvs, strs := s.kvs[:cap(s.kvs)], s.strs[:cap(s.strs)]
			s.release()
			if len(s.kvs) != 0 || len(s.strs) != 0 {
				t.Fatalf("released space holds %d keys and %d strings", len(s.kvs), len(s.strs))
			}
			if kept := cap(s.kvs) > 0; kept != tc.keepsKVs {
				t.Fatalf("released space keeps an array of %d keys; want kept %v", cap(s.kvs), tc.keepsKVs)
			}
			if tc.keepsKVs {
				for i := range kvs {
					if kvs[i].Key != "" || kvs[i].Value != nil || strs[i] != "" {
						t.Fatalf("released space still holds key %d: %q %v %q", i, kvs[i].Key, kvs[i].Value, strs[i])
					}
				}
			}
		})
	}
}

// A class record written as JSON at once (a JSON answer) is, byte for
// byte, the JSON of the obj an XML answer reads: the two ways of
// classRecord's fields give the same record.
func TestClassRecordJSONIsItsObj(t *testing.T) {
	start := time.Date(2031, 3, 10, 15, 0, 0, 0, time.UTC)
	sitting := func(days int, cancelled bool) lms.Occurrence {
		s := start.AddDate(0, 0, days)
		return lms.Occurrence{Seq: days + 1, Start: s, End: s.Add(time.Hour), Cancelled: cancelled}
	}
	plain := lms.LiveClass{ID: 7, Title: "History 7", Date: "2031-03-10", StartMinute: 900, EndMinute: 960,
		TimezoneID: 28, Currency: "usd", Published: 1, Occurrences: []lms.Occurrence{sitting(0, false)}}
	every := lms.LiveClass{ID: 1 << 40, Title: `<b>"Ünïcode" & 中文</b>` + "\u2028\n\xff", Description: "a\tb\\c",
		Date: "2031-03-10", StartMinute: 1380, EndMinute: 30, TimezoneName: "America/New_York", IsRecurring: true,
		Repeat: 2, Weekdays: "1,3,5", EndClassesCount: 3, EndDate: "2031-04-01", Currency: "eur", IsPaid: 1,
		SeatAttendees: 40, Record: 1, IsRecordingLayout: 1, IsVideo: 1, IsBoard: 1, IsLang: 3, IsRegion: 2,
		IsCorporate: 1, IsScreenshare: 1, IsPrivateChat: 1, Keyword: "k<w>", Privacy: 1,
		Occurrences: []lms.Occurrence{sitting(0, true), sitting(7, false), sitting(14, false)}}
	cancelled := plain
	cancelled.Occurrences = []lms.Occurrence{sitting(0, true)}
	for _, tc := range []struct {
		name string
		cls  lms.LiveClass
		now  time.Time
	}{
		{"upcoming", plain, start.Add(-50 * time.Hour)},
		{"live", plain, start.Add(10 * time.Minute)},
		{"past", plain, start.Add(10 * time.Hour)},
		{"every field, a sitting cancelled, summer time", every, start.AddDate(0, 0, 3)},
		{"every sitting cancelled", cancelled, start.Add(-time.Hour)},
		{"no sittings", lms.LiveClass{ID: 3, TimezoneID: 28}, start},
	} {
		t.Run(tc.name, func(t *testing.T) {
			space := new(recordSpace)
			o := fields{xml: true, o: space.obj(classRecordKeys), strs: space.strings(classRecordKeys)}
			classRecord(&o, 12, tc.cls, tc.now)
			want, err := wire.AppendJSON(nil, o.o)
			if err != nil {
				t.Fatal(err)
			}
			j := fields{b: []byte("{")}
			classRecord(&j, 12, tc.cls, tc.now)
			if got := append(j.b, '}'); string(got) != string(want) {
				t.Errorf("as JSON:\n%s\nthe obj's JSON:\n%s", got, want)
			}
			if len(o.o) != 37 {
				t.Errorf("%d fields, want 37", len(o.o))
			}
		})
	}
}

// BenchmarkClassRecords writes a listclass page of 10 class records, as
// JSON at once (a JSON answer) and as objs then written by AppendJSON (the
// way of an XML answer's records, and of every record before).
func BenchmarkClassRecords(b *testing.B) {
	start := time.Date(2031, 3, 10, 15, 0, 0, 0, time.UTC)
	now := start.Add(-50 * time.Hour)
	page := make([]lms.LiveClass, 10)
	for i := range page {
		page[i] = lms.LiveClass{ID: int64(i + 1), Title: fmt.Sprintf("History %d", i+1), Date: "2031-03-10",
			StartMinute: 900, EndMinute: 960, TimezoneID: 28, Currency: "usd", Published: 1,
			Occurrences: []lms.Occurrence{{Seq: 1, Start: start, End: start.Add(time.Hour)}}}
	}
	a := &API{Now: func() time.Time { return now }}
	for _, xml := range []bool{false, true} {
		name := "json"
		if xml {
			name = "objs"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 16<<10)
			for b.Loop() {
				c := &call{Domain: store.Domain{ID: 1}, xml: xml}
				res := a.classRecords(c, &result{Kind: wire.KindClassList, Total: 100000}, page)
				var err error
				if buf, err = wire.AppendJSONBody(buf[:0], res, StyleCompat); err != nil {
					b.Fatal(err)
				}
				c.releaseRecords()
			}
		})
	}
}
