package lmsapi_test

import (
	"testing"
	"time"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

func TestDiscounts(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		course, test, class := items(t, e)
		owners := []struct {
			name, list, add, addParam, remove string
			id                                int64
		}{
			{"course", "/discounts/courses/", "/discounts/addCourseDiscount", "course_id", "/discounts/removeCourseDiscount/", course},
			{"test", "/discounts/tests/", "/discounts/addTestDiscount", "test_id", "/discounts/removeTestDiscount/", test},
			{"class", "/discounts/live-classes/", "/discounts/addLiveClassDiscount", "class_id", "/discounts/removeLiveClassDiscount/", class},
			{"global", "/discounts/globaldiscounts/list", "/discounts/addGlobalDiscount", "", "/discounts/removeGlobalDiscount", 0},
		}
		for _, o := range owners {
			t.Run(o.name, func(t *testing.T) {
				code := func(s string) string { return o.name + "-" + s }
				add := func(extra map[string]any) map[string]any {
					b := map[string]any{"discount_code": code("SAVE"), "is_use_discount_code": 1, "discount_limit": 10,
						"discount_type": "percentage", "special_price": "12.5", "is_no_limit": 0, "start_date": "2030-01-01",
						"end_date": "2030-12-31", "is_never_expire": 0}
					if o.addParam != "" {
						b[o.addParam] = o.id
					}
					for k, v := range extra {
						if v == nil {
							delete(b, k)
						} else {
							b[k] = v
						}
					}
					return b
				}
				list, remove := o.list, o.remove
				if o.id != 0 {
					list, remove = o.list+itoa(o.id), o.remove+itoa(o.id)
				}
				addWant := map[string]any{"message": "Discount added", "data.discount_code": code("SAVE"), "data.is_use_discount_code": 1, "data.#": 4}
				if o.addParam != "" {
					addWant["data."+o.addParam] = o.id
				} else {
					addWant["data.#"] = 3
				}
				first := create(t, e, o.add, add(nil), "data.id")
				ss := []Scenario{
					{Name: "add answers the seed's result", Request: api("POST", o.add, add(map[string]any{"discount_code": code("save2")})), Status: 200,
						Want: map[string]any{"data.discount_code": code("save2")}},
					{Name: "add duplicate code, other case", Request: api("POST", o.add, add(map[string]any{"discount_code": code("save")})), Status: 409,
						Fields: []string{"discount_code"}},
					{Name: "add automatic flat without code, never expiring", Request: api("POST", o.add, add(map[string]any{"discount_code": nil,
						"is_use_discount_code": 0, "discount_type": "flat", "special_price": "5.25", "is_no_limit": 1, "discount_limit": nil,
						"end_date": "2000-01-01", "is_never_expire": 1})), Status: 200, Want: map[string]any{"data.discount_code": "", "data.is_use_discount_code": 0}},
					{Name: "add code required", Request: api("POST", o.add, add(map[string]any{"discount_code": nil})), Status: 400, Fields: []string{"discount_code"}},
					{Name: "add bad type", Request: api("POST", o.add, add(map[string]any{"discount_type": "fixed"})), Status: 400, Fields: []string{"discount_type"}},
					{Name: "add without type and value", Request: api("POST", o.add, add(map[string]any{"discount_type": nil, "special_price": nil})), Status: 400,
						Fields: []string{"discount_type", "special_price"}},
					{Name: "add zero value", Request: api("POST", o.add, add(map[string]any{"special_price": 0})), Status: 400, Fields: []string{"special_price"}},
					{Name: "add percentage over 100", Request: api("POST", o.add, add(map[string]any{"special_price": "100.01"})), Status: 400, Fields: []string{"special_price"}},
					{Name: "add flat three decimals", Request: api("POST", o.add, add(map[string]any{"discount_type": "flat", "special_price": "1.001"})), Status: 400, Fields: []string{"special_price"}},
					{Name: "add limit required", Request: api("POST", o.add, add(map[string]any{"discount_limit": nil})), Status: 400, Fields: []string{"discount_limit"}},
					{Name: "add limit zero", Request: api("POST", o.add, add(map[string]any{"discount_limit": 0})), Status: 400, Fields: []string{"discount_limit"}},
					{Name: "add bad flags", Request: api("POST", o.add, add(map[string]any{"is_no_limit": 2, "is_use_discount_code": 3, "is_never_expire": -1})), Status: 400,
						Fields: []string{"is_no_limit", "is_use_discount_code", "is_never_expire"}},
					{Name: "add end before start", Request: api("POST", o.add, add(map[string]any{"start_date": "2030-02-01", "end_date": "2030-01-31"})), Status: 400, Fields: []string{"end_date"}},
					{Name: "add bad dates", Request: api("POST", o.add, add(map[string]any{"start_date": "01/02/2030", "end_date": "2030-02-30"})), Status: 400, Fields: []string{"start_date", "end_date"}},
					{Name: "add without auth", Request: Request{Method: "POST", Path: "/api/v1" + o.add, NoAuth: true}, Status: 401},
					{Name: "add wrong method", Request: api("GET", o.add, nil), Status: 405},
					{Name: "list", Request: api("GET", list, nil), Status: 200, Want: map[string]any{"message": "Discounts listed", "data.#": 3,
						"data.0.id": first, "data.0.code": code("SAVE"), "data.0.discount_type": "percentage", "data.0.special_price": 12.5,
						"data.0.start_date": "2030-01-01", "data.0.end_date": "2030-12-31", "data.0.discount_limit": 10, "data.0.used": 0,
						"data.2.special_price": 5.25, "data.2.is_no_limit": 1, "data.2.end_date": "", "data.2.is_never_expire": 1}},
					{Name: "list without auth", Request: Request{Method: "GET", Path: "/api/v1" + list, NoAuth: true}, Status: 401},
					{Name: "list wrong method", Request: api("POST", list, nil), Status: 405},
					{Name: "remove without id", Request: api("DELETE", remove, map[string]any{}), Status: 400, Fields: []string{"discount_id"}},
					{Name: "remove unknown", Request: api("DELETE", remove, map[string]any{"discount_id": 999999}), Status: 404},
					{Name: "remove other domain", Request: other(e, "DELETE", remove, map[string]any{"discount_id": first}), Status: 404},
					{Name: "remove without auth", Request: Request{Method: "DELETE", Path: "/api/v1" + remove, NoAuth: true}, Status: 401},
					{Name: "remove wrong method", Request: api("POST", remove, nil), Status: 405},
					{Name: "remove", Request: api("DELETE", remove, map[string]any{"discount_id": first}), Status: 200,
						Want: map[string]any{"message": "Discount removed", "data.id": first, "data.#": 1}},
					{Name: "removed is gone", Request: api("GET", list, nil), Status: 200, Want: map[string]any{"data.#": 2}},
					{Name: "its code is free again", Request: api("POST", o.add, add(nil)), Status: 200},
				}
				ss[0].Want = addWant
				addWant["data.discount_code"] = code("save2")
				if o.id != 0 {
					ss = append(ss,
						Scenario{Name: "add without owner", Request: api("POST", o.add, add(map[string]any{o.addParam: nil})), Status: 400, Fields: []string{o.addParam}},
						Scenario{Name: "add unknown owner", Request: api("POST", o.add, add(map[string]any{o.addParam: 999999, "discount_code": "x"})), Status: 404},
						Scenario{Name: "add other domain's owner", Request: other(e, "POST", o.add, add(map[string]any{"discount_code": "y"})), Status: 404},
						Scenario{Name: "list bad id", Request: api("GET", o.list+"abc", nil), Status: 400},
						Scenario{Name: "list unknown owner", Request: api("GET", o.list+"999999", nil), Status: 404},
						Scenario{Name: "list other domain", Request: other(e, "GET", list, nil), Status: 404},
						Scenario{Name: "remove unknown owner", Request: api("DELETE", o.remove+"999999", map[string]any{"discount_id": first}), Status: 404},
					)
				} else {
					ss = append(ss, Scenario{Name: "list other domain is empty", Request: other(e, "GET", list, nil), Status: 200, Want: map[string]any{"data.#": 0}})
				}
				e.Scenarios(t, ss)
			})
		}
		// Removal checks the owner; codes are unique across owners.
		cd := create(t, e, "/discounts/addCourseDiscount", map[string]any{"course_id": course, "discount_type": "flat", "special_price": 1,
			"is_use_discount_code": 1, "discount_code": "ONLY", "is_no_limit": 1}, "data.id")
		e.Scenarios(t, []Scenario{
			{Name: "remove through another item", Request: api("DELETE", "/discounts/removeTestDiscount/"+itoa(test), map[string]any{"discount_id": cd}), Status: 404},
			{Name: "remove an item's discount as global", Request: api("DELETE", "/discounts/removeGlobalDiscount", map[string]any{"discount_id": cd}), Status: 404},
			{Name: "code taken by another item", Request: api("POST", "/discounts/addTestDiscount", map[string]any{"test_id": test, "discount_type": "flat",
				"special_price": 1, "is_use_discount_code": 1, "discount_code": "only", "is_no_limit": 1}), Status: 409},
			{Name: "code of an expired discount is free", Request: api("POST", "/discounts/addTestDiscount", map[string]any{"test_id": test, "discount_type": "flat",
				"special_price": 1, "is_use_discount_code": 1, "discount_code": "PAST", "is_no_limit": 1, "end_date": time.Now().UTC().AddDate(0, 0, -2).Format("2006-01-02")}), Status: 200},
			{Name: "reuse the expired code", Request: api("POST", "/discounts/addCourseDiscount", map[string]any{"course_id": course, "discount_type": "flat",
				"special_price": 1, "is_use_discount_code": 1, "discount_code": "past", "is_no_limit": 1}), Status: 200},
			{Name: "course discount without special_price", Request: api("POST", "/discounts/addCourseDiscount", map[string]any{"course_id": course,
				"discount_type": "flat", "is_no_limit": 1}), Status: 400, Fields: []string{"special_price"}},
		})
	})
}
