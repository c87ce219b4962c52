package payment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// The built-in test gateway takes no money and calls no network. It knows
// the test card numbers payment providers document, so client sites' test
// data behaves as it would against a provider's test mode:
//
//	4242 4242 4242 4242  succeeds (also the other success cards in testCards)
//	4000 0000 0000 0002  declined: "Your card was declined."
//	4000 0000 0000 9995  declined: "Your card has insufficient funds."
//	4000 0000 0000 0127  declined: "Your card's security code is incorrect."
//	4000 0000 0000 0069  declined: "Your card has expired."
//	4000 0000 0000 0119  declined: "An error occurred while processing your card. Try again in a little bit."
//
// Any future expiry date and any CVC of 3 or 4 digits are accepted; a past
// expiry date is declined as expired. A valid card number that is not a
// test card is declined, so that a real card is never taken for a test.

// testCards maps a test card number to its decline, nil for success.
var testCards = map[string]*Decline{
	"4242424242424242": nil,
	"4000056655665556": nil,
	"5555555555554444": nil,
	"2223003122003222": nil,
	"5200828282828210": nil,
	"378282246310005":  nil,
	"6011111111111117": nil,
	"4000000000000002": {Code: "card_declined", Reason: "Your card was declined."},
	"4000000000009995": {Code: "insufficient_funds", Reason: "Your card has insufficient funds."},
	"4000000000000127": {Code: "incorrect_cvc", Reason: "Your card's security code is incorrect."},
	"4000000000000069": {Code: "expired_card", Reason: "Your card has expired."},
	"4000000000000119": {Code: "processing_error", Reason: "An error occurred while processing your card. Try again in a little bit."},
}

// TestCardOutcome is what the test gateway does with card at instant now:
// nil to succeed, else the decline.
func TestCardOutcome(card Card, now time.Time) *Decline {
	if ExpiryPassed(card.ExpMonth, card.ExpYear, now) {
		return &Decline{Code: "expired_card", Reason: "Your card has expired."}
	}
	d, ok := testCards[card.Number]
	if !ok {
		return &Decline{Code: "card_declined", Reason: "Your card was declined: the test gateway takes only test cards, such as 4242 4242 4242 4242."}
	}
	return d
}

// Test is the built-in test gateway of one domain.
type Test struct {
	// CheckoutURL returns the address of the hosted test checkout page of
	// a session.
	CheckoutURL func(sessionID string) string
	// Now is the clock for expiry dates.
	Now func() time.Time
}

// Name implements Gateway.
func (t *Test) Name() string { return "test" }

// Charge implements Gateway.
func (t *Test) Charge(ctx context.Context, c Charge) (string, error) {
	if d := TestCardOutcome(c.Card, t.Now()); d != nil {
		return "", d
	}
	return "ch_test_" + randomID(), nil
}

// StartCheckout implements Gateway: the page is served by Lectern.
func (t *Test) StartCheckout(ctx context.Context, c Checkout) (Session, error) {
	id := "cs_test_" + randomID()
	return Session{ID: id, URL: t.CheckoutURL(id)}, nil
}

// Refund implements Gateway.
func (t *Test) Refund(ctx context.Context, chargeID string, amount int64, key string) (string, error) {
	return "re_test_" + randomID(), nil
}

func randomID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}
