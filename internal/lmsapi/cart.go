package lmsapi

import (
	"fmt"
	"net/http"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/money"
	"github.com/lectern-lms/lectern/internal/pricing"
)

// commerceRoutes registers shopping-cart pricing, the quote and discounts.
func (a *API) commerceRoutes(rt *httpx.Router) {
	for _, o := range cartOwners {
		a.handle(rt, "POST", "/shoppingCart/"+o.segment+"/addpricing", a.addPricing(o))
		a.handle(rt, "GET", "/shoppingCart/"+o.segment+"/pricing/{"+o.param+"}", a.listPricing(o))
		a.handle(rt, "DELETE", "/shoppingCart/"+o.segment+"/deletepricing", a.deletePricing(o))
	}
	a.handle(rt, "POST", "/shoppingCart/quote", a.quote)
	a.discountRoutes(rt)
}

// cartOwner is a kind of item that has pricing schemes, with its path
// segment and parameter names.
type cartOwner struct {
	kind    string
	segment string
	// param names the item on addpricing, in the pricing path, in scheme
	// records and on the quote; delParam names it on deletepricing.
	param, delParam string
}

var cartOwners = []cartOwner{
	{lms.KindCourse, "courses", "course_id", "course_id"},
	{lms.KindTest, "tests", "test_id", "test_id"},
	{lms.KindClass, "live-classes", "class_id", "live_class_id"},
}

// schemeJSON is the seed's Pricing scheme, with the owner id under its
// kind's name.
func schemeJSON(o cartOwner, p lms.PricingScheme) map[string]any {
	return map[string]any{"id": p.ID, o.param: p.ItemID, "scheme_price": money.Money(p.Price), "scheme_days": p.Days,
		"lifetime": lms.Flag(p.Lifetime), "numbertimes": p.NumberTimes, "subscription": lms.Flag(p.Subscription)}
}

// POST /shoppingCart/{courses,tests,live-classes}/addpricing: owner id,
// scheme_price, scheme_days (>= 1; ignored when lifetime is 1), lifetime,
// numbertimes (0 unlimited), subscription.
func (a *API) addPricing(o cartOwner) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		var v lms.Validator
		p := lms.PricingScheme{Kind: o.kind}
		p.ItemID = c.P.ID(&v, o.param)
		p.Price = int64(requiredMoney(c, &v, "scheme_price"))
		p.Lifetime = c.P.Flag(&v, "lifetime", 0) == 1
		if !p.Lifetime {
			days := c.P.RequiredInt(&v, "scheme_days")
			if !v.Has("scheme_days") && (days < 1 || days > lms.MaxSchemeDays) {
				v.Add("scheme_days", fmt.Sprintf("must be from 1 to %d unless lifetime is 1", lms.MaxSchemeDays))
			}
			p.Days = int(days)
		}
		p.NumberTimes = int(c.P.Range(&v, "numbertimes", 0, 0, lms.MaxNumberTimes))
		p.Subscription = c.P.Flag(&v, "subscription", 0) == 1
		if err := v.Err(); err != nil {
			return err
		}
		p, err := a.Store.AddPricingScheme(r.Context(), c.Domain.ID, p)
		if err != nil {
			return err
		}
		return ok(w, "Pricing added", map[string]any{"id": p.ID, o.param: p.ItemID, "scheme_price": money.Money(p.Price), "scheme_days": p.Days})
	}
}

// GET /shoppingCart/{courses,tests,live-classes}/pricing/{owner id}.
func (a *API) listPricing(o cartOwner) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		id, err := idParam(c, o.param)
		if err != nil {
			return err
		}
		schemes, err := a.Store.PricingSchemes(r.Context(), c.Domain.ID, o.kind, id)
		if err != nil {
			return err
		}
		data := make([]map[string]any, len(schemes))
		for i, p := range schemes {
			data[i] = schemeJSON(o, p)
		}
		return ok(w, "Pricing listed", data)
	}
}

// DELETE /shoppingCart/{courses,tests,live-classes}/deletepricing: owner
// id (course_id, test_id, live_class_id; class_id is accepted for
// live_class_id) and price_scheme_id. The scheme must be the owner's.
func (a *API) deletePricing(o cartOwner) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		if !c.P.Has(o.delParam) && c.P.Has(o.param) {
			c.P.Set(o.delParam, c.P.Get(o.param))
		}
		var v lms.Validator
		itemID := c.P.ID(&v, o.delParam)
		schemeID := c.P.ID(&v, "price_scheme_id")
		if err := v.Err(); err != nil {
			return err
		}
		if err := a.Store.DeletePricingScheme(r.Context(), c.Domain.ID, o.kind, itemID, schemeID); err != nil {
			return err
		}
		return ok(w, "Pricing deleted", map[string]any{o.delParam: itemID, "price_scheme_id": schemeID})
	}
}

// POST /shoppingCart/quote: exactly one of course_id, test_id, class_id
// (live_class_id is accepted for class_id), price_scheme_id, optional
// discount_code. Prices the scheme now; nothing is redeemed.
func (a *API) quote(w http.ResponseWriter, r *http.Request, c *call) error {
	if !c.P.Has("class_id") && c.P.Has("live_class_id") {
		c.P.Set("class_id", c.P.Get("live_class_id"))
	}
	var v lms.Validator
	var owner *cartOwner
	for i := range cartOwners {
		o := &cartOwners[i]
		if !c.P.Has(o.param) {
			continue
		}
		if owner != nil {
			v.Add(o.param, "must not be sent with "+owner.param+": quote one item")
			continue
		}
		owner = o
	}
	var itemID int64
	if owner == nil {
		v.Add("course_id", "or test_id or class_id is required")
	} else {
		itemID = c.P.ID(&v, owner.param)
	}
	schemeID := c.P.ID(&v, "price_scheme_id")
	code := c.P.Get("discount_code")
	if err := v.Err(); err != nil {
		return err
	}
	q, err := a.Store.Quote(r.Context(), c.Domain.ID, owner.kind, itemID, schemeID, code, a.now())
	if err != nil {
		return err
	}
	data := map[string]any{owner.param: itemID, "price_scheme_id": schemeID, "base_price": money.Money(q.Base),
		"discount": nil, "amount_due": money.Money(q.Due), "code_applied": q.CodeApplied, "code_refused": nil}
	if q.Discount != nil {
		data["discount"] = map[string]any{"id": q.Discount.ID, "code": q.Discount.Code, "type": q.Discount.Type,
			"value": discountValue(*q.Discount), "amount": money.Money(q.Amount)}
	}
	if q.CodeRefused != "" {
		data["code_refused"] = q.CodeRefused
	}
	return ok(w, quoteMessage(q), data)
}

func quoteMessage(q pricing.Result) string {
	if q.CodeRefused != "" {
		return "Price quoted; discount code refused: " + q.CodeRefused
	}
	return "Price quoted"
}

// discountValue is a discount's value as the API writes it: a number with
// two decimals, money for flat discounts and a percentage for percentage
// ones.
func discountValue(d lms.Discount) any {
	if d.Type == lms.DiscountPercentage {
		return money.Percent(d.Value)
	}
	return money.Money(d.Value)
}
