package classroomapi

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/schedule"
	"github.com/lectern-lms/lectern/internal/store"
)

// currencies are the currencies a class may be priced in.
var currencies = map[string]bool{"aud": true, "cad": true, "eur": true, "gbp": true, "nzd": true, "usd": true}

// classFlags are the integer schedule parameters with their ranges; the
// field each sets is classFlag's. A table made once: a slice of them with
// pointers into the class, made at every call, was 720 bytes of garbage
// a schedule and moved the class to the heap.
var classFlags = [...]struct {
	name   string
	lo, hi int
}{
	{"ispaid", 0, 1},
	{"record", 0, 3},
	{"isRecordingLayout", 0, 1},
	{"isVideo", 0, 1},
	{"isBoard", 0, 2},
	{"isLang", 0, 50},
	{"isRegion", 0, 15},
	{"isCorporate", 0, 1},
	{"isScreenshare", 0, 1},
	{"isPrivateChat", 0, 1},
	{"privacy", 0, 1},
	{"published", 0, 1},
	{"seat_attendees", 0, 100000},
	{"repeat", 0, 6},
	{"end_classes_count", 0, schedule.MaxSittings},
}

// classFlag is the field of cls that classFlags[i] sets.
func classFlag(cls *lms.LiveClass, i int) *int {
	switch i {
	case 0:
		return &cls.IsPaid
	case 1:
		return &cls.Record
	case 2:
		return &cls.IsRecordingLayout
	case 3:
		return &cls.IsVideo
	case 4:
		return &cls.IsBoard
	case 5:
		return &cls.IsLang
	case 6:
		return &cls.IsRegion
	case 7:
		return &cls.IsCorporate
	case 8:
		return &cls.IsScreenshare
	case 9:
		return &cls.IsPrivateChat
	case 10:
		return &cls.Privacy
	case 11:
		return &cls.Published
	case 12:
		return &cls.SeatAttendees
	case 13:
		return &cls.Repeat
	case 14:
		return &cls.EndClassesCount
	}
	panic("classroomapi: no class flag " + strconv.Itoa(i))
}

// clockParam sets *dst to the minute after midnight of the time named
// name, when it was sent.
func clockParam(p *httpx.Params, name string, dst *int) error {
	if !p.Has(name) {
		return nil
	}
	minute, err := schedule.ParseClock(p.Get(name))
	if err != nil {
		return fail("%s: %v", name, err)
	}
	*dst = minute
	return nil
}

// timingParams are the parameters that change a class's sittings.
var timingParams = []string{"date", "start_time", "end_time", "timezone", "is_recurring", "repeat", "weekdays",
	"end_classes_count", "end_date"}

// intParam reads an integer parameter within [lo, hi].
func intParam(p *httpx.Params, name string, lo, hi int) (int, error) {
	v := p.Get(name)
	n, err := httpx.ParseInt(v)
	if err != nil || n < int64(lo) || n > int64(hi) {
		return 0, fail("%s must be a whole number from %d to %d, not %q", name, lo, hi, v)
	}
	return int(n), nil
}

// readClass applies the schedule parameters sent to cls: every field on
// create (required ones must be there), the fields sent on update. It
// reports whether the sittings must be recomputed.
func readClass(p *httpx.Params, cls *lms.LiveClass, create bool) (retime bool, err error) {
	if create {
		for _, name := range []string{"title", "timezone", "start_time", "end_time", "date"} {
			if !p.Has(name) {
				return false, fail("%s is required", name)
			}
		}
	}
	if p.Sent("title") {
		cls.Title = p.Get("title")
		if cls.Title == "" || lms.TooLong(cls.Title, 255) {
			return false, fail("title must be 1 to 255 characters")
		}
	}
	if p.Sent("description") {
		cls.Description = p.Get("description")
	}
	if p.Sent("keyword") {
		cls.Keyword = p.Get("keyword")
	}
	if p.Has("currency") {
		cur := strings.ToLower(p.Get("currency"))
		if !currencies[cur] {
			return false, fail("currency must be one of AUD, CAD, EUR, GBP, NZD, USD, not %q", p.Get("currency"))
		}
		cls.Currency = cur
	}
	for i, f := range classFlags {
		if p.Has(f.name) {
			if *classFlag(cls, i), err = intParam(p, f.name, f.lo, f.hi); err != nil {
				return false, err
			}
		}
	}
	for _, name := range timingParams {
		retime = retime || p.Sent(name)
	}
	if p.Has("timezone") {
		z, err := schedule.LookupZone(p.Get("timezone"))
		if err != nil {
			return false, fail("timezone: %v (see the timezone list)", err)
		}
		cls.TimezoneID, cls.TimezoneName = z.ID, z.IANA
	}
	if p.Has("date") {
		d, err := schedule.ParseDate(p.Get("date"))
		if err != nil {
			return false, fail("date: %v", err)
		}
		cls.Date = d.Format(time.DateOnly)
	}
	if err := clockParam(p, "start_time", &cls.StartMinute); err != nil {
		return false, err
	}
	if err := clockParam(p, "end_time", &cls.EndMinute); err != nil {
		return false, err
	}
	if p.Has("is_recurring") {
		rec, err := intParam(p, "is_recurring", 0, 1)
		if err != nil {
			return false, err
		}
		cls.IsRecurring = rec == 1
	}
	if p.Sent("weekdays") {
		if _, err := parseWeekdays(p.Get("weekdays")); err != nil {
			return false, err
		}
		cls.Weekdays = p.Get("weekdays")
	}
	// The recurrence ends by count or by date: sending one alone clears
	// the other (on update; on create the other is not set).
	if p.Sent("end_date") {
		cls.EndDate = ""
		if end := p.Get("end_date"); end != "" && end != "0000-00-00" {
			d, err := schedule.ParseDate(end)
			if err != nil {
				return false, fail("end_date: %v", err)
			}
			cls.EndDate = d.Format(time.DateOnly)
			if !p.Has("end_classes_count") {
				cls.EndClassesCount = 0
			}
		}
	} else if p.Has("end_classes_count") {
		cls.EndDate = ""
	}
	// On create the required date and times make retime true.
	return retime, nil
}

// parseWeekdays reads "2,4,6" (1 Sunday ... 7 Saturday).
func parseWeekdays(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 || n > 7 {
			return nil, fail("weekdays must be comma-separated numbers from 1 (Sunday) to 7 (Saturday), not %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// sittings expands a class's recurrence into its sittings.
func sittings(cls lms.LiveClass) ([]lms.Occurrence, error) {
	zone, err := classZone(cls)
	if err != nil {
		return nil, err
	}
	date, err := schedule.ParseDate(cls.Date)
	if err != nil {
		return nil, fail("date: %v", err)
	}
	if cls.EndMinute == cls.StartMinute {
		return nil, fail("end_time must differ from start_time (a class ends after it starts; an end_time earlier than start_time ends the next day)")
	}
	plan := schedule.Plan{Date: date, StartMinute: cls.StartMinute, EndMinute: cls.EndMinute, Zone: zone}
	if cls.IsRecurring {
		if cls.Repeat == 0 {
			return nil, fail("repeat is required when is_recurring is 1 (1 daily, 2 Monday-Saturday, 3 Monday-Friday, 4 weekly, 5 monthly, 6 selected weekdays)")
		}
		plan.Repeat, plan.Count = cls.Repeat, cls.EndClassesCount
		plan.Weekdays, _ = parseWeekdays(cls.Weekdays)
		if cls.EndDate != "" {
			plan.Until, _ = schedule.ParseDate(cls.EndDate)
		}
	}
	occ, err := schedule.Expand(plan)
	var le *lms.Error
	if errors.As(err, &le) && len(le.Fields) > 0 {
		return nil, fail("%s: %s", le.Fields[0].Field, le.Fields[0].Message)
	}
	return occ, err
}

// classZone is the zone a class is scheduled in.
func classZone(cls lms.LiveClass) (schedule.Zone, error) {
	if z, ok := schedule.ZoneByID(cls.TimezoneID); ok {
		return z, nil
	}
	return schedule.LookupZone(cls.TimezoneName)
}

// checkPlan enforces the domain's plan on a class (lms.Plan.CheckClass,
// the rule the LMS API applies too).
func checkPlan(d store.Domain, cls lms.LiveClass) error {
	pv := lms.PlanOf(d.Plan).CheckClass(cls)
	switch {
	case pv == nil:
		return nil
	case pv.Limit == lms.LimitDuration:
		return fail("%s (start_time to end_time)", pv.Message)
	case pv.Limit == lms.LimitRecording:
		return fail("%s: send record=0", pv.Message)
	}
	return fail("%s", pv.Message)
}

// schedule: a new class, or with cid an update of that class (as
// updateclass).
func (a *API) scheduleClass(ctx context.Context, c *call) (*result, error) {
	if c.P.Has("cid") {
		return a.saveClass(ctx, c, "cid")
	}
	cls := lms.LiveClass{Currency: "usd", Published: 1}
	if _, err := readClass(c.P, &cls, true); err != nil {
		return nil, err
	}
	occ, err := sittings(cls)
	if err != nil {
		return nil, err
	}
	if err := checkPlan(c.Domain, cls); err != nil {
		return nil, err
	}
	cls.Occurrences = occ
	cls, err = a.Store.CreateLiveClass(ctx, c.Domain.ID, cls)
	if err != nil {
		return nil, err
	}
	return wire.Action("addclass", kv{"class_id", writeID(cls.ID)}, kv{"title", cls.Title}), nil
}

// updateclass: id plus any schedule parameter.
func (a *API) updateClass(ctx context.Context, c *call) (*result, error) {
	return a.saveClass(ctx, c, "id")
}

// saveClass updates the class named by idParam with the parameters sent.
// When the timing changes, the sittings are recomputed and earlier
// cancellations are dropped with the old sittings.
func (a *API) saveClass(ctx context.Context, c *call, idParam string) (*result, error) {
	id, err := requiredID(c.P, idParam)
	if err != nil {
		return nil, err
	}
	if _, err := a.ownedClass(ctx, c, id); err != nil {
		return nil, err
	}
	// The class is read and rewritten in one transaction holding its row
	// lock, so that a concurrent update of other fields is not lost.
	cls, err := a.Store.EditLiveClass(ctx, c.Domain.ID, id, func(cls *lms.LiveClass) ([]lms.Occurrence, error) {
		retime, err := readClass(c.P, cls, false)
		if err != nil {
			return nil, err
		}
		var occ []lms.Occurrence
		if retime {
			if occ, err = sittings(*cls); err != nil {
				return nil, err
			}
		}
		return occ, checkPlan(c.Domain, *cls)
	})
	if err != nil {
		return nil, err
	}
	return wire.Action("updateclass", kv{"class_id", writeID(cls.ID)}, kv{"title", cls.Title}), nil
}

// classRecord puts a class's record, as getclass and listclass answer
// it, into f: values as strings except class_starts_in (seconds, a
// number).
func classRecord(f *fields, domainID int64, cls lms.LiveClass, now time.Time) {
	zone, _ := classZone(cls)
	status, next, upcoming := schedule.StatusAt(cls.Occurrences, now)
	startsIn := int64(0)
	if upcoming && status == schedule.Upcoming {
		startsIn = int64(next.Start.Sub(now) / time.Second)
	}
	at := now
	if upcoming {
		at = next.Start
	}
	endDate := cls.EndDate
	if endDate == "" {
		endDate = "0000-00-00"
	}
	cancel := int64(0)
	for _, o := range cls.Occurrences {
		if o.Cancelled {
			cancel = 1
		}
	}
	if schedule.AllCancelled(cls.Occurrences) {
		cancel = 2
	}
	diff := zone.DiffTime(at)
	f.digits("id", cls.ID)
	f.digits("user_id", domainID)
	f.str("title", cls.Title)
	f.str("date", cls.Date)
	f.str("start_time", schedule.FormatClock(cls.StartMinute))
	f.str("end_time", schedule.FormatClock(cls.EndMinute))
	if cls.TimezoneID != 0 {
		f.digits("timezone", int64(cls.TimezoneID))
	} else {
		f.str("timezone", cls.TimezoneName)
	}
	f.str("end_date", endDate)
	f.str("description", cls.Description)
	f.digits("record", int64(cls.Record))
	f.digits("ispaid", int64(cls.IsPaid))
	f.str("currency", cls.Currency)
	f.str("status", status)
	f.digits("duration", int64(cls.SittingMinutes()*60))
	f.digits("repeat", int64(cls.Repeat))
	f.digits("is_recurring", int64(lms.Flag(cls.IsRecurring)))
	f.str("weekdays", cls.Weekdays)
	f.digits("seat_attendees", int64(cls.SeatAttendees))
	f.digits("end_classes_count", int64(cls.EndClassesCount))
	f.digits("published", int64(cls.Published))
	f.str("label", zone.Label)
	f.digits("privacy", int64(cls.Privacy))
	f.zoneLabel("timezone_label", diff, zone.Label)
	f.str("timezone_country", zone.IANA)
	f.str("difftime", diff)
	f.digits("language", int64(cls.IsLang))
	f.digits("isBoard", int64(cls.IsBoard))
	f.digits("isScreenshare", int64(cls.IsScreenshare))
	f.digits("isCorporate", int64(cls.IsCorporate))
	f.digits("isPrivateChat", int64(cls.IsPrivateChat))
	f.digits("isRecordingLayout", int64(cls.IsRecordingLayout))
	f.digits("isVideo", int64(cls.IsVideo))
	f.digits("isRegion", int64(cls.IsRegion))
	f.digits("isCancel", cancel)
	f.str("keyword", cls.Keyword)
	f.digits("sittings", int64(len(cls.Occurrences)))
	f.number("class_starts_in", startsIn)
}

// classRecords puts the records of classes into res, for getclass and
// listclass: for a JSON answer written as JSON at once (RecordsJSON), for
// XML as objs. They live in the call's record space, so only until the
// answer is written.
func (a *API) classRecords(c *call, res *result, classes []lms.LiveClass) *result {
	now := a.now()
	space := c.records()
	if c.xml {
		space.reserve(len(classes))
		res.Records = make([]obj, len(classes))
		for i, cls := range classes {
			f := fields{xml: true, o: space.obj(classRecordKeys), strs: space.strings(classRecordKeys)}
			classRecord(&f, c.Domain.ID, cls, now)
			res.Records[i] = f.o
		}
		return res
	}
	f := fields{b: append(space.json[:0], '[')}
	for i, cls := range classes {
		if i > 0 {
			f.b = append(f.b, ',')
		}
		f.b = append(f.b, '{')
		classRecord(&f, c.Domain.ID, cls, now)
		f.b = append(f.b, '}')
	}
	space.json = append(f.b, ']')
	res.RecordsJSON = wire.RawJSON(space.json)
	return res
}

// getclass: class_id. A one-element list.
func (a *API) getClass(ctx context.Context, c *call) (*result, error) {
	cls, err := a.classParam(ctx, c, "class_id")
	if err != nil {
		return nil, err
	}
	return a.classRecords(c, wire.Records("class", nil, "", ""), []lms.LiveClass{cls}), nil
}

// Paging of listclass.
const (
	ListClassDefault = 10
	ListClassMax     = 100
)

// listclass: published (1 lists only published classes), limitstart
// (default 0), limit (default 10, at most 100), search (title contains,
// any case). Ordered by class id, oldest first; total counts all matches.
func (a *API) listClass(ctx context.Context, c *call) (*result, error) {
	f := store.ClassFilter{Search: c.P.Get("search"), WithOccurrences: true}
	pg := store.Page{Limit: ListClassDefault}
	if c.P.Has("published") {
		pub, err := intParam(c.P, "published", 0, 1)
		if err != nil {
			return nil, err
		}
		f.PublishedOnly = pub == 1
	}
	if c.P.Has("limitstart") {
		n, err := intParam(c.P, "limitstart", 0, 1<<31-1)
		if err != nil {
			return nil, err
		}
		pg.Offset = n
	}
	if c.P.Has("limit") {
		n, err := intParam(c.P, "limit", 1, ListClassMax)
		if err != nil {
			return nil, err
		}
		pg.Limit = n
	}
	classes, total, err := a.Store.ListLiveClasses(ctx, c.Domain.ID, f, pg)
	if err != nil {
		return nil, err
	}
	res := a.classRecords(c, &result{Kind: wire.KindClassList, Total: total}, classes)
	// The records hold the classes' strings, not the classes.
	a.Store.ReleaseLiveClasses(classes)
	return res, nil
}

// removeclass: cid. Deletes the class with its sittings, enrollments,
// prices, discounts, attendance and recordings (rows and files).
func (a *API) removeClass(ctx context.Context, c *call) (*result, error) {
	cls, err := a.classParam(ctx, c, "cid")
	if err != nil {
		return nil, err
	}
	id := cls.ID
	recs, err := a.Store.ClassRecordings(ctx, c.Domain.ID, id, "")
	if err != nil {
		return nil, err
	}
	files, err := a.Store.RoomFiles(ctx, c.Domain.ID, id)
	if err != nil {
		return nil, err
	}
	// The rows go with the class; their files go now.
	var keys []string
	for _, r := range recs {
		rk, err := a.Store.RecordingKeys(ctx, c.Domain.ID, r)
		if err != nil {
			return nil, err
		}
		keys = append(keys, rk...)
	}
	for _, f := range files {
		keys = append(keys, f.BlobKey)
	}
	if err := a.Store.DeleteLiveClass(ctx, c.Domain.ID, id); err != nil {
		return nil, err
	}
	a.deleteBlobs(keys)
	return wire.Action("removeclass", kv{"class_id", writeID(id)}), nil
}

// cancelclass: class_id, isCancel: 0 re-activates every sitting, 1
// cancels the current or next sitting, 2 cancels every sitting.
func (a *API) cancelClass(ctx context.Context, c *call) (*result, error) {
	id, err := requiredID(c.P, "class_id")
	if err != nil {
		return nil, err
	}
	if !c.P.Has("isCancel") {
		return nil, fail("isCancel is required: 0 re-activates the class, 1 cancels the current or next sitting, 2 cancels every sitting")
	}
	mode, err := intParam(c.P, "isCancel", 0, 2)
	if err != nil {
		return nil, err
	}
	cls, err := a.ownedClass(ctx, c, id)
	if err != nil {
		return nil, err
	}
	seq := 0
	if mode == 1 {
		_, next, ok := schedule.StatusAt(cls.Occurrences, a.now())
		if !ok {
			return nil, fail("Class has no sitting left to cancel")
		}
		seq = next.Seq
	}
	if err := a.Store.SetSittingsCancelled(ctx, c.Domain.ID, id, seq, mode != 0); err != nil {
		return nil, err
	}
	return wire.Action("cancelclass", kv{"class_id", writeID(id)}, kv{"isCancel", strconv.Itoa(mode)}), nil
}

// availableAttendees: class_id. remaning_attendees (spelled as clients
// read it) is the class's seats less the users enrolled in it, never
// below 0; "unlimited" when neither the class nor the plan limits seats.
func (a *API) availableAttendees(ctx context.Context, c *call) (*result, error) {
	cls, err := a.classParam(ctx, c, "class_id")
	if err != nil {
		return nil, err
	}
	id := cls.ID
	seats := cls.SeatAttendees
	if seats == 0 {
		seats = lms.PlanOf(c.Domain.Plan).AttendeeSeats
	}
	remaining := "unlimited"
	if seats > 0 {
		n, err := a.Store.EnrollmentCount(ctx, c.Domain.ID, lms.KindClass, 0, id)
		if err != nil {
			return nil, err
		}
		remaining = strconv.FormatInt(max(int64(seats)-n, 0), 10)
	}
	return wire.Object("availableAttendees", kv{"class_id", strconv.FormatInt(id, 10)}, kv{"remaning_attendees", remaining}), nil
}
