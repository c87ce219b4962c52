package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/payment"
	"github.com/lectern-lms/lectern/internal/server"
	"github.com/lectern-lms/lectern/internal/store"
)

// domain set-payment stores the gateway with its secrets sealed by the
// data dir's server secret and never prints them back; bad input is a
// usage error. domain set-require-purchase turns the launch rule on.
func TestDomainSetPayment(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			sargs := storeArgs(t, b)
			code, out, errOut := lectern(t, append([]string{"domain", "create", "--name", "Shop", "--json"}, sargs...)...)
			if code != 0 {
				t.Fatalf("domain create: %d %s", code, errOut)
			}
			var created struct {
				ID int64 `json:"domain_id"`
			}
			json.Unmarshal([]byte(out), &created)
			id := strconv.FormatInt(created.ID, 10)

			const sk, wh = "sk_test_cli_secret_123", "whsec_cli_secret_456"
			t.Setenv("LECTERN_STRIPE_WEBHOOK_SECRET", wh)
			code, out, errOut = lectern(t, append([]string{"domain", "set-payment", "--domain", id, "--gateway", "stripe",
				"--stripe-secret-key", sk, "--stripe-publishable-key", "pk_test_pub"}, sargs...)...)
			if code != 0 || !strings.Contains(out, "gateway set to stripe") {
				t.Fatalf("set-payment: %d %q %s", code, out, errOut)
			}
			if strings.Contains(out+errOut, sk) || strings.Contains(out+errOut, wh) {
				t.Errorf("a secret was printed: %q %q", out, errOut)
			}
			for _, bad := range [][]string{
				{"--domain", id, "--gateway", "paypal"},
				{"--gateway", "test"},
			} {
				if code, _, _ := lectern(t, append(append([]string{"domain", "set-payment"}, bad...), sargs...)...); code == 0 {
					t.Errorf("set-payment %v succeeded", bad)
				}
			}
			if code, _, errOut := lectern(t, append([]string{"domain", "set-payment", "--domain", id, "--gateway", "stripe",
				"--stripe-secret-key", "nope"}, sargs...)...); code == 0 || !strings.Contains(errOut, "stripe-secret-key") {
				t.Errorf("bad key: %d %s", code, errOut)
			}
			code, _, errOut = lectern(t, append([]string{"domain", "set-require-purchase", "--domain", id, "--require-purchase", "on"}, sargs...)...)
			if code != 0 {
				t.Fatalf("set-require-purchase: %s", errOut)
			}

			dataDir := sargs[1]
			url := ""
			if len(sargs) > 2 {
				url = sargs[3]
			}
			st, err := store.Open(context.Background(), store.Options{DatabaseURL: url, DataDir: dataDir})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ps, err := st.PaymentSettings(context.Background(), created.ID)
			if err != nil || ps.Gateway != "stripe" || !ps.RequireGrant || ps.StripePublishableKey != "pk_test_pub" {
				t.Fatalf("settings: %+v %v", ps, err)
			}
			if strings.Contains(ps.StripeSecretSealed, sk) || strings.Contains(ps.StripeWebhookSecretSealed, wh) {
				t.Errorf("secrets stored in the clear")
			}
			secret, err := server.LoadSecret(dataDir)
			if err != nil {
				t.Fatal(err)
			}
			gw, err := (&payment.Service{Store: st, Secret: secret}).Gateway(context.Background(), created.ID)
			if s, ok := gw.(*payment.Stripe); err != nil || !ok || s.SecretKey != sk {
				t.Errorf("the sealed key does not open with the server secret: %v", err)
			}
			if _, err := payment.Unseal(secret, "domain "+id+" stripe_webhook_secret", ps.StripeWebhookSecretSealed); err != nil {
				t.Errorf("webhook secret from the environment: %v", err)
			}
		})
	}
}
