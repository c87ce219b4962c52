package lms

import "time"

// Recording is one recorded file of a live class.
type Recording struct {
	ID           int64
	ClassID      int64
	UserID       string // classroom user who recorded, "" when imported
	Name         string // stored file name
	FName        string // original file name
	BlobKey      string
	ContentType  string
	Size         int64
	Status       int // 1 published, 0 unpublished
	DateRecorded string
	CreatedAt    time.Time
}

// Attendance event kinds.
const (
	AttendanceJoin  = "join"
	AttendanceLeave = "leave"
)

// AttendanceEvent is a user joining or leaving one occurrence of a class.
type AttendanceEvent struct {
	ClassID       int64
	OccurrenceSeq int
	UserRef       string
	UserName      string
	IsTeacher     bool
	Kind          string // AttendanceJoin or AttendanceLeave
	At            time.Time
}
