package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/pricing"
)

// Payments: a domain's gateway settings, orders, refunds, class purchase
// grants, idempotency keys and processed webhook events. The rules (what
// to charge, when to call the gateway) live in package payment; these
// methods persist, each scoped by domain id, and make the state changes
// that must be atomic (an order with its coupon use; a payment with its
// enrolments, grants and points; a refund with its unenrolments).

// Gateways.
const (
	GatewayNone   = "none"
	GatewayTest   = "test"
	GatewayStripe = "stripe"
)

// Order states.
const (
	OrderPending  = "pending"
	OrderPaid     = "paid"
	OrderFailed   = "failed"
	OrderRefunded = "refunded"
)

// Order sources.
const (
	SourceClassPayment = "class_payment"
	SourceCheckout     = "checkout"
)

// KindProduct names a shop product on an order line.
const KindProduct = "product"

// PaymentSettings is a domain's payment gateway. Secrets are sealed by
// package payment before they get here; the store never sees them in the
// clear.
type PaymentSettings struct {
	Gateway                   string
	StripeSecretSealed        string
	StripeWebhookSecretSealed string
	StripePublishableKey      string
	StripeAPIBase             string
	// RequireGrant makes getclasslaunch for a student of a paid class
	// need a valid purchase grant.
	RequireGrant bool
	UpdatedAt    time.Time
}

// PaymentSettings returns the domain's gateway settings; a domain that
// never set any has gateway "none".
func (s *Store) PaymentSettings(ctx context.Context, domainID int64) (PaymentSettings, error) {
	var p PaymentSettings
	var req int
	err := s.read().queryRow(ctx, `SELECT gateway, stripe_secret_sealed, stripe_webhook_secret_sealed, stripe_publishable_key,
		stripe_api_base, require_grant, updated_at FROM payment_settings WHERE domain_id = ?`, domainID).
		Scan(&p.Gateway, &p.StripeSecretSealed, &p.StripeWebhookSecretSealed, &p.StripePublishableKey, &p.StripeAPIBase, &req,
			timeCol(&p.UpdatedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return PaymentSettings{Gateway: GatewayNone}, nil
	}
	p.RequireGrant = req == 1
	return p, err
}

// SetPaymentSettings replaces the domain's gateway settings (RequireGrant
// is kept: SetRequireGrant changes it). Not found for an unknown domain.
func (s *Store) SetPaymentSettings(ctx context.Context, domainID int64, p PaymentSettings) error {
	switch p.Gateway {
	case GatewayNone, GatewayTest, GatewayStripe:
	default:
		return lms.Invalidf("gateway", "must be none, test or stripe")
	}
	return s.tx(ctx, func(tx db) error {
		if err := mustDomain(ctx, tx, domainID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO payment_settings (domain_id, gateway, stripe_secret_sealed, stripe_webhook_secret_sealed,
			stripe_publishable_key, stripe_api_base, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (domain_id) DO UPDATE SET gateway = excluded.gateway, stripe_secret_sealed = excluded.stripe_secret_sealed,
			stripe_webhook_secret_sealed = excluded.stripe_webhook_secret_sealed,
			stripe_publishable_key = excluded.stripe_publishable_key, stripe_api_base = excluded.stripe_api_base,
			updated_at = excluded.updated_at`,
			domainID, p.Gateway, p.StripeSecretSealed, p.StripeWebhookSecretSealed, p.StripePublishableKey, p.StripeAPIBase, formatTime(s.now()))
		return err
	})
}

// SetRequireGrant turns on or off the domain's rule that a student's launch
// of a paid class needs a purchase grant.
func (s *Store) SetRequireGrant(ctx context.Context, domainID int64, on bool) error {
	return s.tx(ctx, func(tx db) error {
		if err := mustDomain(ctx, tx, domainID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO payment_settings (domain_id, gateway, require_grant, updated_at) VALUES (?, 'none', ?, ?)
			ON CONFLICT (domain_id) DO UPDATE SET require_grant = excluded.require_grant, updated_at = excluded.updated_at`,
			domainID, lms.Flag(on), formatTime(s.now()))
		return err
	})
}

func mustDomain(ctx context.Context, tx db, domainID int64) error {
	ok, err := tx.exists(ctx, "SELECT 1 FROM domains WHERE id = ?", domainID)
	if err == nil && !ok {
		err = lms.NotFoundf("domain %d not found", domainID)
	}
	return err
}

// Order is a class payment or a cart checkout. Amounts are minor units.
type Order struct {
	ID         int64
	Source     string // SourceClassPayment or SourceCheckout
	Status     string // OrderPending, OrderPaid, OrderFailed or OrderRefunded
	BuyerEmail string
	UserID     int64 // the buyer's user once known, else 0
	Currency   string
	Subtotal   int64
	Discount   int64
	Total      int64
	Refunded   int64
	CouponCode string
	Gateway    string
	// ChargeID is the gateway's payment id once paid; CheckoutID and
	// CheckoutURL name a redirect checkout session.
	ChargeID      string
	CheckoutID    string
	CheckoutURL   string
	ReturnURL     string
	CancelURL     string
	FailureReason string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	PaidAt        time.Time
	Lines         []OrderLine
	Refunds       []OrderRefund
}

// OrderLine is one item of an order.
type OrderLine struct {
	ID       int64
	Kind     string // lms.KindCourse, KindTest, KindClass, KindBundle or KindProduct
	ItemID   int64
	SchemeID int64 // 0 for products and bundles
	Name     string
	Base     int64
	Discount int64
	Amount   int64
	// DiscountID is the discount applied, 0 for none.
	DiscountID int64
	// Enrolled is true when paying enrolled the buyer directly.
	Enrolled bool
}

// OrderRefund is one refund of an order.
type OrderRefund struct {
	ID              int64
	Amount          int64
	GatewayRefundID string
	CreatedAt       time.Time
}

const orderCols = `id, source, status, buyer_email, user_id, currency, subtotal_minor, discount_minor, total_minor, refunded_minor,
	coupon_code, gateway, charge_id, checkout_id, checkout_url, return_url, cancel_url, failure_reason, created_at, updated_at, paid_at`

func scanOrder(row interface{ Scan(...any) error }) (Order, error) {
	var o Order
	err := row.Scan(&o.ID, &o.Source, &o.Status, &o.BuyerEmail, &o.UserID, &o.Currency, &o.Subtotal, &o.Discount, &o.Total, &o.Refunded,
		&o.CouponCode, &o.Gateway, &o.ChargeID, &o.CheckoutID, &o.CheckoutURL, &o.ReturnURL, &o.CancelURL, &o.FailureReason,
		timeCol(&o.CreatedAt), timeCol(&o.UpdatedAt), optTimeCol(&o.PaidAt))
	return o, err
}

// CreateOrder stores a pending order (created at o.CreatedAt, now when
// zero) with its lines and, in the same
// transaction, takes one use of every discount its lines apply (once per
// order). A discount used up, expired or not yet valid by then is a
// conflict and nothing is stored: no charge may follow.
func (s *Store) CreateOrder(ctx context.Context, domainID int64, o Order) (Order, error) {
	at := o.CreatedAt.UTC().Truncate(time.Second)
	if at.IsZero() {
		at = s.now()
	}
	o.Status, o.CreatedAt, o.UpdatedAt, o.Refunded = OrderPending, at, at, 0
	err := s.tx(ctx, func(tx db) error {
		var err error
		o.ID, err = tx.insert(ctx, `INSERT INTO orders (domain_id, source, status, buyer_email, buyer_email_key, user_id, currency,
			subtotal_minor, discount_minor, total_minor, coupon_code, gateway, return_url, cancel_url, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			domainID, o.Source, o.Status, o.BuyerEmail, lms.EmailKey(o.BuyerEmail), o.UserID, o.Currency, o.Subtotal, o.Discount, o.Total,
			o.CouponCode, o.Gateway, o.ReturnURL, o.CancelURL, formatTime(at), formatTime(at))
		if err != nil {
			return err
		}
		taken := map[int64]bool{}
		for i := range o.Lines {
			l := &o.Lines[i]
			l.ID, err = tx.insert(ctx, `INSERT INTO order_lines (domain_id, order_id, item_kind, item_id, scheme_id, name, base_minor,
				discount_minor, amount_minor, discount_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				domainID, o.ID, l.Kind, l.ItemID, l.SchemeID, l.Name, l.Base, l.Discount, l.Amount, l.DiscountID)
			if err != nil {
				return err
			}
			if l.DiscountID != 0 && !taken[l.DiscountID] {
				taken[l.DiscountID] = true
				if err := redeemDiscount(ctx, tx, domainID, l.DiscountID, o.UserID, o.ID, at); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return o, err
}

// SetOrderCheckout records the redirect checkout session of a pending
// order.
func (s *Store) SetOrderCheckout(ctx context.Context, domainID, id int64, checkoutID, checkoutURL string) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, "UPDATE orders SET checkout_id = ?, checkout_url = ?, updated_at = ? WHERE domain_id = ? AND id = ?",
			checkoutID, checkoutURL, formatTime(s.now()), domainID, id)
		return err
	})
}

// Order returns one order with its lines and refunds.
func (s *Store) Order(ctx context.Context, domainID, id int64) (Order, error) {
	return order(ctx, s.read(), domainID, id)
}

func order(ctx context.Context, d db, domainID, id int64) (Order, error) {
	o, err := scanOrder(d.queryRow(ctx, "SELECT "+orderCols+" FROM orders WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return o, lms.NotFoundf("order %d not found", id)
	}
	if err != nil {
		return o, err
	}
	rows, err := d.query(ctx, `SELECT id, item_kind, item_id, scheme_id, name, base_minor, discount_minor, amount_minor, discount_id, enrolled
		FROM order_lines WHERE domain_id = ? AND order_id = ? ORDER BY id`, domainID, id)
	if err != nil {
		return o, err
	}
	defer rows.Close()
	o.Lines = []OrderLine{}
	for rows.Next() {
		var l OrderLine
		var enrolled int
		if err := rows.Scan(&l.ID, &l.Kind, &l.ItemID, &l.SchemeID, &l.Name, &l.Base, &l.Discount, &l.Amount, &l.DiscountID, &enrolled); err != nil {
			return o, err
		}
		l.Enrolled = enrolled == 1
		o.Lines = append(o.Lines, l)
	}
	if err := rows.Err(); err != nil {
		return o, err
	}
	rrows, err := d.query(ctx, "SELECT id, amount_minor, gateway_refund_id, created_at FROM order_refunds WHERE domain_id = ? AND order_id = ? ORDER BY id",
		domainID, id)
	if err != nil {
		return o, err
	}
	defer rrows.Close()
	o.Refunds = []OrderRefund{}
	for rrows.Next() {
		var r OrderRefund
		if err := rrows.Scan(&r.ID, &r.Amount, &r.GatewayRefundID, timeCol(&r.CreatedAt)); err != nil {
			return o, err
		}
		o.Refunds = append(o.Refunds, r)
	}
	return o, rrows.Err()
}

// OrderByCheckout returns the order of a redirect checkout session.
func (s *Store) OrderByCheckout(ctx context.Context, domainID int64, checkoutID string) (Order, error) {
	var id int64
	err := s.read().queryRow(ctx, "SELECT id FROM orders WHERE domain_id = ? AND checkout_id = ? AND checkout_id <> ''", domainID, checkoutID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, lms.NotFoundf("no order for checkout session %s", checkoutID)
	}
	if err != nil {
		return Order{}, err
	}
	return s.Order(ctx, domainID, id)
}

// OrderFilter selects orders for Orders; empty fields match all.
type OrderFilter struct {
	Status string
	Email  string
	Source string
}

// Orders returns one page of the domain's orders, newest first, without
// lines, and the number matching f.
func (s *Store) Orders(ctx context.Context, domainID int64, f OrderFilter, offset, limit int) ([]Order, int64, error) {
	where := "domain_id = ?"
	args := []any{domainID}
	if f.Status != "" {
		where += " AND status = ?"
		args = append(args, f.Status)
	}
	if f.Email != "" {
		where += " AND buyer_email_key = ?"
		args = append(args, lms.EmailKey(f.Email))
	}
	if f.Source != "" {
		where += " AND source = ?"
		args = append(args, f.Source)
	}
	d := s.read()
	total, err := listTotal(ctx, d, domainID, countOrders, f != OrderFilter{}, where, args)
	if err != nil {
		return nil, 0, err
	}
	rows, err := d.query(ctx, "SELECT "+orderCols+" FROM orders WHERE "+where+" ORDER BY id DESC LIMIT +? OFFSET +?",
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Order{}
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, o)
	}
	return out, total, rows.Err()
}

// PayOrder marks a pending order paid with the gateway's charge id and, in
// the same transaction, gives the buyer what was bought: for a checkout
// the buyer becomes a user of the domain if unknown and is enrolled in
// every course, test, live class and bundle of the order (bundles expand;
// points are awarded by the domain's rules); every class line with a
// scheme makes a purchase grant. An order that is not pending is returned
// unchanged with changed false, so a replayed completion does nothing.
func (s *Store) PayOrder(ctx context.Context, domainID, id int64, chargeID string, at time.Time) (o Order, changed bool, err error) {
	err = s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, `UPDATE orders SET status = ?, charge_id = ?, paid_at = ?, updated_at = ?
			WHERE domain_id = ? AND id = ? AND status = ?`, OrderPaid, chargeID, formatTime(at), formatTime(s.now()), domainID, id, OrderPending)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			o, err = order(ctx, tx, domainID, id)
			return err
		}
		changed = true
		if o, err = order(ctx, tx, domainID, id); err != nil {
			return err
		}
		if o.Source == SourceCheckout {
			if err := s.deliverCheckout(ctx, tx, domainID, &o); err != nil {
				return err
			}
		}
		for _, l := range o.Lines {
			if l.Kind != lms.KindClass || l.SchemeID == 0 {
				continue
			}
			if err := grant(ctx, tx, domainID, o, l, at); err != nil {
				return err
			}
		}
		return emit(ctx, tx, domainID, paymentEvent(event.PaymentSucceeded, o, o.Total))
	})
	return o, changed, err
}

// deliverCheckout creates the buyer if unknown and enrolls them in the
// order's items.
func (s *Store) deliverCheckout(ctx context.Context, tx db, domainID int64, o *Order) error {
	u, err := s.userByEmail(ctx, tx, domainID, o.BuyerEmail)
	if lms.IsNotFound(err) {
		name, _, _ := strings.Cut(o.BuyerEmail, "@")
		u = lms.User{Name: name, Username: o.BuyerEmail, Email: o.BuyerEmail, CreatedAt: s.now()}
		u.ID, err = insertUserRow(ctx, tx, domainID, u)
	}
	if err != nil {
		return err
	}
	o.UserID = u.ID
	if _, err := tx.exec(ctx, "UPDATE orders SET user_id = ? WHERE domain_id = ? AND id = ?", u.ID, domainID, o.ID); err != nil {
		return err
	}
	for i := range o.Lines {
		l := &o.Lines[i]
		if l.Kind == KindProduct {
			continue
		}
		ok, err := itemExists(ctx, tx, domainID, l.Kind, l.ItemID)
		if err != nil {
			return err
		}
		if !ok {
			continue // deleted since it was bought; the order still records it
		}
		already, err := s.enrollUser(ctx, tx, domainID, u.ID, l.Kind, l.ItemID)
		if err != nil {
			return err
		}
		if !already {
			l.Enrolled = true
			if _, err := tx.exec(ctx, "UPDATE order_lines SET enrolled = 1 WHERE domain_id = ? AND id = ?", domainID, l.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// grant stores the purchase grant of a paid class line.
func grant(ctx context.Context, tx db, domainID int64, o Order, l OrderLine, at time.Time) error {
	p, err := pricingScheme(ctx, tx, domainID, l.SchemeID)
	if lms.IsNotFound(err) {
		return nil // the scheme was deleted while the buyer paid: no terms to grant by
	}
	if err != nil {
		return err
	}
	expires := ""
	if !p.Lifetime && p.Days > 0 {
		expires = formatTime(at.AddDate(0, 0, p.Days))
	}
	_, err = tx.exec(ctx, `INSERT INTO purchase_grants (domain_id, order_id, class_id, scheme_id, email, email_key, starts_at, expires_at,
		launches_allowed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		domainID, o.ID, l.ItemID, l.SchemeID, o.BuyerEmail, lms.EmailKey(o.BuyerEmail), formatTime(at), expires, p.NumberTimes)
	return err
}

// FailOrder marks a pending order failed with reason and releases the
// discount uses it took, in one transaction. An order that is not pending
// is returned unchanged with changed false.
func (s *Store) FailOrder(ctx context.Context, domainID, id int64, reason string) (o Order, changed bool, err error) {
	err = s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, `UPDATE orders SET status = ?, failure_reason = ?, updated_at = ? WHERE domain_id = ? AND id = ? AND status = ?`,
			OrderFailed, reason, formatTime(s.now()), domainID, id, OrderPending)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			changed = true
			if _, err := tx.exec(ctx, `UPDATE discounts SET used = used - 1 WHERE domain_id = ? AND used > 0 AND id IN
				(SELECT discount_id FROM discount_redemptions WHERE domain_id = ? AND order_id = ?)`, domainID, domainID, id); err != nil {
				return err
			}
			if _, err := tx.exec(ctx, "DELETE FROM discount_redemptions WHERE domain_id = ? AND order_id = ?", domainID, id); err != nil {
				return err
			}
		}
		o, err = order(ctx, tx, domainID, id)
		return err
	})
	return o, changed, err
}

// RefundOrder records a refund of amount (minor units) the gateway made
// with refundID. The order must be paid and the refunds may not exceed its
// total (else a conflict). When the refunds reach the total the order
// becomes refunded, and in the same transaction the buyer is unenrolled
// from what the order enrolled them in and its purchase grants are
// revoked.
func (s *Store) RefundOrder(ctx context.Context, domainID, id, amount int64, refundID string) (Order, error) {
	var o Order
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, `UPDATE orders SET refunded_minor = refunded_minor + ?, updated_at = ?
			WHERE domain_id = ? AND id = ? AND status = ? AND refunded_minor + ? <= total_minor`,
			amount, formatTime(s.now()), domainID, id, OrderPaid, amount)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			cur, err := order(ctx, tx, domainID, id)
			if err != nil {
				return err
			}
			if cur.Status != OrderPaid {
				return lms.Conflictf("order %d is %s: only a paid order can be refunded", id, cur.Status)
			}
			return lms.Conflictf("order %d has %d minor units left to refund, less than %d", id, cur.Total-cur.Refunded, amount)
		}
		if _, err := tx.exec(ctx, "INSERT INTO order_refunds (domain_id, order_id, amount_minor, gateway_refund_id, created_at) VALUES (?, ?, ?, ?, ?)",
			domainID, id, amount, refundID, formatTime(s.now())); err != nil {
			return err
		}
		if o, err = order(ctx, tx, domainID, id); err != nil {
			return err
		}
		if o.Refunded < o.Total {
			return emit(ctx, tx, domainID, paymentEvent(event.PaymentRefunded, o, amount))
		}
		o.Status = OrderRefunded
		if _, err := tx.exec(ctx, "UPDATE orders SET status = ? WHERE domain_id = ? AND id = ?", OrderRefunded, domainID, id); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "UPDATE purchase_grants SET revoked = 1 WHERE domain_id = ? AND order_id = ?", domainID, id); err != nil {
			return err
		}
		for _, l := range o.Lines {
			if !l.Enrolled || o.UserID == 0 {
				continue
			}
			if _, err := tx.exec(ctx, `DELETE FROM enrollments WHERE domain_id = ? AND user_id = ? AND item_kind = ? AND item_id = ?
				AND source_bundle_id = 0`, domainID, o.UserID, l.Kind, l.ItemID); err != nil {
				return err
			}
			if l.Kind == lms.KindBundle {
				if _, err := tx.exec(ctx, "DELETE FROM enrollments WHERE domain_id = ? AND user_id = ? AND source_bundle_id = ?",
					domainID, o.UserID, l.ItemID); err != nil {
					return err
				}
			}
		}
		return emit(ctx, tx, domainID, paymentEvent(event.PaymentRefunded, o, amount))
	})
	return o, err
}

// DiscountCandidates returns the discounts pricing.Quote needs for an item
// with code: the item's own, the global ones and any carrying the code.
func (s *Store) DiscountCandidates(ctx context.Context, domainID int64, kind string, itemID int64, code string) ([]lms.Discount, error) {
	return queryDiscounts(ctx, s.read(), `domain_id = ? AND ((item_kind = ? AND item_id = ?) OR item_kind = ? OR (code_key <> '' AND code_key = ?))`,
		domainID, kind, itemID, lms.KindGlobal, pricing.CodeKey(code))
}

// Grant is access bought with a class payment.
type Grant struct {
	ID       int64
	OrderID  int64
	ClassID  int64
	SchemeID int64
	Email    string
	StartsAt time.Time
	// ExpiresAt is zero for lifetime access.
	ExpiresAt time.Time
	// LaunchesAllowed is 0 for unlimited.
	LaunchesAllowed int
	LaunchesUsed    int
	Revoked         bool
}

// Valid reports whether g gives access at instant at (a launch left, not
// expired, not revoked).
func (g Grant) Valid(at time.Time) bool {
	return !g.Revoked && !at.Before(g.StartsAt) && (g.ExpiresAt.IsZero() || at.Before(g.ExpiresAt)) &&
		(g.LaunchesAllowed == 0 || g.LaunchesUsed < g.LaunchesAllowed)
}

const grantCols = "id, order_id, class_id, scheme_id, email, starts_at, expires_at, launches_allowed, launches_used, revoked"

func scanGrant(row interface{ Scan(...any) error }) (Grant, error) {
	var g Grant
	var revoked int
	err := row.Scan(&g.ID, &g.OrderID, &g.ClassID, &g.SchemeID, &g.Email, timeCol(&g.StartsAt), optTimeCol(&g.ExpiresAt),
		&g.LaunchesAllowed, &g.LaunchesUsed, &revoked)
	g.Revoked = revoked == 1
	return g, err
}

// Grants lists the domain's purchase grants of a class (classID 0: every
// class) for an email ("" : every buyer), by id.
func (s *Store) Grants(ctx context.Context, domainID, classID int64, email string) ([]Grant, error) {
	where, args := "domain_id = ?", []any{domainID}
	if classID != 0 {
		where += " AND class_id = ?"
		args = append(args, classID)
	}
	if email != "" {
		where += " AND email_key = ?"
		args = append(args, lms.EmailKey(email))
	}
	rows, err := s.read().query(ctx, "SELECT "+grantCols+" FROM purchase_grants WHERE "+where+" ORDER BY id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Grant{}
	for rows.Next() {
		g, err := scanGrant(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// UseGrant takes one launch of a valid grant of classID for email at
// instant at, atomically (concurrent launches never exceed the count).
// The grant with the fewest launches left that still has one is used
// first. No valid grant is not found.
func (s *Store) UseGrant(ctx context.Context, domainID, classID int64, email string, at time.Time) (Grant, error) {
	var g Grant
	err := s.tx(ctx, func(tx db) error {
		ts := formatTime(at)
		rows, err := tx.query(ctx, `SELECT `+grantCols+` FROM purchase_grants WHERE domain_id = ? AND class_id = ? AND email_key = ?
			AND revoked = 0 AND starts_at <= ? AND (expires_at = '' OR expires_at > ?)
			AND (launches_allowed = 0 OR launches_used < launches_allowed)
			ORDER BY CASE WHEN launches_allowed = 0 THEN 1 ELSE 0 END, id`, domainID, classID, lms.EmailKey(email), ts, ts)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			c, err := scanGrant(rows)
			if err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, c.ID)
		}
		rows.Close()
		for _, id := range ids {
			res, err := tx.exec(ctx, `UPDATE purchase_grants SET launches_used = launches_used + 1 WHERE domain_id = ? AND id = ?
				AND (launches_allowed = 0 OR launches_used < launches_allowed)`, domainID, id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				g, err = scanGrant(tx.queryRow(ctx, "SELECT "+grantCols+" FROM purchase_grants WHERE id = ?", id))
				return err
			}
		}
		return lms.NotFoundf("no valid purchase of class %d for %s", classID, email)
	})
	return g, err
}

// BeginIdempotent claims idempotency key for scope with the request's
// hash. fresh is true when the key is new: the caller runs the request
// and then calls FinishIdempotent (or ForgetIdempotent when it made
// nothing). Otherwise resultID is what the first request made. The same
// key with another request, or while the first one still runs, is a
// conflict.
func (s *Store) BeginIdempotent(ctx context.Context, domainID int64, scope, key, hash string) (resultID int64, fresh bool, err error) {
	err = s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, `INSERT INTO idempotency_keys (domain_id, scope, idem_key, request_hash, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, domainID, scope, key, hash, formatTime(s.now()))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			fresh = true
			return nil
		}
		var stored string
		if err := tx.queryRow(ctx, "SELECT request_hash, result_id FROM idempotency_keys WHERE domain_id = ? AND scope = ? AND idem_key = ?",
			domainID, scope, key).Scan(&stored, &resultID); err != nil {
			return err
		}
		if stored != hash {
			return &lms.Error{Code: lms.CodeConflict, Message: fmt.Sprintf("Idempotency-Key %q was already used with a different request", key),
				Fields: []lms.FieldError{{Field: "idempotency_key", Message: "was already used with a different request"}}}
		}
		if resultID == 0 {
			return lms.Conflictf("a request with Idempotency-Key %q is still being processed; retry shortly", key)
		}
		return nil
	})
	return resultID, fresh, err
}

// FinishIdempotent records what the request of a key made.
func (s *Store) FinishIdempotent(ctx context.Context, domainID int64, scope, key string, resultID int64) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, "UPDATE idempotency_keys SET result_id = ? WHERE domain_id = ? AND scope = ? AND idem_key = ?",
			resultID, domainID, scope, key)
		return err
	})
}

// ForgetIdempotent releases a key whose request made nothing (it was
// refused before any order), so that a corrected retry may use it.
func (s *Store) ForgetIdempotent(ctx context.Context, domainID int64, scope, key string) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, "DELETE FROM idempotency_keys WHERE domain_id = ? AND scope = ? AND idem_key = ? AND result_id = 0",
			domainID, scope, key)
		return err
	})
}

// PaymentEventSeen reports whether a gateway event was already processed.
func (s *Store) PaymentEventSeen(ctx context.Context, domainID int64, eventID string) (bool, error) {
	return s.read().exists(ctx, "SELECT 1 FROM payment_events WHERE domain_id = ? AND event_id = ?", domainID, eventID)
}

// RecordPaymentEvent records a processed gateway event; recording it twice
// is harmless.
func (s *Store) RecordPaymentEvent(ctx context.Context, domainID int64, eventID, eventType string) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, `INSERT INTO payment_events (domain_id, event_id, event_type, received_at) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, domainID, eventID, eventType, formatTime(s.now()))
		return err
	})
}

// ExpireCheckouts fails the domain's pending orders of gateway that wait on
// a checkout page opened before cutoff, releasing their discount uses, and
// returns how many it failed.
func (s *Store) ExpireCheckouts(ctx context.Context, domainID int64, gateway string, cutoff time.Time, reason string) (int, error) {
	rows, err := s.read().query(ctx, `SELECT id FROM orders WHERE domain_id = ? AND status = ? AND gateway = ? AND checkout_id <> ''
		AND created_at < ? ORDER BY id`, domainID, OrderPending, gateway, formatTime(cutoff))
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		_, changed, err := s.FailOrder(ctx, domainID, id, reason)
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	return n, nil
}
