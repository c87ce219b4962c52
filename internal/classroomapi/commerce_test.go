package classroomapi_test

import (
	"context"
	"encoding/xml"
	"maps"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

func TestClassPrices(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		id := scheduleID(t, e, classParams())
		if got := apitest.Str(t, e.VC("listSchemes", vals("class_id", id)).JSON(t), "Price"); got != "No Price in this Class" {
			t.Errorf("empty list: %q", got)
		}
		answers := styles(t, e, "addSchemes", vals("class_id", id, "price", "19.99", "scheme_days", "30", "times", "1", "numbertimes", "3"))
		for name, a := range answers {
			if apitest.Str(t, a, "0.Status") != "OK" || apitest.Str(t, a, "0.method") != "addprice" || apitest.Str(t, a, "0.Price id") == "" {
				t.Errorf("%s: %v", name, a)
			}
		}
		compat := e.NewDomain("Compat")
		e.Store.SetResponseStyle(context.Background(), compat.ID, "compat")
		cid := idString(t, vcOK(t, e, "schedule", classParams("apikey", compat.ClassroomKey))["class_id"])
		b := e.VC("addSchemes", vals("apikey", compat.ClassroomKey, "class_id", cid, "price", "5", "scheme_days", "0", "times", "0")).JSON(t)
		if apitest.Str(t, b, "status") != "ok" || apitest.Int(t, b, "price_id") <= 0 || apitest.Int(t, b, "Price id") != apitest.Int(t, b, "price_id") {
			t.Errorf("compat addSchemes: %v", b)
		}
		x := e.VC("addSchemes", vals("class_id", id, "price", "7.50", "scheme_days", "0", "times", "0", "format", "xml"))
		var rsp struct {
			Status  string `xml:"status,attr"`
			Method  string `xml:"method"`
			PriceID string `xml:"price_id"`
		}
		if err := xml.Unmarshal(x.Body, &rsp); err != nil || rsp.Method != "addprice" || rsp.PriceID == "" {
			t.Errorf("xml: %v %s", err, x.Body)
		}

		list := e.VC("listSchemes", vals("class_id", id)).JSON(t)
		if n, _ := apitest.Lookup(list, "#"); n != 7 {
			t.Fatalf("listSchemes: %v", list)
		}
		first := apitest.Str(t, list, "0.id")
		want := map[string]string{"0.class_id": id, "0.scheme_price": "19.99", "0.scheme_days": "30", "0.lifetime": "0", "0.times": "1",
			"0.numbertimes": "3", "0.subscription": "0", "6.scheme_price": "7.50", "6.lifetime": "1", "6.times": "0", "6.numbertimes": "0"}
		for path, w := range want {
			if got := apitest.Str(t, list, path); got != w {
				t.Errorf("%s = %q, want %q", path, got, w)
			}
		}
		// The same rows as the LMS API's cart pricing for live classes.
		lmsList := e.LMS("GET", "/shoppingCart/live-classes/pricing/"+id, nil)
		if n, _ := apitest.Lookup(lmsList.JSON(t), "data.#"); n != 7 {
			t.Errorf("LMS pricing of the class: %s", lmsList.Body)
		}

		if r := vcOK(t, e, "addSchemes", vals("class_id", id, "id", first, "price", "24.00")); r["method"] != "updateprice" || r["Price id"] != first {
			t.Errorf("update: %v", r)
		}
		if p := vcOK(t, e, "classprice", vals("class_id", id, "price_id", first)); p["scheme_price"] != "24.00" || p["numbertimes"] != "3" {
			t.Errorf("classprice after update: %v", p)
		}
		for _, tc := range []struct {
			name   string
			params url.Values
			want   string
		}{
			{"no class", vals("price", "1", "scheme_days", "1", "times", "0"), "class_id is required"},
			{"no price", vals("class_id", id, "scheme_days", "1", "times", "0"), "price is required"},
			{"no days", vals("class_id", id, "price", "1", "times", "0"), "scheme_days is required"},
			{"no times", vals("class_id", id, "price", "1", "scheme_days", "1"), "times is required"},
			{"three decimals", vals("class_id", id, "price", "1.999", "scheme_days", "1", "times", "0"), "price"},
			{"negative", vals("class_id", id, "price", "-1", "scheme_days", "1", "times", "0"), "price"},
			{"bad times", vals("class_id", id, "price", "1", "scheme_days", "1", "times", "2"), "times"},
			{"limited without count", vals("class_id", id, "price", "1", "scheme_days", "1", "times", "1"), "numbertimes is required"},
			{"update unknown price", vals("class_id", id, "id", "999999", "price", "1"), "no price"},
			{"another domain's class", vals("class_id", cid, "price", "1", "scheme_days", "1", "times", "0"), "Invalid Class Owner"},
		} {
			if msg := vcErr(t, e, "addSchemes", tc.params); !strings.Contains(msg, tc.want) {
				t.Errorf("%s: %q, want %q", tc.name, msg, tc.want)
			}
		}
		other := scheduleID(t, e, classParams("title", "Other"))
		if msg := vcErr(t, e, "classprice", vals("class_id", other, "price_id", first)); !strings.Contains(msg, "not a price of class") {
			t.Errorf("classprice of another class: %q", msg)
		}
		compatPrice := itoa(apitest.Int(t, b, "price_id"))
		if msg := vcErr(t, e, "removeprice", vals("id", compatPrice)); !strings.Contains(msg, "no class price") {
			t.Errorf("removeprice of another domain's price: %q", msg)
		}
		if r := vcOK(t, e, "removeprice", vals("id", first)); r["method"] != "removeprice" || r["price_id"] != first {
			t.Errorf("removeprice: %v", r)
		}
		if msg := vcErr(t, e, "removeprice", vals("id", first)); !strings.Contains(msg, "no class price") {
			t.Errorf("removeprice twice: %q", msg)
		}
	}, seedStyle)
}

func TestClassDiscounts(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		id := scheduleID(t, e, classParams())
		if got := apitest.Str(t, e.VC("listdiscount", vals("class_id", id)).JSON(t), "Discount"); got != "No Discount in this Class" {
			t.Errorf("empty list: %q", got)
		}
		answers := styles(t, e, "addSpecials", vals("class_id", id, "discount", "10", "discount_type", "1", "start_date", "2031-01-01"))
		for name, a := range answers {
			if apitest.Str(t, a, "0.Status") != "OK" || apitest.Str(t, a, "0.method") != "addDiscount" || apitest.Str(t, a, "0.Discount id") == "" {
				t.Errorf("%s: %v", name, a)
			}
		}
		coded := idString(t, vcOK(t, e, "addSpecials", vals("class_id", id, "discount", "5.50", "discount_type", "0", "start_date", "2031-01-01",
			"end_date", "2031-06-30", "discount_code", "SPRING", "discount_limit", "2"))["Discount id"])

		list := e.VC("listdiscount", vals("class_id", id, "search", "spr")).JSON(t)
		want := map[string]string{"0.id": coded, "0.class_id": id, "0.discount_code": "SPRING", "0.is_use_discount_code": "1",
			"0.discount_limit": "2", "0.is_no_limit": "0", "0.discount_type": "fixed_amount", "0.special_price": "5.50",
			"0.start_date": "2031-01-01 00:00:00", "0.end_date": "2031-06-30 00:00:00", "0.is_never_expire": "0"}
		for path, w := range want {
			if got := apitest.Str(t, list, path); got != w {
				t.Errorf("%s = %q, want %q", path, got, w)
			}
		}
		all := e.VC("listdiscount", vals("class_id", id)).JSON(t)
		if n, _ := apitest.Lookup(all, "#"); n != 7 || apitest.Str(t, all, "0.end_date") != "0000-00-00 00:00:00" || apitest.Str(t, all, "0.discount_type") != "percentage" {
			t.Errorf("listdiscount: %v", all)
		}
		x := e.VC("listdiscount", vals("class_id", id, "search", "spr", "format", "xml"))
		var doc struct {
			Class struct {
				ID        string `xml:"id,attr"`
				Discounts []struct {
					ID    string `xml:"discountid"`
					Value string `xml:"discount"`
					End   string `xml:"end_date"`
					Limit string `xml:"discount_limit"`
				} `xml:"discount"`
			} `xml:"classid"`
		}
		if err := xml.Unmarshal(x.Body, &doc); err != nil || doc.Class.ID != id || len(doc.Class.Discounts) != 1 ||
			doc.Class.Discounts[0].ID != coded || doc.Class.Discounts[0].Value != "5.50" || doc.Class.Discounts[0].End != "2031-06-30" {
			t.Errorf("xml: %v %+v %s", err, doc, x.Body)
		}
		// The same rows as the LMS API's live-class discounts.
		l := e.LMS("GET", "/discounts/live-classes/"+id, nil)
		if n, _ := apitest.Lookup(l.JSON(t), "data.#"); n != 7 {
			t.Errorf("LMS discounts of the class: %s", l.Body)
		}

		if r := vcOK(t, e, "addSpecials", vals("class_id", id, "discountid", coded, "discount_limit", "3")); r["method"] != "updateDiscount" || r["Discount id"] != coded {
			t.Errorf("update: %v", r)
		}
		if d := vcOK(t, e, "classdiscount", vals("class_id", id, "discount_id", coded)); d["discount_limit"] != "3" || d["discount_code"] != "SPRING" {
			t.Errorf("classdiscount: %v", d)
		}
		for _, tc := range []struct {
			name   string
			params url.Values
			want   string
		}{
			{"no value", vals("class_id", id, "discount_type", "0", "start_date", "2031-01-01"), "discount is required"},
			{"no type", vals("class_id", id, "discount", "1", "start_date", "2031-01-01"), "discount_type is required"},
			{"no start", vals("class_id", id, "discount", "1", "discount_type", "0"), "start_date is required"},
			{"bad type", vals("class_id", id, "discount", "1", "discount_type", "2", "start_date", "2031-01-01"), "discount_type"},
			{"zero", vals("class_id", id, "discount", "0", "discount_type", "0", "start_date", "2031-01-01"), "discount must be"},
			{"over 100%", vals("class_id", id, "discount", "150", "discount_type", "1", "start_date", "2031-01-01"), "at most 100"},
			{"bad date", vals("class_id", id, "discount", "1", "discount_type", "0", "start_date", "01/02/2031"), "start_date"},
			{"end before start", vals("class_id", id, "discount", "1", "discount_type", "0", "start_date", "2031-02-01", "end_date", "2031-01-01"), "end_date"},
			{"duplicate code", vals("class_id", id, "discount", "1", "discount_type", "0", "start_date", "2031-01-01", "discount_code", "spring"), "spring"},
			{"bad limit", vals("class_id", id, "discount", "1", "discount_type", "0", "start_date", "2031-01-01", "discount_limit", "-1"), "discount_limit"},
		} {
			if msg := vcErr(t, e, "addSpecials", tc.params); !strings.Contains(strings.ToLower(msg), strings.ToLower(tc.want)) {
				t.Errorf("%s: %q, want %q", tc.name, msg, tc.want)
			}
		}
		if msg := vcErr(t, e, "removediscount", vals("discountid", coded, "apikey", e.Other.ClassroomKey)); !strings.Contains(msg, "no class discount") {
			t.Errorf("removediscount from another domain: %q", msg)
		}
		if r := vcOK(t, e, "removediscount", vals("discountid", coded)); r["method"] != "removediscount" || r["discount_id"] != coded {
			t.Errorf("removediscount: %v", r)
		}
		if msg := vcErr(t, e, "classdiscount", vals("class_id", id, "discount_id", coded)); !strings.Contains(msg, "no class discount") {
			t.Errorf("removed discount: %q", msg)
		}
	}, seedStyle)
}

func TestApplyCoupon(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		e.Clock.Set(time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC))
		id := scheduleID(t, e, classParams())
		other := scheduleID(t, e, classParams("title", "Other"))
		if msg := vcErr(t, e, "applycoupon", vals("class_id", id, "discount_code", "X")); !strings.Contains(msg, "no price") {
			t.Errorf("no price: %q", msg)
		}
		price := idString(t, vcOK(t, e, "addSchemes", vals("class_id", id, "price", "40", "scheme_days", "30", "times", "0"))["Price id"])
		add := func(classID string, kv ...string) string {
			p := vals(append([]string{"class_id", classID, "start_date", "2031-01-01"}, kv...)...)
			return idString(t, vcOK(t, e, "addSpecials", p)["Discount id"])
		}
		half := add(id, "discount", "50", "discount_type", "1", "discount_code", "HALF", "discount_limit", "1")
		add(id, "discount", "5", "discount_type", "0", "discount_code", "OLD", "end_date", "2031-02-01")
		add(id, "discount", "5", "discount_type", "0", "discount_code", "LATER", "start_date", "2031-04-01")
		add(other, "discount", "5", "discount_type", "0", "discount_code", "ELSEWHERE")

		r := vcOK(t, e, "applycoupon", vals("class_id", id, "discount_code", "half", "price_id", price))
		for k, w := range map[string]string{"discount_id": half, "discount_value": "50.00", "discount_type": "percentage",
			"coupon_applied": "1", "price": "40.00", "discount_amount": "20.00", "amount_due": "20.00"} {
			if r[k] != w {
				t.Errorf("applycoupon %s = %v, want %s", k, r[k], w)
			}
		}
		for code, want := range map[string]string{"NOPE": "Invalid coupon code", "OLD": "Coupon code has expired",
			"LATER": "Coupon code is not valid yet", "ELSEWHERE": "Coupon code is not valid for this class"} {
			if msg := vcErr(t, e, "applycoupon", vals("class_id", id, "discount_code", code)); msg != want {
				t.Errorf("%s: %q, want %q", code, msg, want)
			}
		}
		// Redeemed once, HALF (limit 1) is used up.
		u, err := e.Store.CreateUser(ctx, e.Domain.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Store.RedeemDiscount(ctx, e.Domain.ID, mustInt(t, half), u.ID, e.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if msg := vcErr(t, e, "applycoupon", vals("class_id", id, "discount_code", "HALF")); msg != "Coupon code has been used up" {
			t.Errorf("used up: %q", msg)
		}
		// A better automatic discount wins over a weaker code.
		add(id, "discount", "10", "discount_type", "0", "discount_code", "TEN")
		auto := add(id, "discount", "30", "discount_type", "1")
		r = vcOK(t, e, "applycoupon", vals("class_id", id, "discount_code", "TEN"))
		if r["discount_id"] != auto || r["coupon_applied"] != "0" || r["amount_due"] != "28.00" {
			t.Errorf("automatic beats code: %v", r)
		}
		if msg := vcErr(t, e, "applycoupon", vals("class_id", id)); msg != "discount_code is required" {
			t.Errorf("no code: %q", msg)
		}
		if msg := vcErr(t, e, "applycoupon", vals("class_id", id, "discount_code", "TEN", "apikey", e.Other.ClassroomKey)); msg != "Invalid Class Owner" {
			t.Errorf("another domain: %q", msg)
		}
	}, seedStyle)
}

// TestCommerceAndRemovalsInEveryStyle sends the price, discount and
// removal operations in every request style and in XML. Each removal
// style gets its own fresh object.
func TestCommerceAndRemovalsInEveryStyle(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		e.Clock.Set(time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC))
		id := scheduleID(t, e, classParams())
		price := idString(t, vcOK(t, e, "addSchemes", vals("class_id", id, "price", "10", "scheme_days", "1", "times", "0"))["Price id"])
		disc := idString(t, vcOK(t, e, "addSpecials", vals("class_id", id, "discount", "1", "discount_type", "0", "start_date", "2031-01-01",
			"discount_code", "C1"))["Discount id"])
		for _, r := range []struct {
			op     string
			params url.Values
		}{
			{"listSchemes", vals("class_id", id)},
			{"classprice", vals("class_id", id, "price_id", price)},
			{"listdiscount", vals("class_id", id)},
			{"classdiscount", vals("class_id", id, "discount_id", disc)},
			{"applycoupon", vals("class_id", id, "discount_code", "c1")},
		} {
			t.Run(r.op, func(t *testing.T) {
				sameAnswers(t, styles(t, e, r.op, r.params))
				p := vals("format", "xml")
				maps.Copy(p, r.params)
				x := e.VC(r.op, p)
				if err := xml.Unmarshal(x.Body, new(struct{})); err != nil || strings.Contains(string(x.Body), `status="error"`) {
					t.Errorf("xml: %v %s", err, x.Body)
				}
			})
		}
		removals := []struct {
			op, method string
			fresh      func() url.Values
		}{
			{"removeprice", "removeprice", func() url.Values {
				return vals("id", idString(t, vcOK(t, e, "addSchemes", vals("class_id", id, "price", "1", "scheme_days", "1", "times", "0"))["Price id"]))
			}},
			{"removediscount", "removediscount", func() url.Values {
				return vals("discountid", idString(t, vcOK(t, e, "addSpecials", vals("class_id", id, "discount", "1", "discount_type", "0",
					"start_date", "2031-01-01"))["Discount id"]))
			}},
			{"removeclass", "removeclass", func() url.Values { return vals("cid", scheduleID(t, e, classParams())) }},
		}
		for _, rm := range removals {
			t.Run(rm.op, func(t *testing.T) {
				for _, style := range append(requestStyles, "xml") {
					var resp *apitest.Response
					if style == "xml" {
						p := rm.fresh()
						p.Set("format", "xml")
						resp = e.VC(rm.op, p)
						if !strings.Contains(string(resp.Body), `<rsp status="ok"><method>`+rm.method+`</method>`) {
							t.Errorf("xml: %s", resp.Body)
						}
						continue
					}
					resp = e.Do(styleRequest(e, style, rm.op, rm.fresh()))
					if m, _ := apitest.Lookup(resp.JSON(t), "0.method"); m != rm.method {
						t.Errorf("%s: %s", style, resp.Body)
					}
				}
			})
		}
	}, seedStyle)
}

// A discount both APIs refuse (here a code over 100 characters, which the
// classroom API's own parameters allow) is refused when added and when an
// update would make it so, and the stored discount keeps its code.
func TestClassDiscountCheckedOnAddAndUpdate(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		id := scheduleID(t, e, classParams())
		long := strings.Repeat("C", 101)
		if msg := vcErr(t, e, "addSpecials", vals("class_id", id, "discount", "10", "discount_type", "1", "start_date", "2031-01-01",
			"discount_code", long)); !strings.Contains(msg, "discount_code") {
			t.Errorf("add with a 101-character code: %q, want it to name discount_code", msg)
		}
		did := idString(t, vcOK(t, e, "addSpecials", vals("class_id", id, "discount", "10", "discount_type", "1", "start_date", "2031-01-01",
			"discount_code", "SHORT"))["Discount id"])
		if msg := vcErr(t, e, "addSpecials", vals("class_id", id, "discountid", did, "discount_code", long)); !strings.Contains(msg, "discount_code") {
			t.Errorf("update to a 101-character code: %q, want it to name discount_code", msg)
		}
		list := e.VC("listdiscount", vals("class_id", id)).JSON(t)
		if n, _ := apitest.Lookup(list, "#"); n != 1 || apitest.Str(t, list, "0.discount_code") != "SHORT" {
			t.Errorf("after the refusals: %v, want the one discount with its code", list)
		}
	})
}
