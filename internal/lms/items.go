package lms

import "time"

// Kinds of item that enrollments, bundles, pricing schemes and discounts
// hang on.
const (
	KindCourse = "course"
	KindTest   = "test"
	KindClass  = "class"
	KindBundle = "bundle"
)

// LiveClass is one live class, the same record whichever API made it.
// Date, StartMinute and EndMinute are the wall clock of the first sitting
// in the class's zone; the sittings themselves are Occurrences.
type LiveClass struct {
	ID              int64
	OwnerUserID     int64
	Title           string
	Description     string
	Date            string // YYYY-MM-DD, first sitting
	StartMinute     int    // minutes after midnight
	EndMinute       int    // minutes after midnight; <= StartMinute means the sitting ends the next day
	TimezoneID      int    // classroom API timezone id, 0 when given only as an IANA name
	TimezoneName    string // IANA zone
	IsRecurring     bool
	Repeat          int
	Weekdays        string // comma-separated 1-7
	EndClassesCount int
	EndDate         string // YYYY-MM-DD or ""
	Currency        string // lower case
	IsPaid          int
	SeatAttendees   int
	Record          int
	IsRecordingLayout, IsVideo, IsBoard, IsLang, IsRegion,
	IsCorporate, IsScreenshare, IsPrivateChat int
	Keyword     string
	Privacy     int
	Published   int
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Occurrences []Occurrence
}

// Occurrence is one sitting of a live class, in UTC.
type Occurrence struct {
	Seq       int
	Start     time.Time
	End       time.Time
	Cancelled bool
}
