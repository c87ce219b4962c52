package classroomapi

import (
	"context"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
	"github.com/lectern-lms/lectern/internal/store"
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
	l, err := newLaunch(c.Domain.ID, cls, LaunchUser{ID: userID, Name: c.P.Get("userName"), Lesson: c.P.Get("lessonName"),
		Course: c.P.Get("courseName"), Teacher: teacher == 1}, extend, a.now())
	if err != nil {
		return nil, err
	}
	if err := a.checkPurchase(ctx, c, cls, teacher == 1); err != nil {
		return nil, err
	}
	base := a.BaseURL()
	vals := make(wire.Strings, 0, 3) // the three values in one allocation
	return wire.Action("getclasslaunch",
		kv{"class_id", vals.Value(strconv.FormatInt(cls.ID, 10))},
		kv{"launchurl", vals.Value(signing.SignedLaunchURL(base, c.Domain.LaunchSecret, l))},
		kv{"encryptedlaunchurl", vals.Value(signing.EncryptedLaunchURL(base, c.Domain.LaunchSecret, l))},
	), nil
}

// LaunchUser is who a launch URL lets into a class.
type LaunchUser struct {
	ID, Name       string
	Lesson, Course string
	Teacher        bool
}

// newLaunch is the launch getclasslaunch signs: the sitting in progress or
// the next one, a student no earlier than StudentEarlyEntry before it
// starts, expiring when the sitting ends (plus ExtendGrace when the class
// timer may be extended, isExtend 0).
func newLaunch(domainID int64, cls lms.LiveClass, u LaunchUser, extend int, now time.Time) (signing.Launch, error) {
	occ, err := launchableOccurrence(cls, now)
	if err != nil {
		return signing.Launch{}, err
	}
	if !u.Teacher && now.Before(occ.Start.Add(-StudentEarlyEntry)) {
		return signing.Launch{}, fail("Class is upcoming")
	}
	expires := occ.End
	if extend == 0 {
		expires = expires.Add(ExtendGrace)
	}
	return signing.Launch{Domain: domainID, Class: cls.ID, Occurrence: occ.Seq, UserID: u.ID,
		UserName: u.Name, Teacher: u.Teacher, Lesson: u.Lesson, Course: u.Course, Extend: extend,
		Expires: expires.Truncate(time.Second)}, nil
}

// LaunchURL returns the encrypted launch URL getclasslaunch would answer
// for u in class cls of domain d (isExtend 0), for pages of this server
// that send a user into a class (the learner portal's Join). The error
// says why the class cannot be entered now: upcoming, cancelled or over.
func LaunchURL(base string, d store.Domain, cls lms.LiveClass, u LaunchUser, now time.Time) (string, error) {
	l, err := newLaunch(d.ID, cls, u, 0, now)
	if err != nil {
		return "", err
	}
	return signing.EncryptedLaunchURL(base, d.LaunchSecret, l), nil
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
