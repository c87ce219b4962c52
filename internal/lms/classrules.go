package lms

import "fmt"

// SittingMinutes is how long each of the class's sittings lasts: end minus
// start on the wall clock, plus a day when the end is not after the start.
func (c LiveClass) SittingMinutes() int {
	d := c.EndMinute - c.StartMinute
	if d <= 0 {
		d += 24 * 60
	}
	return d
}

// Plan limit kinds, for an API to name its own parameter.
const (
	LimitSeats     = "seats"
	LimitDuration  = "duration"
	LimitRecording = "recording"
)

// PlanViolation is a class that the domain's plan does not allow.
type PlanViolation struct {
	Limit   string // LimitSeats, LimitDuration or LimitRecording
	Message string
}

func (e *PlanViolation) Error() string { return e.Message }

// CheckClass applies the plan's limits to a class: seats, the length of a
// sitting, recording. It is the one rule both APIs use, whichever creates
// or updates the class; nil means the plan allows it.
func (p Plan) CheckClass(c LiveClass) *PlanViolation {
	if p.AttendeeSeats > 0 && c.SeatAttendees > p.AttendeeSeats {
		return &PlanViolation{LimitSeats, fmt.Sprintf("Please enter less than %d Seat Attendees", p.AttendeeSeats+1)}
	}
	if p.SessionMinutes > 0 && c.SittingMinutes() > p.SessionMinutes {
		return &PlanViolation{LimitDuration, fmt.Sprintf("A class may last at most %d minutes on the %s plan; this one lasts %d",
			p.SessionMinutes, p.Name, c.SittingMinutes())}
	}
	if !p.Recording && c.Record != 0 {
		return &PlanViolation{LimitRecording, fmt.Sprintf("Recording is not available on the %s plan", p.Name)}
	}
	return nil
}
