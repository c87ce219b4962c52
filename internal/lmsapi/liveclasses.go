package lmsapi

import (
	"net/http"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/schedule"
	"github.com/lectern-lms/lectern/internal/store"
)

func classItem(c lms.LiveClass) map[string]any {
	return map[string]any{"id": c.ID, "class_id": c.ID, "class_name": c.Title}
}

// POST /liveClasses/create: title, date (YYYY-MM-DD), startTime and
// endTime (HH or HH:MM, 24-hour; 12-hour forms such as 09:30 AM are also
// read), timezone (a classroom API timezone id or an IANA name). The class
// is one sitting that ends after it starts on the same day; the classroom
// API schedules recurring and overnight classes. The class is the same
// row the classroom API lists, launches and prices.
func (a *API) createLiveClass(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	title := c.P.RequiredString(&v, "title")
	checkLen(&v, "title", title, maxName)
	date, err := schedule.ParseDate(c.P.Get("date"))
	if err != nil {
		v.Add("date", err.Error())
	}
	var mins [2]int
	for i, name := range []string{"startTime", "endTime"} {
		m, err := schedule.ParseClock(c.P.Get(name))
		if err != nil {
			v.Add(name, err.Error())
		}
		mins[i] = m
	}
	if !v.Has("startTime") && !v.Has("endTime") && mins[1] <= mins[0] {
		v.Add("endTime", "must be after startTime on the same day")
	}
	zone, err := schedule.LookupZone(c.P.Get("timezone"))
	if err != nil {
		v.Add("timezone", err.Error())
	}
	if err := v.Err(); err != nil {
		return err
	}
	plan := schedule.Plan{Date: date, StartMinute: mins[0], EndMinute: mins[1], Zone: zone}
	occ, _ := schedule.Expand(plan) // a single sitting cannot fail
	cls := lms.LiveClass{
		Title: title, Date: date.Format(time.DateOnly), StartMinute: mins[0], EndMinute: mins[1],
		TimezoneID: zone.ID, TimezoneName: zone.IANA, Currency: "usd", Published: 1, Occurrences: occ,
	}
	// The domain's plan limits classes whichever API creates them.
	if pv := lms.PlanOf(c.Domain.Plan).CheckClass(cls); pv != nil {
		return lms.Invalidf("endTime", "%s", pv.Message)
	}
	cls, err = a.Store.CreateLiveClass(r.Context(), c.Domain.ID, cls)
	if err != nil {
		return err
	}
	return ok(w, "Live class created", classItem(cls))
}

// POST /liveClasses/list: page, limit; every class of the domain, whichever
// API made it, by id.
func (a *API) listLiveClasses(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	classes, total, err := a.Store.ListLiveClasses(r.Context(), c.Domain.ID, store.ClassFilter{}, pg.store())
	if err != nil {
		return err
	}
	defer a.Store.ReleaseLiveClasses(classes)
	data := make([]map[string]any, len(classes))
	for i, cl := range classes {
		data[i] = classItem(cl)
	}
	return writeJSON(w, pg.body("Live classes", data, total))
}
