package lmsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/payment"
	"github.com/lectern-lms/lectern/internal/store"
)

// paymentRoutes registers the cart checkout and the orders.
func (a *API) paymentRoutes(rt *httpx.Router) {
	a.handle(rt, "POST", "/shoppingCart/checkout", a.checkout)
	a.handle(rt, "GET", "/orders/list", a.listOrders)
	a.handle(rt, "POST", "/orders/list", a.listOrders)
	a.handle(rt, "GET", "/orders/get/{order_id}", a.getOrder)
	a.handle(rt, "POST", "/orders/refund/{order_id}", a.refundOrder)
}

// cardFields are the parameters that carry card data.
var cardFields = []string{"card_number", "card_exp_month", "card_exp_year", "card_cvc"}

// itemParams name a cart item's kind by its id parameter.
var itemParams = []struct{ param, kind string }{
	{"course_id", lms.KindCourse}, {"test_id", lms.KindTest}, {"class_id", lms.KindClass},
	{"live_class_id", lms.KindClass}, {"bundle_id", lms.KindBundle}, {"product_id", store.KindProduct},
}

// POST /shoppingCart/checkout: items (an array of objects, each with one
// of course_id, test_id, class_id, bundle_id, product_id, and
// price_scheme_id for courses, tests and classes), email (the buyer),
// optional discount_code (coupon_code is accepted too) and currency; card
// fields to pay now, or return_url and cancel_url for a checkout page.
// Idempotency-Key header or idempotency_key parameter.
func (a *API) checkout(w http.ResponseWriter, r *http.Request, c *call) error {
	if a.Payments == nil {
		return errors.New("payments service not configured")
	}
	var v lms.Validator
	q := r.URL.Query()
	for _, f := range cardFields {
		v.Check(!q.Has(f), f, "must be sent in the request body, never in the URL (addresses are logged)")
	}
	cart := payment.Cart{Items: readItems(c, &v), Currency: strings.ToLower(c.P.Get("currency"))}
	cart.Email, _ = c.P.First("email", "buyer_email")
	if cart.Email == "" {
		v.Add("email", "is required (the buyer)")
	} else if !lms.ValidEmail(cart.Email) {
		v.Add("email", "must be an email address such as ann@example.com")
	}
	cart.Coupon, _ = c.P.First("discount_code", "coupon_code")
	if cart.Currency != "" && (len(cart.Currency) != 3 || strings.Trim(cart.Currency, "abcdefghijklmnopqrstuvwxyz") != "") {
		v.Add("currency", "must be a three-letter currency code such as usd")
	}
	withCard := false
	for _, f := range cardFields {
		withCard = withCard || c.P.Has(f)
	}
	if withCard {
		card, err := payment.ReadCard(c.P.Get("card_number"), c.P.Get("card_exp_month"), c.P.Get("card_exp_year"),
			c.P.Get("card_cvc"), c.P.Get("card_holder_name"))
		var le *lms.Error
		if errors.As(err, &le) {
			for _, f := range le.Fields {
				v.Add(f.Field, f.Message)
			}
		}
		cart.Card = &card
	}
	cart.ReturnURL = readURL(c, &v, "return_url", !withCard)
	cart.CancelURL = readURL(c, &v, "cancel_url", !withCard)
	if err := v.Err(); err != nil {
		return err
	}
	out, err := a.Payments.Checkout(r.Context(), c.Domain.ID, cart, a.idem(r, c))
	if err != nil {
		return err
	}
	return writeOrderOutcome(w, out)
}

// writeOrderOutcome answers a payment: 200 with the order when paid or
// when a checkout page awaits the buyer, 402 with the gateway's reason
// when the payment was declined.
func writeOrderOutcome(w http.ResponseWriter, out payment.Outcome) error {
	o := out.Order
	msg := "Order paid"
	switch o.Status {
	case store.OrderFailed:
		return &apiError{status: http.StatusPaymentRequired, code: "payment_declined",
			message: o.FailureReason + " (order " + strconv.FormatInt(o.ID, 10) + ")"}
	case store.OrderPending:
		msg = "Checkout started: send the buyer to checkout_url"
	case store.OrderRefunded:
		msg = "Order refunded"
	}
	if out.Replayed {
		msg += " (replay of an earlier request with this Idempotency-Key)"
	}
	return ok(w, msg, orderJSON(o))
}

// readItems reads the items array.
func readItems(c *call, v *lms.Validator) []payment.CartItem {
	raw := c.P.Raw("items")
	if strings.TrimSpace(raw) == "" {
		v.Add("items", "is required: an array of items such as [{\"course_id\": 1, \"price_scheme_id\": 2}]")
		return nil
	}
	var list []map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	if err := dec.Decode(&list); err != nil || len(list) == 0 {
		v.Add("items", "must be a non-empty array of objects such as {\"course_id\": 1, \"price_scheme_id\": 2}")
		return nil
	}
	if len(list) > 100 {
		v.Add("items", "must hold at most 100 items")
		return nil
	}
	seen := map[payment.CartItem]int{}
	var out []payment.CartItem
	for i, m := range list {
		field := "items[" + strconv.Itoa(i) + "]"
		var it payment.CartItem
		for _, p := range itemParams {
			if _, ok := m[p.param]; !ok {
				continue
			}
			if it.Kind != "" {
				v.Add(field, "must name one item: one of course_id, test_id, class_id, bundle_id, product_id")
				break
			}
			it.Kind = p.kind
			it.ItemID = jsonID(v, m[p.param], field+"."+p.param)
		}
		if it.Kind == "" {
			v.Add(field, "must name an item with course_id, test_id, class_id, bundle_id or product_id")
			continue
		}
		_, hasScheme := m["price_scheme_id"]
		switch it.Kind {
		case lms.KindCourse, lms.KindTest, lms.KindClass:
			if !hasScheme {
				v.Add(field+".price_scheme_id", "is required for a course, test or live class")
			} else {
				it.SchemeID = jsonID(v, m["price_scheme_id"], field+".price_scheme_id")
			}
		default:
			v.Check(!hasScheme, field+".price_scheme_id", "is not taken for bundles and products")
		}
		key := payment.CartItem{Kind: it.Kind, ItemID: it.ItemID}
		if j, dup := seen[key]; dup {
			v.Add(field, "repeats items["+strconv.Itoa(j)+"]: buy each item once")
			continue
		}
		seen[key] = i
		out = append(out, it)
	}
	return out
}

// jsonID reads a positive id sent as a JSON number or numeric string.
func jsonID(v *lms.Validator, raw json.RawMessage, field string) int64 {
	s := strings.Trim(string(raw), `"`)
	n, err := httpx.ParseInt(s)
	if err != nil || n <= 0 {
		v.Add(field, "must be a positive whole number")
		return 0
	}
	return n
}

// readURL reads an http(s) address.
func readURL(c *call, v *lms.Validator, name string, required bool) string {
	s := c.P.Get(name)
	if s == "" {
		v.Check(!required, name, "is required when no card is sent (where the checkout page sends the buyer back)")
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		v.Add(name, "must be an http or https address")
		return ""
	}
	return u.String()
}

// idem is the request's idempotency key (header or parameter) and the
// hash of its parameters.
func (a *API) idem(r *http.Request, c *call) payment.Idem {
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if key == "" {
		key = c.P.Get("idempotency_key")
	}
	if key == "" {
		return payment.Idem{}
	}
	params := map[string]string{"path": r.URL.Path}
	for _, n := range c.P.Names() {
		if n != "idempotency_key" {
			params[n] = c.P.Raw(n)
		}
	}
	return payment.Idem{Key: key, Hash: a.Payments.RequestHash(params)}
}
