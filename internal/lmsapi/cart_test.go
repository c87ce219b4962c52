package lmsapi_test

import (
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

// items creates a course, a test and a live class in e.Domain.
func items(t *testing.T, e *Env) (course, test, class int64) {
	t.Helper()
	course = create(t, e, "/courses/create", map[string]any{"course_name": "Go"}, "data.course_id")
	test = create(t, e, "/tests/create", map[string]any{"tests_name": "T"}, "data.id")
	class = create(t, e, "/liveClasses/create", map[string]any{"title": "L", "date": "2030-01-02", "startTime": "10", "endTime": "11", "timezone": "28"}, "data.id")
	return
}

func TestShoppingCartPricing(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		course, test, class := items(t, e)
		owners := []struct {
			segment, param, delParam string
			id                       int64
		}{
			{"courses", "course_id", "course_id", course},
			{"tests", "test_id", "test_id", test},
			{"live-classes", "class_id", "live_class_id", class},
		}
		for _, o := range owners {
			t.Run(o.segment, func(t *testing.T) {
				base := "/shoppingCart/" + o.segment
				add := func(extra map[string]any) map[string]any {
					b := map[string]any{o.param: o.id, "scheme_price": "19.99", "scheme_days": 30, "lifetime": 0, "numbertimes": 3, "subscription": 0}
					for k, v := range extra {
						if v == nil {
							delete(b, k)
						} else {
							b[k] = v
						}
					}
					return b
				}
				first := create(t, e, base+"/addpricing", add(nil), "data.id")
				e.Scenarios(t, []Scenario{
					{Name: "add answers the seed's result", Request: api("POST", base+"/addpricing", add(map[string]any{"scheme_price": 0.29, "scheme_days": "7"})),
						Status: 200, Want: map[string]any{"message": "Pricing added", "data.#": 4, "data." + o.param: o.id,
							"data.scheme_price": 0.29, "data.scheme_days": 7}},
					{Name: "add lifetime ignores days", Request: api("POST", base+"/addpricing", add(map[string]any{"lifetime": 1, "scheme_days": "junk", "subscription": 1, "numbertimes": 0})),
						Status: 200, Want: map[string]any{"data.scheme_days": 0, "data.scheme_price": 19.99}},
					{Name: "add without owner", Request: api("POST", base+"/addpricing", add(map[string]any{o.param: nil})), Status: 400, Fields: []string{o.param}},
					{Name: "add unknown owner", Request: api("POST", base+"/addpricing", add(map[string]any{o.param: 999999})), Status: 404},
					{Name: "add other domain's owner", Request: other(e, "POST", base+"/addpricing", add(nil)), Status: 404},
					{Name: "add negative price", Request: api("POST", base+"/addpricing", add(map[string]any{"scheme_price": -1})), Status: 400, Fields: []string{"scheme_price"}},
					{Name: "add three decimals", Request: api("POST", base+"/addpricing", add(map[string]any{"scheme_price": "1.999"})), Status: 400, Fields: []string{"scheme_price"}},
					{Name: "add without price", Request: api("POST", base+"/addpricing", add(map[string]any{"scheme_price": nil})), Status: 400, Fields: []string{"scheme_price"}},
					{Name: "add zero days", Request: api("POST", base+"/addpricing", add(map[string]any{"scheme_days": 0})), Status: 400, Fields: []string{"scheme_days"}},
					{Name: "add without days", Request: api("POST", base+"/addpricing", add(map[string]any{"scheme_days": nil})), Status: 400, Fields: []string{"scheme_days"}},
					{Name: "add bad flags and count", Request: api("POST", base+"/addpricing", add(map[string]any{"lifetime": 2, "subscription": "yes", "numbertimes": -1})),
						Status: 400, Fields: []string{"lifetime", "subscription", "numbertimes"}},
					{Name: "add without auth", Request: Request{Method: "POST", Path: "/api/v1" + base + "/addpricing", NoAuth: true}, Status: 401},
					{Name: "add wrong method", Request: api("GET", base+"/addpricing", nil), Status: 405},
					{Name: "list", Request: api("GET", base+"/pricing/"+itoa(o.id), nil), Status: 200,
						Want: map[string]any{"message": "Pricing listed", "data.#": 3, "data.0.id": first, "data.0." + o.param: o.id,
							"data.0.scheme_price": 19.99, "data.0.scheme_days": 30, "data.0.lifetime": 0, "data.0.numbertimes": 3,
							"data.0.subscription": 0, "data.2.lifetime": 1, "data.2.subscription": 1, "data.0.#": 7}},
					{Name: "list bad id", Request: api("GET", base+"/pricing/x", nil), Status: 400, Fields: []string{o.param}},
					{Name: "list unknown owner", Request: api("GET", base+"/pricing/999999", nil), Status: 404},
					{Name: "list other domain", Request: other(e, "GET", base+"/pricing/"+itoa(o.id), nil), Status: 404},
					{Name: "list without auth", Request: Request{Method: "GET", Path: "/api/v1" + base + "/pricing/1", NoAuth: true}, Status: 401},
					{Name: "list wrong method", Request: api("POST", base+"/pricing/"+itoa(o.id), nil), Status: 405},
					{Name: "delete without ids", Request: api("DELETE", base+"/deletepricing", map[string]any{}), Status: 400, Fields: []string{o.delParam, "price_scheme_id"}},
					{Name: "delete other domain", Request: other(e, "DELETE", base+"/deletepricing", map[string]any{o.delParam: o.id, "price_scheme_id": first}), Status: 404},
					{Name: "delete unknown scheme", Request: api("DELETE", base+"/deletepricing", map[string]any{o.delParam: o.id, "price_scheme_id": 999999}), Status: 404},
					{Name: "delete without auth", Request: Request{Method: "DELETE", Path: "/api/v1" + base + "/deletepricing", NoAuth: true}, Status: 401},
					{Name: "delete wrong method", Request: api("POST", base+"/deletepricing", nil), Status: 405},
					{Name: "delete", Request: api("DELETE", base+"/deletepricing", map[string]any{o.delParam: o.id, "price_scheme_id": first}), Status: 200,
						Want: map[string]any{"message": "Pricing deleted", "data." + o.delParam: o.id, "data.price_scheme_id": first, "data.#": 2}},
					{Name: "deleted is gone", Request: api("GET", base+"/pricing/"+itoa(o.id), nil), Status: 200, Want: map[string]any{"data.#": 2}},
					{Name: "delete again", Request: api("DELETE", base+"/deletepricing", map[string]any{o.delParam: o.id, "price_scheme_id": first}), Status: 404},
				})
			})
		}
		// A scheme is deleted only through its owner.
		scheme := create(t, e, "/shoppingCart/courses/addpricing", map[string]any{"course_id": course, "scheme_price": 5, "lifetime": 1}, "data.id")
		e.Scenarios(t, []Scenario{
			{Name: "delete through another item", Request: api("DELETE", "/shoppingCart/tests/deletepricing", map[string]any{"test_id": test, "price_scheme_id": scheme}), Status: 404},
			{Name: "class_id accepted on live-classes delete", Request: api("DELETE", "/shoppingCart/live-classes/deletepricing", map[string]any{"class_id": class, "price_scheme_id": scheme}), Status: 404},
		})
	})
}

func TestQuote(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		course, test, class := items(t, e)
		scheme := create(t, e, "/shoppingCart/courses/addpricing", map[string]any{"course_id": course, "scheme_price": "0.99", "scheme_days": 30}, "data.id")
		classScheme := create(t, e, "/shoppingCart/live-classes/addpricing", map[string]any{"class_id": class, "scheme_price": "100", "lifetime": 1}, "data.id")
		today := time.Now().UTC()
		create(t, e, "/discounts/addCourseDiscount", map[string]any{"course_id": course, "discount_type": "percentage", "special_price": "12.5",
			"is_no_limit": 1}, "data.id")
		coded := create(t, e, "/discounts/addCourseDiscount", map[string]any{"course_id": course, "discount_type": "flat", "special_price": "0.50",
			"is_use_discount_code": 1, "discount_code": "HALF", "discount_limit": 5}, "data.id")
		create(t, e, "/discounts/addCourseDiscount", map[string]any{"course_id": course, "discount_type": "flat", "special_price": "0.50",
			"is_use_discount_code": 1, "discount_code": "OLD", "is_no_limit": 1, "start_date": "2020-01-01", "end_date": "2020-01-31"}, "data.id")
		create(t, e, "/discounts/addCourseDiscount", map[string]any{"course_id": course, "discount_type": "flat", "special_price": "0.50",
			"is_use_discount_code": 1, "discount_code": "SOON", "is_no_limit": 1, "start_date": today.AddDate(0, 0, 2).Format("2006-01-02")}, "data.id")
		create(t, e, "/discounts/addTestDiscount", map[string]any{"test_id": test, "discount_type": "flat", "special_price": "1",
			"is_use_discount_code": 1, "discount_code": "TESTONLY", "is_no_limit": 1}, "data.id")
		global := create(t, e, "/discounts/addGlobalDiscount", map[string]any{"discount_type": "flat", "special_price": "250",
			"is_use_discount_code": 1, "discount_code": "BIG", "is_no_limit": 1}, "data.id")
		q := func(body map[string]any) Request { return api("POST", "/shoppingCart/quote", body) }
		e.Scenarios(t, []Scenario{
			{Name: "automatic percentage rounds half up", Request: q(map[string]any{"course_id": course, "price_scheme_id": scheme}), Status: 200,
				Want: map[string]any{"data.base_price": 0.99, "data.discount.type": "percentage", "data.discount.value": 12.5,
					"data.discount.amount": 0.12, "data.amount_due": 0.87, "data.code_refused": nil, "data.code_applied": false}},
			{Name: "better code wins", Request: q(map[string]any{"course_id": course, "price_scheme_id": scheme, "discount_code": "half"}), Status: 200,
				Want: map[string]any{"data.discount.id": coded, "data.discount.code": "HALF", "data.discount.amount": 0.5, "data.amount_due": 0.49,
					"data.code_applied": true, "data.code_refused": nil}},
			{Name: "global code never below zero", Request: q(map[string]any{"course_id": course, "price_scheme_id": scheme, "discount_code": "BIG"}), Status: 200,
				Want: map[string]any{"data.discount.id": global, "data.discount.amount": 0.99, "data.amount_due": 0.0}},
			{Name: "global code on a class", Request: q(map[string]any{"live_class_id": class, "price_scheme_id": classScheme, "discount_code": "big"}), Status: 200,
				Want: map[string]any{"data.class_id": class, "data.base_price": 100.0, "data.amount_due": 0.0}},
			{Name: "unknown code", Request: q(map[string]any{"course_id": course, "price_scheme_id": scheme, "discount_code": "NOPE"}), Status: 200,
				Want: map[string]any{"data.code_refused": "unknown", "data.amount_due": 0.87}},
			{Name: "expired code", Request: q(map[string]any{"course_id": course, "price_scheme_id": scheme, "discount_code": "OLD"}), Status: 200,
				Want: map[string]any{"data.code_refused": "expired"}},
			{Name: "not yet valid code", Request: q(map[string]any{"course_id": course, "price_scheme_id": scheme, "discount_code": "SOON"}), Status: 200,
				Want: map[string]any{"data.code_refused": "not_yet_valid"}},
			{Name: "another item's code", Request: q(map[string]any{"course_id": course, "price_scheme_id": scheme, "discount_code": "TESTONLY"}), Status: 200,
				Want: map[string]any{"data.code_refused": "other_item"}},
			{Name: "no item", Request: q(map[string]any{"price_scheme_id": scheme}), Status: 400, Fields: []string{"course_id"}},
			{Name: "two items", Request: q(map[string]any{"course_id": course, "test_id": test, "price_scheme_id": scheme}), Status: 400, Fields: []string{"test_id"}},
			{Name: "no scheme", Request: q(map[string]any{"course_id": course}), Status: 400, Fields: []string{"price_scheme_id"}},
			{Name: "scheme of another item", Request: q(map[string]any{"class_id": class, "price_scheme_id": scheme}), Status: 404},
			{Name: "other domain", Request: other(e, "POST", "/shoppingCart/quote", map[string]any{"course_id": course, "price_scheme_id": scheme}), Status: 404},
			{Name: "without auth", Request: Request{Method: "POST", Path: "/api/v1/shoppingCart/quote", NoAuth: true}, Status: 401},
			{Name: "wrong method", Request: api("GET", "/shoppingCart/quote", nil), Status: 405},
		})
		// Redemptions count against the limit.
		for range 5 {
			if err := e.Store.RedeemDiscount(t.Context(), e.Domain.ID, coded, 0, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		e.Scenarios(t, []Scenario{
			{Name: "used up code", Request: q(map[string]any{"course_id": course, "price_scheme_id": scheme, "discount_code": "HALF"}), Status: 200,
				Want: map[string]any{"data.code_refused": "used_up", "data.amount_due": 0.87}},
		})
		// Quotes follow the server's clock: in January 2020 OLD is valid.
		e.Clock.Set(time.Date(2020, 1, 15, 12, 0, 0, 0, time.UTC))
		e.Scenarios(t, []Scenario{
			{Name: "quote at the server's time", Request: q(map[string]any{"course_id": course, "price_scheme_id": scheme, "discount_code": "OLD"}), Status: 200,
				Want: map[string]any{"data.code_applied": true, "data.code_refused": nil}},
		})
	})
}

// TestDeletingItemsRemovesCommerce: deleting a course removes its schemes
// and discounts.
func TestDeletingItemsRemovesCommerce(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		course, _, _ := items(t, e)
		scheme := create(t, e, "/shoppingCart/courses/addpricing", map[string]any{"course_id": course, "scheme_price": 5, "lifetime": 1}, "data.id")
		disc := create(t, e, "/discounts/addCourseDiscount", map[string]any{"course_id": course, "discount_type": "flat", "special_price": 1,
			"is_use_discount_code": 1, "discount_code": "GONE", "is_no_limit": 1}, "data.id")
		e.Scenarios(t, []Scenario{
			{Name: "delete the course", Request: api("DELETE", "/courses/delete/"+itoa(course), nil), Status: 200},
			{Name: "its pricing is gone with it", Request: api("GET", "/shoppingCart/courses/pricing/"+itoa(course), nil), Status: 404},
		})
		if _, err := e.Store.PricingScheme(t.Context(), e.Domain.ID, scheme); err == nil {
			t.Error("the scheme survived its course")
		}
		if _, err := e.Store.Discount(t.Context(), e.Domain.ID, disc); err == nil {
			t.Error("the discount survived its course")
		}
		// Its code is free again.
		create(t, e, "/discounts/addGlobalDiscount", map[string]any{"discount_type": "flat", "special_price": 1,
			"is_use_discount_code": 1, "discount_code": "gone", "is_no_limit": 1}, "data.id")
	})
}
