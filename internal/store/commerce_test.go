package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/pricing"
	"github.com/lectern-lms/lectern/internal/store"
)

func commerceStore(t *testing.T, b apitest.Backend) (*store.Store, int64, int64) {
	t.Helper()
	st := apitest.OpenStore(t, b)
	d, _, err := st.CreateDomain(context.Background(), "A")
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateCourse(context.Background(), d.ID, lms.Course{Name: "Go"})
	if err != nil {
		t.Fatal(err)
	}
	return st, d.ID, c.ID
}

// TestRedeemDiscountConcurrent: 20 parallel redemptions of a code limited
// to 5 succeed exactly 5 times.
func TestRedeemDiscountConcurrent(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st, dom, course := commerceStore(t, b)
			d, err := st.AddDiscount(ctx, dom, lms.Discount{Kind: lms.KindCourse, ItemID: course, Code: "FIVE", UseCode: true,
				Limit: 5, Type: lms.DiscountFlat, Value: 100})
			if err != nil {
				t.Fatal(err)
			}
			const n = 20
			var wg sync.WaitGroup
			errs := make([]error, n)
			at := time.Now()
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = st.RedeemDiscount(ctx, dom, d.ID, 0, at)
				}()
			}
			wg.Wait()
			okCount := 0
			for _, err := range errs {
				switch {
				case err == nil:
					okCount++
				case lms.ErrorCode(err) != lms.CodeConflict:
					t.Errorf("redeem: %v, want a conflict", err)
				}
			}
			if okCount != 5 {
				t.Fatalf("%d redemptions succeeded, want 5", okCount)
			}
			got, err := st.Discount(ctx, dom, d.ID)
			if err != nil || got.Used != 5 {
				t.Fatalf("used = %d (%v), want 5", got.Used, err)
			}
			err = st.RedeemDiscount(ctx, dom, d.ID, 0, at)
			if lms.ErrorCode(err) != lms.CodeConflict || !contains(err.Error(), "used up") {
				t.Fatalf("redeem a used-up code: %v", err)
			}
			q, err := st.Quote(ctx, dom, lms.KindCourse, course, mustScheme(t, st, dom, course), "five", at)
			if err != nil || q.CodeRefused != pricing.RefusedUsedUp {
				t.Fatalf("quote after use-up: %+v %v", q, err)
			}
		})
	}
}

func mustScheme(t *testing.T, st *store.Store, dom, course int64) int64 {
	t.Helper()
	p, err := st.AddPricingScheme(context.Background(), dom, lms.PricingScheme{Kind: lms.KindCourse, ItemID: course, Price: 1000, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestRedeemDiscountRules(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st, dom, course := commerceStore(t, b)
			at := time.Date(2030, 1, 10, 12, 0, 0, 0, time.UTC)
			window, err := st.AddDiscount(ctx, dom, lms.Discount{Kind: lms.KindGlobal, NoLimit: true, Type: lms.DiscountPercentage,
				Value: 1000, Start: time.Date(2030, 1, 10, 0, 0, 0, 0, time.UTC), End: time.Date(2030, 1, 11, 0, 0, 0, 0, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.RedeemDiscount(ctx, dom, window.ID, 0, at); err != nil {
				t.Fatalf("redeem in window: %v", err)
			}
			if err := st.RedeemDiscount(ctx, dom, window.ID, 0, at.AddDate(0, 0, -1)); !contains(errString(err), "not valid yet") {
				t.Fatalf("redeem before start: %v", err)
			}
			if err := st.RedeemDiscount(ctx, dom, window.ID, 0, at.AddDate(0, 0, 1)); !contains(errString(err), "expired") {
				t.Fatalf("redeem after end: %v", err)
			}
			if err := st.RedeemDiscount(ctx, dom, window.ID, 999999, at); !lms.IsNotFound(err) {
				t.Fatalf("redeem for unknown user: %v", err)
			}
			if err := st.RedeemDiscount(ctx, dom, 999999, 0, at); !lms.IsNotFound(err) {
				t.Fatalf("redeem unknown discount: %v", err)
			}
			other, _, _ := st.CreateDomain(ctx, "B")
			if err := st.RedeemDiscount(ctx, other.ID, window.ID, 0, at); !lms.IsNotFound(err) {
				t.Fatalf("redeem another domain's discount: %v", err)
			}
			got, _ := st.Discount(ctx, dom, window.ID)
			if got.Used != 1 {
				t.Fatalf("used = %d, want 1", got.Used)
			}
			// Global discounts are on every item's quote.
			q, err := st.Quote(ctx, dom, lms.KindCourse, course, mustScheme(t, st, dom, course), "", at)
			if err != nil || q.Amount != 100 || q.Due != 900 || q.Discount == nil || q.Discount.ID != window.ID {
				t.Fatalf("quote: %+v %v", q, err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCommerceStore(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st, dom, course := commerceStore(t, b)
			test, _ := st.CreateTest(ctx, dom, lms.Test{Name: "T"})

			// Schemes: add, update through the owner, list, delete.
			p, err := st.AddPricingScheme(ctx, dom, lms.PricingScheme{Kind: lms.KindCourse, ItemID: course, Price: 1999, Days: 5, Lifetime: true})
			if err != nil || p.Days != 0 {
				t.Fatalf("add lifetime scheme: %+v %v", p, err)
			}
			if _, err := st.AddPricingScheme(ctx, dom, lms.PricingScheme{Kind: lms.KindCourse, ItemID: 999999, Price: 1, Days: 1}); !lms.IsNotFound(err) {
				t.Fatalf("add to unknown course: %v", err)
			}
			if _, err := st.UpdatePricingScheme(ctx, dom, lms.KindTest, test.ID, p.ID, func(*lms.PricingScheme) error { return nil }); !lms.IsNotFound(err) {
				t.Fatalf("update through another owner: %v", err)
			}
			u, err := st.UpdatePricingScheme(ctx, dom, lms.KindCourse, course, p.ID, func(x *lms.PricingScheme) error {
				x.Lifetime, x.Days, x.Price, x.ItemID = false, 30, 2500, 12345
				return nil
			})
			if err != nil || u.Price != 2500 || u.Days != 30 || u.ItemID != course {
				t.Fatalf("update: %+v %v", u, err)
			}
			if _, err := st.UpdatePricingScheme(ctx, dom, lms.KindCourse, course, p.ID, func(x *lms.PricingScheme) error {
				x.Days = 0
				return nil
			}); lms.ErrorCode(err) != lms.CodeInvalid {
				t.Fatalf("update to 0 days: %v", err)
			}
			list, err := st.PricingSchemes(ctx, dom, lms.KindCourse, course)
			if err != nil || len(list) != 1 || list[0].Price != 2500 {
				t.Fatalf("list: %+v %v", list, err)
			}
			if err := st.DeletePricingScheme(ctx, dom, lms.KindTest, test.ID, p.ID); !lms.IsNotFound(err) {
				t.Fatalf("delete through another owner: %v", err)
			}

			// Discounts: codes unique among live ones, case-insensitively.
			past := time.Now().Add(-48 * time.Hour)
			old, err := st.AddDiscount(ctx, dom, lms.Discount{Kind: lms.KindCourse, ItemID: course, Code: "SPRING", UseCode: true,
				NoLimit: true, Type: lms.DiscountFlat, Value: 100, Start: past.Add(-time.Hour), End: past})
			if err != nil {
				t.Fatal(err)
			}
			live, err := st.AddDiscount(ctx, dom, lms.Discount{Kind: lms.KindTest, ItemID: test.ID, Code: "spring", UseCode: true,
				NoLimit: true, Type: lms.DiscountFlat, Value: 100})
			if err != nil {
				t.Fatalf("reuse an expired discount's code: %v", err)
			}
			if _, err := st.AddDiscount(ctx, dom, lms.Discount{Kind: lms.KindGlobal, Code: "Spring", UseCode: true, NoLimit: true,
				Type: lms.DiscountFlat, Value: 100}); lms.ErrorCode(err) != lms.CodeConflict {
				t.Fatalf("duplicate live code: %v", err)
			}
			if _, err := st.UpdateDiscount(ctx, dom, lms.KindCourse, course, old.ID, func(d *lms.Discount) error {
				d.NeverExpire = true
				return nil
			}); lms.ErrorCode(err) != lms.CodeConflict {
				t.Fatalf("reviving an expired code that is now taken: %v", err)
			}
			if _, err := st.UpdateDiscount(ctx, dom, lms.KindTest, test.ID, live.ID, func(d *lms.Discount) error {
				d.Value = 250
				return nil
			}); err != nil {
				t.Fatalf("update keeping its own code: %v", err)
			}
			ds, err := st.Discounts(ctx, dom, lms.KindTest, test.ID)
			if err != nil || len(ds) != 1 || ds[0].Value != 250 || ds[0].Code != "spring" {
				t.Fatalf("discounts: %+v %v", ds, err)
			}
			if err := st.DeleteDiscount(ctx, dom, lms.KindCourse, course, live.ID); !lms.IsNotFound(err) {
				t.Fatalf("delete through another owner: %v", err)
			}

			// Deleting the course removes its schemes and discounts.
			if err := st.DeleteCourse(ctx, dom, course); err != nil {
				t.Fatal(err)
			}
			if _, err := st.PricingScheme(ctx, dom, p.ID); !lms.IsNotFound(err) {
				t.Fatalf("scheme survived its course: %v", err)
			}
			if _, err := st.Discount(ctx, dom, old.ID); !lms.IsNotFound(err) {
				t.Fatalf("discount survived its course: %v", err)
			}
			if _, err := st.Discount(ctx, dom, live.ID); err != nil {
				t.Fatalf("the test's discount went with the course: %v", err)
			}
		})
	}
}
