package classroomapi_test

import (
	"context"
	"encoding/xml"
	"net/url"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

func TestGetClassReport(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		// A one-hour class at 15:00 UTC on 10 March 2031, in London (GMT then).
		c := makeClass(t, e, e.Domain, "Reported", start)
		id := itoa(c.ID)
		e.Clock.Set(start.Add(5 * time.Hour))

		if got := apitest.Str(t, e.VC("getclassreport", url.Values{"classId": {id}}).JSON(t), "Report"); got != "No attendance report available" {
			t.Fatalf("empty report: %q", got)
		}
		ev := func(user string, teacher bool, kind string, min, sec int) lms.AttendanceEvent {
			return lms.AttendanceEvent{ClassID: c.ID, OccurrenceSeq: 1, UserRef: user, UserName: "N " + user, IsTeacher: teacher,
				Kind: kind, At: start.Add(time.Duration(min)*time.Minute + time.Duration(sec)*time.Second)}
		}
		err := e.Store.AddAttendance(context.Background(), e.Domain.ID,
			ev("t1", true, "join", -10, 0), ev("t1", true, "leave", 60, 0),
			ev("s1", false, "join", 1, 21), ev("s1", false, "leave", 5, 0),
			ev("s1", false, "join", 4, 0), ev("s1", false, "leave", 10, 16),
		)
		if err != nil {
			t.Fatal(err)
		}
		answers := styles(t, e, "getclassreport", url.Values{"classId": {id}})
		sameAnswers(t, answers)
		body := answers["query"]
		want := map[string]any{
			"#":                    2,
			"0.classId":            id,
			"0.userId":             "t1",
			"0.duration":           "01:10:00",
			"0.percentage":         "100.00%",
			"0.attendance":         "Yes",
			"1.userId":             "s1",
			"1.duration":           "00:08:55",
			"1.percentage":         "14.86%",
			"1.attendance":         "Yes",
			"1.session.#":          2,
			"1.session.0.time_in":  "Mar 10, 2031 03:01:21 PM",
			"1.session.0.time_out": "Mar 10, 2031 03:05:00 PM",
		}
		for path, w := range want {
			got, ok := apitest.Lookup(body, path)
			if !ok || !apitest.Equal(got, w) {
				t.Errorf("%s = %v, want %v", path, got, w)
			}
		}
		one := e.VC("getclassreport", url.Values{"classId": {id}, "userId": {"s1"}}).JSON(t)
		if n, _ := apitest.Lookup(one, "#"); n != 1 || apitest.Str(t, one, "0.userId") != "s1" {
			t.Errorf("userId filter: %v", one)
		}
		students := e.VC("getclassreport", url.Values{"classId": {id}, "isTeacher": {"0"}}).JSON(t)
		if n, _ := apitest.Lookup(students, "#"); n != 1 || apitest.Str(t, students, "0.userId") != "s1" {
			t.Errorf("isTeacher 0 filter: %v", students)
		}
		r := e.VC("getclassreport", url.Values{"classId": {id}, "format": {"xml"}})
		var doc struct {
			Reports []struct {
				UserID   string `xml:"userId"`
				Sessions []struct {
					In string `xml:"time_in"`
				} `xml:"session"`
			} `xml:"report"`
		}
		if err := xml.Unmarshal(r.Body, &doc); err != nil || len(doc.Reports) != 2 || len(doc.Reports[1].Sessions) != 2 {
			t.Fatalf("xml: %v %+v %s", err, doc, r.Body)
		}
		if got := apitest.Str(t, e.VC("getclassreport", nil).JSON(t), "0.error"); got != "classId is required" {
			t.Errorf("missing classId: %q", got)
		}
		p := url.Values{"classId": {id}, "apikey": {e.Other.ClassroomKey}}
		if got := apitest.Str(t, e.VC("getclassreport", p).JSON(t), "0.error"); got != "Invalid Class Owner" {
			t.Errorf("other domain: %q", got)
		}
	}, seedStyle)
}
