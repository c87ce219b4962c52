package pricing

import (
	"errors"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

func TestCheckDiscount(t *testing.T) {
	start := time.Date(2026, 3, 1, 9, 0, 0, 500, time.FixedZone("X", 3600))
	valid := func() lms.Discount {
		return lms.Discount{Kind: lms.KindCourse, ItemID: 7, Type: lms.DiscountFlat, Value: 500, Limit: 3}
	}
	for _, tc := range []struct {
		name  string
		edit  func(*lms.Discount)
		field string // "" when valid
		check func(lms.Discount) bool
	}{
		{"flat", func(*lms.Discount) {}, "", nil},
		{"percentage of 100", func(d *lms.Discount) { d.Type, d.Value = lms.DiscountPercentage, 10000 }, "", nil},
		{"percentage over 100", func(d *lms.Discount) { d.Type, d.Value = lms.DiscountPercentage, 10001 }, "special_price", nil},
		{"zero value", func(d *lms.Discount) { d.Value = 0 }, "special_price", nil},
		{"no type", func(d *lms.Discount) { d.Type = "" }, "discount_type", nil},
		{"code required", func(d *lms.Discount) { d.UseCode, d.Code = true, "   " }, "discount_code", nil},
		{"code too long", func(d *lms.Discount) { d.Code = string(make([]byte, 101)) }, "discount_code", nil},
		{"no limit", func(d *lms.Discount) { d.Limit = 0 }, "discount_limit", nil},
		{"unlimited clears the limit", func(d *lms.Discount) { d.NoLimit = true }, "",
			func(d lms.Discount) bool { return d.Limit == 0 }},
		{"end before start", func(d *lms.Discount) { d.Start, d.End = start, start.Add(-time.Hour) }, "end_date", nil},
		{"never expire clears the end", func(d *lms.Discount) { d.Start, d.End, d.NeverExpire = start, start.Add(-time.Hour), true }, "",
			func(d lms.Discount) bool { return d.End.IsZero() }},
		{"instants in UTC seconds", func(d *lms.Discount) { d.Start, d.End = start, start.Add(time.Hour) }, "",
			func(d lms.Discount) bool {
				return d.Start.Location() == time.UTC && d.Start.Nanosecond() == 0 && d.Start.Equal(start.Truncate(time.Second))
			}},
		{"global drops the item", func(d *lms.Discount) { d.Kind = lms.KindGlobal }, "",
			func(d lms.Discount) bool { return d.ItemID == 0 }},
		{"unknown kind", func(d *lms.Discount) { d.Kind = "bundle" }, "item_kind", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := valid()
			tc.edit(&d)
			err := CheckDiscount(&d)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tc.check != nil && !tc.check(d) {
					t.Errorf("not normalised: %+v", d)
				}
				return
			}
			var le *lms.Error
			if !errors.As(err, &le) || le.Code != lms.CodeInvalid || !hasField(le, tc.field) {
				t.Fatalf("got %v, want an invalid error naming %s", err, tc.field)
			}
		})
	}
}

func hasField(e *lms.Error, field string) bool {
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}
