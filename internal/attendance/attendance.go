// Package attendance turns a class's join and leave events into the
// per-user report of the classroom API's getclassreport.
package attendance

import (
	"fmt"
	"sort"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Session is one stay in the room.
type Session struct{ In, Out time.Time }

// UserReport is one user's attendance of a class.
type UserReport struct {
	UserRef   string
	UserName  string
	IsTeacher bool
	// Present is the time in the room, overlapping sessions counted once.
	Present time.Duration
	// InClass is the part of Present inside the class's scheduled sittings.
	InClass time.Duration
	// Percent is InClass over the class's length, capped at 100.
	Percent  float64
	Attended bool
	Sessions []Session
}

// Report computes every user's attendance from events (any order) and the
// class's occurrences, at instant now.
//
// Rules: each join opens a session (a user may be connected twice, from
// two devices); each leave closes that user's oldest open session; a leave
// with none open is ignored; a session still open is closed at the end of
// its occurrence, or at now if that is earlier. Present is the union of the
// sessions. The class's length is the total scheduled time of its
// non-cancelled sittings that have begun by now (the first sitting if none
// has). A user attended when some of their time falls inside a sitting.
func Report(events []lms.AttendanceEvent, occ []lms.Occurrence, now time.Time) []UserReport {
	sorted := append([]lms.AttendanceEvent(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].At.Before(sorted[j].At) })

	ends := map[int]time.Time{}
	var windows []Session
	var length time.Duration
	for _, o := range occ {
		ends[o.Seq] = o.End
		if o.Cancelled || o.Start.After(now) {
			continue
		}
		windows = append(windows, Session{o.Start, o.End})
		length += o.End.Sub(o.Start)
	}
	if length == 0 && len(occ) > 0 {
		length = occ[0].End.Sub(occ[0].Start)
	}

	byUser := map[string]*UserReport{}
	open := map[string][]*lms.AttendanceEvent{}
	var order []string
	for i := range sorted {
		e := &sorted[i]
		u, ok := byUser[e.UserRef]
		if !ok {
			u = &UserReport{UserRef: e.UserRef}
			byUser[e.UserRef] = u
			order = append(order, e.UserRef)
		}
		if e.UserName != "" {
			u.UserName = e.UserName
		}
		u.IsTeacher = u.IsTeacher || e.IsTeacher
		switch e.Kind {
		case lms.AttendanceJoin:
			open[e.UserRef] = append(open[e.UserRef], e)
		case lms.AttendanceLeave:
			if js := open[e.UserRef]; len(js) > 0 {
				u.Sessions = append(u.Sessions, Session{js[0].At, e.At})
				open[e.UserRef] = js[1:]
			}
		}
	}
	for ref, js := range open {
		for _, j := range js {
			out := now
			if end, ok := ends[j.OccurrenceSeq]; ok && end.Before(out) {
				out = end
			}
			if out.Before(j.At) {
				out = j.At
			}
			byUser[ref].Sessions = append(byUser[ref].Sessions, Session{j.At, out})
		}
	}

	reports := make([]UserReport, 0, len(order))
	for _, ref := range order {
		u := byUser[ref]
		sort.Slice(u.Sessions, func(i, j int) bool { return u.Sessions[i].In.Before(u.Sessions[j].In) })
		merged := union(u.Sessions)
		for _, s := range merged {
			u.Present += s.Out.Sub(s.In)
			for _, w := range windows {
				u.InClass += overlap(s, w)
			}
		}
		if length > 0 {
			u.Percent = min(100, float64(u.InClass)/float64(length)*100)
		}
		u.Attended = u.InClass > 0
		reports = append(reports, *u)
	}
	return reports
}

// union merges overlapping or touching sessions (sorted by In).
func union(ss []Session) []Session {
	var out []Session
	for _, s := range ss {
		if n := len(out); n > 0 && !s.In.After(out[n-1].Out) {
			if s.Out.After(out[n-1].Out) {
				out[n-1].Out = s.Out
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

func overlap(a, b Session) time.Duration {
	start, end := a.In, a.Out
	if b.In.After(start) {
		start = b.In
	}
	if b.Out.Before(end) {
		end = b.Out
	}
	if end.After(start) {
		return end.Sub(start)
	}
	return 0
}

// FormatPercent writes a percentage with two decimals and a % sign.
func FormatPercent(p float64) string { return fmt.Sprintf("%.2f%%", p) }

// FormatDuration writes HH:MM:SS (hours may exceed 24).
func FormatDuration(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// TimeLayout is how session times are written, in the class's zone:
// "Jun 14, 2017 03:01:21 AM".
const TimeLayout = "Jan 02, 2006 03:04:05 PM"
