package classroomapi_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"maps"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
)

// vals builds parameters from key, value pairs.
func vals(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// classParams are valid schedule parameters, edited by kv ("" deletes).
func classParams(kv ...string) url.Values {
	v := vals("title", "Algebra", "timezone", "28", "date", "2031-03-10", "start_time", "03:00 PM", "end_time", "04:00 PM")
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			v.Del(kv[i])
		} else {
			v.Set(kv[i], kv[i+1])
		}
	}
	return v
}

// vcOK calls op and returns the first (or only) record, failing on an
// error answer. It reads either JSON style.
func vcOK(t *testing.T, e *apitest.Env, op string, params url.Values) map[string]any {
	t.Helper()
	r := e.VC(op, params)
	body := r.JSON(t)
	if s, _ := apitest.Lookup(body, "0.status"); s == "error" {
		t.Fatalf("%s %v: %s", op, params, r.Body)
	}
	if m, ok := body.(map[string]any); ok {
		if m["status"] == "error" {
			t.Fatalf("%s %v: %s", op, params, r.Body)
		}
		return m
	}
	first, ok := apitest.Lookup(body, "0")
	if !ok {
		t.Fatalf("%s: empty answer %s", op, r.Body)
	}
	return first.(map[string]any)
}

// vcErr calls op and returns the error text, failing on success. It
// reads either JSON style.
func vcErr(t *testing.T, e *apitest.Env, op string, params url.Values) string {
	t.Helper()
	r := e.VC(op, params)
	if r.Status != 200 {
		t.Fatalf("%s: HTTP %d, API failures answer 200", op, r.Status)
	}
	body := r.JSON(t)
	msg, ok := apitest.Lookup(body, "0.error")
	if _, obj := body.(map[string]any); obj {
		msg, ok = apitest.Lookup(body, "error")
	}
	if !ok {
		t.Fatalf("%s %v: no error in %s", op, params, r.Body)
	}
	return msg.(string)
}

func scheduleID(t *testing.T, e *apitest.Env, params url.Values) string {
	t.Helper()
	return idString(t, vcOK(t, e, "schedule", params)["class_id"])
}

// idString is an id of either JSON style (a string in seed, a number in
// compat) as text.
func idString(t *testing.T, v any) string {
	t.Helper()
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	t.Fatalf("id %#v is neither a string nor a number", v)
	return ""
}

func TestScheduleStyles(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		answers := styles(t, e, "schedule", classParams())
		for name, a := range answers {
			if apitest.Str(t, a, "0.Status") != "OK" || apitest.Str(t, a, "0.method") != "addclass" ||
				apitest.Str(t, a, "0.title") != "Algebra" || apitest.Str(t, a, "0.class_id") == "" {
				t.Errorf("%s: %v", name, a)
			}
		}
		r := e.VC("schedule", classParams("format", "xml"))
		var rsp struct {
			Status  string `xml:"status,attr"`
			Method  string `xml:"method"`
			ClassID string `xml:"class_id"`
		}
		if err := xml.Unmarshal(r.Body, &rsp); err != nil || rsp.Status != "ok" || rsp.Method != "addclass" || rsp.ClassID == "" {
			t.Errorf("xml: %v %+v %s", err, rsp, r.Body)
		}
		r = e.VC("schedule", classParams("title", "", "format", "xml"))
		if !strings.Contains(string(r.Body), `<rsp status="error"><message>title is required</message></rsp>`) {
			t.Errorf("xml error: %s", r.Body)
		}
		compat := e.NewDomain("Compat")
		if err := e.Store.SetResponseStyle(context.Background(), compat.ID, "compat"); err != nil {
			t.Fatal(err)
		}
		p := classParams("apikey", compat.ClassroomKey)
		body := e.VC("schedule", p).JSON(t)
		if apitest.Str(t, body, "status") != "ok" || apitest.Str(t, body, "method") != "addclass" {
			t.Errorf("compat: %v", body)
		}
	}, seedStyle)
}

func TestScheduleValidation(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		tests := []struct {
			name   string
			params url.Values
			want   string
		}{
			{"title missing", classParams("title", ""), "title is required"},
			{"timezone missing", classParams("timezone", ""), "timezone is required"},
			{"timezone unknown", classParams("timezone", "1000"), "timezone"},
			{"start_time missing", classParams("start_time", ""), "start_time is required"},
			{"start_time bad", classParams("start_time", "25:00"), "start_time"},
			{"end_time bad", classParams("end_time", "4 o'clock"), "end_time"},
			{"date missing", classParams("date", ""), "date is required"},
			{"date not real", classParams("date", "2031-02-29"), "date"},
			{"same start and end", classParams("end_time", "15:00"), "end_time must differ"},
			{"currency", classParams("currency", "JPY"), "currency"},
			{"ispaid", classParams("ispaid", "2"), "ispaid"},
			{"record", classParams("record", "4"), "record"},
			{"isRecordingLayout", classParams("isRecordingLayout", "2"), "isRecordingLayout"},
			{"isVideo", classParams("isVideo", "x"), "isVideo"},
			{"isBoard", classParams("isBoard", "3"), "isBoard"},
			{"isLang", classParams("isLang", "51"), "isLang"},
			{"isRegion", classParams("isRegion", "16"), "isRegion"},
			{"isCorporate", classParams("isCorporate", "2"), "isCorporate"},
			{"isScreenshare", classParams("isScreenshare", "-1"), "isScreenshare"},
			{"isPrivateChat", classParams("isPrivateChat", "2"), "isPrivateChat"},
			{"seat_attendees", classParams("seat_attendees", "many"), "seat_attendees"},
			{"is_recurring", classParams("is_recurring", "3"), "is_recurring"},
			{"recurring without repeat", classParams("is_recurring", "1", "end_classes_count", "3"), "repeat is required"},
			{"repeat", classParams("is_recurring", "1", "repeat", "7", "end_classes_count", "3"), "repeat"},
			{"weekdays", classParams("is_recurring", "1", "repeat", "6", "weekdays", "1,8", "end_classes_count", "3"), "weekdays"},
			{"selected days without weekdays", classParams("is_recurring", "1", "repeat", "6", "end_classes_count", "3"), "weekdays"},
			{"no end", classParams("is_recurring", "1", "repeat", "1"), "end_classes_count"},
			{"both ends", classParams("is_recurring", "1", "repeat", "1", "end_classes_count", "3", "end_date", "2031-04-01"), "end_date"},
			{"end_date before date", classParams("is_recurring", "1", "repeat", "1", "end_date", "2031-03-01"), "end_date"},
			{"end_date not real", classParams("is_recurring", "1", "repeat", "1", "end_date", "2031-13-01"), "end_date"},
			{"end_classes_count too big", classParams("is_recurring", "1", "repeat", "1", "end_classes_count", "1001"), "end_classes_count"},
			{"bad key", classParams("apikey", "nope"), "Invalid API KEY"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if msg := vcErr(t, e, "schedule", tt.params); !strings.Contains(msg, tt.want) {
					t.Errorf("error %q, want it to contain %q", msg, tt.want)
				}
			})
		}
	})
}

func TestScheduleTimesAndRecurrence(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		get := func(id string) map[string]any { return vcOK(t, e, "getclass", vals("class_id", id)) }
		for _, f := range []string{"09:30AM", "09:30 AM", "9:30am", "09:30:00 am", "09:30"} {
			id := scheduleID(t, e, classParams("start_time", f, "end_time", "10:15 am"))
			c := get(id)
			if c["start_time"] != "09:30 AM" || c["end_time"] != "10:15 AM" || c["duration"] != "2700" {
				t.Errorf("%q: %v %v %v", f, c["start_time"], c["end_time"], c["duration"])
			}
		}
		// An end before the start runs past midnight.
		c := get(scheduleID(t, e, classParams("start_time", "11:00 PM", "end_time", "01:00 AM")))
		if c["duration"] != "7200" {
			t.Errorf("overnight duration %v", c["duration"])
		}
		cases := []struct {
			name     string
			params   url.Values
			sittings string
		}{
			{"daily", classParams("is_recurring", "1", "repeat", "1", "end_classes_count", "5"), "5"},
			{"monday-saturday until", classParams("is_recurring", "1", "repeat", "2", "end_date", "2031-03-16"), "6"},
			{"monday-friday", classParams("is_recurring", "1", "repeat", "3", "end_date", "2031-03-16"), "5"},
			{"weekly", classParams("is_recurring", "1", "repeat", "4", "end_date", "2031-03-31"), "4"},
			{"monthly", classParams("is_recurring", "1", "repeat", "5", "end_classes_count", "12"), "12"},
			{"selected", classParams("is_recurring", "1", "repeat", "6", "weekdays", "1,7", "end_date", "2031-03-23"), "4"},
			{"not recurring ignores repeat", classParams("repeat", "1", "end_classes_count", "0"), "1"},
		}
		for _, tc := range cases {
			c := get(scheduleID(t, e, tc.params))
			if c["sittings"] != tc.sittings {
				t.Errorf("%s: %v sittings, want %s", tc.name, c["sittings"], tc.sittings)
			}
		}
		// Sittings keep their wall clock across a daylight-saving change:
		// 09:00 New York is 14:00 UTC before 2031-03-09 and 13:00 after.
		id := scheduleID(t, e, classParams("timezone", "23", "date", "2031-03-08", "start_time", "9:00 AM", "end_time", "10:00 AM",
			"is_recurring", "1", "repeat", "1", "end_classes_count", "2"))
		cls, err := e.Store.LiveClass(context.Background(), e.Domain.ID, mustInt(t, id))
		if err != nil {
			t.Fatal(err)
		}
		if cls.Occurrences[0].Start.Hour() != 14 || cls.Occurrences[1].Start.Hour() != 13 {
			t.Errorf("sittings %v %v", cls.Occurrences[0].Start, cls.Occurrences[1].Start)
		}
	})
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an id: %q", s)
	}
	return n
}

func TestUpdateClass(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		id := scheduleID(t, e, classParams("description", "Chapter 1"))
		r := vcOK(t, e, "schedule", vals("cid", id, "title", "Algebra II"))
		if r["method"] != "updateclass" || r["class_id"] != id {
			t.Errorf("schedule with cid: %v", r)
		}
		r = vcOK(t, e, "updateclass", vals("id", id, "start_time", "5:00 PM", "end_time", "6:30 PM"))
		if r["method"] != "updateclass" {
			t.Errorf("updateclass: %v", r)
		}
		c := vcOK(t, e, "getclass", vals("class_id", id))
		if c["title"] != "Algebra II" || c["description"] != "Chapter 1" || c["start_time"] != "05:00 PM" || c["duration"] != "5400" {
			t.Errorf("after updates: %v", c)
		}
		if msg := vcErr(t, e, "updateclass", vals("id", id, "isBoard", "9")); !strings.Contains(msg, "isBoard") {
			t.Errorf("bad update: %q", msg)
		}
		if msg := vcErr(t, e, "updateclass", vals("id", id, "is_recurring", "1", "repeat", "1", "end_classes_count", "3",
			"end_date", "2031-04-01")); !strings.Contains(msg, "not both") {
			t.Errorf("update with both ends: %q", msg)
		}
		vcOK(t, e, "updateclass", vals("id", id, "is_recurring", "1", "repeat", "1", "end_classes_count", "3"))
		vcOK(t, e, "updateclass", vals("id", id, "end_date", "2031-03-14"))
		if c := vcOK(t, e, "getclass", vals("class_id", id)); c["end_classes_count"] != "0" || c["end_date"] != "2031-03-14" || c["sittings"] != "5" {
			t.Errorf("end_date alone replaces the count: %v %v %v", c["end_classes_count"], c["end_date"], c["sittings"])
		}
		if msg := vcErr(t, e, "updateclass", vals("title", "x")); !strings.Contains(msg, "id is required") {
			t.Errorf("update without id: %q", msg)
		}
		if msg := vcErr(t, e, "updateclass", vals("id", "999999", "title", "x")); !strings.Contains(msg, "no class") {
			t.Errorf("update unknown: %q", msg)
		}
	}, seedStyle)
}

func TestGetAndListClass(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		e.Clock.Set(start.Add(-time.Hour))
		id := scheduleID(t, e, classParams("timezone", "38", "record", "1", "seat_attendees", "2", "isBoard", "2"))
		scheduleID(t, e, classParams("title", "Geometry", "published", "0"))
		lms := e.LMS("POST", "/liveClasses/create", map[string]any{"title": "From the LMS", "date": "2031-03-11", "startTime": "10", "endTime": "11", "timezone": "Europe/Paris"})
		if lms.Status != 200 {
			t.Fatalf("LMS create: %d %s", lms.Status, lms.Body)
		}

		answers := styles(t, e, "getclass", vals("class_id", id))
		sameAnswers(t, answers)
		c := answers["query"].([]any)[0].(map[string]any)
		want := map[string]any{"id": id, "user_id": itoa(e.Domain.ID), "title": "Algebra", "date": "2031-03-10",
			"start_time": "03:00 PM", "end_time": "04:00 PM", "timezone": "38", "end_date": "0000-00-00", "record": "1",
			"ispaid": "0", "currency": "usd", "status": "Upcoming", "duration": "3600", "repeat": "0", "seat_attendees": "2",
			"end_classes_count": "0", "published": "1", "label": "Chihuahua/La Paz/Mazatlan", "privacy": "0",
			"timezone_label": "(GMT-07:00) Chihuahua/La Paz/Mazatlan", "timezone_country": "America/Mazatlan",
			"difftime": "-07:00", "isBoard": "2", "isCancel": "0"}
		for k, v := range want {
			if c[k] != v {
				t.Errorf("getclass %s = %v, want %v", k, c[k], v)
			}
		}
		if apitest.Int(t, c, "class_starts_in") <= 0 {
			t.Errorf("class_starts_in %v", c["class_starts_in"])
		}

		list := e.VC("listclass", nil).JSON(t)
		if apitest.Int(t, list, "total") != 3 || apitest.Str(t, list, "classes.0.id") != id ||
			apitest.Str(t, list, "classes.2.title") != "From the LMS" || apitest.Str(t, list, "classes.2.timezone") != "53" {
			t.Errorf("listclass: %v", list)
		}
		for _, tc := range []struct {
			params      url.Values
			total, size int
		}{
			{vals("published", "1"), 2, 2},
			{vals("search", "geoM"), 1, 1},
			{vals("limit", "1", "limitstart", "1"), 3, 1},
			{vals("limitstart", "5"), 3, 0},
		} {
			b := e.VC("listclass", tc.params).JSON(t)
			if n, _ := apitest.Lookup(b, "classes.#"); apitest.Int(t, b, "total") != int64(tc.total) || n != tc.size {
				t.Errorf("listclass %v: %v", tc.params, b)
			}
		}
		if msg := vcErr(t, e, "listclass", vals("limit", "1000")); !strings.Contains(msg, "limit") {
			t.Errorf("limit: %q", msg)
		}
		r := e.VC("listclass", vals("format", "xml", "limit", "1"))
		var x struct {
			Total   int `xml:"total"`
			Classes []struct {
				ID string `xml:"id"`
			} `xml:"classes>class"`
		}
		if err := xml.Unmarshal(r.Body, &x); err != nil || x.Total != 3 || len(x.Classes) != 1 || x.Classes[0].ID != id {
			t.Errorf("listclass xml: %v %+v", err, x)
		}
		// The LMS lists the classroom's classes.
		l := e.LMS("POST", "/liveClasses/list", nil)
		if apitest.Int(t, l.JSON(t), "total") != 3 {
			t.Errorf("LMS list: %s", l.Body)
		}

		// 03:00 PM in Mazatlan (UTC-7) is 22:00 UTC.
		e.Clock.Set(start.Add(7*time.Hour + 30*time.Minute))
		if s := vcOK(t, e, "getclass", vals("class_id", id))["status"]; s != "Live" {
			t.Errorf("during the class: %v", s)
		}
		e.Clock.Set(start.Add(9 * time.Hour))
		if s := vcOK(t, e, "getclass", vals("class_id", id))["status"]; s != "Past" {
			t.Errorf("after the class: %v", s)
		}
		if msg := vcErr(t, e, "getclass", nil); !strings.Contains(msg, "class_id is required") {
			t.Errorf("getclass without id: %q", msg)
		}
	})
}

func TestCancelRemoveAndSeats(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		e.Clock.Set(start.Add(-time.Hour))
		id := scheduleID(t, e, classParams("is_recurring", "1", "repeat", "1", "end_classes_count", "3", "seat_attendees", "3"))
		get := func() map[string]any { return vcOK(t, e, "getclass", vals("class_id", id)) }

		if r := vcOK(t, e, "cancelclass", vals("class_id", id, "isCancel", "1")); r["method"] != "cancelclass" {
			t.Errorf("cancel: %v", r)
		}
		c := get()
		if c["isCancel"] != "1" || c["status"] != "Upcoming" || apitest.Int(t, c, "class_starts_in") < 86400 {
			t.Errorf("after cancelling the next sitting: %v %v %v", c["isCancel"], c["status"], c["class_starts_in"])
		}
		vcOK(t, e, "cancelclass", vals("class_id", id, "isCancel", "2"))
		if c := get(); c["isCancel"] != "2" || c["status"] != "Past" {
			t.Errorf("fully cancelled: %v %v", c["isCancel"], c["status"])
		}
		if msg := vcErr(t, e, "getclasslaunch", vals("class_id", id, "userId", "1", "userName", "A", "isTeacher", "1",
			"lessonName", "L", "courseName", "C")); msg != "Class is cancelled" {
			t.Errorf("launch of a cancelled class: %q", msg)
		}
		vcOK(t, e, "cancelclass", vals("class_id", id, "isCancel", "0"))
		if c := get(); c["isCancel"] != "0" || c["status"] != "Upcoming" {
			t.Errorf("re-activated: %v %v", c["isCancel"], c["status"])
		}
		if msg := vcErr(t, e, "cancelclass", vals("class_id", id, "isCancel", "3")); !strings.Contains(msg, "isCancel") {
			t.Errorf("bad isCancel: %q", msg)
		}
		if msg := vcErr(t, e, "cancelclass", vals("class_id", id)); !strings.Contains(msg, "isCancel is required") {
			t.Errorf("missing isCancel: %q", msg)
		}

		// Seats: 3 less the users enrolled through the LMS.
		e.LMS("POST", "/users/create", map[string]any{"username": "ann", "email": "ann@example.com"})
		e.LMS("POST", "/liveClasses/enroll", map[string]any{"classId": id, "email": "ann@example.com"})
		if r := vcOK(t, e, "availableAttendees", vals("class_id", id)); r["remaning_attendees"] != "2" {
			t.Errorf("availableAttendees: %v", r)
		}
		open := scheduleID(t, e, classParams())
		if r := vcOK(t, e, "availableAttendees", vals("class_id", open)); r["remaning_attendees"] != "unlimited" {
			t.Errorf("availableAttendees without a limit: %v", r)
		}

		if r := vcOK(t, e, "removeclass", vals("cid", id)); r["method"] != "removeclass" || r["class_id"] != id {
			t.Errorf("removeclass: %v", r)
		}
		if msg := vcErr(t, e, "getclass", vals("class_id", id)); !strings.Contains(msg, "no class") {
			t.Errorf("removed class: %q", msg)
		}
		if msg := vcErr(t, e, "removeclass", vals("cid", id)); !strings.Contains(msg, "no class") {
			t.Errorf("remove twice: %q", msg)
		}
	}, seedStyle)
}

func TestPlans(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		p := vcOK(t, e, "getplan", nil)
		if p["plan"] != "unlimited" || p["commission"] != "0" || p["seat_attendees"] != "unlimited" {
			t.Errorf("default plan: %v", p)
		}
		if err := e.Store.SetDomainPlan(context.Background(), e.Domain.ID, "free"); err != nil {
			t.Fatal(err)
		}
		p = vcOK(t, e, "getplan", nil)
		if p["plan"] != "free" || p["seat_attendees"] != "1" || p["session_minutes"] != "30" || p["recording"] != "0" {
			t.Errorf("free plan: %v", p)
		}
		if msg := vcErr(t, e, "schedule", classParams("seat_attendees", "2", "end_time", "03:30 PM")); msg != "Please enter less than 2 Seat Attendees" {
			t.Errorf("seat limit: %q", msg)
		}
		if msg := vcErr(t, e, "schedule", classParams()); !strings.Contains(msg, "at most 30 minutes") {
			t.Errorf("session limit: %q", msg)
		}
		if msg := vcErr(t, e, "schedule", classParams("end_time", "03:30 PM", "record", "1")); !strings.Contains(msg, "record=0") {
			t.Errorf("recording: %q", msg)
		}
		scheduleID(t, e, classParams("end_time", "03:30 PM", "seat_attendees", "1"))
		pay := vcOK(t, e, "getPaymentInfo", nil)
		if pay["paypal_id"] != "" || pay["method"] != "getPaymentInfo" {
			t.Errorf("getPaymentInfo: %v", pay)
		}
	})
}

// TestClassOwnership: every operation that takes a class id refuses
// another domain's class.
func TestClassOwnership(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		id := scheduleID(t, e, classParams())
		key := e.Other.ClassroomKey
		for _, tc := range []struct {
			op     string
			params url.Values
		}{
			{"getclass", vals("class_id", id)},
			{"updateclass", vals("id", id, "title", "x")},
			{"schedule", vals("cid", id, "title", "x")},
			{"cancelclass", vals("class_id", id, "isCancel", "2")},
			{"availableAttendees", vals("class_id", id)},
			{"removeclass", vals("cid", id)},
			{"getclasslaunch", vals("class_id", id, "userId", "1", "userName", "A", "isTeacher", "1", "lessonName", "L", "courseName", "C")},
			{"getclassrecording", vals("class_id", id)},
			{"getclassreport", vals("classId", id)},
		} {
			tc.params.Set("apikey", key)
			if msg := vcErr(t, e, tc.op, tc.params); msg != "Invalid Class Owner" {
				t.Errorf("%s: %q", tc.op, msg)
			}
		}
		if c := vcOK(t, e, "getclass", vals("class_id", id)); c["title"] != "Algebra" {
			t.Errorf("the class changed: %v", c)
		}
	})
}

// TestClassOperationsInEveryStyle sends each class and account operation
// in every request style (query string, urlencoded, multipart, JSON,
// legacy task=) and in XML.
func TestClassOperationsInEveryStyle(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		e.Clock.Set(start.Add(-time.Hour))
		id := scheduleID(t, e, classParams())
		reads := []struct {
			op     string
			params url.Values
		}{
			{"getclass", vals("class_id", id)},
			{"listclass", vals("search", "alg")},
			{"availableAttendees", vals("class_id", id)},
			{"getplan", vals()},
			{"getPaymentInfo", vals()},
			{"getservers", vals()},
		}
		for _, r := range reads {
			t.Run(r.op, func(t *testing.T) {
				sameAnswers(t, styles(t, e, r.op, r.params))
				x := e.VC(r.op, func() url.Values { p := vals("format", "xml"); maps.Copy(p, r.params); return p }())
				if err := xml.Unmarshal(x.Body, new(struct{})); err != nil || strings.Contains(string(x.Body), `status="error"`) {
					t.Errorf("xml: %v %s", err, x.Body)
				}
			})
		}
		writes := []struct {
			op     string
			params url.Values
			method string
		}{
			{"updateclass", vals("id", id, "description", "styled"), "updateclass"},
			{"cancelclass", vals("class_id", id, "isCancel", "0"), "cancelclass"},
			{"schedule", classParams(), "addclass"},
		}
		for _, w := range writes {
			t.Run(w.op, func(t *testing.T) {
				for style, a := range styles(t, e, w.op, w.params) {
					if m, _ := apitest.Lookup(a, "0.method"); m != w.method {
						t.Errorf("%s: %v", style, a)
					}
				}
			})
		}
	}, seedStyle)
}
