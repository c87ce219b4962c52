// Package event names the events Lectern sends to webhook endpoints and
// builds their payloads. It knows no SQL: the store calls these builders
// inside the transaction of a change and writes what they return to the
// webhook outbox (see store.emit), so the payload of an event is decided
// here, once, for every path that makes the change.
package event

import (
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Event types an endpoint may subscribe to.
const (
	UserCreated       = "user.created"
	UserDeleted       = "user.deleted"
	CourseCreated     = "course.created"
	CourseDeleted     = "course.deleted"
	ClassCreated      = "class.created"
	ClassDeleted      = "class.deleted"
	EnrollmentCreated = "enrollment.created"
	EnrollmentDeleted = "enrollment.deleted"
	ClassStarted      = "class.started"
	ClassEnded        = "class.ended"
	ParticipantJoined = "participant.joined"
	ParticipantLeft   = "participant.left"
	RecordingReady    = "recording.ready"
	PaymentSucceeded  = "payment.succeeded"
	PaymentRefunded   = "payment.refunded"
	BadgeAwarded      = "badge.awarded"
	// Test is what POST /webhooks/test/{webhook_id} sends; no endpoint
	// subscribes to it.
	Test = "webhook.test"
)

// Types lists every type an endpoint may subscribe to, in the order the
// docs list them.
var Types = []string{
	UserCreated, UserDeleted, CourseCreated, CourseDeleted, ClassCreated, ClassDeleted,
	EnrollmentCreated, EnrollmentDeleted, ClassStarted, ClassEnded, ParticipantJoined, ParticipantLeft,
	RecordingReady, PaymentSucceeded, PaymentRefunded, BadgeAwarded,
}

// Known reports whether t is a type an endpoint may subscribe to.
func Known(t string) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// Event is one thing that happened: its type and the object of the
// "data" member of the payload.
type Event struct {
	Type string
	Data any
}

// Payload is the JSON body every endpoint receives. ID is also the
// webhook-id header, the same on every retry: receivers deduplicate on it.
type Payload struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	DomainID  int64  `json:"domain_id"`
	Data      any    `json:"data"`
}

// NewPayload wraps e for domainID with a fresh id at time at.
func NewPayload(id string, domainID int64, at time.Time, e Event) Payload {
	return Payload{ID: id, Type: e.Type, Timestamp: rfc(at), DomainID: domainID, Data: e.Data}
}

func rfc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// User is the data of user.created and user.deleted.
type User struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Username  string `json:"username"`
	Email     string `json:"email"`
	CreatedAt string `json:"created_at"`
}

func user(u lms.User) User {
	return User{ID: u.ID, Name: u.Name, Username: u.Username, Email: u.Email, CreatedAt: rfc(u.CreatedAt)}
}

// UserCreatedEvent is user.created for u.
func UserCreatedEvent(u lms.User) Event { return Event{UserCreated, user(u)} }

// UserDeletedEvent is user.deleted for u.
func UserDeletedEvent(u lms.User) Event { return Event{UserDeleted, user(u)} }

// Course is the data of course.created and course.deleted.
type Course struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

// CourseCreatedEvent is course.created for c.
func CourseCreatedEvent(c lms.Course) Event {
	return Event{CourseCreated, Course{ID: c.ID, Name: c.Name, Status: c.Status}}
}

// CourseDeletedEvent is course.deleted for the course with id.
func CourseDeletedEvent(id int64) Event { return Event{CourseDeleted, Course{ID: id}} }

// Class is the data of class.created and class.deleted.
type Class struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Date     string `json:"date,omitempty"`
	Timezone string `json:"timezone,omitempty"`
}

// ClassCreatedEvent is class.created for c.
func ClassCreatedEvent(c lms.LiveClass) Event {
	return Event{ClassCreated, Class{ID: c.ID, Title: c.Title, Date: c.Date, Timezone: c.TimezoneName}}
}

// ClassDeletedEvent is class.deleted for the class with id.
func ClassDeletedEvent(id int64) Event { return Event{ClassDeleted, Class{ID: id}} }

// Enrollment is the data of enrollment.created and enrollment.deleted: a
// user's direct enrollment in an item (kind is course, test, class or
// bundle). Enrolling in a bundle raises one event, for the bundle, not
// one per item it gives.
type Enrollment struct {
	UserID int64  `json:"user_id"`
	Kind   string `json:"kind"`
	ItemID int64  `json:"item_id"`
}

// EnrollmentCreatedEvent is enrollment.created.
func EnrollmentCreatedEvent(userID int64, kind string, itemID int64) Event {
	return Event{EnrollmentCreated, Enrollment{UserID: userID, Kind: kind, ItemID: itemID}}
}

// EnrollmentDeletedEvent is enrollment.deleted.
func EnrollmentDeletedEvent(userID int64, kind string, itemID int64) Event {
	return Event{EnrollmentDeleted, Enrollment{UserID: userID, Kind: kind, ItemID: itemID}}
}

// Sitting is the data of class.started and class.ended: one sitting
// (occurrence) of a live class.
type Sitting struct {
	ClassID  int64  `json:"class_id"`
	Sitting  int    `json:"sitting"`
	OpenedAt string `json:"opened_at"`
	EndedAt  string `json:"ended_at,omitempty"`
}

// ClassStartedEvent is class.started for st.
func ClassStartedEvent(st lms.Sitting) Event {
	return Event{ClassStarted, Sitting{ClassID: st.ClassID, Sitting: st.OccurrenceSeq, OpenedAt: rfc(st.OpenedAt)}}
}

// ClassEndedEvent is class.ended for st.
func ClassEndedEvent(st lms.Sitting) Event {
	return Event{ClassEnded, Sitting{ClassID: st.ClassID, Sitting: st.OccurrenceSeq, OpenedAt: rfc(st.OpenedAt), EndedAt: rfc(st.EndedAt)}}
}

// Participant is the data of participant.joined and participant.left.
// user_id is the classroom user id the launch carried (an LMS user's id as
// text for learners the LMS launched).
type Participant struct {
	ClassID   int64  `json:"class_id"`
	Sitting   int    `json:"sitting"`
	UserID    string `json:"user_id"`
	Name      string `json:"name"`
	IsTeacher bool   `json:"is_teacher"`
	At        string `json:"at"`
}

// AttendanceEvent is participant.joined or participant.left for a.
func AttendanceEvent(a lms.AttendanceEvent) Event {
	t := ParticipantJoined
	if a.Kind == lms.AttendanceLeave {
		t = ParticipantLeft
	}
	return Event{t, Participant{ClassID: a.ClassID, Sitting: a.OccurrenceSeq, UserID: a.UserRef, Name: a.UserName,
		IsTeacher: a.IsTeacher, At: rfc(a.At)}}
}

// Recording is the data of recording.ready.
type Recording struct {
	ID         int64  `json:"id"`
	ClassID    int64  `json:"class_id"`
	Sitting    int    `json:"sitting"`
	Name       string `json:"name"`
	DurationMS int64  `json:"duration_ms"`
	Size       int64  `json:"size"`
}

// RecordingReadyEvent is recording.ready for r. name is the original
// file name of an imported recording, else the stored one (a live room's
// recording has no original name).
func RecordingReadyEvent(r lms.Recording) Event {
	name := r.FName
	if name == "" {
		name = r.Name
	}
	return Event{RecordingReady, Recording{ID: r.ID, ClassID: r.ClassID, Sitting: r.OccurrenceSeq, Name: name,
		DurationMS: r.DurationMS, Size: r.Size}}
}

// Payment is the data of payment.succeeded and payment.refunded. Amounts
// are minor units (cents) as text, as the payments API writes them;
// refunded is the order's refunded total so far, amount what this event
// moved.
type Payment struct {
	OrderID  int64  `json:"order_id"`
	Source   string `json:"source"`
	Status   string `json:"status"`
	Email    string `json:"email"`
	UserID   int64  `json:"user_id"`
	Currency string `json:"currency"`
	Total    string `json:"total_minor"`
	Amount   string `json:"amount_minor"`
	Refunded string `json:"refunded_minor"`
	Gateway  string `json:"gateway"`
}

// PaymentEvent is payment.succeeded (or payment.refunded, by t) for p;
// the caller fills p from its order.
func PaymentEvent(t string, p Payment) Event { return Event{t, p} }

// Minor writes an amount of minor units as PaymentEvent's fields hold it.
func Minor(n int64) string { return strconv.FormatInt(n, 10) }

// Badge is the data of badge.awarded.
type Badge struct {
	UserID         int64  `json:"user_id"`
	BadgeID        int64  `json:"badge_id"`
	Description    string `json:"description"`
	PointsRequired int64  `json:"points_required"`
	AwardedAt      string `json:"awarded_at"`
}

// BadgeAwardedEvent is badge.awarded.
func BadgeAwardedEvent(userID, badgeID int64, description string, points int64, at time.Time) Event {
	return Event{BadgeAwarded, Badge{UserID: userID, BadgeID: badgeID, Description: description, PointsRequired: points, AwardedAt: rfc(at)}}
}
