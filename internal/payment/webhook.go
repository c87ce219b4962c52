package payment

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
)

// StripeWebhookPath is where a domain's Stripe webhook endpoint is; the
// operator registers BaseURL + this path in the Stripe dashboard.
func StripeWebhookPath(domainID int64) string {
	return "/payments/stripe/webhook/" + strconv.FormatInt(domainID, 10)
}

// Register adds the gateways' callbacks to mux: the Stripe webhook and the
// test gateway's hosted checkout page.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /payments/stripe/webhook/{domain_id}", s.stripeWebhook)
	mux.HandleFunc("GET /payments/test/checkout/{domain_id}/{session}", s.testCheckoutPage)
	mux.HandleFunc("POST /payments/test/checkout/{domain_id}/{session}", s.testCheckoutSubmit)
}

func hookReply(w http.ResponseWriter, status int, msg string) {
	httpx.WriteJSON(w, status, map[string]any{"received": status < 300, "message": msg})
}

// stripeWebhook verifies an event's signature with the domain's webhook
// secret, skips events already processed (by event id), completes or
// fails the order of a checkout session, and acknowledges every other
// event without acting on it. A failure to process answers 500, so Stripe
// sends the event again; it is recorded as processed only once it was.
func (s *Service) stripeWebhook(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	domainID, err := strconv.ParseInt(r.PathValue("domain_id"), 10, 64)
	if err != nil || domainID <= 0 {
		hookReply(w, http.StatusNotFound, "unknown domain")
		return
	}
	st, err := s.Store.PaymentSettings(ctx, domainID)
	if err != nil {
		s.Logger.Error("webhook settings", "domain_id", domainID, "err", err)
		hookReply(w, http.StatusInternalServerError, "internal server error")
		return
	}
	secret, err := Unseal(s.Secret, sealAD(domainID, "stripe_webhook_secret"), st.StripeWebhookSecretSealed)
	if err != nil || st.Gateway != "stripe" || secret == "" {
		if err != nil {
			s.Logger.Error("webhook secret", "domain_id", domainID, "err", err)
		}
		hookReply(w, http.StatusBadRequest, "this domain has no Stripe webhook secret: set one with lectern domain set-payment --stripe-webhook-secret")
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		hookReply(w, http.StatusBadRequest, "body could not be read")
		return
	}
	ev, err := webhook.ConstructEventWithOptions(payload, r.Header.Get("Stripe-Signature"), secret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		hookReply(w, http.StatusBadRequest, "signature verification failed")
		return
	}
	seen, err := s.Store.PaymentEventSeen(ctx, domainID, ev.ID)
	if err != nil {
		s.Logger.Error("webhook dedup", "domain_id", domainID, "err", err)
		hookReply(w, http.StatusInternalServerError, "internal server error")
		return
	}
	if seen {
		hookReply(w, http.StatusOK, "event "+ev.ID+" was already processed")
		return
	}
	msg, err := s.handleStripeEvent(ctx, domainID, ev)
	if err != nil {
		s.Logger.Error("webhook event", "domain_id", domainID, "event_id", ev.ID, "type", string(ev.Type), "err", err)
		hookReply(w, http.StatusInternalServerError, "internal server error")
		return
	}
	if err := s.Store.RecordPaymentEvent(ctx, domainID, ev.ID, string(ev.Type)); err != nil {
		s.Logger.Error("webhook record", "domain_id", domainID, "event_id", ev.ID, "err", err)
	}
	hookReply(w, http.StatusOK, msg)
}

func (s *Service) handleStripeEvent(ctx context.Context, domainID int64, ev stripe.Event) (string, error) {
	var cs stripe.CheckoutSession
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded",
		"checkout.session.expired", "checkout.session.async_payment_failed":
		if ev.Data == nil || json.Unmarshal(ev.Data.Raw, &cs) != nil || cs.ID == "" {
			return "event " + ev.ID + " carries no checkout session; ignored", nil
		}
	default:
		return "event type " + string(ev.Type) + " is not used; acknowledged", nil
	}
	var err error
	switch ev.Type {
	case "checkout.session.expired":
		_, err = s.FailCheckout(ctx, domainID, cs.ID, "The checkout page expired before the payment was made.")
	case "checkout.session.async_payment_failed":
		_, err = s.FailCheckout(ctx, domainID, cs.ID, "The payment failed.")
	default:
		if cs.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid && cs.PaymentStatus != stripe.CheckoutSessionPaymentStatusNoPaymentRequired {
			return "checkout session " + cs.ID + " is not paid yet", nil
		}
		charge := cs.ID
		if cs.PaymentIntent != nil && cs.PaymentIntent.ID != "" {
			charge = cs.PaymentIntent.ID
		}
		_, err = s.CompleteCheckout(ctx, domainID, cs.ID, charge)
	}
	var le *lms.Error
	if errors.As(err, &le) && le.Code == lms.CodeNotFound {
		return "checkout session " + cs.ID + " is not one of this domain's orders; ignored", nil
	}
	if err != nil {
		return "", err
	}
	return "event " + ev.ID + " processed", nil
}
