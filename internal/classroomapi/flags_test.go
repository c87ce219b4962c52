package classroomapi

import (
	"testing"

	"github.com/lectern-lms/lectern/internal/lms"
)

// TestClassFlagsSetTheirFields checks classFlag against classFlags: each
// parameter sets the field of its name, and no other.
func TestClassFlagsSetTheirFields(t *testing.T) {
	fields := map[string]func(c *lms.LiveClass) int{
		"ispaid":            func(c *lms.LiveClass) int { return c.IsPaid },
		"record":            func(c *lms.LiveClass) int { return c.Record },
		"isRecordingLayout": func(c *lms.LiveClass) int { return c.IsRecordingLayout },
		"isVideo":           func(c *lms.LiveClass) int { return c.IsVideo },
		"isBoard":           func(c *lms.LiveClass) int { return c.IsBoard },
		"isLang":            func(c *lms.LiveClass) int { return c.IsLang },
		"isRegion":          func(c *lms.LiveClass) int { return c.IsRegion },
		"isCorporate":       func(c *lms.LiveClass) int { return c.IsCorporate },
		"isScreenshare":     func(c *lms.LiveClass) int { return c.IsScreenshare },
		"isPrivateChat":     func(c *lms.LiveClass) int { return c.IsPrivateChat },
		"privacy":           func(c *lms.LiveClass) int { return c.Privacy },
		"published":         func(c *lms.LiveClass) int { return c.Published },
		"seat_attendees":    func(c *lms.LiveClass) int { return c.SeatAttendees },
		"repeat":            func(c *lms.LiveClass) int { return c.Repeat },
		"end_classes_count": func(c *lms.LiveClass) int { return c.EndClassesCount },
	}
	if len(classFlags) != len(fields) {
		t.Fatalf("%d class flags, want %d", len(classFlags), len(fields))
	}
	for i, f := range classFlags {
		var c lms.LiveClass
		*classFlag(&c, i) = 7
		for name, get := range fields {
			want := 0
			if name == f.name {
				want = 7
			}
			if got := get(&c); got != want {
				t.Errorf("%s set: %s is %d, want %d", f.name, name, got, want)
			}
		}
	}
}
