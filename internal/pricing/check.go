package pricing

import (
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// CheckDiscount is what every discount satisfies before it is stored, by
// either API (the errors name the LMS API's fields), and normalises the
// fields that are ignored: ItemID is 0 for a global discount, Limit is 0
// when NoLimit, End is zero when NeverExpire, instants are truncated to
// seconds. The store keeps what it is given; callers check first (on an
// update, the edited discount).
func CheckDiscount(d *lms.Discount) error {
	switch d.Kind {
	case lms.KindCourse, lms.KindTest, lms.KindClass:
	case lms.KindGlobal:
		d.ItemID = 0
	default:
		return lms.Invalidf("item_kind", "must be course, test, class or global")
	}
	var v lms.Validator
	switch d.Type {
	case lms.DiscountFlat:
		v.Check(d.Value > 0, "special_price", "must be more than 0")
	case lms.DiscountPercentage:
		v.Check(d.Value > 0 && d.Value <= 10000, "special_price", "must be more than 0 and at most 100 for a percentage")
	default:
		v.Add("discount_type", "must be percentage or flat")
	}
	v.Check(!d.UseCode || CodeKey(d.Code) != "", "discount_code", "is required when is_use_discount_code is 1")
	v.Check(len(d.Code) <= 100, "discount_code", "must be at most 100 characters")
	if d.NoLimit {
		d.Limit = 0
	} else {
		v.Check(d.Limit >= 1, "discount_limit", "must be at least 1 unless is_no_limit is 1")
	}
	d.Start, d.End = d.Start.UTC().Truncate(time.Second), d.End.UTC().Truncate(time.Second)
	if d.NeverExpire {
		d.End = time.Time{}
	}
	if !d.Start.IsZero() && !d.End.IsZero() && !d.Start.Before(d.End) {
		v.Add("end_date", "must not be before start_date")
	}
	return v.Err()
}
