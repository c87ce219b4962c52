package vcapi

import (
	"context"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
)

// How early a student may enter before a sitting starts (a teacher gets
// links at any time before the sitting ends, to prepare the room), and how
// long a launch link outlives the sitting when the class timer may be
// extended (isExtend 0).
const (
	StudentEarlyEntry = 10 * time.Minute
	ExtendGrace       = 60 * time.Minute
)

// getclasslaunch: class_id, userId (or user_id), userName, isTeacher,
// lessonName, courseName, optional isExtend. Answers a plain signed
// launchurl and an encrypted encryptedlaunchurl for the current or next
// sitting.
func (a *API) getClassLaunch(ctx context.Context, c *call) (*result, error) {
	id, err := requiredID(c.P, "class_id")
	if err != nil {
		return nil, err
	}
	userID, _ := c.P.First("userId", "user_id")
	for _, req := range []struct{ name, value string }{
		{"userId", userID}, {"userName", c.P.Get("userName")}, {"isTeacher", c.P.Get("isTeacher")},
		{"lessonName", c.P.Get("lessonName")}, {"courseName", c.P.Get("courseName")},
	} {
		if req.value == "" {
			return nil, fail("%s is required", req.name)
		}
	}
	teacher, err := optionalFlag(c.P, "isTeacher", 0)
	if err != nil {
		return nil, err
	}
	extend, err := optionalFlag(c.P, "isExtend", 0)
	if err != nil {
		return nil, err
	}
	cls, err := a.ownedClass(ctx, c, id)
	if err != nil {
		return nil, err
	}
	now := a.now()
	occ, err := launchableOccurrence(cls, now)
	if err != nil {
		return nil, err
	}
	if teacher == 0 && now.Before(occ.Start.Add(-StudentEarlyEntry)) {
		return nil, fail("Class is upcoming")
	}
	expires := occ.End
	if extend == 0 {
		expires = expires.Add(ExtendGrace)
	}
	l := signing.Launch{Domain: c.Domain.ID, Class: cls.ID, Occurrence: occ.Seq, UserID: userID,
		UserName: c.P.Get("userName"), Teacher: teacher == 1, Lesson: c.P.Get("lessonName"),
		Course: c.P.Get("courseName"), Extend: extend, Expires: expires.Truncate(time.Second)}
	base := a.BaseURL()
	return action("getclasslaunch",
		kv{"class_id", strconv.FormatInt(cls.ID, 10)},
		kv{"launchurl", signing.SignedLaunchURL(base, c.Domain.LaunchSecret, l)},
		kv{"encryptedlaunchurl", signing.EncryptedLaunchURL(base, c.Domain.LaunchSecret, l)},
	), nil
}

// launchableOccurrence is the sitting a launch enters: the one in
// progress, else the next one. A class whose sittings are all cancelled,
// or all over, cannot be launched.
func launchableOccurrence(cls lms.LiveClass, now time.Time) (lms.Occurrence, error) {
	cancelled := 0
	for _, o := range cls.Occurrences {
		if o.Cancelled {
			cancelled++
			continue
		}
		if now.Before(o.End) {
			return o, nil
		}
	}
	if cancelled == len(cls.Occurrences) {
		return lms.Occurrence{}, fail("Class is cancelled")
	}
	return lms.Occurrence{}, fail("Class is over: it is in the past")
}
