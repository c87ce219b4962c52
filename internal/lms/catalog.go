package lms

import "time"

// Publication states. Courses use the seed's lower-case "published";
// tests use "Published"; both use "Unpublished", which is also the state
// of a new course or test.
const (
	CoursePublished = "published"
	TestPublished   = "Published"
	Unpublished     = "Unpublished"
)

// Course is a course of the catalog.
type Course struct {
	ID                    int64
	Name                  string
	Subtitle              string
	InstructorDescription string
	Highlight             string
	Description           string
	Alias                 string
	Status                string
	CreatedAt, UpdatedAt  time.Time
}

// Test is a test (exam) of the catalog. The two allotted times are
// HH:MM:SS.
type Test struct {
	ID                   int64
	Name                 string
	Description          string
	Instructions         string
	TimeDemo             string
	TimeTest             string
	Status               string
	InCatalog            bool
	CreatedAt, UpdatedAt time.Time
}

// Bundle groups courses, tests and live classes sold or enrolled together.
type Bundle struct {
	ID                   int64
	Name                 string
	Description          string
	Items                []Item
	CreatedAt, UpdatedAt time.Time
}

// Item names a course, test, live class or bundle.
type Item struct {
	Kind string
	ID   int64
}

// Group is a named set of users.
type Group struct {
	ID          int64
	Name        string
	Description string
}

// GroupMember is a user's membership of a group.
type GroupMember struct {
	MembershipID int64
	UserID       int64
	UserType     string
	Name         string
	Email        string
}
