// Package pricing computes what a buyer pays for an item under a pricing
// scheme, with the domain's discounts, at a given instant. It is pure: the
// caller loads the scheme and the candidate discounts and gets an answer
// it can show or charge.
//
// Rules:
//
//   - A discount applies to an item when it is the item's own (same kind
//     and id) or global (KindGlobal, every item of the domain).
//   - It is valid at an instant when it has started (Start zero or <= at),
//     has not ended (NeverExpire, End zero, or at < End) and is not used up
//     (NoLimit, or Used < Limit; Used counts redemptions).
//   - An automatic discount (UseCode false) applies on its own when valid.
//     A coded discount (UseCode true) applies only when the buyer sends its
//     code (compared case-insensitively, surrounding space ignored).
//   - A valid code competes with the valid automatic discounts: the buyer
//     gets the largest reduction. Ties go to the item's own discount over
//     a global one, then to the coded one, then to the lower id. A valid
//     code that loses is not refused (CodeRefused is empty, CodeApplied
//     false).
//   - A flat discount takes Value minor units off, at most the base price.
//     A percentage discount takes base*Value/10000 minor units off, rounded
//     half up to the minor unit (12.5% of 0.99 is 0.12375, so 0.12);
//     percentages above 100 count as 100. The amount due is never below
//     zero nor above the base price.
//   - A code is refused, and the reason given, when no candidate carries it
//     (unknown), when only another item's discount carries it
//     (other_item), or when every discount carrying it for this item has a
//     problem: the reason of the most promising one is given, in the order
//     not_yet_valid, used_up, expired.
package pricing

import (
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Reasons a code is refused.
const (
	RefusedUnknown     = "unknown"
	RefusedExpired     = "expired"
	RefusedNotYetValid = "not_yet_valid"
	RefusedUsedUp      = "used_up"
	RefusedOtherItem   = "other_item"
)

// Input is what a quote is computed from.
type Input struct {
	// Kind and ItemID name the item bought.
	Kind   string
	ItemID int64
	// Scheme is the pricing scheme chosen; its Price is the base price.
	Scheme lms.PricingScheme
	// Code is the discount code the buyer sent, "" for none.
	Code string
	// At is the instant of the quote.
	At time.Time
	// Discounts are the candidates: the item's own, the global ones, and
	// any other of the domain's discounts carrying Code (so that a code of
	// another item is told apart from an unknown one). Others are ignored.
	Discounts []lms.Discount
}

// Result is a quote.
type Result struct {
	// Base is the scheme's price, in minor units.
	Base int64
	// Discount is the discount applied, nil when none.
	Discount *lms.Discount
	// Amount is what the discount takes off, in minor units.
	Amount int64
	// Due is Base - Amount, 0 <= Due <= Base.
	Due int64
	// CodeApplied reports whether the applied discount is the one of the
	// code sent.
	CodeApplied bool
	// CodeRefused is why the code sent was refused (a Refused* constant),
	// "" when no code was sent or it was valid.
	CodeRefused string
}

// Quote computes the price of in.Scheme for the item, with the best
// discount that applies.
func Quote(in Input) Result {
	base := in.Scheme.Price
	if base < 0 {
		base = 0
	}
	res := Result{Base: base, Due: base}
	key := CodeKey(in.Code)

	var best *lms.Discount
	bestAmount, bestCoded := int64(0), false
	consider := func(d *lms.Discount, coded bool) {
		amt := Amount(*d, base)
		if best == nil || better(amt, d, coded, bestAmount, best, bestCoded) {
			best, bestAmount, bestCoded = d, amt, coded
		}
	}

	reason := ""
	if key != "" {
		reason = RefusedUnknown
	}
	for i := range in.Discounts {
		d := &in.Discounts[i]
		mine := AppliesTo(*d, in.Kind, in.ItemID)
		matches := key != "" && CodeKey(d.Code) == key
		if matches && !mine {
			if reason == RefusedUnknown {
				reason = RefusedOtherItem
			}
			continue
		}
		if !mine {
			continue
		}
		problem := Problem(*d, in.At)
		if matches {
			if problem == "" {
				reason = ""
			} else if reason != "" && (reason == RefusedUnknown || reason == RefusedOtherItem || rank[problem] < rank[reason]) {
				reason = problem
			}
		}
		if problem != "" {
			continue
		}
		switch {
		case matches:
			consider(d, true)
		case !d.UseCode:
			consider(d, false)
		}
	}
	res.CodeRefused = reason
	if best != nil && bestAmount > 0 {
		cp := *best
		res.Discount, res.Amount, res.Due, res.CodeApplied = &cp, bestAmount, base-bestAmount, bestCoded
	}
	return res
}

// rank orders refusal reasons for an item's own discounts, most promising
// first.
var rank = map[string]int{RefusedNotYetValid: 1, RefusedUsedUp: 2, RefusedExpired: 3}

// better reports whether candidate a beats b.
func better(amtA int64, a *lms.Discount, codedA bool, amtB int64, b *lms.Discount, codedB bool) bool {
	if amtA != amtB {
		return amtA > amtB
	}
	ownA, ownB := a.Kind != lms.KindGlobal, b.Kind != lms.KindGlobal
	if ownA != ownB {
		return ownA
	}
	if codedA != codedB {
		return codedA
	}
	return a.ID < b.ID
}

// AppliesTo reports whether d is the item's own discount or a global one.
func AppliesTo(d lms.Discount, kind string, itemID int64) bool {
	return d.Kind == lms.KindGlobal || (d.Kind == kind && d.ItemID == itemID)
}

// Problem returns why d cannot be used at instant at (RefusedExpired,
// RefusedNotYetValid or RefusedUsedUp, checked in that order), "" when it
// can.
func Problem(d lms.Discount, at time.Time) string {
	switch {
	case d.Expired(at):
		return RefusedExpired
	case d.NotYetValid(at):
		return RefusedNotYetValid
	case d.UsedUp():
		return RefusedUsedUp
	}
	return ""
}

// Amount is what d takes off base (minor units), between 0 and base.
// Percentages round half up to the minor unit.
func Amount(d lms.Discount, base int64) int64 {
	if base <= 0 || d.Value <= 0 {
		return 0
	}
	switch d.Type {
	case lms.DiscountFlat:
		return min(d.Value, base)
	case lms.DiscountPercentage:
		v := min(d.Value, 10000)
		// base*v/10000 rounded half up, without overflowing int64.
		q, r := base/10000, base%10000
		return min(q*v+(r*v+5000)/10000, base)
	}
	return 0
}

// CodeKey is the form codes are compared in: trimmed, lower case.
func CodeKey(code string) string { return strings.ToLower(strings.TrimSpace(code)) }
