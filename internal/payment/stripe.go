package payment

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v85"
)

// Stripe takes payments through Stripe's API with the official library.
// APIBase replaces https://api.stripe.com (tests point it at stripe-mock).
type Stripe struct {
	SecretKey  string
	APIBase    string
	HTTPClient *http.Client
}

// Name implements Gateway.
func (s *Stripe) Name() string { return "stripe" }

func (s *Stripe) client() *stripe.Client {
	cfg := &stripe.BackendConfig{
		HTTPClient: s.HTTPClient,
		// The library's own log could name request details; Lectern logs
		// what it needs itself.
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
		MaxNetworkRetries: stripe.Int64(2),
	}
	if s.APIBase != "" {
		cfg.URL = stripe.String(s.APIBase)
	}
	b := stripe.GetBackendWithConfig(stripe.APIBackend, cfg)
	return stripe.NewClient(s.SecretKey, stripe.WithBackends(&stripe.Backends{API: b, Connect: b, Uploads: b, MeterEvents: b}))
}

// Charge implements Gateway: the card becomes a PaymentMethod and a
// PaymentIntent is created and confirmed with it at once.
func (s *Stripe) Charge(ctx context.Context, c Charge) (string, error) {
	sc := s.client()
	pmp := &stripe.PaymentMethodCreateParams{
		Type: stripe.String("card"),
		Card: &stripe.PaymentMethodCreateCardParams{
			Number:   stripe.String(c.Card.Number),
			ExpMonth: stripe.Int64(int64(c.Card.ExpMonth)),
			ExpYear:  stripe.Int64(int64(c.Card.ExpYear)),
			CVC:      stripe.String(c.Card.CVC),
		},
	}
	if c.Card.Holder != "" {
		pmp.BillingDetails = &stripe.PaymentMethodCreateBillingDetailsParams{Name: stripe.String(c.Card.Holder)}
	}
	if c.IdempotencyKey != "" {
		pmp.SetIdempotencyKey(c.IdempotencyKey + "-pm")
	}
	pm, err := sc.V1PaymentMethods.Create(ctx, pmp)
	if err != nil {
		return "", stripeErr(err)
	}
	pip := &stripe.PaymentIntentCreateParams{
		Amount:        stripe.Int64(c.Amount),
		Currency:      stripe.String(c.Currency),
		PaymentMethod: stripe.String(pm.ID),
		Confirm:       stripe.Bool(true),
		Description:   stripe.String(c.Description),
		AutomaticPaymentMethods: &stripe.PaymentIntentCreateAutomaticPaymentMethodsParams{
			Enabled: stripe.Bool(true), AllowRedirects: stripe.String("never")},
	}
	pip.AddMetadata("lectern_order", c.Reference)
	if c.IdempotencyKey != "" {
		pip.SetIdempotencyKey(c.IdempotencyKey)
	}
	pi, err := sc.V1PaymentIntents.Create(ctx, pip)
	if err != nil {
		return "", stripeErr(err)
	}
	switch pi.Status {
	case stripe.PaymentIntentStatusSucceeded, stripe.PaymentIntentStatusProcessing, stripe.PaymentIntentStatusRequiresCapture:
		return pi.ID, nil
	case stripe.PaymentIntentStatusRequiresAction:
		return "", &Decline{Code: "authentication_required",
			Reason: "Your card needs the bank's authentication: pay without card fields to use the checkout page instead."}
	}
	reason := "Your card was declined."
	if pi.LastPaymentError != nil && pi.LastPaymentError.Msg != "" {
		reason = pi.LastPaymentError.Msg
	}
	return "", &Decline{Code: "card_declined", Reason: reason}
}

// StartCheckout implements Gateway with a Checkout Session in payment
// mode, one line of the order's total.
func (s *Stripe) StartCheckout(ctx context.Context, c Checkout) (Session, error) {
	p := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		SuccessURL:        stripe.String(c.SuccessURL),
		CancelURL:         stripe.String(c.CancelURL),
		ClientReferenceID: stripe.String(c.Reference),
		ExpiresAt:         stripe.Int64(time.Now().Add(CheckoutTTL).Unix()),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(c.Currency),
				UnitAmount:  stripe.Int64(c.Amount),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(c.Description)},
			},
		}},
	}
	if c.Email != "" {
		p.CustomerEmail = stripe.String(c.Email)
	}
	p.AddMetadata("lectern_order", c.Reference)
	p.SetIdempotencyKey("lectern-checkout-" + c.Reference)
	cs, err := s.client().V1CheckoutSessions.Create(ctx, p)
	if err != nil {
		return Session{}, stripeErr(err)
	}
	return Session{ID: cs.ID, URL: cs.URL}, nil
}

// Refund implements Gateway; chargeID is a PaymentIntent id.
func (s *Stripe) Refund(ctx context.Context, chargeID string, amount int64, key string) (string, error) {
	p := &stripe.RefundCreateParams{PaymentIntent: stripe.String(chargeID), Amount: stripe.Int64(amount)}
	if key != "" {
		p.SetIdempotencyKey(key)
	}
	r, err := s.client().V1Refunds.Create(ctx, p)
	if err != nil {
		return "", stripeErr(err)
	}
	return r.ID, nil
}

// stripeErr turns a card error into a Decline with Stripe's own buyer
// message; anything else stays an error (logged, never shown).
func stripeErr(err error) error {
	var se *stripe.Error
	if errors.As(err, &se) && se.Type == stripe.ErrorTypeCard {
		code := string(se.Code)
		if se.DeclineCode != "" {
			code = string(se.DeclineCode)
		}
		msg := se.Msg
		if msg == "" {
			msg = "Your card was declined."
		}
		return &Decline{Code: code, Reason: msg}
	}
	if errors.As(err, &se) {
		return errors.New("stripe: " + string(se.Type) + " " + string(se.Code) + " (HTTP " + strconv.Itoa(se.HTTPStatusCode) + "): " + se.Msg)
	}
	return err
}
