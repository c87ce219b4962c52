package lms

import (
	"regexp"
	"time"
)

// Lesson types.
const (
	LessonText      = "text"
	LessonVideo     = "video"
	LessonAudio     = "audio"
	LessonFile      = "file"
	LessonEmbed     = "embed"
	LessonLiveClass = "live_class"
	LessonTest      = "test"
)

// LessonTypes lists every lesson type.
var LessonTypes = []string{LessonText, LessonVideo, LessonAudio, LessonFile, LessonEmbed, LessonLiveClass, LessonTest}

// Embed providers.
const (
	EmbedYouTube = "youtube"
	EmbedVimeo   = "vimeo"
)

// Course navigation modes.
const (
	NavigationFree       = "free"
	NavigationSequential = "sequential"
)

var (
	youTubeID = regexp.MustCompile(`^[A-Za-z0-9_-]{11}$`)
	vimeoID   = regexp.MustCompile(`^[0-9]{1,12}$`)
)

// ValidEmbed reports whether id is a well-formed video id of provider.
func ValidEmbed(provider, id string) bool {
	switch provider {
	case EmbedYouTube:
		return youTubeID.MatchString(id)
	case EmbedVimeo:
		return vimeoID.MatchString(id)
	}
	return false
}

// CourseSettings are a course's learning rules.
type CourseSettings struct {
	CourseID   int64
	Navigation string // NavigationFree or NavigationSequential
	// Timezone is the IANA zone of "N days after enrolment" and of local
	// unlock dates.
	Timezone string
	// AttendancePercent is the share of a live sitting (1-100) a learner
	// must attend for a live-class lesson to be complete.
	AttendancePercent int
}

// DefaultCourseSettings are the settings of a course never configured.
func DefaultCourseSettings(courseID int64) CourseSettings {
	return CourseSettings{CourseID: courseID, Navigation: NavigationFree, Timezone: "UTC", AttendancePercent: 50}
}

// Section is a titled, ordered group of a course's lessons.
type Section struct {
	ID        int64
	CourseID  int64
	Title     string
	Position  int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Unlock are a lesson's drip and prerequisite conditions; every one set
// must hold.
type Unlock struct {
	// At is an instant ("2026-03-08T09:00:00Z") or a local wall time in
	// the course's zone ("2026-03-08T09:00"); "" for none.
	At string
	// Days after enrolment; -1 for none.
	Days int
	// AfterLessons must be complete first.
	AfterLessons []int64
	// AfterClassID's sitting AfterClassSeq (0: its last) must have ended;
	// AfterClassID 0 for none.
	AfterClassID  int64
	AfterClassSeq int
}

// IsZero reports whether no condition is set.
func (u Unlock) IsZero() bool {
	return u.At == "" && u.Days < 0 && len(u.AfterLessons) == 0 && u.AfterClassID == 0
}

// Lesson is one lesson of a course.
type Lesson struct {
	ID         int64
	CourseID   int64
	SectionID  int64
	Title      string
	Type       string
	Position   int
	IsRequired bool
	IsPreview  bool
	BodyMD     string
	// EmbedProvider and EmbedID name an embedded video (type embed).
	EmbedProvider string
	EmbedID       string
	// FileID is the uploaded file of a video, audio or file lesson (0:
	// none).
	FileID int64
	// ClassID is the live class of a live_class lesson and ClassSeq its
	// sitting (0: any sitting).
	ClassID  int64
	ClassSeq int
	// TestID is the test of a test lesson.
	TestID    int64
	DurationS int
	Unlock    Unlock
	CreatedAt time.Time
	UpdatedAt time.Time
}

// LearnFile is an uploaded lesson file in the blob store.
type LearnFile struct {
	ID          int64
	BlobKey     string
	Name        string
	ContentType string
	Size        int64
	CreatedAt   time.Time
}

// LessonProgress is what one learner did in one lesson. Zero times are
// "not yet".
type LessonProgress struct {
	LessonID    int64
	UserID      int64
	OpenedAt    time.Time
	MarkedAt    time.Time
	CompletedAt time.Time
	// Watched are merged [start, end) second ranges.
	Watched   [][2]int
	Position  int
	UpdatedAt time.Time
}

// TestResult is the test engine's verdict for one learner and test.
type TestResult struct {
	TestID int64
	UserID int64
	Passed bool
	At     time.Time
}
