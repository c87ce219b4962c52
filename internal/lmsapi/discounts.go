package lmsapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/money"
	"github.com/lectern-lms/lectern/internal/pricing"
	"github.com/lectern-lms/lectern/internal/schedule"
)

// discountOwner is a kind of discount owner with its paths and parameter
// names. The global owner has no id parameter.
type discountOwner struct {
	kind string
	// list is the listing path (with the owner id wildcard listParam).
	list, listParam string
	// add is the add path; addParam names the owner in its body and answer.
	add, addParam string
	// remove is the removal path (with the owner id wildcard removeParam).
	remove, removeParam string
}

var discountOwners = []discountOwner{
	{lms.KindCourse, "/discounts/courses/{course_id}", "course_id", "/discounts/addCourseDiscount", "course_id",
		"/discounts/removeCourseDiscount/{course_id}", "course_id"},
	{lms.KindTest, "/discounts/tests/{test_id}", "test_id", "/discounts/addTestDiscount", "test_id",
		"/discounts/removeTestDiscount/{test_id}", "test_id"},
	{lms.KindClass, "/discounts/live-classes/{live_class_id}", "live_class_id", "/discounts/addLiveClassDiscount", "class_id",
		"/discounts/removeLiveClassDiscount/{class_id}", "class_id"},
	// Global discounts: the seed lists only their listing; adding and
	// removing are Lectern's.
	{lms.KindGlobal, "/discounts/globaldiscounts/list", "", "/discounts/addGlobalDiscount", "",
		"/discounts/removeGlobalDiscount", ""},
}

func (a *API) discountRoutes(rt *httpx.Router) {
	for _, o := range discountOwners {
		a.handle(rt, "GET", o.list, a.listDiscounts(o))
		a.handle(rt, "POST", o.add, a.addDiscount(o))
		a.handle(rt, "DELETE", o.remove, a.removeDiscount(o))
	}
}

// ownerID reads the owner id parameter name (none for global owners).
func ownerID(c *call, v *lms.Validator, name string) int64 {
	if name == "" {
		return 0
	}
	return c.P.ID(v, name)
}

// dateLayout is how discount dates are read and written.
const dateLayout = "2006-01-02"

// readDate reads an optional YYYY-MM-DD date as midnight UTC.
func readDate(c *call, v *lms.Validator, name string) time.Time {
	s := c.P.Get(name)
	if s == "" {
		return time.Time{}
	}
	t, err := schedule.ParseDate(s)
	if err != nil {
		v.Add(name, "must be a date YYYY-MM-DD from "+schedule.MinDate.Format(dateLayout)+" to "+schedule.MaxDate.Format(dateLayout))
	}
	return t
}

// discountJSON is a discount list item: the seed's id and code, then the
// rest of the record under the add endpoints' names.
func discountJSON(d lms.Discount) map[string]any {
	end := ""
	if !d.End.IsZero() {
		end = d.End.Add(-time.Second).Format(dateLayout)
	}
	start := ""
	if !d.Start.IsZero() {
		start = d.Start.Format(dateLayout)
	}
	return map[string]any{"id": d.ID, "code": d.Code, "is_use_discount_code": lms.Flag(d.UseCode), "discount_type": d.Type,
		"special_price": discountValue(d), "discount_limit": d.Limit, "is_no_limit": lms.Flag(d.NoLimit), "used": d.Used,
		"start_date": start, "end_date": end, "is_never_expire": lms.Flag(d.NeverExpire)}
}

// GET /discounts/{courses,tests,live-classes}/{id} and
// /discounts/globaldiscounts/list.
func (a *API) listDiscounts(o discountOwner) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		var v lms.Validator
		id := ownerID(c, &v, o.listParam)
		if err := v.Err(); err != nil {
			return err
		}
		ds, err := a.Store.Discounts(r.Context(), c.Domain.ID, o.kind, id)
		if err != nil {
			return err
		}
		data := make([]map[string]any, len(ds))
		for i, d := range ds {
			data[i] = discountJSON(d)
		}
		return ok(w, "Discounts listed", data)
	}
}

// POST /discounts/add{Course,Test,LiveClass,Global}Discount: owner id,
// discount_type, special_price, is_use_discount_code, discount_code,
// is_no_limit, discount_limit, start_date, end_date, is_never_expire.
func (a *API) addDiscount(o discountOwner) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		var v lms.Validator
		d := lms.Discount{Kind: o.kind}
		d.ItemID = ownerID(c, &v, o.addParam)
		d.Type = c.P.RequiredString(&v, "discount_type")
		if !v.Has("discount_type") && d.Type != lms.DiscountPercentage && d.Type != lms.DiscountFlat {
			v.Add("discount_type", "must be percentage or flat")
		}
		if !c.P.Has("special_price") {
			v.Add("special_price", "is required")
		} else if d.Type == lms.DiscountPercentage {
			p, err := money.ParsePercent(c.P.Get("special_price"))
			if err != nil {
				v.Add("special_price", err.Error())
			}
			d.Value = int64(p)
		} else {
			m, err := money.Parse(c.P.Get("special_price"))
			if err != nil {
				v.Add("special_price", err.Error())
			}
			d.Value = int64(m)
		}
		if !v.Has("special_price") && d.Value <= 0 {
			v.Add("special_price", "must be more than 0")
		}
		d.UseCode = c.P.Flag(&v, "is_use_discount_code", 0) == 1
		d.Code = c.P.Get("discount_code")
		if d.UseCode && d.Code == "" {
			v.Add("discount_code", "is required when is_use_discount_code is 1")
		}
		checkLen(&v, "discount_code", d.Code, 100)
		d.NoLimit = c.P.Flag(&v, "is_no_limit", 0) == 1
		if !d.NoLimit {
			n := c.P.RequiredInt(&v, "discount_limit")
			if !v.Has("discount_limit") && (n < 1 || n > lms.MaxDiscountLimit) {
				v.Add("discount_limit", fmt.Sprintf("must be from 1 to %d unless is_no_limit is 1", lms.MaxDiscountLimit))
			}
			d.Limit = int(n)
		}
		d.NeverExpire = c.P.Flag(&v, "is_never_expire", 0) == 1
		d.Start = readDate(c, &v, "start_date")
		if !d.NeverExpire {
			if end := readDate(c, &v, "end_date"); !end.IsZero() {
				d.End = end.AddDate(0, 0, 1) // the end day is included
				if !d.Start.IsZero() && end.Before(d.Start) {
					v.Add("end_date", "must not be before start_date")
				}
			}
		}
		if err := v.Err(); err != nil {
			return err
		}
		if err := pricing.CheckDiscount(&d); err != nil {
			return err
		}
		d, err := a.Store.AddDiscount(r.Context(), c.Domain.ID, d)
		if err != nil {
			return err
		}
		data := map[string]any{"id": d.ID, "discount_code": d.Code, "is_use_discount_code": lms.Flag(d.UseCode)}
		if o.addParam != "" {
			data[o.addParam] = d.ItemID
		}
		return ok(w, "Discount added", data)
	}
}

// DELETE /discounts/remove{Course,Test,LiveClass}Discount/{id} and
// /discounts/removeGlobalDiscount: discount_id, which must be the owner's.
func (a *API) removeDiscount(o discountOwner) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		var v lms.Validator
		itemID := ownerID(c, &v, o.removeParam)
		id := c.P.ID(&v, "discount_id")
		if err := v.Err(); err != nil {
			return err
		}
		if err := a.Store.DeleteDiscount(r.Context(), c.Domain.ID, o.kind, itemID, id); err != nil {
			return err
		}
		return ok(w, "Discount removed", map[string]any{"id": id})
	}
}
