package classroomapi

import (
	"context"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/attendance"
	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
)

// getclassreport: classId, optional userId, optional isTeacher (1 only
// teachers, 0 only students). One item per user.
func (a *API) getClassReport(ctx context.Context, c *call) (*result, error) {
	id, err := requiredID(c.P, "classId", "class_id")
	if err != nil {
		return nil, err
	}
	teacherFilter := c.P.Get("isTeacher")
	if teacherFilter != "" && teacherFilter != "0" && teacherFilter != "1" {
		return nil, fail("isTeacher must be 0 or 1, not %q", teacherFilter)
	}
	cls, err := a.ownedClass(ctx, c, id)
	if err != nil {
		return nil, err
	}
	userRef := c.P.Get("userId")
	events, err := a.Store.Attendance(ctx, c.Domain.ID, id, userRef)
	if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(cls.TimezoneName)
	if err != nil {
		loc = time.UTC
	}
	var rs []obj
	for _, u := range attendance.Report(events, cls.Occurrences, a.now()) {
		if teacherFilter != "" && u.IsTeacher != (teacherFilter == "1") {
			continue
		}
		sessions := make([]obj, len(u.Sessions))
		for i, s := range u.Sessions {
			sessions[i] = obj{{"time_in", s.In.In(loc).Format(attendance.TimeLayout)}, {"time_out", s.Out.In(loc).Format(attendance.TimeLayout)}}
		}
		yes := "No"
		if u.Attended {
			yes = "Yes"
		}
		rs = append(rs, obj{
			{"classId", strconv.FormatInt(id, 10)},
			{"userId", u.UserRef},
			{"userName", u.UserName},
			{"duration", attendance.FormatDuration(u.Present)},
			{"percentage", attendance.FormatPercent(u.Percent)},
			{"attendance", yes},
			{"session", sessions},
		})
	}
	return wire.Records("report", rs, "Report", "No attendance report available"), nil
}
