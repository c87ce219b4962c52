package schedule

import (
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Repeat kinds of the classroom API.
const (
	RepeatDaily    = 1 // every day
	RepeatMonSat   = 2 // Monday to Saturday
	RepeatMonFri   = 3 // Monday to Friday
	RepeatWeekly   = 4 // the first date's weekday
	RepeatMonthly  = 5 // the first date's day of the month
	RepeatSelected = 6 // the listed weekdays
)

// MaxSittings bounds how many sittings one class expands into.
const MaxSittings = 1000

// Plan is what a class's sittings are computed from.
type Plan struct {
	Date        time.Time // first day, as from ParseDate
	StartMinute int       // minutes after midnight, wall clock in Zone
	EndMinute   int       // an EndMinute <= StartMinute ends on the next day
	Zone        Zone
	// Repeat is 0 for a single sitting, else one of the Repeat kinds.
	Repeat int
	// Weekdays, for RepeatSelected: 1 Sunday ... 7 Saturday.
	Weekdays []int
	// The recurrence ends after Count sittings or on Until (inclusive,
	// a day as from ParseDate); exactly one is set for a repeating plan.
	Count int
	Until time.Time
}

// fieldErr is an Expand failure blamed on one request parameter: an
// invalid-input lms.Error naming field.
func fieldErr(field, format string, args ...any) error {
	return lms.Invalidf(field, format, args...)
}

// Expand returns the plan's sittings as UTC instants, in order.
//
// A sitting is the wall-clock start and end on its day in the plan's zone,
// so a class at 09:00 stays at 09:00 local across daylight-saving changes
// (its UTC instant moves). A wall time that does not exist on a
// spring-forward day is moved forward by the gap, as the zone's clocks are;
// a wall time that happens twice on a fall-back day is the first of the two
// instants. A day that the zone skips whole has no sitting of its own.
// Monthly repetition keeps the first date's day of the month and uses the
// month's last day when the month is shorter (31 January, 28 or 29
// February, 31 March).
func Expand(p Plan) ([]lms.Occurrence, error) {
	if p.Repeat == 0 {
		return []lms.Occurrence{sitting(p, p.Date, 1)}, nil
	}
	if p.Repeat < 1 || p.Repeat > 6 {
		return nil, fieldErr("repeat", "must be 1 to 6 (1 daily, 2 Monday-Saturday, 3 Monday-Friday, 4 weekly, 5 monthly, 6 selected weekdays)")
	}
	switch {
	case p.Count == 0 && p.Until.IsZero():
		return nil, fieldErr("end_classes_count", "a repeating class needs end_classes_count (number of sittings) or end_date")
	case p.Count != 0 && !p.Until.IsZero():
		return nil, fieldErr("end_date", "give end_classes_count or end_date, not both")
	case p.Count < 0 || p.Count > MaxSittings:
		return nil, fieldErr("end_classes_count", "must be from 1 to %d", MaxSittings)
	case !p.Until.IsZero() && p.Until.Before(p.Date):
		return nil, fieldErr("end_date", "must not be before date %s", p.Date.Format("2006-01-02"))
	}
	days := map[time.Weekday]bool{}
	switch p.Repeat {
	case RepeatDaily:
		for d := time.Sunday; d <= time.Saturday; d++ {
			days[d] = true
		}
	case RepeatMonSat, RepeatMonFri:
		for d := time.Monday; d <= time.Saturday; d++ {
			days[d] = true
		}
		if p.Repeat == RepeatMonFri {
			delete(days, time.Saturday)
		}
	case RepeatWeekly:
		days[p.Date.Weekday()] = true
	case RepeatSelected:
		if len(p.Weekdays) == 0 {
			return nil, fieldErr("weekdays", "repeat 6 needs weekdays, comma-separated numbers 1 (Sunday) to 7 (Saturday)")
		}
		for _, w := range p.Weekdays {
			if w < 1 || w > 7 {
				return nil, fieldErr("weekdays", "%d is not a weekday number 1 (Sunday) to 7 (Saturday)", w)
			}
			days[time.Weekday(w-1)] = true
		}
	}
	var out []lms.Occurrence
	more := func(day time.Time) bool {
		if p.Count > 0 {
			return len(out) < p.Count
		}
		return !day.After(p.Until)
	}
	add := func(day time.Time) error {
		if len(out) == MaxSittings {
			return fieldErr("end_date", "the class would have more than %d sittings; choose an earlier end_date", MaxSittings)
		}
		s := sitting(p, day, len(out)+1)
		if len(out) > 0 && !s.Start.After(out[len(out)-1].Start) {
			// A day the zone skips whole (Samoa's 30 December 2011): its
			// sitting, moved past the gap, is the next day's.
			return nil
		}
		out = append(out, s)
		return nil
	}
	if p.Repeat == RepeatMonthly {
		for k := 0; ; k++ {
			day := monthDay(p.Date, k)
			if !more(day) {
				break
			}
			if err := add(day); err != nil {
				return nil, err
			}
		}
	} else {
		for day := p.Date; more(day); day = day.AddDate(0, 0, 1) {
			if !days[day.Weekday()] {
				continue
			}
			if err := add(day); err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, fieldErr("weekdays", "no sitting falls between date and end_date on the chosen days")
	}
	return out, nil
}

// monthDay is the first date's day of the month, k months later, or that
// month's last day when it is shorter.
func monthDay(first time.Time, k int) time.Time {
	y, m := first.Year(), first.Month()+time.Month(k)
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	d := first.Day()
	if d > last {
		d = last
	}
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Length is how long each of the plan's sittings lasts, in elapsed time:
// end minus start on the wall clock, plus a day when the end is not after
// the start.
func (p Plan) Length() time.Duration {
	m := p.EndMinute - p.StartMinute
	if m <= 0 {
		m += 24 * 60
	}
	return time.Duration(m) * time.Minute
}

// sitting is the plan's sitting on day: it starts at the wall-clock start
// (moved past a spring-forward gap as clocks are, the first of the two
// instants in an autumn fold) and lasts Length in elapsed time, so a
// sitting in or across a daylight-saving change is never empty, backwards,
// or longer or shorter than asked.
func sitting(p Plan, day time.Time, seq int) lms.Occurrence {
	start := wallTime(day, p.StartMinute, p.Zone.Loc)
	return lms.Occurrence{Seq: seq, Start: start.UTC(), End: start.Add(p.Length()).UTC()}
}

// wallTime is min minutes after midnight on day in loc. A wall time that
// happens twice (in an autumn fold) is its first instant, as iCalendar
// (RFC 5545) reads it. A wall time that the zone skips (inside a
// spring-forward gap) is read with the offset in force before the gap,
// which lands it after the gap, as clocks move.
func wallTime(day time.Time, min int, loc *time.Location) time.Time {
	wall := time.Date(day.Year(), day.Month(), day.Day(), 0, min, 0, 0, time.UTC)
	// The zone's offsets around that day: an instant showing the wall
	// time is the wall time read in one of them.
	probe := wall.Add(-14 * time.Hour)
	var first time.Time
	for _, at := range []time.Duration{0, 14 * time.Hour, 28 * time.Hour} {
		_, off := probe.Add(at).In(loc).Zone()
		t := wall.Add(-time.Duration(off) * time.Second).In(loc)
		if shows(t, wall) && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if !first.IsZero() {
		return first
	}
	_, before := probe.In(loc).Zone()
	return wall.Add(-time.Duration(before) * time.Second).In(loc)
}

// shows reports whether t's wall clock (in its location) reads wall's
// date and time (wall in UTC).
func shows(t, wall time.Time) bool {
	y, m, d := t.Date()
	wy, wm, wd := wall.Date()
	return y == wy && m == wm && d == wd && t.Hour() == wall.Hour() && t.Minute() == wall.Minute() && t.Second() == wall.Second()
}

// Class statuses.
const (
	Upcoming = "Upcoming"
	Live     = "Live"
	Past     = "Past"
)

// StatusAt is a class's status at now: Live during a sitting, Upcoming
// before the next one, Past when none is left. Cancelled sittings are
// skipped, so a class whose sittings are all cancelled is Past. The
// sitting returned is the current or next one (ok false when Past).
func StatusAt(occ []lms.Occurrence, now time.Time) (status string, next lms.Occurrence, ok bool) {
	for _, o := range occ {
		if o.Cancelled || !now.Before(o.End) {
			continue
		}
		if now.Before(o.Start) {
			return Upcoming, o, true
		}
		return Live, o, true
	}
	return Past, lms.Occurrence{}, false
}

// AllCancelled reports whether every sitting is cancelled.
func AllCancelled(occ []lms.Occurrence) bool {
	for _, o := range occ {
		if !o.Cancelled {
			return false
		}
	}
	return len(occ) > 0
}
