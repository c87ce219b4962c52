// Package payment takes payments for both APIs: a class payment
// (apiclasspayment) and a checkout of the LMS cart are orders priced by
// the pricing rules, paid through the domain's gateway (the built-in test
// gateway or Stripe) by card or through a hosted checkout page, and
// delivered (enrolments, purchase grants, points) in the transaction that
// records the payment.
//
// Money safety:
//   - The coupon's use and the pending order commit together before any
//     charge; a coupon at its limit is refused before the gateway is
//     called. A failed charge releases the uses its order took, and only
//     those.
//   - An idempotency key replays the first result of a request; the same
//     key with another request is a conflict.
//   - Gateway completions (webhooks, the test checkout page) move an
//     order from pending once; replays change nothing.
//   - Card numbers and CVCs go to the gateway and nowhere else.
package payment

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/money"
	"github.com/lectern-lms/lectern/internal/pricing"
	"github.com/lectern-lms/lectern/internal/store"
)

// Service takes payments for the domains of one store.
type Service struct {
	Store *store.Store
	// Secret is the server secret: gateway secrets are sealed and
	// idempotency hashes keyed with keys derived from it.
	Secret []byte
	// BaseURL is the server's public URL (for the test checkout page).
	BaseURL func() string
	Logger  *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// HTTPClient calls the gateways (http.DefaultClient when nil).
	HTTPClient *http.Client
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Settings are a domain's gateway settings as the operator gives them.
type Settings struct {
	Gateway              string // store.GatewayTest, GatewayStripe or GatewayNone
	StripeSecretKey      string
	StripeWebhookSecret  string
	StripePublishableKey string
	StripeAPIBase        string
}

// SetGateway seals the secrets and stores the domain's gateway. Stripe
// needs a secret key; its webhook secret is needed for the redirect flow.
func (s *Service) SetGateway(ctx context.Context, domainID int64, in Settings) error {
	var v lms.Validator
	switch in.Gateway {
	case store.GatewayStripe:
		v.Check(strings.HasPrefix(in.StripeSecretKey, "sk_") || strings.HasPrefix(in.StripeSecretKey, "rk_"),
			"stripe-secret-key", "is required for the stripe gateway and starts with sk_ or rk_")
		v.Check(in.StripeWebhookSecret == "" || strings.HasPrefix(in.StripeWebhookSecret, "whsec_"),
			"stripe-webhook-secret", "starts with whsec_")
		v.Check(in.StripePublishableKey == "" || strings.HasPrefix(in.StripePublishableKey, "pk_"),
			"stripe-publishable-key", "starts with pk_")
		if in.StripeAPIBase != "" {
			u, err := url.Parse(in.StripeAPIBase)
			v.Check(err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "", "stripe-api-base", "must be an http(s) URL")
		}
	case store.GatewayTest, store.GatewayNone:
		v.Check(in.StripeSecretKey == "" && in.StripeWebhookSecret == "", "gateway", "takes no Stripe secrets unless it is stripe")
		in = Settings{Gateway: in.Gateway}
	default:
		v.Add("gateway", "must be test, stripe or none")
	}
	if err := v.Err(); err != nil {
		return err
	}
	sk, err := Seal(s.Secret, sealAD(domainID, "stripe_secret"), in.StripeSecretKey)
	if err != nil {
		return err
	}
	wh, err := Seal(s.Secret, sealAD(domainID, "stripe_webhook_secret"), in.StripeWebhookSecret)
	if err != nil {
		return err
	}
	return s.Store.SetPaymentSettings(ctx, domainID, store.PaymentSettings{Gateway: in.Gateway, StripeSecretSealed: sk,
		StripeWebhookSecretSealed: wh, StripePublishableKey: in.StripePublishableKey, StripeAPIBase: in.StripeAPIBase})
}

func sealAD(domainID int64, field string) string {
	return "domain " + strconv.FormatInt(domainID, 10) + " " + field
}

// ErrNoGateway is returned when a domain has no payment gateway.
var ErrNoGateway = &lms.Error{Code: lms.CodeConflict,
	Message: "payments are not set up for this domain: the operator sets a gateway with lectern domain set-payment"}

// Gateway returns the domain's gateway, ErrNoGateway when it has none.
func (s *Service) Gateway(ctx context.Context, domainID int64) (Gateway, error) {
	st, err := s.Store.PaymentSettings(ctx, domainID)
	if err != nil {
		return nil, err
	}
	return s.gateway(domainID, st)
}

func (s *Service) gateway(domainID int64, st store.PaymentSettings) (Gateway, error) {
	switch st.Gateway {
	case store.GatewayTest:
		return &Test{Now: s.now, CheckoutURL: func(id string) string {
			return strings.TrimRight(s.BaseURL(), "/") + TestCheckoutPath(domainID, id)
		}}, nil
	case store.GatewayStripe:
		key, err := Unseal(s.Secret, sealAD(domainID, "stripe_secret"), st.StripeSecretSealed)
		if err != nil {
			return nil, err
		}
		return &Stripe{SecretKey: key, APIBase: st.StripeAPIBase, HTTPClient: s.HTTPClient}, nil
	}
	return nil, ErrNoGateway
}

// TestCheckoutPath is the path of the test gateway's hosted checkout page
// of a session.
func TestCheckoutPath(domainID int64, sessionID string) string {
	return "/payments/test/checkout/" + strconv.FormatInt(domainID, 10) + "/" + sessionID
}

// RequestHash is an HMAC of a request's parameters (names sorted), keyed
// by the server secret, for idempotency checks: it tells two requests
// apart without storing what they carried (card numbers included).
func (s *Service) RequestHash(params map[string]string) string {
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	m := hmac.New(sha256.New, deriveKey(s.Secret, "lectern idempotency v1"))
	for _, k := range names {
		fmt.Fprintf(m, "%d:%s=%d:%s;", len(k), k, len(params[k]), params[k])
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Idempotency scopes.
const (
	ScopeClassPayment = "class_payment"
	ScopeCheckout     = "checkout"
	ScopeRefund       = "refund"
)

// Idem is a request's idempotency key and hash; a zero Idem has none.
type Idem struct {
	Key  string
	Hash string
}

// once runs fn under idempotency key k of scope: a first request runs fn
// (which returns the order it made, 0 for none); a replay returns the
// first request's order id with replayed true.
func (s *Service) once(ctx context.Context, domainID int64, scope string, k Idem, fn func() (int64, error)) (id int64, replayed bool, err error) {
	if k.Key == "" {
		id, err = fn()
		return id, false, err
	}
	if len(k.Key) > 255 {
		return 0, false, lms.Invalidf("idempotency_key", "must be at most 255 characters")
	}
	prev, fresh, err := s.Store.BeginIdempotent(ctx, domainID, scope, k.Key, k.Hash)
	var le *lms.Error
	if errors.As(err, &le) && le.Code == lms.CodeConflict {
		return 0, false, &KeyConflict{Err: le}
	}
	if err != nil {
		return 0, false, err
	}
	if !fresh {
		return prev, true, nil
	}
	id, err = fn()
	if id == 0 {
		if ferr := s.Store.ForgetIdempotent(context.WithoutCancel(ctx), domainID, scope, k.Key); ferr != nil {
			s.Logger.Error("release idempotency key", "domain_id", domainID, "err", ferr)
		}
		return 0, false, err
	}
	if ferr := s.Store.FinishIdempotent(context.WithoutCancel(ctx), domainID, scope, k.Key, id); ferr != nil && err == nil {
		err = ferr
	}
	return id, false, err
}

// KeyConflict is an idempotency key refused: used with another request,
// or its first request still runs. Both APIs answer it with HTTP 409.
type KeyConflict struct{ Err *lms.Error }

func (e *KeyConflict) Error() string { return e.Err.Message }

// Unwrap returns the conflict error.
func (e *KeyConflict) Unwrap() error { return e.Err }

// Pay is how an order is paid: by card (Card set) or through a hosted
// checkout page that returns the buyer to ReturnURL or CancelURL.
type Pay struct {
	Card      *Card
	ReturnURL string
	CancelURL string
}

// Outcome is the result of a payment request: the order as it stands
// (paid, failed with its reason, or pending with its checkout URL), and
// whether it is the replay of an earlier request with the same key.
type Outcome struct {
	Order    store.Order
	Replayed bool
}

// ClassPayment is an apiclasspayment request.
type ClassPayment struct {
	ClassID  int64
	SchemeID int64
	Email    string
	Coupon   string
	Pay
}

// Refusals are a refused code's reason in words, by pricing reason.
var Refusals = map[string]string{
	pricing.RefusedUnknown:     "Invalid coupon code",
	pricing.RefusedExpired:     "Coupon code has expired",
	pricing.RefusedNotYetValid: "Coupon code is not valid yet",
	pricing.RefusedUsedUp:      "Coupon code has been used up",
	pricing.RefusedOtherItem:   "Coupon code is not valid for this item",
}

// PayClass prices a class scheme with the coupon, records the order with
// the coupon's use and takes the payment.
func (s *Service) PayClass(ctx context.Context, domainID int64, p ClassPayment, k Idem) (Outcome, error) {
	id, replayed, err := s.once(ctx, domainID, ScopeClassPayment, k, func() (int64, error) {
		// Abandoned test checkout pages give their coupon uses back first.
		if err := s.expireTestCheckouts(ctx, domainID); err != nil {
			return 0, err
		}
		class, err := s.Store.LiveClass(ctx, domainID, p.ClassID)
		if err != nil {
			return 0, err
		}
		q, err := s.Store.Quote(ctx, domainID, lms.KindClass, p.ClassID, p.SchemeID, p.Coupon, s.now())
		if err != nil {
			return 0, err
		}
		if p.Coupon != "" && q.CodeRefused != "" {
			msg := Refusals[q.CodeRefused]
			if q.CodeRefused == pricing.RefusedOtherItem {
				msg = "Coupon code is not valid for this class" // applycoupon's words
			}
			return 0, lms.Invalidf("coupon_code", "%s", msg)
		}
		currency := strings.ToLower(class.Currency)
		if currency == "" {
			currency = "usd"
		}
		line := store.OrderLine{Kind: lms.KindClass, ItemID: p.ClassID, SchemeID: p.SchemeID, Name: class.Title,
			Base: q.Base, Discount: q.Amount, Amount: q.Due}
		if q.Discount != nil {
			line.DiscountID = q.Discount.ID
		}
		o := store.Order{Source: store.SourceClassPayment, BuyerEmail: p.Email, Currency: currency, Subtotal: q.Base,
			Discount: q.Amount, Total: q.Due, CouponCode: p.Coupon, ReturnURL: p.ReturnURL, CancelURL: p.CancelURL,
			Lines: []store.OrderLine{line}}
		return s.place(ctx, domainID, o, p.Pay, "Class: "+class.Title)
	})
	return s.outcome(ctx, domainID, id, replayed, err)
}

func (s *Service) outcome(ctx context.Context, domainID, id int64, replayed bool, err error) (Outcome, error) {
	if id == 0 {
		return Outcome{}, err
	}
	o, oerr := s.Store.Order(ctx, domainID, id)
	if oerr != nil {
		return Outcome{}, oerr
	}
	return Outcome{Order: o, Replayed: replayed}, err
}

// place stores the pending order (taking its discount uses), then pays it:
// at once when it costs nothing, by card, or by opening a checkout page.
// It returns the order's id once the order exists.
func (s *Service) place(ctx context.Context, domainID int64, o store.Order, pay Pay, description string) (int64, error) {
	var gw Gateway
	if o.Total > 0 {
		var err error
		if gw, err = s.Gateway(ctx, domainID); err != nil {
			return 0, err
		}
		o.Gateway = gw.Name()
	} else {
		o.Gateway = "free"
	}
	o.CreatedAt = s.now()
	o, err := s.Store.CreateOrder(ctx, domainID, o)
	if err != nil {
		return 0, err
	}
	ref := strconv.FormatInt(o.ID, 10)
	// Nothing below may lose the order: a cancelled request still finishes.
	ctx = context.WithoutCancel(ctx)
	switch {
	case o.Total == 0:
		_, _, err = s.Store.PayOrder(ctx, domainID, o.ID, "free_"+ref, s.now())
	case pay.Card != nil:
		var chargeID string
		chargeID, err = gw.Charge(ctx, Charge{Amount: o.Total, Currency: o.Currency, Card: *pay.Card, Description: description,
			Reference: ref, IdempotencyKey: fmt.Sprintf("lectern-%d-order-%d", domainID, o.ID)})
		var d *Decline
		switch {
		case errors.As(err, &d):
			_, _, err = s.Store.FailOrder(ctx, domainID, o.ID, d.Reason)
		case err != nil:
			s.Logger.Error("payment gateway", "domain_id", domainID, "order_id", o.ID, "gateway", gw.Name(), "err", err)
			_, _, err = s.Store.FailOrder(ctx, domainID, o.ID, "The payment could not be processed: the payment service did not answer. Nothing was charged; try again.")
		default:
			if _, _, err = s.Store.PayOrder(ctx, domainID, o.ID, chargeID, s.now()); err != nil {
				// The money was taken: say so where the operator looks.
				s.Logger.Error("payment taken but not recorded; reconcile by hand", "domain_id", domainID, "order_id", o.ID,
					"gateway", gw.Name(), "charge_id", chargeID, "err", err)
			}
		}
	default:
		var sess Session
		sess, err = gw.StartCheckout(ctx, Checkout{Amount: o.Total, Currency: o.Currency, Description: description, Reference: ref,
			Email: o.BuyerEmail, SuccessURL: pay.ReturnURL, CancelURL: pay.CancelURL})
		if err != nil {
			s.Logger.Error("start checkout", "domain_id", domainID, "order_id", o.ID, "gateway", gw.Name(), "err", err)
			_, _, err = s.Store.FailOrder(ctx, domainID, o.ID, "The checkout page could not be opened: the payment service did not answer. Try again.")
		} else {
			err = s.Store.SetOrderCheckout(ctx, domainID, o.ID, sess.ID, sess.URL)
		}
	}
	return o.ID, err
}

// CheckoutTTL is how long a checkout page stays open: a Stripe Checkout
// Session expires then (Stripe's webhook fails the order), and the test
// gateway's pages likewise.
const CheckoutTTL = time.Hour

// expireTestCheckouts fails the domain's test-gateway orders whose checkout
// page has been open longer than CheckoutTTL, releasing their coupon uses.
// It runs before a new order of the domain is priced and when a page is
// opened, so no process needs to sweep.
func (s *Service) expireTestCheckouts(ctx context.Context, domainID int64) error {
	_, err := s.Store.ExpireCheckouts(ctx, domainID, "test", s.now().Add(-CheckoutTTL),
		"The checkout page expired before the payment was made.")
	return err
}

// CompleteCheckout pays the pending order of a checkout session with the
// gateway's payment id. Done twice, the second changes nothing.
func (s *Service) CompleteCheckout(ctx context.Context, domainID int64, sessionID, chargeID string) (store.Order, error) {
	o, err := s.Store.OrderByCheckout(ctx, domainID, sessionID)
	if err != nil {
		return o, err
	}
	o, _, err = s.Store.PayOrder(ctx, domainID, o.ID, chargeID, s.now())
	return o, err
}

// FailCheckout fails the pending order of a checkout session.
func (s *Service) FailCheckout(ctx context.Context, domainID int64, sessionID, reason string) (store.Order, error) {
	o, err := s.Store.OrderByCheckout(ctx, domainID, sessionID)
	if err != nil {
		return o, err
	}
	o, _, err = s.Store.FailOrder(ctx, domainID, o.ID, reason)
	return o, err
}

// Refund refunds amount (minor units; 0 for all that is left) of a paid
// order through the gateway that took it, then records it (a full refund
// unenrolls and revokes grants: see store.RefundOrder).
func (s *Service) Refund(ctx context.Context, domainID, orderID, amount int64, k Idem) (Outcome, error) {
	id, replayed, err := s.once(ctx, domainID, ScopeRefund, k, func() (int64, error) {
		o, err := s.Store.Order(ctx, domainID, orderID)
		if err != nil {
			return 0, err
		}
		if o.Status != store.OrderPaid {
			return 0, lms.Conflictf("order %d is %s: only a paid order can be refunded", o.ID, o.Status)
		}
		left := o.Total - o.Refunded
		if amount == 0 {
			amount = left
		}
		if amount > left {
			return 0, lms.Invalidf("amount", "must be at most %s, what is left to refund of order %d", money.Money(left), o.ID)
		}
		if amount <= 0 {
			return 0, lms.Conflictf("order %d has nothing left to refund", o.ID)
		}
		refundID := "free"
		if o.Gateway != "free" {
			gw, err := s.Gateway(ctx, domainID)
			if err != nil {
				return 0, err
			}
			if gw.Name() != o.Gateway {
				return 0, lms.Conflictf("order %d was paid through the %s gateway; the domain now uses %s: refund it there", o.ID, o.Gateway, gw.Name())
			}
			key := "lectern-refund-" + randomID()
			if k.Key != "" {
				key = fmt.Sprintf("lectern-%d-refund-%s", domainID, k.Hash[:32])
			}
			if refundID, err = gw.Refund(ctx, o.ChargeID, amount, key); err != nil {
				var d *Decline
				if errors.As(err, &d) {
					return 0, lms.Conflictf("the gateway refused the refund: %s", d.Reason)
				}
				return 0, err
			}
		}
		if _, err := s.Store.RefundOrder(context.WithoutCancel(ctx), domainID, o.ID, amount, refundID); err != nil {
			return 0, err
		}
		return o.ID, nil
	})
	return s.outcome(ctx, domainID, id, replayed, err)
}
