package payment_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"go/build"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/payment"
	"github.com/lectern-lms/lectern/internal/store"
)

// stripeMock starts stripe-mock (Stripe's API mock) on a free loopback port
// for t and returns its base URL. Without the binary the test is skipped,
// except under CI (CI set), where it fails: .ci/run installs it with
//
//	go install github.com/stripe/stripe-mock@v0.203.0
func stripeMock(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("stripe-mock")
	if err != nil {
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			gopath = build.Default.GOPATH
		}
		bin = filepath.Join(gopath, "bin", "stripe-mock")
		if _, err := os.Stat(bin); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("stripe-mock is not installed; CI must run the Stripe tests: go install github.com/stripe/stripe-mock@v0.203.0")
			}
			t.Skip("stripe-mock not installed (go install github.com/stripe/stripe-mock@v0.203.0): Stripe tests skipped")
		}
	}
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start stripe-mock: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "Listening for HTTP at address: "); ok && !sent {
				addr <- strings.TrimSpace(a)
				sent = true
			}
		}
		if !sent {
			close(addr)
		}
	}()
	a, ok := <-addr
	if !ok {
		t.Fatal("stripe-mock exited without listening")
	}
	return "http://" + a
}

const (
	webhookSecret = "whsec_test_lectern"
	secretKey     = "sk_test_lectern123"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// stripeDomain points e.Domain's gateway at stripe-mock and makes a paid
// class with one price.
func stripeDomain(t *testing.T, e *apitest.Env, mock string) (classID, priceID string) {
	t.Helper()
	svc := &payment.Service{Store: e.Store, Secret: e.Main.Secret}
	if err := svc.SetGateway(context.Background(), e.Domain.ID, payment.Settings{Gateway: "stripe", StripeSecretKey: secretKey,
		StripeWebhookSecret: webhookSecret, StripePublishableKey: "pk_test_public", StripeAPIBase: mock}); err != nil {
		t.Fatal(err)
	}
	classID = vc(t, e, "schedule", url.Values{"title": {"Paid"}, "timezone": {"28"}, "date": {"2031-03-10"}, "start_time": {"03:00 PM"},
		"end_time": {"04:00 PM"}, "ispaid": {"1"}, "currency": {"EUR"}})["class_id"]
	priceID = vc(t, e, "addSchemes", url.Values{"class_id": {classID}, "price": {"12.00"}, "scheme_days": {"0"}, "times": {"0"}})["Price id"]
	return classID, priceID
}

// vc calls a classroom operation and returns its answer's fields as text.
func vc(t *testing.T, e *apitest.Env, op string, params url.Values) map[string]string {
	t.Helper()
	body := e.VC(op, params).JSON(t)
	if a, ok := body.([]any); ok && len(a) == 1 {
		body = a[0]
	}
	m, _ := body.(map[string]any)
	out := map[string]string{}
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// sendEvent posts a webhook event signed with secret.
func sendEvent(t *testing.T, e *apitest.Env, secret, payload string) *apitest.Response {
	t.Helper()
	sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(payload), Secret: secret, Timestamp: time.Now()})
	return e.Do(apitest.Request{Method: "POST", Path: payment.StripeWebhookPath(e.Domain.ID), Body: payload,
		Header: map[string]string{"Stripe-Signature": sp.Header}, NoAuth: true})
}

func sessionEvent(id, typ, session, status string) string {
	return fmt.Sprintf(`{"id":%q,"object":"event","type":%q,"api_version":"2020-08-27","data":{"object":{"id":%q,"object":"checkout.session","payment_status":%q,"payment_intent":"pi_lectern_1"}}}`,
		id, typ, session, status)
}

// TestStripeRoundTrip runs Lectern's Stripe gateway against stripe-mock:
// a card payment (PaymentMethod with the card, PaymentIntent created and
// confirmed), a Checkout Session for the redirect flow completed by a
// signed webhook (replays and duplicates change nothing, a bad signature
// is refused, unknown events are acknowledged), and a refund.
func TestStripeRoundTrip(t *testing.T) {
	mock := stripeMock(t)
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		classID, priceID := stripeDomain(t, e, mock)
		ctx := context.Background()

		info := e.VC("getPaymentInfo", nil)
		if s := string(info.Body); !strings.Contains(s, `"gateway":"stripe"`) || !strings.Contains(s, "pk_test_public") ||
			strings.Contains(s, secretKey) || strings.Contains(s, webhookSecret) {
			t.Errorf("getPaymentInfo: %s", info.Body)
		}
		settings, _ := e.Store.PaymentSettings(ctx, e.Domain.ID)
		if strings.Contains(settings.StripeSecretSealed, "sk_") || strings.Contains(settings.StripeWebhookSecretSealed, "whsec_") || settings.StripeSecretSealed == "" {
			t.Errorf("secrets stored in the clear: %+v", settings)
		}

		// Card flow. stripe-mock validates every request against Stripe's
		// OpenAPI description and answers with fixtures: its PaymentIntent
		// is never paid (status requires_payment_method with a
		// last_payment_error), so Lectern reads a decline. A request the
		// mock refused would read as a gateway failure instead.
		card := url.Values{"class_id": {classID}, "price_id": {priceID}, "student_email": {"ann@example.com"},
			"card_number": {"4242424242424242"}, "card_exp_month": {"12"}, "card_exp_year": {"2040"}, "card_cvc": {"123"},
			"card_holder_name": {"Ann Lee"}, "cancelUrl": {b64("https://s.example/no")}, "returnUrl": {b64("https://s.example/ok")}}
		if got := vc(t, e, "apiclasspayment", card); got["error"] != "Your card was declined." {
			t.Errorf("card against stripe-mock: %v", got)
		}
		if logs := e.Logs.String(); strings.Contains(logs, "payment gateway") || strings.Contains(logs, "4242424242424242") {
			t.Errorf("gateway error or card in log: %s", logs)
		}

		// Redirect flow: a Checkout Session.
		redirect := url.Values{"class_id": {classID}, "price_id": {priceID}, "student_email": {"ann@example.com"},
			"cancelUrl": {b64("https://s.example/no")}, "returnUrl": {b64("https://s.example/ok")}}
		start := vc(t, e, "apiclasspayment", redirect)
		session := start["payKey"]
		if !strings.HasPrefix(session, "cs_") || !strings.HasPrefix(start["checkout_url"], "https://checkout.stripe.com/") {
			t.Fatalf("checkout session: %v", start)
		}
		orderID := start["order_id"]

		bad := sendEvent(t, e, "whsec_wrong", sessionEvent("evt_1", "checkout.session.completed", session, "paid"))
		if bad.Status != 400 {
			t.Errorf("bad signature: %d %s", bad.Status, bad.Body)
		}
		unsigned := e.Do(apitest.Request{Method: "POST", Path: payment.StripeWebhookPath(e.Domain.ID),
			Body: sessionEvent("evt_1", "checkout.session.completed", session, "paid"), NoAuth: true})
		if unsigned.Status != 400 {
			t.Errorf("no signature: %d", unsigned.Status)
		}
		if o, _ := e.Store.OrderByCheckout(ctx, e.Domain.ID, session); o.Status != store.OrderPending {
			t.Errorf("a refused event changed the order: %s", o.Status)
		}
		unpaid := sendEvent(t, e, webhookSecret, sessionEvent("evt_0", "checkout.session.completed", session, "unpaid"))
		if o, _ := e.Store.OrderByCheckout(ctx, e.Domain.ID, session); unpaid.Status != 200 || o.Status != store.OrderPending {
			t.Errorf("unpaid session completed the order: %d %s", unpaid.Status, o.Status)
		}
		done := sendEvent(t, e, webhookSecret, sessionEvent("evt_1", "checkout.session.completed", session, "paid"))
		if done.Status != 200 || !strings.Contains(string(done.Body), "processed") {
			t.Fatalf("completed: %d %s", done.Status, done.Body)
		}
		o, _ := e.Store.OrderByCheckout(ctx, e.Domain.ID, session)
		if o.Status != store.OrderPaid || o.ChargeID != "pi_lectern_1" || o.Currency != "eur" || o.Total != 1200 {
			t.Errorf("order after webhook: %+v", o)
		}
		replay := sendEvent(t, e, webhookSecret, sessionEvent("evt_1", "checkout.session.completed", session, "paid"))
		if replay.Status != 200 || !strings.Contains(string(replay.Body), "already processed") {
			t.Errorf("replay: %d %s", replay.Status, replay.Body)
		}
		again := sendEvent(t, e, webhookSecret, sessionEvent("evt_2", "checkout.session.async_payment_succeeded", session, "paid"))
		if again.Status != 200 {
			t.Errorf("second event for the session: %d %s", again.Status, again.Body)
		}
		late := sendEvent(t, e, webhookSecret, sessionEvent("evt_3", "checkout.session.expired", session, "unpaid"))
		if gs, _ := e.Store.Grants(ctx, e.Domain.ID, 0, "ann@example.com"); late.Status != 200 || len(gs) != 1 {
			t.Errorf("grants after replays: %d (%d %s)", len(gs), late.Status, late.Body)
		}
		if o, _ := e.Store.OrderByCheckout(ctx, e.Domain.ID, session); o.Status != store.OrderPaid {
			t.Errorf("an expiry after payment changed the order: %s", o.Status)
		}
		unknown := sendEvent(t, e, webhookSecret, `{"id":"evt_9","object":"event","type":"customer.created","data":{"object":{"id":"cus_1","object":"customer"}}}`)
		if unknown.Status != 200 || !strings.Contains(string(unknown.Body), "acknowledged") {
			t.Errorf("unknown event: %d %s", unknown.Status, unknown.Body)
		}
		foreign := sendEvent(t, e, webhookSecret, sessionEvent("evt_10", "checkout.session.completed", "cs_not_ours", "paid"))
		if foreign.Status != 200 {
			t.Errorf("a session that is no order: %d", foreign.Status)
		}
		// Domain B has no Stripe webhook secret: its endpoint refuses.
		other := e.Do(apitest.Request{Method: "POST", Path: payment.StripeWebhookPath(e.Other.ID), Body: "{}", NoAuth: true})
		if other.Status != 400 {
			t.Errorf("other domain's endpoint: %d", other.Status)
		}

		// Refund through Stripe's refunds API, in part then the rest.
		r := e.LMS("POST", "/orders/refund/"+orderID, map[string]any{"amount": "2"})
		if r.Status != 200 {
			t.Fatalf("refund: %d %s", r.Status, r.Body)
		}
		r = e.LMS("POST", "/orders/refund/"+orderID, nil)
		body := r.JSON(t)
		if st, _ := apitest.Lookup(body, "data.status"); st != "refunded" {
			t.Errorf("full refund: %s", r.Body)
		}
		if id, _ := apitest.Lookup(body, "data.refunds.1.refund_id"); !strings.HasPrefix(fmt.Sprint(id), "re_") {
			t.Errorf("refund id: %s", r.Body)
		}
		if amt, _ := apitest.Lookup(body, "data.refunds.1.amount"); !apitest.Equal(amt, 10.0) {
			t.Errorf("rest refunded: %s", r.Body)
		}

		// The LMS checkout opens a Checkout Session too.
		c := e.LMS("POST", "/shoppingCart/checkout", map[string]any{"email": "bob@example.com", "return_url": "https://s.example/ok",
			"cancel_url": "https://s.example/no", "items": []map[string]any{{"class_id": classID, "price_scheme_id": priceID}}})
		if url, _ := apitest.Lookup(c.JSON(t), "data.checkout_url"); c.Status != 200 || !strings.HasPrefix(fmt.Sprint(url), "https://checkout.stripe.com/") {
			t.Errorf("LMS checkout: %d %s", c.Status, c.Body)
		}
	})
}

// TestSetGatewayChecks: Stripe needs a secret key; secrets are refused for
// the test gateway.
func TestSetGatewayChecks(t *testing.T) {
	st := apitest.OpenStore(t, apitest.Backend{Name: "sqlite"})
	ctx := context.Background()
	d, _, err := st.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	svc := &payment.Service{Store: st, Secret: []byte("0123456789abcdef0123456789abcdef")}
	for _, tc := range []struct {
		name  string
		in    payment.Settings
		field string
	}{
		{"stripe without key", payment.Settings{Gateway: "stripe"}, "stripe-secret-key"},
		{"bad webhook secret", payment.Settings{Gateway: "stripe", StripeSecretKey: "sk_test_1", StripeWebhookSecret: "nope"}, "stripe-webhook-secret"},
		{"bad base", payment.Settings{Gateway: "stripe", StripeSecretKey: "sk_test_1", StripeAPIBase: "ftp://x"}, "stripe-api-base"},
		{"test with secret", payment.Settings{Gateway: "test", StripeSecretKey: "sk_test_1"}, "gateway"},
		{"unknown gateway", payment.Settings{Gateway: "paypal"}, "gateway"},
	} {
		err := svc.SetGateway(ctx, d.ID, tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if err := svc.SetGateway(ctx, 999, payment.Settings{Gateway: "test"}); err == nil {
		t.Errorf("unknown domain accepted")
	}
	// A sealed secret opens only for its own domain and field.
	sealed, _ := payment.Seal(svc.Secret, "domain 1 stripe_secret", "sk_test_x")
	if _, err := payment.Unseal(svc.Secret, "domain 2 stripe_secret", sealed); err == nil {
		t.Errorf("a sealed secret opened for another domain")
	}
	if got, err := payment.Unseal(svc.Secret, "domain 1 stripe_secret", sealed); err != nil || got != "sk_test_x" {
		t.Errorf("unseal: %q %v", got, err)
	}
	if _, err := payment.Unseal([]byte("another server secret of 32 b!!"), "domain 1 stripe_secret", sealed); err == nil {
		t.Errorf("opened with another server secret")
	}
}
