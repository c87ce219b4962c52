package pricing_test

import (
	"math/rand"
	"testing"
	"testing/quick"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/pricing"
)

var now = time.Date(2030, 6, 15, 12, 0, 0, 0, time.UTC)

func scheme(price int64) lms.PricingScheme {
	return lms.PricingScheme{ID: 1, Kind: lms.KindCourse, ItemID: 7, Price: price}
}

// disc is an automatic, unlimited, never-ending discount of course 7.
func disc(id int64, typ string, value int64, opts ...func(*lms.Discount)) lms.Discount {
	d := lms.Discount{ID: id, Kind: lms.KindCourse, ItemID: 7, Type: typ, Value: value, NoLimit: true}
	for _, o := range opts {
		o(&d)
	}
	return d
}

func code(c string) func(*lms.Discount) {
	return func(d *lms.Discount) { d.Code, d.UseCode = c, true }
}
func global(d *lms.Discount) { d.Kind, d.ItemID = lms.KindGlobal, 0 }
func item(kind string, id int64) func(*lms.Discount) {
	return func(d *lms.Discount) { d.Kind, d.ItemID = kind, id }
}
func limit(n, used int) func(*lms.Discount) {
	return func(d *lms.Discount) { d.NoLimit, d.Limit, d.Used = false, n, used }
}
func window(start, end time.Time) func(*lms.Discount) {
	return func(d *lms.Discount) { d.Start, d.End = start, end }
}
func neverExpire(d *lms.Discount) { d.NeverExpire = true }

func TestQuote(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		name      string
		price     int64
		code      string
		discounts []lms.Discount
		wantID    int64 // 0: no discount
		amount    int64
		applied   bool
		refused   string
	}{
		{name: "no discounts", price: 1999},
		{name: "free scheme", price: 0, discounts: []lms.Discount{disc(1, "flat", 500)}},
		{name: "flat automatic", price: 1999, discounts: []lms.Discount{disc(1, "flat", 500)}, wantID: 1, amount: 500},
		{name: "flat larger than price stops at zero", price: 1999, discounts: []lms.Discount{disc(1, "flat", 5000)}, wantID: 1, amount: 1999},
		{name: "percentage exact", price: 2000, discounts: []lms.Discount{disc(1, "percentage", 1250)}, wantID: 1, amount: 250},
		{name: "percentage rounds half up", price: 99, discounts: []lms.Discount{disc(1, "percentage", 1250)}, wantID: 1, amount: 12},     // 12.375
		{name: "percentage exact half rounds up", price: 1, discounts: []lms.Discount{disc(1, "percentage", 5000)}, wantID: 1, amount: 1}, // 0.5
		{name: "percentage just under half rounds down", price: 1, discounts: []lms.Discount{disc(1, "percentage", 4999)}},
		{name: "100 percent", price: 1999, discounts: []lms.Discount{disc(1, "percentage", 10000)}, wantID: 1, amount: 1999},
		{name: "over 100 percent counts as 100", price: 1999, discounts: []lms.Discount{disc(1, "percentage", 20000)}, wantID: 1, amount: 1999},
		{name: "best automatic wins", price: 10000, discounts: []lms.Discount{
			disc(1, "flat", 500), disc(2, "percentage", 1000), disc(3, "flat", 900)}, wantID: 2, amount: 1000},
		{name: "global applies", price: 1000, discounts: []lms.Discount{disc(1, "flat", 100, global)}, wantID: 1, amount: 100},
		{name: "own beats global on a tie", price: 1000, discounts: []lms.Discount{
			disc(1, "flat", 100, global), disc(2, "percentage", 1000)}, wantID: 2, amount: 100},
		{name: "lower id wins a full tie", price: 1000, discounts: []lms.Discount{
			disc(5, "flat", 100), disc(3, "flat", 100)}, wantID: 3, amount: 100},
		{name: "other item's automatic ignored", price: 1000, discounts: []lms.Discount{disc(1, "flat", 100, item(lms.KindTest, 7))}},
		{name: "coded without code ignored", price: 1000, discounts: []lms.Discount{disc(1, "flat", 100, code("SAVE"))}},
		{name: "code applies case-insensitively", price: 1000, code: " save ", discounts: []lms.Discount{
			disc(1, "flat", 100, code("SAVE"))}, wantID: 1, amount: 100, applied: true},
		{name: "code beats smaller automatic", price: 1000, code: "SAVE", discounts: []lms.Discount{
			disc(1, "flat", 50), disc(2, "flat", 100, code("SAVE"))}, wantID: 2, amount: 100, applied: true},
		{name: "automatic beats smaller code, code not refused", price: 1000, code: "SAVE", discounts: []lms.Discount{
			disc(1, "flat", 300), disc(2, "flat", 100, code("SAVE"))}, wantID: 1, amount: 300},
		{name: "code wins a tie with automatic", price: 1000, code: "SAVE", discounts: []lms.Discount{
			disc(1, "flat", 100), disc(2, "flat", 100, code("SAVE"))}, wantID: 2, amount: 100, applied: true},
		{name: "global code", price: 1000, code: "ALL", discounts: []lms.Discount{
			disc(1, "percentage", 5000, global, code("all"))}, wantID: 1, amount: 500, applied: true},
		{name: "unknown code, automatic still applies", price: 1000, code: "NOPE", discounts: []lms.Discount{
			disc(1, "flat", 100)}, wantID: 1, amount: 100, refused: pricing.RefusedUnknown},
		{name: "code of another item", price: 1000, code: "TEST", discounts: []lms.Discount{
			disc(1, "flat", 100, code("TEST"), item(lms.KindTest, 9))}, refused: pricing.RefusedOtherItem},
		{name: "code of same id other kind", price: 1000, code: "X", discounts: []lms.Discount{
			disc(1, "flat", 100, code("X"), item(lms.KindClass, 7))}, refused: pricing.RefusedOtherItem},
		{name: "expired code", price: 1000, code: "OLD", discounts: []lms.Discount{
			disc(1, "flat", 100, code("OLD"), window(time.Time{}, now))}, refused: pricing.RefusedExpired},
		{name: "end instant is exclusive", price: 1000, code: "OLD", discounts: []lms.Discount{
			disc(1, "flat", 100, code("OLD"), window(time.Time{}, now.Add(time.Second)))}, wantID: 1, amount: 100, applied: true},
		{name: "never expire ignores end", price: 1000, code: "OLD", discounts: []lms.Discount{
			disc(1, "flat", 100, code("OLD"), window(time.Time{}, now.Add(-day)), neverExpire)}, wantID: 1, amount: 100, applied: true},
		{name: "not yet valid code", price: 1000, code: "SOON", discounts: []lms.Discount{
			disc(1, "flat", 100, code("SOON"), window(now.Add(time.Second), time.Time{}))}, refused: pricing.RefusedNotYetValid},
		{name: "start instant is inclusive", price: 1000, code: "NOW", discounts: []lms.Discount{
			disc(1, "flat", 100, code("NOW"), window(now, now.Add(day)))}, wantID: 1, amount: 100, applied: true},
		{name: "used up code", price: 1000, code: "FIVE", discounts: []lms.Discount{
			disc(1, "flat", 100, code("FIVE"), limit(5, 5))}, refused: pricing.RefusedUsedUp},
		{name: "last redemption left", price: 1000, code: "FIVE", discounts: []lms.Discount{
			disc(1, "flat", 100, code("FIVE"), limit(5, 4))}, wantID: 1, amount: 100, applied: true},
		{name: "used up automatic ignored", price: 1000, discounts: []lms.Discount{disc(1, "flat", 100, limit(1, 1))}},
		{name: "expired automatic ignored", price: 1000, discounts: []lms.Discount{disc(1, "flat", 100, window(time.Time{}, now))}},
		{name: "not yet valid beats expired as reason", price: 1000, code: "C", discounts: []lms.Discount{
			disc(1, "flat", 100, code("C"), window(time.Time{}, now.Add(-day))),
			disc(2, "flat", 100, code("C"), window(now.Add(day), time.Time{}))}, refused: pricing.RefusedNotYetValid},
		{name: "own expired beats other item as reason", price: 1000, code: "C", discounts: []lms.Discount{
			disc(1, "flat", 100, code("C"), item(lms.KindTest, 1)),
			disc(2, "flat", 100, code("C"), window(time.Time{}, now.Add(-day)))}, refused: pricing.RefusedExpired},
		{name: "expired and live same code: live one applies", price: 1000, code: "C", discounts: []lms.Discount{
			disc(1, "flat", 100, code("C"), window(time.Time{}, now.Add(-day))),
			disc(2, "flat", 200, code("C"))}, wantID: 2, amount: 200, applied: true},
		{name: "automatic discount's label as code", price: 1000, code: "LABEL", discounts: []lms.Discount{
			disc(1, "flat", 100, func(d *lms.Discount) { d.Code = "label" })}, wantID: 1, amount: 100, applied: true},
		{name: "zero amount applies nothing", price: 1, discounts: []lms.Discount{disc(1, "percentage", 1)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := pricing.Quote(pricing.Input{Kind: lms.KindCourse, ItemID: 7, Scheme: scheme(c.price), Code: c.code, At: now, Discounts: c.discounts})
			gotID := int64(0)
			if got.Discount != nil {
				gotID = got.Discount.ID
			}
			if got.Base != c.price || gotID != c.wantID || got.Amount != c.amount || got.Due != c.price-c.amount ||
				got.CodeApplied != c.applied || got.CodeRefused != c.refused {
				t.Errorf("got base %d discount %d amount %d due %d applied %v refused %q; want base %d discount %d amount %d due %d applied %v refused %q",
					got.Base, gotID, got.Amount, got.Due, got.CodeApplied, got.CodeRefused,
					c.price, c.wantID, c.amount, c.price-c.amount, c.applied, c.refused)
			}
		})
	}
}

// TestQuoteProperty: whatever the inputs, 0 <= amount due <= base price,
// the amount is what separates them, and an applied discount applies to
// the item.
func TestQuoteProperty(t *testing.T) {
	types := []string{lms.DiscountFlat, lms.DiscountPercentage, "bogus"}
	kinds := []string{lms.KindCourse, lms.KindTest, lms.KindClass, lms.KindGlobal}
	codes := []string{"", "A", "a", "B"}
	f := func(seed int64, price int64) bool {
		r := rand.New(rand.NewSource(seed))
		n := r.Intn(6)
		ds := make([]lms.Discount, n)
		for i := range ds {
			ds[i] = lms.Discount{ID: int64(i + 1), Kind: kinds[r.Intn(len(kinds))], ItemID: int64(r.Intn(3)),
				Code: codes[r.Intn(len(codes))], UseCode: r.Intn(2) == 0, Limit: r.Intn(3), NoLimit: r.Intn(2) == 0,
				Type: types[r.Intn(len(types))], Value: r.Int63() >> uint(r.Intn(63)), Used: r.Intn(4),
				NeverExpire: r.Intn(2) == 0}
			if r.Intn(2) == 0 {
				ds[i].Value = -ds[i].Value
			}
			if r.Intn(2) == 0 {
				ds[i].Start = now.Add(time.Duration(r.Intn(3)-1) * time.Hour)
			}
			if r.Intn(2) == 0 {
				ds[i].End = now.Add(time.Duration(r.Intn(3)-1) * time.Hour)
			}
		}
		if r.Intn(3) == 0 {
			price = price >> uint(r.Intn(63))
		}
		in := pricing.Input{Kind: lms.KindCourse, ItemID: int64(r.Intn(3)), Scheme: lms.PricingScheme{Price: price},
			Code: codes[r.Intn(len(codes))], At: now, Discounts: ds}
		got := pricing.Quote(in)
		base := max(price, 0)
		if got.Base != base || got.Due < 0 || got.Due > base || got.Base-got.Amount != got.Due {
			t.Logf("price %d: %+v", price, got)
			return false
		}
		if got.Discount != nil && (!pricing.AppliesTo(*got.Discount, in.Kind, in.ItemID) || pricing.Problem(*got.Discount, now) != "") {
			t.Logf("applied an inapplicable discount: %+v", got.Discount)
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}

func TestAmountNoOverflow(t *testing.T) {
	d := lms.Discount{Type: lms.DiscountPercentage, Value: 9999}
	base := int64(1<<63 - 1)
	if got := pricing.Amount(d, base); got <= 0 || got > base {
		t.Fatalf("Amount of max int64 = %d", got)
	}
}
