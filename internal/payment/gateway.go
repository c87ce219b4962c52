package payment

import (
	"context"
	"log/slog"
)

// Gateway takes payments. Implementations: Test (built in) and Stripe.
type Gateway interface {
	// Name is the gateway's name in settings and records: "test" or
	// "stripe".
	Name() string
	// Charge takes amount (minor units of currency) from card now. A
	// refusal by the card's bank is a *Decline; other errors mean the
	// gateway could not be asked.
	Charge(ctx context.Context, c Charge) (chargeID string, err error)
	// StartCheckout opens a hosted checkout page for the redirect flow.
	// The payment completes later, through the gateway's webhook.
	StartCheckout(ctx context.Context, c Checkout) (Session, error)
	// Refund returns amount (minor units) of a charge to the buyer.
	Refund(ctx context.Context, chargeID string, amount int64, idempotencyKey string) (refundID string, err error)
}

// Card is a payment card as the buyer typed it. It is passed to the gateway
// and never stored nor logged: its LogValue shows the last four digits only.
type Card struct {
	Number   string // digits only
	ExpMonth int
	ExpYear  int // four digits
	CVC      string
	Holder   string
}

// Last4 is the card number's last four digits.
func (c Card) Last4() string {
	if len(c.Number) < 4 {
		return ""
	}
	return c.Number[len(c.Number)-4:]
}

// LogValue keeps the number and CVC out of logs.
func (c Card) LogValue() slog.Value { return slog.StringValue("card ending " + c.Last4()) }

// String keeps the number and CVC out of formatted errors.
func (c Card) String() string { return "card ending " + c.Last4() }

// Charge is one card payment.
type Charge struct {
	Amount      int64
	Currency    string // lower case ISO 4217
	Card        Card
	Description string
	// Reference is Lectern's order id, kept by the gateway with the
	// payment; IdempotencyKey makes a retried call charge once.
	Reference      string
	IdempotencyKey string
}

// Checkout is a redirect payment.
type Checkout struct {
	Amount      int64
	Currency    string
	Description string
	Reference   string
	Email       string
	SuccessURL  string
	CancelURL   string
}

// Session is an open hosted checkout page.
type Session struct {
	ID  string
	URL string
}

// Decline is a payment the card's bank or the gateway refused. Reason is
// plain words a buyer can read ("Your card has insufficient funds.");
// Code is the gateway's short code (card_declined, insufficient_funds,
// incorrect_cvc, expired_card, ...).
type Decline struct {
	Code   string
	Reason string
}

func (d *Decline) Error() string { return d.Reason }
