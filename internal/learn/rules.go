// Package learn holds the rules of a learner's way through a course (which
// lessons are open, when a lesson and a course are complete, how much of a
// video was watched) as pure functions, and Service, which applies them to
// the store for the management API and the learner portal.
package learn

import (
	"fmt"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/attendance"
	"github.com/lectern-lms/lectern/internal/lms"
)

// State is a lesson's state for one learner.
type State string

// Lesson states.
const (
	Done      State = "done"
	Available State = "available"
	Locked    State = "locked"
)

// Why a lesson is locked.
const (
	ReasonNotEnrolled   = "not_enrolled"
	ReasonAccessExpired = "access_expired"
	ReasonDate          = "date"            // unlock_at not reached
	ReasonEnrolmentDays = "enrolment_days"  // N days after enrolment not reached
	ReasonLiveClass     = "live_class"      // the live sitting has not ended
	ReasonPrerequisites = "prerequisites"   // other lessons must be completed first
	ReasonSequential    = "sequential"      // the previous required lesson is not complete
	ReasonNoSitting     = "sitting_missing" // the sitting named by the condition does not exist
)

// Course is a course's content and rules, the lessons in outline order
// (by section position, then lesson position).
type Course struct {
	Settings lms.CourseSettings
	Sections []lms.Section
	Lessons  []lms.Lesson
}

// Learner is what is known of one learner in one course.
type Learner struct {
	Enrolled   bool
	EnrolledAt time.Time
	// AccessUntil ends access to the course; zero means no end.
	AccessUntil time.Time
	// Progress by lesson id.
	Progress map[int64]lms.LessonProgress
	// Overrides are lesson ids opened for this learner; 0 opens every
	// lesson.
	Overrides map[int64]bool
	// TestPassed by test id.
	TestPassed map[int64]bool
	// Attendance holds the learner's join/leave events by class id.
	Attendance map[int64][]lms.AttendanceEvent
	// Sittings by class id (for live-class lessons and unlock conditions).
	Sittings map[int64][]lms.Occurrence
	// RecordingS is the length in seconds of the recording a live-class
	// lesson shows, by lesson id (0 or absent: none).
	RecordingS map[int64]int
}

// Status is a lesson's state for one learner.
type Status struct {
	State State
	// Reason is the first condition that keeps a locked lesson closed.
	Reason string
	// UnlockAt is when the time conditions of a locked lesson will all
	// hold (zero when none is pending or it is unknown).
	UnlockAt time.Time
	// After are lessons that must be completed first.
	After []int64
	// CompletedAt is when the lesson was first complete.
	CompletedAt time.Time
	// Preview is true when a learner who is not enrolled may open the
	// lesson (a free preview).
	Preview bool
}

// Result is the evaluation of one learner in one course.
type Result struct {
	// Status by lesson id.
	Status map[int64]Status
	// Complete lists lessons whose completion rule holds now but that
	// have no stored completion yet (the caller records them).
	Complete      []int64
	RequiredDone  int
	RequiredTotal int
	// Percent is RequiredDone over RequiredTotal, rounded down.
	Percent int
	// CourseComplete is true when every required lesson is complete (and
	// there is at least one).
	CourseComplete bool
	// Next is the first open lesson not done yet (0: none).
	Next int64
}

// Zone loads an IANA zone, UTC for "" or an unknown name.
func Zone(name string) *time.Location {
	if name == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// ValidZone reports whether name is a zone Zone knows.
func ValidZone(name string) bool {
	_, err := time.LoadLocation(name)
	return name != "" && err == nil
}

// ParseUnlockAt reads an unlock date: an instant with a zone or offset
// (RFC 3339), or a local wall time "YYYY-MM-DDTHH:MM[:SS]" or a date
// "YYYY-MM-DD" (midnight) read in loc.
func ParseUnlockAt(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 instant nor a local YYYY-MM-DDTHH:MM", s)
}

// AddDays is the instant n calendar days after t at the same wall-clock
// time in loc: across a daylight-saving change a day is 23 or 25 hours.
func AddDays(t time.Time, n int, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day()+n, l.Hour(), l.Minute(), l.Second(), 0, loc)
}

// SittingEnd is the end of sitting seq of a class (0: its last sitting,
// cancelled or not). ok is false when there is no such sitting.
func SittingEnd(occ []lms.Occurrence, seq int) (time.Time, bool) {
	if len(occ) == 0 {
		return time.Time{}, false
	}
	if seq == 0 {
		end := occ[0].End
		for _, o := range occ {
			if o.End.After(end) {
				end = o.End
			}
		}
		return end, true
	}
	for _, o := range occ {
		if o.Seq == seq {
			return o.End, true
		}
	}
	return time.Time{}, false
}

// AttendedPercent is the share (0-100) of sitting seq that a learner's
// events put them in the room, at now. The events may be of any sitting;
// only seq's count.
func AttendedPercent(events []lms.AttendanceEvent, o lms.Occurrence, now time.Time) float64 {
	var mine []lms.AttendanceEvent
	for _, e := range events {
		if e.OccurrenceSeq == o.Seq {
			mine = append(mine, e)
		}
	}
	if len(mine) == 0 || !o.End.After(o.Start) {
		return 0
	}
	best := 0.0
	for _, r := range attendance.Report(mine, []lms.Occurrence{o}, now) {
		best = max(best, r.Percent)
	}
	return best
}

// LessonComplete reports whether a lesson's completion rule holds for the
// learner now, whatever was stored:
//   - text, file, embed: the learner marked it complete;
//   - video, audio: at least 90% of its distinct seconds were watched;
//   - live_class: the learner attended at least the course's attendance
//     percent of its sitting (of any sitting when it names none), or
//     watched 90% of its recording;
//   - test: the learner passed the test.
func LessonComplete(l lms.Lesson, s lms.CourseSettings, in Learner, now time.Time) bool {
	p := in.Progress[l.ID]
	switch l.Type {
	case lms.LessonText, lms.LessonFile, lms.LessonEmbed:
		return !p.MarkedAt.IsZero()
	case lms.LessonVideo, lms.LessonAudio:
		return WatchedEnough(p.Watched, l.DurationS)
	case lms.LessonLiveClass:
		if WatchedEnough(p.Watched, in.RecordingS[l.ID]) {
			return true
		}
		if l.ClassID == 0 {
			return false
		}
		threshold := float64(s.AttendancePercent)
		for _, o := range in.Sittings[l.ClassID] {
			if (l.ClassSeq == 0 || o.Seq == l.ClassSeq) && !o.Cancelled &&
				AttendedPercent(in.Attendance[l.ClassID], o, now) >= threshold {
				return true
			}
		}
		return false
	case lms.LessonTest:
		return l.TestID != 0 && in.TestPassed[l.TestID]
	}
	return false
}

// Evaluate applies every rule to one learner in one course at now.
//
// A lesson is done when it has a stored completion or its completion rule
// holds; a done lesson never locks again. Otherwise it is available when
// it is a free preview, or when the learner is enrolled, access has not
// ended, and either an override opens it or every unlock condition holds
// (the date; N days after enrolment in the course's zone; the named
// lessons complete; the named live sitting ended) and, with sequential
// navigation, the previous required lesson is done.
func Evaluate(c Course, in Learner, now time.Time) Result {
	loc := Zone(c.Settings.Timezone)
	res := Result{Status: make(map[int64]Status, len(c.Lessons))}
	done := map[int64]bool{}
	for _, l := range c.Lessons {
		p := in.Progress[l.ID]
		st := Status{CompletedAt: p.CompletedAt, Preview: l.IsPreview}
		if !in.Enrolled {
			// Nothing a visitor does counts.
			st.CompletedAt = time.Time{}
		} else if p.CompletedAt.IsZero() && LessonComplete(l, c.Settings, in, now) {
			st.CompletedAt = now
			res.Complete = append(res.Complete, l.ID)
		}
		if !st.CompletedAt.IsZero() {
			done[l.ID] = true
		}
		res.Status[l.ID] = st
	}
	var prevRequired int64
	for _, l := range c.Lessons {
		st := res.Status[l.ID]
		switch {
		case done[l.ID]:
			st.State = Done
		case l.IsPreview:
			st.State = Available
		case !in.Enrolled:
			st.State, st.Reason = Locked, ReasonNotEnrolled
		case !in.AccessUntil.IsZero() && !now.Before(in.AccessUntil):
			st.State, st.Reason = Locked, ReasonAccessExpired
		case in.Overrides[0] || in.Overrides[l.ID]:
			st.State = Available
		default:
			st = unlock(l, st, c, in, done, prevRequired, loc, now)
		}
		res.Status[l.ID] = st
		if l.IsRequired {
			prevRequired = l.ID
			res.RequiredTotal++
			if done[l.ID] {
				res.RequiredDone++
			}
		}
		if res.Next == 0 && st.State == Available && in.Enrolled {
			res.Next = l.ID
		}
	}
	if res.RequiredTotal > 0 {
		res.Percent = res.RequiredDone * 100 / res.RequiredTotal
		res.CourseComplete = in.Enrolled && res.RequiredDone == res.RequiredTotal
	}
	return res
}

// unlock checks a lesson's own conditions and sequential navigation.
func unlock(l lms.Lesson, st Status, c Course, in Learner, done map[int64]bool, prevRequired int64,
	loc *time.Location, now time.Time) Status {
	lock := func(reason string) {
		if st.Reason == "" {
			st.Reason = reason
		}
	}
	pending := func(at time.Time) {
		if at.After(st.UnlockAt) {
			st.UnlockAt = at
		}
	}
	u := l.Unlock
	if u.At != "" {
		if at, err := ParseUnlockAt(u.At, loc); err == nil && now.Before(at) {
			lock(ReasonDate)
			pending(at)
		}
	}
	if u.Days >= 0 {
		if at := AddDays(in.EnrolledAt, u.Days, loc); now.Before(at) {
			lock(ReasonEnrolmentDays)
			pending(at)
		}
	}
	if u.AfterClassID != 0 {
		end, ok := SittingEnd(in.Sittings[u.AfterClassID], u.AfterClassSeq)
		switch {
		case !ok:
			lock(ReasonNoSitting)
		case now.Before(end):
			lock(ReasonLiveClass)
			pending(end)
		}
	}
	for _, id := range u.AfterLessons {
		if !done[id] {
			lock(ReasonPrerequisites)
			st.After = append(st.After, id)
		}
	}
	if c.Settings.Navigation == lms.NavigationSequential && prevRequired != 0 && !done[prevRequired] {
		lock(ReasonSequential)
		st.After = append(st.After, prevRequired)
	}
	st.State = Available
	if st.Reason != "" {
		st.State = Locked
	}
	return st
}

// ErrLocked is the error of opening or writing progress to a locked
// lesson. Test for it with errors.As(err, &learn.ErrLocked{}) or a
// variable of this type.
type ErrLocked struct {
	Reason string
	// At is when the lesson unlocks, when a date decides it.
	At    time.Time
	After []int64
}

func (e ErrLocked) Error() string {
	msg := "lesson is locked (" + e.Reason + ")"
	if !e.At.IsZero() {
		msg += " until " + e.At.UTC().Format(time.RFC3339)
	}
	if len(e.After) > 0 {
		msg += "; complete lesson"
		for i, id := range e.After {
			if i > 0 {
				msg += ","
			}
			msg += " " + strconv.FormatInt(id, 10)
		}
		msg += " first"
	}
	return msg
}
