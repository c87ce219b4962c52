package classroomapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/classroom"
	"github.com/lectern-lms/lectern/internal/lms"
)

// TestClassLifeCycle walks a class through the life a client gives it:
// schedule, price, discount, list, launch as teacher and student, record,
// attend, report, cancel, remove.
func TestClassLifeCycle(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		e.Clock.Set(start.Add(-48 * time.Hour))
		// 03:00 PM in London on 2031-03-10 is start (15:00 UTC).
		id := scheduleID(t, e, classParams("title", "Life & Times", "ispaid", "1", "currency", "GBP"))
		price := idString(t, vcOK(t, e, "addSchemes", vals("class_id", id, "price", "30", "scheme_days", "30", "times", "0"))["Price id"])
		vcOK(t, e, "addSpecials", vals("class_id", id, "discount", "10", "discount_type", "1", "start_date", "2031-01-01", "discount_code", "WELCOME"))
		if r := vcOK(t, e, "applycoupon", vals("class_id", id, "discount_code", "welcome", "price_id", price)); r["amount_due"] != "27.00" {
			t.Errorf("coupon: %v", r)
		}
		list := e.VC("listclass", nil).JSON(t)
		if apitest.Str(t, list, "classes.0.id") != id || apitest.Str(t, list, "classes.0.currency") != "gbp" ||
			apitest.Str(t, list, "classes.0.status") != "Upcoming" {
			t.Errorf("listclass: %v", list)
		}

		e.Clock.Set(start.Add(-5 * time.Minute))
		for _, role := range []struct{ name, flag string }{{"teacher", "1"}, {"student", "0"}} {
			r := vcOK(t, e, "getclasslaunch", vals("class_id", id, "userId", "u-"+role.flag, "userName", "Ann", "isTeacher", role.flag,
				"lessonName", "Lesson 1", "courseName", "History"))
			for _, u := range []string{r["launchurl"].(string), r["encryptedlaunchurl"].(string)} {
				status, page, _ := fetch(t, e, u, nil)
				if status != 200 || !strings.Contains(page, "Life &amp; Times") || bootData(t, page)["role"] != role.name {
					t.Errorf("%s page %s: %d %s", role.name, u, status, page)
				}
			}
		}

		e.Clock.Set(start.Add(2 * time.Hour))
		if _, err := classroom.ImportRecording(ctx, e.Store, e.Main.Blobs(), mustInt(t, id), "lesson.mp4", strings.NewReader("VIDEO"), start); err != nil {
			t.Fatal(err)
		}
		rec := vcOK(t, e, "getclassrecording", vals("class_id", id))
		if status, body, _ := fetch(t, e, rec["record_url"].(string), nil); status != 200 || body != "VIDEO" {
			t.Errorf("recording: %d %q", status, body)
		}
		at := func(min int) time.Time { return start.Add(time.Duration(min) * time.Minute) }
		err := e.Store.AddAttendance(ctx, e.Domain.ID,
			lms.AttendanceEvent{ClassID: mustInt(t, id), OccurrenceSeq: 1, UserRef: "u-0", UserName: "Ann", Kind: lms.AttendanceJoin, At: at(0)},
			lms.AttendanceEvent{ClassID: mustInt(t, id), OccurrenceSeq: 1, UserRef: "u-0", UserName: "Ann", Kind: lms.AttendanceLeave, At: at(30)})
		if err != nil {
			t.Fatal(err)
		}
		if r := vcOK(t, e, "getclassreport", vals("classId", id)); r["duration"] != "00:30:00" || r["percentage"] != "50.00%" || r["attendance"] != "Yes" {
			t.Errorf("report: %v", r)
		}

		vcOK(t, e, "cancelclass", vals("class_id", id, "isCancel", "2"))
		if c := vcOK(t, e, "getclass", vals("class_id", id)); c["isCancel"] != "2" {
			t.Errorf("cancelled: %v", c["isCancel"])
		}
		vcOK(t, e, "removeclass", vals("cid", id))
		if msg := vcErr(t, e, "getclass", vals("class_id", id)); !strings.Contains(msg, "no class") {
			t.Errorf("after removeclass: %q", msg)
		}
		if total := apitest.Int(t, e.VC("listclass", nil).JSON(t), "total"); total != 0 {
			t.Errorf("listclass after removeclass: %d", total)
		}
		if r := e.LMS("GET", "/shoppingCart/live-classes/pricing/"+id, nil); r.Status != 404 {
			t.Errorf("prices of the removed class: %d %s", r.Status, r.Body)
		}
		if status, _, _ := fetch(t, e, rec["record_url"].(string), nil); status == 200 {
			t.Error("the recording is still served after removeclass")
		}
	})
}
