package classroomapi

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/money"
	"github.com/lectern-lms/lectern/internal/pricing"
	"github.com/lectern-lms/lectern/internal/schedule"
)

// A class's prices and discounts are the rows of the LMS API's shopping
// cart pricing and discounts for live classes: one store, two
// vocabularies. Here discount_type is 0 (fixed amount, "flat" in the LMS
// API) or 1 (percentage), and records say fixed_amount/percentage.

// Class prices

// schemeRecord renders a price scheme as listSchemes and classprice do.
func schemeRecord(p lms.PricingScheme) obj {
	times := "0"
	if p.NumberTimes > 0 {
		times = "1"
	}
	return obj{
		{"id", strconv.FormatInt(p.ID, 10)},
		{"class_id", strconv.FormatInt(p.ItemID, 10)},
		{"scheme_price", money.Money(p.Price).String()},
		{"scheme_days", strconv.Itoa(p.Days)},
		{"lifetime", strconv.Itoa(lms.Flag(p.Lifetime))},
		{"times", times},
		{"numbertimes", strconv.Itoa(p.NumberTimes)},
		{"subscription", strconv.Itoa(lms.Flag(p.Subscription))},
	}
}

// readScheme reads addSchemes' parameters into p: price (an amount with at
// most two decimals), scheme_days (days of access; 0 means for life), times
// (0 unlimited uses, 1 limited to numbertimes, which must then be >= 1).
// On update (create false) parameters not sent keep their value.
func readScheme(c *call, p *lms.PricingScheme, create bool) error {
	if create {
		for _, name := range []string{"price", "scheme_days", "times"} {
			if !c.P.Has(name) {
				return fail("%s is required", name)
			}
		}
	}
	if c.P.Has("price") {
		m, err := money.Parse(c.P.Get("price"))
		if err != nil {
			return fail("price must be an amount such as 19.99 (at least 0, at most two decimals), not %q", c.P.Get("price"))
		}
		p.Price = int64(m)
	}
	if c.P.Has("scheme_days") {
		days, err := intParam(c.P, "scheme_days", 0, lms.MaxSchemeDays)
		if err != nil {
			return err
		}
		p.Days, p.Lifetime = days, days == 0
	}
	if c.P.Has("times") {
		times, err := intParam(c.P, "times", 0, 1)
		if err != nil {
			return err
		}
		switch {
		case times == 0:
			p.NumberTimes = 0
		case !c.P.Has("numbertimes"):
			return fail("numbertimes is required when times is 1 (the number of times the class may be attended)")
		}
	}
	if c.P.Has("numbertimes") && (c.P.Get("times") != "0") {
		n, err := intParam(c.P, "numbertimes", 1, lms.MaxNumberTimes)
		if err != nil {
			return err
		}
		p.NumberTimes = n
	}
	return nil
}

// addSchemes: class_id, price, scheme_days, times, numbertimes; with
// id=<price id> it updates that price (method updateprice).
func (a *API) addSchemes(ctx context.Context, c *call) (*result, error) {
	classID, err := a.classID(ctx, c)
	if err != nil {
		return nil, err
	}
	if c.P.Has("id") {
		id, err := requiredID(c.P, "id")
		if err != nil {
			return nil, err
		}
		var bad error
		p, err := a.Store.UpdatePricingScheme(ctx, c.Domain.ID, lms.KindClass, classID, id, func(p *lms.PricingScheme) error {
			bad = readScheme(c, p, false)
			return bad
		})
		if bad != nil {
			return nil, bad
		}
		if lms.IsNotFound(err) {
			return nil, fail("Invalid id: class %d has no price %d", classID, id)
		}
		if err != nil {
			return nil, err
		}
		return wire.Action("updateprice", kv{"price_id", writeID(p.ID)}), nil
	}
	p := lms.PricingScheme{Kind: lms.KindClass, ItemID: classID}
	if err := readScheme(c, &p, true); err != nil {
		return nil, err
	}
	p, err = a.Store.AddPricingScheme(ctx, c.Domain.ID, p)
	if err != nil {
		return nil, err
	}
	return wire.Action("addprice", kv{"price_id", writeID(p.ID)}), nil
}

// listSchemes: class_id.
func (a *API) listSchemes(ctx context.Context, c *call) (*result, error) {
	classID, err := a.classID(ctx, c)
	if err != nil {
		return nil, err
	}
	ps, err := a.Store.PricingSchemes(ctx, c.Domain.ID, lms.KindClass, classID)
	if err != nil {
		return nil, err
	}
	rs := make([]obj, len(ps))
	for i, p := range ps {
		rs[i] = schemeRecord(p)
	}
	return wire.Records("price", rs, "Price", "No Price in this Class"), nil
}

// ownedScheme loads a price of one of the domain's classes by the named
// id parameter.
func (a *API) ownedScheme(ctx context.Context, c *call, param string) (lms.PricingScheme, error) {
	id, err := requiredID(c.P, param)
	if err != nil {
		return lms.PricingScheme{}, err
	}
	p, err := a.Store.PricingScheme(ctx, c.Domain.ID, id)
	if lms.IsNotFound(err) || (err == nil && p.Kind != lms.KindClass) {
		return lms.PricingScheme{}, fail("Invalid %s: there is no class price %d", param, id)
	}
	return p, err
}

// removeprice: id (the price).
func (a *API) removePrice(ctx context.Context, c *call) (*result, error) {
	p, err := a.ownedScheme(ctx, c, "id")
	if err != nil {
		return nil, err
	}
	if err := a.Store.DeletePricingScheme(ctx, c.Domain.ID, lms.KindClass, p.ItemID, p.ID); err != nil {
		return nil, err
	}
	return wire.Action("removeprice", kv{"price_id", writeID(p.ID)}), nil
}

// classprice: class_id, price_id. One price of the class.
func (a *API) classPrice(ctx context.Context, c *call) (*result, error) {
	classID, err := a.classID(ctx, c)
	if err != nil {
		return nil, err
	}
	p, err := a.ownedScheme(ctx, c, "price_id")
	if err != nil {
		return nil, err
	}
	if p.ItemID != classID {
		return nil, fail("Invalid price_id: price %d is not a price of class %d", p.ID, classID)
	}
	return wire.Records("price", []obj{schemeRecord(p)}, "", ""), nil
}

// Class discounts

const dateTimeLayout = "2006-01-02 15:04:05"

// discountTypes maps discount_type 0/1 to the store's types.
var discountTypes = []string{lms.DiscountFlat, lms.DiscountPercentage}

// typeName is a discount type as records write it.
func typeName(t string) string {
	if t == lms.DiscountFlat {
		return "fixed_amount"
	}
	return t
}

// discountValue writes a discount's value: an amount or a percentage.
func discountValue(d lms.Discount) string {
	if d.Type == lms.DiscountPercentage {
		return money.Percent(d.Value).String()
	}
	return money.Money(d.Value).String()
}

// discountRecord renders a discount as listdiscount (JSON) and
// classdiscount do. The end is written as its last day's midnight, as
// sent; "0000-00-00 00:00:00" when it never ends.
func discountRecord(d lms.Discount) obj {
	end := "0000-00-00 00:00:00"
	if !d.End.IsZero() {
		end = d.End.AddDate(0, 0, -1).Format(dateTimeLayout)
	}
	limit := strconv.Itoa(d.Limit)
	return obj{
		{"id", strconv.FormatInt(d.ID, 10)},
		{"class_id", strconv.FormatInt(d.ItemID, 10)},
		{"discount_code", d.Code},
		{"is_use_discount_code", strconv.Itoa(lms.Flag(d.UseCode))},
		{"discount_limit", limit},
		{"is_no_limit", strconv.Itoa(lms.Flag(d.NoLimit))},
		{"discount_type", typeName(d.Type)},
		{"special_price", discountValue(d)},
		{"start_date", d.Start.Format(dateTimeLayout)},
		{"end_date", end},
		{"is_never_expire", strconv.Itoa(lms.Flag(d.NeverExpire || d.End.IsZero()))},
		{"used", strconv.Itoa(d.Used)},
	}
}

// discountXML renders a discount as the specification's XML names it.
func discountXML(d lms.Discount) obj {
	end := "Unlimited"
	if !d.End.IsZero() {
		end = d.End.AddDate(0, 0, -1).Format(time.DateOnly)
	}
	limit := strconv.Itoa(d.Limit)
	if d.NoLimit {
		limit = "Unlimited"
	}
	return obj{
		{"discountid", strconv.FormatInt(d.ID, 10)},
		{"discount", discountValue(d)},
		{"discount_code", d.Code},
		{"discount_limit", limit},
		{"discount_type", typeName(d.Type)},
		{"start_date", d.Start.Format(time.DateOnly)},
		{"end_date", end},
	}
}

// readDiscount reads addSpecials' parameters into d: discount (the value:
// an amount, or a percentage up to 100), start_date, optional end_date
// (none: never expires), discount_type (0 fixed amount, 1 percentage),
// optional discount_code (when sent, buyers must enter it; when not, the
// discount applies on its own), optional discount_limit (uses; none or 0:
// unlimited). On update parameters not sent keep their value.
func readDiscount(c *call, d *lms.Discount, create bool) error {
	if create {
		for _, name := range []string{"discount", "start_date", "discount_type"} {
			if !c.P.Has(name) {
				return fail("%s is required", name)
			}
		}
	}
	if c.P.Has("discount_type") {
		t, err := intParam(c.P, "discount_type", 0, 1)
		if err != nil {
			return fail("discount_type must be 0 (fixed amount) or 1 (percentage), not %q", c.P.Get("discount_type"))
		}
		d.Type = discountTypes[t]
	}
	if c.P.Has("discount") || c.P.Has("discount_type") {
		v := c.P.Get("discount")
		if v == "" {
			v = discountValue(*d)
		}
		if d.Type == lms.DiscountPercentage {
			p, err := money.ParsePercent(v)
			if err != nil || p <= 0 || p > money.Hundred {
				return fail("discount must be a percentage more than 0 and at most 100 when discount_type is 1, not %q", v)
			}
			d.Value = int64(p)
		} else {
			m, err := money.Parse(v)
			if err != nil || m <= 0 {
				return fail("discount must be an amount more than 0 such as 5.00 (at most two decimals), not %q", v)
			}
			d.Value = int64(m)
		}
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
		end  bool
	}{{"start_date", &d.Start, false}, {"end_date", &d.End, true}} {
		if !c.P.Sent(f.name) {
			continue
		}
		v := c.P.Get(f.name)
		if f.end && (v == "" || strings.HasPrefix(v, "0000-00-00")) {
			*f.dst, d.NeverExpire = time.Time{}, true
			continue
		}
		t, err := schedule.ParseDate(strings.TrimSuffix(v, " 00:00:00"))
		if err != nil {
			return fail("%s must be a date YYYY-MM-DD from %s to %s, not %q", f.name,
				schedule.MinDate.Format(time.DateOnly), schedule.MaxDate.Format(time.DateOnly), v)
		}
		if f.end {
			t, d.NeverExpire = t.AddDate(0, 0, 1), false
		}
		*f.dst = t
	}
	if create && !c.P.Has("end_date") {
		d.NeverExpire = true
	}
	if !d.End.IsZero() && !d.Start.Before(d.End) {
		return fail("end_date must not be before start_date")
	}
	if c.P.Sent("discount_code") {
		d.Code = c.P.Get("discount_code")
		d.UseCode = d.Code != ""
	}
	if c.P.Sent("discount_limit") {
		n := 0
		if c.P.Has("discount_limit") {
			var err error
			if n, err = intParam(c.P, "discount_limit", 0, lms.MaxDiscountLimit); err != nil {
				return err
			}
		}
		d.Limit, d.NoLimit = n, n == 0
	} else if create {
		d.NoLimit = true
	}
	return nil
}

// addSpecials: class_id plus the discount parameters; with
// discountid=<id> (or discount_id) it updates that discount (method updateDiscount).
func (a *API) addSpecials(ctx context.Context, c *call) (*result, error) {
	classID, err := a.classID(ctx, c)
	if err != nil {
		return nil, err
	}
	if c.P.Has("discountid") || c.P.Has("discount_id") {
		id, err := requiredID(c.P, "discountid", "discount_id")
		if err != nil {
			return nil, err
		}
		var bad error
		d, err := a.Store.UpdateDiscount(ctx, c.Domain.ID, lms.KindClass, classID, id, func(d *lms.Discount) error {
			if bad = readDiscount(c, d, false); bad == nil {
				bad = pricing.CheckDiscount(d)
			}
			return bad
		})
		if bad != nil {
			return nil, bad
		}
		if lms.IsNotFound(err) {
			return nil, fail("Invalid discountid: class %d has no discount %d", classID, id)
		}
		if err != nil {
			return nil, err
		}
		return wire.Action("updateDiscount", kv{"discount_id", writeID(d.ID)}), nil
	}
	d := lms.Discount{Kind: lms.KindClass, ItemID: classID}
	if err := readDiscount(c, &d, true); err != nil {
		return nil, err
	}
	if err := pricing.CheckDiscount(&d); err != nil {
		return nil, err
	}
	d, err = a.Store.AddDiscount(ctx, c.Domain.ID, d)
	if err != nil {
		return nil, err
	}
	return wire.Action("addDiscount", kv{"discount_id", writeID(d.ID)}), nil
}

// listdiscount: class_id, optional search (discount codes containing it,
// any case).
func (a *API) listDiscount(ctx context.Context, c *call) (*result, error) {
	classID, err := a.classID(ctx, c)
	if err != nil {
		return nil, err
	}
	ds, err := a.Store.Discounts(ctx, c.Domain.ID, lms.KindClass, classID)
	if err != nil {
		return nil, err
	}
	search := strings.ToLower(c.P.Get("search"))
	res := wire.Records("discount", nil, "Discount", "No Discount in this Class")
	res.XMLGroup, res.XMLGroupAttr = "classid", strconv.FormatInt(classID, 10)
	for _, d := range ds {
		if search != "" && !strings.Contains(strings.ToLower(d.Code), search) {
			continue
		}
		res.Records = append(res.Records, discountRecord(d))
		res.XMLRecords = append(res.XMLRecords, discountXML(d))
	}
	return res, nil
}

// ownedDiscount loads a discount of one of the domain's classes by the id
// sent under any of names (the first names it in errors).
func (a *API) ownedDiscount(ctx context.Context, c *call, names ...string) (lms.Discount, error) {
	id, err := requiredID(c.P, names...)
	if err != nil {
		return lms.Discount{}, err
	}
	d, err := a.Store.Discount(ctx, c.Domain.ID, id)
	if lms.IsNotFound(err) || (err == nil && d.Kind != lms.KindClass) {
		return lms.Discount{}, fail("Invalid %s: there is no class discount %d", names[0], id)
	}
	return d, err
}

// removediscount: discountid (or discount_id, as a Laravel package sends it).
func (a *API) removeDiscount(ctx context.Context, c *call) (*result, error) {
	d, err := a.ownedDiscount(ctx, c, "discountid", "discount_id")
	if err != nil {
		return nil, err
	}
	if err := a.Store.DeleteDiscount(ctx, c.Domain.ID, lms.KindClass, d.ItemID, d.ID); err != nil {
		return nil, err
	}
	return wire.Action("removediscount", kv{"discount_id", writeID(d.ID)}), nil
}

// classdiscount: class_id, discount_id. One discount of the class.
func (a *API) classDiscount(ctx context.Context, c *call) (*result, error) {
	classID, err := a.classID(ctx, c)
	if err != nil {
		return nil, err
	}
	d, err := a.ownedDiscount(ctx, c, "discount_id")
	if err != nil {
		return nil, err
	}
	if d.ItemID != classID {
		return nil, fail("Invalid discount_id: discount %d is not a discount of class %d", d.ID, classID)
	}
	res := wire.Records("discount", []obj{discountRecord(d)}, "", "")
	res.XMLRecords = []obj{discountXML(d)}
	return res, nil
}

// refusals are applycoupon's messages for the pricing package's reasons.
var refusals = map[string]string{
	pricing.RefusedUnknown:     "Invalid coupon code",
	pricing.RefusedExpired:     "Coupon code has expired",
	pricing.RefusedNotYetValid: "Coupon code is not valid yet",
	pricing.RefusedUsedUp:      "Coupon code has been used up",
	pricing.RefusedOtherItem:   "Coupon code is not valid for this class",
}

// applycoupon: class_id, discount_code, optional price_id (default: the
// class's first price). Answers the discount that applies under the
// pricing rules (the best for the buyer: a better automatic discount wins
// over the code), its value and type, and the price before and after.
func (a *API) applyCoupon(ctx context.Context, c *call) (*result, error) {
	classID, err := a.classID(ctx, c)
	if err != nil {
		return nil, err
	}
	code := c.P.Get("discount_code")
	if code == "" {
		return nil, fail("discount_code is required")
	}
	var scheme lms.PricingScheme
	if c.P.Has("price_id") {
		if scheme, err = a.ownedScheme(ctx, c, "price_id"); err != nil {
			return nil, err
		}
		if scheme.ItemID != classID {
			return nil, fail("Invalid price_id: price %d is not a price of class %d", scheme.ID, classID)
		}
	} else {
		ps, err := a.Store.PricingSchemes(ctx, c.Domain.ID, lms.KindClass, classID)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			return nil, fail("Class %d has no price to apply a coupon to: add one with addSchemes", classID)
		}
		scheme = ps[0]
	}
	q, err := a.Store.Quote(ctx, c.Domain.ID, lms.KindClass, classID, scheme.ID, code, a.now())
	if err != nil {
		return nil, err
	}
	if q.CodeRefused != "" {
		return nil, fail("%s", refusals[q.CodeRefused])
	}
	d := q.Discount
	if d == nil {
		return nil, fail("Coupon code takes nothing off price %d (it costs %s)", scheme.ID, money.Money(q.Base))
	}
	return wire.Object("applycoupon",
		kv{"class_id", strconv.FormatInt(classID, 10)},
		kv{"price_id", strconv.FormatInt(scheme.ID, 10)},
		kv{"discount_id", strconv.FormatInt(d.ID, 10)},
		kv{"discount_code", d.Code},
		kv{"discount_value", discountValue(*d)},
		kv{"discount_type", typeName(d.Type)},
		kv{"coupon_applied", strconv.Itoa(lms.Flag(q.CodeApplied))},
		kv{"price", money.Money(q.Base).String()},
		kv{"discount_amount", money.Money(q.Amount).String()},
		kv{"amount_due", money.Money(q.Due).String()},
	), nil
}
