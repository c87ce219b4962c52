package lms

import "time"

// KindGlobal is the owner kind of a discount that applies to every item of
// the domain; its ItemID is 0.
const KindGlobal = "global"

// Discount types.
const (
	DiscountPercentage = "percentage"
	DiscountFlat       = "flat"
)

// PricingScheme is one way to buy a course, test or live class. The LMS
// API's shopping-cart pricing and the classroom API's class schemes are the
// same rows.
type PricingScheme struct {
	ID     int64
	Kind   string // KindCourse, KindTest or KindClass
	ItemID int64
	// Price is in minor units (cents), >= 0.
	Price int64
	// Days is how long a purchase gives access; 0 when Lifetime.
	Days     int
	Lifetime bool
	// NumberTimes is how many uses, attempts or accesses a purchase gives;
	// 0 is unlimited.
	NumberTimes  int
	Subscription bool
	CreatedAt    time.Time
}

// Discount is a reduction on an item's price, or on every item's when Kind
// is KindGlobal. The LMS API's discounts and the classroom API's class
// specials are the same rows.
type Discount struct {
	ID     int64
	Kind   string // KindCourse, KindTest, KindClass or KindGlobal
	ItemID int64  // 0 for KindGlobal
	// Code is what a buyer types; it is compared case-insensitively. When
	// UseCode is false the discount applies automatically and the code, if
	// any, is only a label.
	Code    string
	UseCode bool
	// Limit is how many redemptions are allowed, unless NoLimit.
	Limit   int
	NoLimit bool
	Type    string // DiscountPercentage or DiscountFlat
	// Value is exact: minor units for flat discounts, hundredths of a
	// percent for percentages (1250 is 12.5%).
	Value int64
	// Start is the first instant the discount is valid (zero: always was).
	// End is the first instant it is no longer valid (zero: never ends);
	// it is ignored when NeverExpire. A date-only end day d is stored as
	// midnight UTC after d, so the whole day d is included.
	Start       time.Time
	End         time.Time
	NeverExpire bool
	// Used counts redemptions.
	Used      int
	CreatedAt time.Time
}

// Expired reports whether d has ended at instant at.
func (d Discount) Expired(at time.Time) bool {
	return !d.NeverExpire && !d.End.IsZero() && !at.Before(d.End)
}

// NotYetValid reports whether d starts after instant at.
func (d Discount) NotYetValid(at time.Time) bool {
	return !d.Start.IsZero() && at.Before(d.Start)
}

// UsedUp reports whether d has no redemptions left.
func (d Discount) UsedUp() bool { return !d.NoLimit && d.Used >= d.Limit }

// Live reports whether d counts for code uniqueness at instant at: it
// exists and has not expired (a discount not yet valid, or used up, is
// still live).
func (d Discount) Live(at time.Time) bool { return !d.Expired(at) }
