package lmsapi

import (
	"net/http"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/money"
	"github.com/lectern-lms/lectern/internal/store"
)

// lineParams is the id parameter each kind of line is written with.
var lineParams = map[string]string{lms.KindCourse: "course_id", lms.KindTest: "test_id", lms.KindClass: "class_id",
	lms.KindBundle: "bundle_id", store.KindProduct: "product_id"}

var orderStatuses = []string{store.OrderPending, store.OrderPaid, store.OrderFailed, store.OrderRefunded}

func rfc3339(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// orderJSON is an order as the API writes it; lines and refunds only when
// loaded.
func orderJSON(o store.Order) map[string]any {
	m := map[string]any{"id": o.ID, "status": o.Status, "source": o.Source, "email": o.BuyerEmail, "user_id": o.UserID,
		"currency": o.Currency, "subtotal": money.Money(o.Subtotal), "discount": money.Money(o.Discount), "total": money.Money(o.Total),
		"refunded": money.Money(o.Refunded), "discount_code": o.CouponCode, "gateway": o.Gateway, "charge_id": o.ChargeID,
		"checkout_url": o.CheckoutURL, "failure_reason": o.FailureReason, "created_at": rfc3339(o.CreatedAt), "paid_at": rfc3339(o.PaidAt)}
	if o.Lines != nil {
		lines := make([]map[string]any, len(o.Lines))
		for i, l := range o.Lines {
			lm := map[string]any{"id": l.ID, "kind": l.Kind, lineParams[l.Kind]: l.ItemID, "name": l.Name,
				"base_price": money.Money(l.Base), "discount": money.Money(l.Discount), "amount": money.Money(l.Amount),
				"discount_id": nil, "enrolled": l.Enrolled}
			if l.SchemeID != 0 {
				lm["price_scheme_id"] = l.SchemeID
			}
			if l.DiscountID != 0 {
				lm["discount_id"] = l.DiscountID
			}
			lines[i] = lm
		}
		m["lines"] = lines
	}
	if o.Refunds != nil {
		refunds := make([]map[string]any, len(o.Refunds))
		for i, r := range o.Refunds {
			refunds[i] = map[string]any{"id": r.ID, "amount": money.Money(r.Amount), "refund_id": r.GatewayRefundID, "created_at": rfc3339(r.CreatedAt)}
		}
		m["refunds"] = refunds
	}
	return m
}

// GET|POST /orders/list: optional status (pending, paid, failed,
// refunded), email, source (class_payment, checkout), page, limit. Newest
// first, without lines.
func (a *API) listOrders(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	p := readPage(c, &v)
	f := store.OrderFilter{Status: c.P.Get("status"), Email: c.P.Get("email"), Source: c.P.Get("source")}
	if f.Status != "" {
		ok := false
		for _, s := range orderStatuses {
			ok = ok || s == f.Status
		}
		v.Check(ok, "status", "must be pending, paid, failed or refunded")
	}
	v.Check(f.Source == "" || f.Source == store.SourceCheckout || f.Source == store.SourceClassPayment, "source", "must be checkout or class_payment")
	if err := v.Err(); err != nil {
		return err
	}
	os, total, err := a.Store.Orders(r.Context(), c.Domain.ID, f, p.offset(), p.Limit)
	if err != nil {
		return err
	}
	data := make([]map[string]any, len(os))
	for i, o := range os {
		data[i] = orderJSON(o)
	}
	return writeJSON(w, p.body("Orders", data, total))
}

// GET /orders/get/{order_id}: one order with its lines and refunds.
func (a *API) getOrder(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "order_id")
	if err != nil {
		return err
	}
	o, err := a.Store.Order(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Order found", orderJSON(o))
}

// POST /orders/refund/{order_id}: optional amount (default: all that is
// left). Refunds through the gateway that took the payment; a full refund
// unenrolls the buyer from what the order enrolled them in and revokes its
// purchase grants. Idempotency-Key header or idempotency_key parameter.
func (a *API) refundOrder(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "order_id")
	if err != nil {
		return err
	}
	var v lms.Validator
	amount, sent := readMoney(c, &v, "amount")
	v.Check(!sent || amount > 0, "amount", "must be more than 0")
	if err := v.Err(); err != nil {
		return err
	}
	out, err := a.Payments.Refund(r.Context(), c.Domain.ID, id, int64(amount), a.idem(r, c))
	if err != nil {
		return err
	}
	msg := "Order refunded"
	if out.Order.Status == store.OrderPaid {
		msg = "Order partly refunded"
	}
	if out.Replayed {
		msg += " (replay of an earlier request with this Idempotency-Key)"
	}
	return ok(w, msg, orderJSON(out.Order))
}
