package learn

import (
	"html/template"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// LessonItem is a lesson as the outline shows it to one learner.
type LessonItem struct {
	ID         int64
	SectionID  int64
	Title      string
	Type       string
	IsRequired bool
	IsPreview  bool
	DurationS  int
	Status
	// Position is the learner's resume point in seconds; WatchedPercent
	// the share of distinct seconds watched (video, audio, a live class's
	// recording).
	Position       int
	WatchedPercent int
}

// SectionView is a section of the outline with its lessons in order.
type SectionView struct {
	ID       int64
	Title    string
	Position int
	Lessons  []LessonItem
}

// CourseView is a course's outline for one learner (userID 0: a visitor).
type CourseView struct {
	Course     lms.Course
	Settings   lms.CourseSettings
	Sections   []SectionView
	Enrolled   bool
	EnrolledAt time.Time
	// Percent is required lessons done over required lessons (0-100).
	Percent       int
	RequiredDone  int
	RequiredTotal int
	// CompletedAt is when the course was first complete (zero: not yet).
	CompletedAt time.Time
	// NextLessonID is the first open lesson not done yet (0: none).
	NextLessonID int64
}

// Lessons returns the outline's lessons in order.
func (v CourseView) Lessons() []LessonItem {
	var out []LessonItem
	for _, s := range v.Sections {
		out = append(out, s.Lessons...)
	}
	return out
}

// LessonView is one lesson opened by a learner.
type LessonView struct {
	LessonItem
	CourseID    int64
	CourseTitle string
	// HTML is the text lesson's Markdown rendered and sanitised.
	HTML template.HTML
	// EmbedProvider, EmbedID and EmbedURL describe an embedded video.
	EmbedProvider string
	EmbedID       string
	EmbedURL      string
	// MediaURL is a signed, expiring path (under the server's root) to
	// the lesson's video, audio, file, or live-class recording; "" when it
	// has none.
	MediaURL    string
	FileName    string
	ContentType string
	FileSize    int64
	// Live class: the class and its sitting (Sitting zero when none is
	// known); RecordingS is the recording's length when there is one.
	ClassID    int64
	ClassSeq   int
	Sitting    lms.Occurrence
	RecordingS int
	// TestID is a test lesson's test.
	TestID int64
	// Previous and next lessons in the outline (0: none).
	PrevLessonID int64
	NextLessonID int64
	// Enrolled is false for a visitor opening a free preview: nothing is
	// recorded.
	Enrolled bool
}

// Progress is a learner's standing after a progress write.
type Progress struct {
	LessonID          int64
	State             State
	CompletedAt       time.Time
	Position          int
	WatchedPercent    int
	CoursePercent     int
	CourseCompletedAt time.Time
	NextLessonID      int64
}

// DashboardCourse is one enrolled course on a learner's dashboard.
type DashboardCourse struct {
	Course      lms.Course
	EnrolledAt  time.Time
	Percent     int
	CompletedAt time.Time
	// ResumeLessonID is where to continue: the lesson last worked on if
	// it is not done, else the next open lesson (0: none). ResumePosition
	// is its resume point in seconds.
	ResumeLessonID    int64
	ResumeLessonTitle string
	ResumePosition    int
}

// Dashboard is a learner's enrolled courses, most recently enrolled first.
type Dashboard struct {
	Courses []DashboardCourse
}
