package quiz

import (
	"errors"
	"fmt"
	"time"
)

// Attempt states (in the style of Moodle's quiz_attempts.state).
const (
	InProgress   = "in_progress"
	Overdue      = "overdue" // past the deadline with on_expiry=grace: may submit, not change answers
	Finished     = "finished"
	NeedsGrading = "needs_grading"
	Graded       = "graded"
)

// States lists every attempt state.
var States = []string{InProgress, Overdue, Finished, NeedsGrading, Graded}

// Modes of an attempt: demo is practice and never counts.
const (
	ModeDemo = "demo"
	ModeTest = "test"
)

// Events that move an attempt.
const (
	EvSubmit  = "submit" // the learner submits
	EvExpire  = "expire" // the deadline passed (the sweeper)
	EvGrace   = "grace_over"
	EvGrade   = "grade" // a manual mark was set
	EvRegrade = "regrade"
)

// ErrTransition is returned by Next for an event a state does not take.
var ErrTransition = errors.New("quiz: the attempt cannot do that in its state")

// Next is the attempt state machine. pending is whether any slot still
// waits for a manual mark after the event; onExpiry is the test's setting.
//
//	in_progress --submit--> finished | needs_grading
//	in_progress --expire--> finished | needs_grading (on_expiry=submit)
//	in_progress --expire--> overdue                  (on_expiry=grace)
//	overdue --submit | grace_over--> finished | needs_grading
//	needs_grading --grade--> needs_grading | graded
//	finished | needs_grading | graded --regrade--> finished | needs_grading | graded
func Next(state, event, onExpiry string, pending bool) (string, error) {
	done := Finished
	if pending {
		done = NeedsGrading
	}
	switch state {
	case InProgress:
		switch event {
		case EvSubmit:
			return done, nil
		case EvExpire:
			if onExpiry == ExpiryGrace {
				return Overdue, nil
			}
			return done, nil
		}
	case Overdue:
		if event == EvSubmit || event == EvGrace || event == EvExpire {
			return done, nil
		}
	case NeedsGrading:
		if event == EvGrade || event == EvRegrade {
			if pending {
				return NeedsGrading, nil
			}
			return Graded, nil
		}
	case Finished, Graded:
		if event == EvRegrade || (event == EvGrade && state == Graded) {
			if pending {
				return NeedsGrading, nil
			}
			return state, nil
		}
	}
	return state, fmt.Errorf("%w: %s cannot take %s", ErrTransition, state, event)
}

// Open reports whether answers may still change in state.
func Open(state string) bool { return state == InProgress }

// Closed reports whether the attempt is over (it may be reviewed).
func Closed(state string) bool { return state == Finished || state == NeedsGrading || state == Graded }

// NetworkGrace is how long after the deadline a save is still accepted: a
// save sent in the last second is not lost to the network.
const NetworkGrace = 10 * time.Second

// Permille is a multiplier in thousandths (1500 = ×1.5).
type Permille int64

// DeadlineInput is what fixes an attempt's deadline at start.
type DeadlineInput struct {
	Start      time.Time
	Allotted   time.Duration // the mode's allotted time; 0 = untimed
	Multiplier Permille      // 0 means 1000
	Extra      time.Duration
	CloseAt    time.Time // zero = never closes
}

// Deadline computes min(start + allotted × multiplier + extra, close_at).
// ok is false when there is no deadline (untimed and never closing);
// capped is true when close_at cut the time short.
func Deadline(in DeadlineInput) (deadline time.Time, capped, ok bool) {
	m := in.Multiplier
	if m <= 0 {
		m = 1000
	}
	if in.Allotted > 0 {
		secs := int64(in.Allotted/time.Second) * int64(m) / 1000
		deadline = in.Start.Add(time.Duration(secs)*time.Second + in.Extra)
		ok = true
	}
	if !in.CloseAt.IsZero() && (!ok || in.CloseAt.Before(deadline)) {
		return in.CloseAt, ok, true
	}
	return deadline, false, ok
}

// Grading methods: which attempts make a learner's final grade.
const (
	GradeHighest = "highest"
	GradeLatest  = "latest"
	GradeFirst   = "first"
	GradeAverage = "average"
)

// GradingMethods lists them.
var GradingMethods = []string{GradeHighest, GradeLatest, GradeFirst, GradeAverage}

// Scored is one counted attempt's total, in start order.
type Scored struct {
	Score Milli
	Max   Milli
}

// FinalGrade applies method to attempts (test-mode attempts that are
// finished or graded, in the order they were started). ok is false when
// there are none. The average is floored to a milli-point.
func FinalGrade(method string, attempts []Scored) (grade Scored, ok bool) {
	if len(attempts) == 0 {
		return Scored{}, false
	}
	switch method {
	case GradeLatest:
		return attempts[len(attempts)-1], true
	case GradeFirst:
		return attempts[0], true
	case GradeAverage:
		// Averaging percentages keeps attempts with different maxima
		// (random draws) comparable: the result is expressed on the
		// largest maximum.
		var max Milli
		for _, a := range attempts {
			if a.Max > max {
				max = a.Max
			}
		}
		if max == 0 {
			return Scored{}, true
		}
		var num int64
		for _, a := range attempts {
			if a.Max > 0 {
				num += int64(a.Score) * int64(max) / int64(a.Max)
			}
		}
		return Scored{Score: Milli(num / int64(len(attempts))), Max: max}, true
	}
	best := attempts[0]
	for _, a := range attempts[1:] {
		// Compare percentages exactly: a.Score/a.Max > best.Score/best.Max.
		if int64(a.Score)*int64(best.Max) > int64(best.Score)*int64(a.Max) || (best.Max == 0 && a.Max > 0) {
			best = a
		}
	}
	return best, true
}

// Passed applies the pass rule: score ≥ passPercent % of max. A pass mark
// of 0 means finishing the test passes it; a test worth nothing passes.
func Passed(g Scored, passPercent int) bool {
	if g.Max <= 0 {
		return true
	}
	return int64(g.Score)*100 >= int64(passPercent)*int64(g.Max)
}

// Percent is score ÷ max in hundredths of a percent, floored (7550 = 75.5 %).
func Percent(g Scored) int64 {
	if g.Max <= 0 {
		return 0
	}
	return int64(g.Score) * 10000 / int64(g.Max)
}
