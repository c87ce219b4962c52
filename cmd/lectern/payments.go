package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/payment"
	"github.com/lectern-lms/lectern/internal/server"
	"github.com/lectern-lms/lectern/internal/store"
)

// runDomainSetPayment sets a domain's payment gateway (domain
// set-payment). Stripe secrets are sealed with the server secret before
// they are stored and are never printed back; they may come from the
// environment (LECTERN_STRIPE_SECRET_KEY, LECTERN_STRIPE_WEBHOOK_SECRET)
// to keep them out of the shell history.
func runDomainSetPayment(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("domain set-payment", "Set the payment gateway a domain takes class payments and cart checkouts through.\n"+
		"test: built in, no money moves (test cards such as 4242 4242 4242 4242). stripe: Stripe, with the\n"+
		"account's secret key; the webhook secret completes checkout-page payments (register\n"+
		"<public URL>/payments/stripe/webhook/<domain id> in Stripe). none: payments off.", stderr)
	cfg.StoreFlags(fs)
	id := fs.Int64("domain", 0, "the domain's id (required)")
	gw := fs.String("gateway", "", "test, stripe or none (required)")
	sk := fs.String("stripe-secret-key", "", "Stripe secret key sk_... (or $LECTERN_STRIPE_SECRET_KEY)")
	wh := fs.String("stripe-webhook-secret", "", "Stripe webhook signing secret whsec_... (or $LECTERN_STRIPE_WEBHOOK_SECRET)")
	pk := fs.String("stripe-publishable-key", "", "Stripe publishable key pk_... (public; shown by getPaymentInfo)")
	base := fs.String("stripe-api-base", "", "Stripe API address (default https://api.stripe.com; for stripe-mock in tests)")
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	if *id <= 0 || (*gw != store.GatewayTest && *gw != store.GatewayStripe && *gw != store.GatewayNone) {
		fmt.Fprintln(stderr, "lectern domain set-payment: --domain ID and --gateway test|stripe|none are required")
		return errUsage
	}
	if *gw == store.GatewayStripe {
		if *sk == "" {
			*sk = os.Getenv("LECTERN_STRIPE_SECRET_KEY")
		}
		if *wh == "" {
			*wh = os.Getenv("LECTERN_STRIPE_WEBHOOK_SECRET")
		}
	}
	secret, err := server.LoadSecret(cfg.DataDir)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := &payment.Service{Store: st, Secret: secret}
	if err := svc.SetGateway(ctx, *id, payment.Settings{Gateway: *gw, StripeSecretKey: *sk, StripeWebhookSecret: *wh,
		StripePublishableKey: *pk, StripeAPIBase: *base}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Domain %d: payment gateway set to %s.", *id, *gw)
	if *gw == store.GatewayStripe {
		fmt.Fprintf(stdout, " Secret key stored encrypted; webhook secret %s.", map[bool]string{true: "stored encrypted", false: "not set (checkout pages cannot complete)"}[*wh != ""])
	}
	fmt.Fprintln(stdout)
	return nil
}

// runDomainSetRequirePurchase turns on or off the rule that a student's
// getclasslaunch of a paid class needs a purchase (domain
// set-require-purchase).
func runDomainSetRequirePurchase(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runDomainSetting(ctx, args, stdout, stderr, domainSetting{
		command: "set-require-purchase", flag: "require-purchase", values: []string{"on", "off"},
		help: "Make getclasslaunch for a student of a paid class require a valid purchase (apiclasspayment),\n" +
			"matched by the userEmail parameter; each launch uses one of the purchase's launches. off (the default)\n" +
			"launches anyone, as before.",
		set: func(ctx context.Context, st *store.Store, id int64, v string) error {
			return st.SetRequireGrant(ctx, id, v == "on")
		},
	})
}
