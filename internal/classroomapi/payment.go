package classroomapi

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/money"
	"github.com/lectern-lms/lectern/internal/payment"
	"github.com/lectern-lms/lectern/internal/store"
)

// Class payments (apiclasspayment), the purchases they grant
// (listpurchases) and the gateway a domain takes payments through
// (getPaymentInfo). The rules live in package payment.

// cardFields are the parameters that carry card data.
var cardFields = []string{"card_number", "card_exp_month", "card_exp_year", "card_cvc"}

// hashSkip are the parameters left out of a request's idempotency hash.
var hashSkip = map[string]bool{"apikey": true, "format": true, "idempotency_key": true, "task": true}

// apiclasspayment: apikey (POST field or query), class_id, price_id,
// student_email, card_number, card_exp_month, card_exp_year, card_cvc,
// cancelUrl and returnUrl (base64), optional coupon_code and
// card_holder_name; Idempotency-Key header or idempotency_key. With card
// fields the card is charged now; without, the answer is a checkout page
// to send the buyer to (payKey and checkout_url) and the payment completes
// through the gateway's webhook.
func (a *API) apiClassPayment(ctx context.Context, c *call) (*result, error) {
	if a.Payments == nil {
		return nil, errors.New("payments service not configured")
	}
	q := c.Req.URL.Query()
	for _, f := range cardFields {
		if q.Has(f) {
			return nil, fail("%s must be sent in the POST body, never in the URL (addresses are logged)", f)
		}
	}
	classID, err := a.classID(ctx, c)
	if err != nil {
		return nil, err
	}
	schemeID, err := requiredID(c.P, "price_id")
	if err != nil {
		return nil, err
	}
	email := c.P.Get("student_email")
	if email == "" {
		return nil, fail("student_email is required")
	}
	if !lms.ValidEmail(email) {
		return nil, fail("student_email must be an email address such as ann@example.com")
	}
	p := payment.ClassPayment{ClassID: classID, SchemeID: schemeID, Email: email, Coupon: c.P.Get("coupon_code")}
	withCard := false
	for _, f := range cardFields {
		withCard = withCard || c.P.Has(f)
	}
	if p.ReturnURL, err = base64URL(c, "returnUrl", !withCard); err != nil {
		return nil, err
	}
	if p.CancelURL, err = base64URL(c, "cancelUrl", !withCard); err != nil {
		return nil, err
	}
	if withCard {
		card, err := payment.ReadCard(c.P.Get("card_number"), c.P.Get("card_exp_month"), c.P.Get("card_exp_year"),
			c.P.Get("card_cvc"), c.P.Get("card_holder_name"))
		if err != nil {
			return nil, cardError(err)
		}
		p.Card = &card
	}
	out, err := a.Payments.PayClass(ctx, c.Domain.ID, p, a.idem(c))
	if err != nil {
		return nil, paymentError(err)
	}
	return classPaymentResult(out.Order)
}

// classPaymentResult renders an order as apiclasspayment answers it: the
// seed's charge_id when paid, the reason in plain words when declined,
// payKey and checkout_url while the buyer has a checkout page to visit.
func classPaymentResult(o store.Order) (*result, error) {
	common := []kv{{"order_id", writeID(o.ID)}, {"amount", money.Money(o.Total).String()}, {"currency", o.Currency}}
	switch o.Status {
	case store.OrderPaid, store.OrderRefunded:
		return wire.Action("apiclasspayment", append([]kv{{"charge_id", o.ChargeID}}, common...)...), nil
	case store.OrderFailed:
		return nil, fail("%s", o.FailureReason)
	}
	return wire.Action("apiclasspayment", append([]kv{{"payKey", o.CheckoutID}, {"checkout_url", o.CheckoutURL}}, common...)...), nil
}

// idem is the request's idempotency key (header or parameter) and the
// hash of its parameters.
func (a *API) idem(c *call) payment.Idem {
	key := strings.TrimSpace(c.Req.Header.Get("Idempotency-Key"))
	if key == "" {
		key = c.P.Get("idempotency_key")
	}
	if key == "" {
		return payment.Idem{}
	}
	params := map[string]string{}
	for _, n := range c.P.Names() {
		if !hashSkip[n] {
			params[n] = c.P.Get(n)
		}
	}
	return payment.Idem{Key: key, Hash: a.Payments.RequestHash(params)}
}

// base64URL decodes a base64 (standard or URL alphabet, padded or not)
// http(s) address.
func base64URL(c *call, name string, required bool) (string, error) {
	v := c.P.Get(name)
	if v == "" {
		if required {
			return "", fail("%s is required (base64 of the address to send the buyer back to)", name)
		}
		return "", nil
	}
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if raw, err = enc.DecodeString(v); err == nil {
			break
		}
	}
	if err != nil {
		return "", fail("%s must be base64-encoded", name)
	}
	u, err := url.Parse(string(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fail("%s must be the base64 of an http or https address", name)
	}
	return u.String(), nil
}

// cardError words a card field error as the classroom API does.
func cardError(err error) error {
	var le *lms.Error
	if errors.As(err, &le) && len(le.Fields) > 0 {
		f := le.Fields[0]
		return fail("%s %s", f.Field, f.Message)
	}
	return err
}

// paymentError maps the payment service's errors: a refused idempotency
// key is a 409; a field error names the field.
func paymentError(err error) error {
	var kc *payment.KeyConflict
	if errors.As(err, &kc) {
		return &apiError{status: http.StatusConflict, msg: kc.Error()}
	}
	var le *lms.Error
	if errors.As(err, &le) && le.Code == lms.CodeInvalid && len(le.Fields) > 0 {
		f := le.Fields[0]
		if f.Field == "coupon_code" {
			return fail("%s", f.Message)
		}
		return fail("%s %s", f.Field, f.Message)
	}
	if errors.As(err, &le) && le.Code == lms.CodeNotFound && strings.HasPrefix(le.Message, "pricing scheme") {
		return fail("Invalid price_id: %s", le.Message)
	}
	return err
}

// getPaymentInfo: the gateway class payments go through and its public
// keys; secrets are never shown. Clients read paypal_id (always empty:
// Lectern has no PayPal gateway).
func (a *API) getPaymentInfo(ctx context.Context, c *call) (*result, error) {
	st, err := a.Store.PaymentSettings(ctx, c.Domain.ID)
	if err != nil {
		return nil, err
	}
	pk := ""
	if st.Gateway == store.GatewayStripe {
		pk = st.StripePublishableKey
	}
	return wire.Object("getPaymentInfo", kv{"gateway", st.Gateway}, kv{"paypal_id", ""}, kv{"stripe_account", ""},
		kv{"stripe_publishable_key", pk}, kv{"require_purchase", strconv.Itoa(lms.Flag(st.RequireGrant))}), nil
}

// listpurchases: class_id and/or email (student_email and userEmail are
// accepted too); at least one. Lists the purchase grants, oldest first.
func (a *API) listPurchases(ctx context.Context, c *call) (*result, error) {
	email, _ := c.P.First("email", "student_email", "userEmail")
	var classID int64
	if c.P.Has("class_id") {
		var err error
		if classID, err = a.classID(ctx, c); err != nil {
			return nil, err
		}
	} else if email == "" {
		return nil, fail("class_id or email is required")
	}
	gs, err := a.Store.Grants(ctx, c.Domain.ID, classID, email)
	if err != nil {
		return nil, err
	}
	now := a.now()
	rs := make([]obj, len(gs))
	for i, g := range gs {
		rs[i] = grantRecord(g, now)
	}
	return wire.Records("purchase", rs, "Purchase", "No purchase found"), nil
}

const grantTime = "2006-01-02 15:04:05"

// grantRecord renders a purchase grant.
func grantRecord(g store.Grant, now time.Time) obj {
	expires, lifetime := "Unlimited", "1"
	if !g.ExpiresAt.IsZero() {
		expires, lifetime = g.ExpiresAt.UTC().Format(grantTime), "0"
	}
	times, left := "0", "Unlimited"
	if g.LaunchesAllowed > 0 {
		times, left = "1", strconv.Itoa(max(g.LaunchesAllowed-g.LaunchesUsed, 0))
	}
	return obj{
		{"id", strconv.FormatInt(g.ID, 10)},
		{"class_id", strconv.FormatInt(g.ClassID, 10)},
		{"price_id", strconv.FormatInt(g.SchemeID, 10)},
		{"order_id", strconv.FormatInt(g.OrderID, 10)},
		{"email", g.Email},
		{"purchased", g.StartsAt.UTC().Format(grantTime)},
		{"expires", expires},
		{"lifetime", lifetime},
		{"times", times},
		{"numbertimes", strconv.Itoa(g.LaunchesAllowed)},
		{"launches_used", strconv.Itoa(g.LaunchesUsed)},
		{"launches_left", left},
		{"revoked", strconv.Itoa(lms.Flag(g.Revoked))},
		{"valid", strconv.Itoa(lms.Flag(g.Valid(now)))},
	}
}

// checkPurchase enforces the domain's purchase rule on a student's launch
// of a paid class: with the rule on, userEmail must have a valid grant,
// and the launch uses one of its launches.
func (a *API) checkPurchase(ctx context.Context, c *call, cls lms.LiveClass, teacher bool) error {
	if teacher || cls.IsPaid != 1 {
		return nil
	}
	st, err := a.Store.PaymentSettings(ctx, c.Domain.ID)
	if err != nil || !st.RequireGrant {
		return err
	}
	email := c.P.Get("userEmail")
	if email == "" {
		return fail("userEmail is required: class %d is paid and this account requires a purchase to launch it", cls.ID)
	}
	_, err = a.Store.UseGrant(ctx, c.Domain.ID, cls.ID, email, a.now())
	if lms.IsNotFound(err) {
		return fail("No valid purchase of class %d for %s: buy it with apiclasspayment (a purchase may have expired or used all its launches)", cls.ID, email)
	}
	return err
}
