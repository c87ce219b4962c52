package payment

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/pricing"
	"github.com/lectern-lms/lectern/internal/store"
)

// CartItem is one item of a cart: a course, test or live class with the
// pricing scheme chosen, a bundle, or a product.
type CartItem struct {
	Kind     string // lms.KindCourse, KindTest, KindClass, KindBundle or store.KindProduct
	ItemID   int64
	SchemeID int64 // required for courses, tests and classes; none for bundles and products
}

// Cart is a checkout of the LMS cart.
type Cart struct {
	Items []CartItem
	Email string
	// Coupon is one discount code for the whole cart: it applies to every
	// line it is valid for.
	Coupon string
	// Currency is the cart's currency; "" takes the live classes' (or usd
	// when there is none).
	Currency string
	Pay
}

// Checkout prices every line of the cart, records the order with its
// discount uses and takes the payment. Once paid, the buyer (created if
// unknown) is enrolled in every item (see store.PayOrder).
func (s *Service) Checkout(ctx context.Context, domainID int64, c Cart, k Idem) (Outcome, error) {
	id, replayed, err := s.once(ctx, domainID, ScopeCheckout, k, func() (int64, error) {
		if err := s.expireTestCheckouts(ctx, domainID); err != nil {
			return 0, err
		}
		o, err := s.priceCart(ctx, domainID, c)
		if err != nil {
			return 0, err
		}
		names := make([]string, len(o.Lines))
		for i, l := range o.Lines {
			names[i] = l.Name
		}
		return s.place(ctx, domainID, o, c.Pay, strings.Join(names, ", "))
	})
	return s.outcome(ctx, domainID, id, replayed, err)
}

// priceCart prices each line with the pricing rules. A bundle's base price
// is the sum of the first (lowest id) pricing scheme of each course, test
// and class in it (an item without a scheme adds nothing); a product's is
// its price plus shipping, the discount applying to the price only. Only
// the item's own and global discounts apply. The coupon is refused when it
// is valid for no line.
func (s *Service) priceCart(ctx context.Context, domainID int64, c Cart) (store.Order, error) {
	o := store.Order{Source: store.SourceCheckout, BuyerEmail: c.Email, CouponCode: c.Coupon, Currency: strings.ToLower(c.Currency),
		ReturnURL: c.ReturnURL, CancelURL: c.CancelURL}
	at := s.now()
	codeOK, refusal := false, ""
	for i, it := range c.Items {
		field := "items[" + strconv.Itoa(i) + "]"
		var line store.OrderLine
		var q pricing.Result
		var err error
		line.Kind, line.ItemID, line.SchemeID = it.Kind, it.ItemID, it.SchemeID
		switch it.Kind {
		case lms.KindCourse, lms.KindTest, lms.KindClass:
			if q, err = s.Store.Quote(ctx, domainID, it.Kind, it.ItemID, it.SchemeID, c.Coupon, at); err != nil {
				return o, withField(err, field)
			}
			line.Name, err = s.itemName(ctx, domainID, it.Kind, it.ItemID, &o, field)
		case lms.KindBundle:
			line.Name, q, err = s.quoteBundle(ctx, domainID, it.ItemID, c.Coupon, at)
		case store.KindProduct:
			var p store.Product
			if p, err = s.Store.Product(ctx, domainID, it.ItemID); err != nil {
				break
			}
			line.Name = p.Name
			q, err = s.quoteFixed(ctx, domainID, store.KindProduct, it.ItemID, p.PriceCents, c.Coupon, at)
			q.Base += p.ShippingCents
			q.Due += p.ShippingCents
		}
		if err != nil {
			return o, withField(err, field)
		}
		line.Base, line.Discount, line.Amount = q.Base, q.Amount, q.Due
		if q.Discount != nil {
			line.DiscountID = q.Discount.ID
		}
		if q.CodeRefused == "" {
			codeOK = true
		} else if refusal == "" || (refusal == pricing.RefusedOtherItem || refusal == pricing.RefusedUnknown) {
			refusal = q.CodeRefused
		}
		o.Subtotal += line.Base
		o.Discount += line.Discount
		o.Total += line.Amount
		o.Lines = append(o.Lines, line)
	}
	if c.Coupon != "" && !codeOK {
		return o, lms.Invalidf("coupon_code", "%s", Refusals[refusal])
	}
	if o.Currency == "" {
		o.Currency = "usd"
	}
	return o, nil
}

// itemName returns an item's name and checks a class's currency against
// the cart's (the first class sets it when the cart named none).
func (s *Service) itemName(ctx context.Context, domainID int64, kind string, id int64, o *store.Order, field string) (string, error) {
	switch kind {
	case lms.KindCourse:
		c, err := s.Store.Course(ctx, domainID, id)
		return c.Name, err
	case lms.KindTest:
		t, err := s.Store.Test(ctx, domainID, id)
		return t.Name, err
	}
	cl, err := s.Store.LiveClass(ctx, domainID, id)
	if err != nil {
		return "", err
	}
	cur := strings.ToLower(cl.Currency)
	if cur == "" {
		cur = "usd"
	}
	if o.Currency == "" {
		o.Currency = cur
	} else if o.Currency != cur {
		return "", lms.Invalidf(field, "live class %d is sold in %s, not %s: pay for items of one currency at a time", id, cur, o.Currency)
	}
	return cl.Title, nil
}

func (s *Service) quoteBundle(ctx context.Context, domainID, id int64, code string, at time.Time) (string, pricing.Result, error) {
	b, err := s.Store.Bundle(ctx, domainID, id)
	if err != nil {
		return "", pricing.Result{}, err
	}
	var base int64
	for _, it := range b.Items {
		if it.Kind == lms.KindBundle {
			continue
		}
		ps, err := s.Store.PricingSchemes(ctx, domainID, it.Kind, it.ID)
		if err != nil {
			return "", pricing.Result{}, err
		}
		if len(ps) > 0 {
			base += ps[0].Price
		}
	}
	q, err := s.quoteFixed(ctx, domainID, lms.KindBundle, id, base, code, at)
	return b.Name, q, err
}

// quoteFixed prices an item with no pricing scheme at base.
func (s *Service) quoteFixed(ctx context.Context, domainID int64, kind string, id, base int64, code string, at time.Time) (pricing.Result, error) {
	ds, err := s.Store.DiscountCandidates(ctx, domainID, kind, id, code)
	if err != nil {
		return pricing.Result{}, err
	}
	return pricing.Quote(pricing.Input{Kind: kind, ItemID: id, Scheme: lms.PricingScheme{Price: base}, Code: code, At: at, Discounts: ds}), nil
}

// withField names the cart line in a not-found error (still a 404: the
// item is not the domain's).
func withField(err error, field string) error {
	if le, ok := err.(*lms.Error); ok && le.Code == lms.CodeNotFound {
		return &lms.Error{Code: lms.CodeNotFound, Message: field + ": " + le.Message,
			Fields: []lms.FieldError{{Field: field, Message: le.Message}}}
	}
	return err
}
