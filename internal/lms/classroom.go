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
	// State is the lifecycle of a recording the classroom made:
	// RecordingActive, RecordingProcessing, RecordingReady or
	// RecordingFailed (an imported file is ready).
	State         string
	DurationMS    int64
	OccurrenceSeq int
	Segment       int
	// ExportState is the single-file export's: "", "running", "ready",
	// "failed" or "unavailable"; ExportProgress is 0-100.
	ExportState    string
	ExportProgress int
}

// Recording states.
const (
	RecordingActive     = "recording"
	RecordingProcessing = "processing"
	RecordingReady      = "ready"
	RecordingFailed     = "failed"
)

// RecordingFile is one file of a recording: a stream's WebM, the event
// log or the MP4 export.
type RecordingFile struct {
	ID          int64
	RecordingID int64
	Role        string // "media", "events" or "mp4"
	BlobKey     string
	Name        string
	ContentType string
	UserRef     string
	Label       string
	StartMS     int64
	DurationMS  int64
	Width       int
	Height      int
	Size        int64
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

// ChatMessage is one message of a sitting's chat. To is "" for a message
// to everyone, else the recipient's classroom user id.
type ChatMessage struct {
	ID            int64
	ClassID       int64
	OccurrenceSeq int
	From          string
	FromName      string
	To            string
	Text          string
	At            time.Time
}

// Sitting is what a sitting's live room keeps in the store: the minutes
// the teacher extended it by, when the room first opened, and when it was
// ended (zero while it may still be entered).
type Sitting struct {
	ClassID         int64
	OccurrenceSeq   int
	ExtendedMinutes int
	OpenedAt        time.Time
	EndedAt         time.Time
	// BoardPage is the whiteboard page everyone sees; Presentation is the
	// open presentation's state as JSON ("" for none).
	BoardPage    string
	Presentation string
	// DrawAll and FilesAll are the teacher's room-wide switches; Recording
	// is SittingRecording while the sitting is recorded, SittingPaused
	// after it was recorded and stopped (SittingNotRecorded before).
	DrawAll, FilesAll bool
	Recording         int
}

// A sitting's recording, as the next owner of its room finds it.
const (
	SittingNotRecorded = 0
	SittingRecording   = 1
	SittingPaused      = 2
)

// RoomUser is what a sitting's room keeps of one user for the node that
// takes the room over: when the hand went up (zero while down) and the
// teacher's per-student permissions (nil follows the class).
type RoomUser struct {
	UserRef                    string
	HandAt                     time.Time
	Media, Screen, Draw, Files *bool
}

// BoardObject is one whiteboard object of a sitting as the store keeps
// it: its id, page, drawing order and JSON (which the room service reads).
type BoardObject struct {
	ID   string
	Page string
	Ord  int64
	Data []byte
}

// Shared file states.
const (
	FileReady      = "ready"
	FileConverting = "converting"
	FileFailed     = "failed"
)

// RoomFile is a file shared in a class's live room.
type RoomFile struct {
	ID            int64
	ClassID       int64
	OccurrenceSeq int
	UserRef       string
	UserName      string
	Name          string
	ContentType   string
	Kind          string // "file" or "presentation"
	Size          int64
	BlobKey       string
	Status        string
	CreatedAt     time.Time
}
