package attendance

import (
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

var t0 = time.Date(2030, 6, 14, 9, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func ev(user, kind string, min int) lms.AttendanceEvent {
	return lms.AttendanceEvent{UserRef: user, UserName: "name-" + user, Kind: kind, At: at(min), OccurrenceSeq: 1}
}

func TestReport(t *testing.T) {
	oneHour := []lms.Occurrence{{Seq: 1, Start: at(0), End: at(60)}}
	cases := []struct {
		name     string
		events   []lms.AttendanceEvent
		occ      []lms.Occurrence
		now      time.Time
		present  time.Duration
		percent  float64
		attended bool
		sessions int
	}{
		{"one session", []lms.AttendanceEvent{ev("a", "join", 10), ev("a", "leave", 40)}, oneHour, at(120),
			30 * time.Minute, 50, true, 1},
		{"overlapping sessions counted once", []lms.AttendanceEvent{
			ev("a", "join", 0), ev("a", "leave", 30), ev("a", "join", 20), ev("a", "leave", 45)}, oneHour, at(120),
			45 * time.Minute, 75, true, 2},
		{"two devices, one still connected at the end", []lms.AttendanceEvent{
			ev("a", "join", 0), ev("a", "join", 5), ev("a", "leave", 30)}, oneHour, at(120),
			time.Hour, 100, true, 2},
		{"open session closed at the class end", []lms.AttendanceEvent{ev("a", "join", 30)}, oneHour, at(120),
			30 * time.Minute, 50, true, 1},
		{"open session closed at now while live", []lms.AttendanceEvent{ev("a", "join", 30)}, oneHour, at(45),
			15 * time.Minute, 25, true, 1},
		{"early arrival is present time but not class time", []lms.AttendanceEvent{
			ev("a", "join", -20), ev("a", "leave", 60)}, oneHour, at(120),
			80 * time.Minute, 100, true, 1},
		{"only before the class: not attended", []lms.AttendanceEvent{
			ev("a", "join", -20), ev("a", "leave", -5)}, oneHour, at(120),
			15 * time.Minute, 0, false, 1},
		{"stray leave ignored", []lms.AttendanceEvent{ev("a", "leave", 5), ev("a", "join", 10), ev("a", "leave", 16)}, oneHour, at(120),
			6 * time.Minute, 10, true, 1},
		{"percentage capped at 100 and two decimals", []lms.AttendanceEvent{
			ev("a", "join", 0), ev("a", "leave", 60)}, oneHour, at(120), time.Hour, 100, true, 1},
		{"recurring: only sittings that began count", []lms.AttendanceEvent{ev("a", "join", 0), ev("a", "leave", 60)},
			[]lms.Occurrence{{Seq: 1, Start: at(0), End: at(60)}, {Seq: 2, Start: at(60 * 24), End: at(60*24 + 60)}}, at(120),
			time.Hour, 100, true, 1},
		{"recurring: two sittings, one attended", []lms.AttendanceEvent{ev("a", "join", 0), ev("a", "leave", 60)},
			[]lms.Occurrence{{Seq: 1, Start: at(0), End: at(60)}, {Seq: 2, Start: at(60 * 24), End: at(60*24 + 60)}}, at(60 * 48),
			time.Hour, 50, true, 1},
		{"cancelled sittings do not count", []lms.AttendanceEvent{ev("a", "join", 0), ev("a", "leave", 60)},
			[]lms.Occurrence{{Seq: 1, Start: at(0), End: at(60)}, {Seq: 2, Start: at(60 * 24), End: at(60*24 + 60), Cancelled: true}}, at(60 * 48),
			time.Hour, 100, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := Report(c.events, c.occ, c.now)
			if len(rs) != 1 {
				t.Fatalf("%d reports", len(rs))
			}
			r := rs[0]
			if r.Present != c.present || r.Percent != c.percent || r.Attended != c.attended || len(r.Sessions) != c.sessions {
				t.Fatalf("got present %v percent %v attended %v sessions %d; want %v %v %v %d",
					r.Present, r.Percent, r.Attended, len(r.Sessions), c.present, c.percent, c.attended, c.sessions)
			}
		})
	}
}

func TestReportOrderAndFormat(t *testing.T) {
	rs := Report([]lms.AttendanceEvent{ev("b", "join", 5), ev("a", "join", 10), ev("b", "leave", 7)},
		[]lms.Occurrence{{Seq: 1, Start: at(0), End: at(90)}}, at(200))
	if len(rs) != 2 || rs[0].UserRef != "b" || rs[1].UserRef != "a" {
		t.Fatalf("order by first event: %+v", rs)
	}
	if got := FormatPercent(rs[0].Percent); got != "2.22%" {
		t.Errorf("percent %q", got)
	}
	if got := FormatDuration(8*time.Minute + 55*time.Second); got != "00:08:55" {
		t.Errorf("duration %q", got)
	}
	if got := FormatDuration(26 * time.Hour); got != "26:00:00" {
		t.Errorf("long duration %q", got)
	}
	if got := at(0).Add(-6*time.Hour + 1*time.Minute + 21*time.Second).Format(TimeLayout); got != "Jun 14, 2030 03:01:21 AM" {
		t.Errorf("time %q", got)
	}
}
