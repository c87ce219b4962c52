package classroomapi_test

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/payment"
	"github.com/lectern-lms/lectern/internal/store"
)

// setGateway gives domain d a payment gateway, as lectern domain
// set-payment does.
func setGateway(t testing.TB, e *apitest.Env, d apitest.Domain, s payment.Settings) {
	t.Helper()
	svc := &payment.Service{Store: e.Store, Secret: e.Main.Secret}
	if err := svc.SetGateway(context.Background(), d.ID, s); err != nil {
		t.Fatal(err)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// paidClass schedules a paid class with one price and returns their ids.
func paidClass(t *testing.T, e *apitest.Env, price string, scheme ...string) (classID, priceID string) {
	t.Helper()
	classID = scheduleID(t, e, classParams("ispaid", "1", "currency", "USD"))
	p := vals("class_id", classID, "price", price, "scheme_days", "30", "times", "0")
	for i := 0; i+1 < len(scheme); i += 2 {
		p.Set(scheme[i], scheme[i+1])
	}
	priceID = idString(t, vcOK(t, e, "addSchemes", p)["Price id"])
	return classID, priceID
}

// payParams are apiclasspayment's parameters with a card.
func payParams(classID, priceID, card string, kv ...string) url.Values {
	v := vals("class_id", classID, "price_id", priceID, "student_email", "ann@example.com",
		"card_number", card, "card_exp_month", "12", "card_exp_year", "2040", "card_cvc", "314",
		"cancelUrl", b64("https://school.example/cancel"), "returnUrl", b64("https://school.example/thanks"))
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			v.Del(kv[i])
		} else {
			v.Set(kv[i], kv[i+1])
		}
	}
	return v
}

func TestClassPaymentTestCards(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		classID, priceID := paidClass(t, e, "19.99")
		if msg := vcErr(t, e, "apiclasspayment", payParams(classID, priceID, "4242 4242 4242 4242")); !strings.Contains(msg, "payments are not set up") {
			t.Errorf("no gateway: %q", msg)
		}
		setGateway(t, e, e.Domain, payment.Settings{Gateway: "test"})
		if info := vcOK(t, e, "getPaymentInfo", nil); info["gateway"] != "test" || info["paypal_id"] != "" {
			t.Errorf("getPaymentInfo: %v", info)
		}

		ok := vcOK(t, e, "apiclasspayment", payParams(classID, priceID, "4242 4242 4242 4242"))
		if ok["method"] != "apiclasspayment" || !strings.HasPrefix(ok["charge_id"].(string), "ch_test_") || ok["amount"] != "19.99" || ok["currency"] != "usd" {
			t.Errorf("success: %v", ok)
		}
		for _, tc := range []struct{ card, want string }{
			{"4000 0000 0000 0002", "Your card was declined."},
			{"4000000000009995", "Your card has insufficient funds."},
			{"4000-0000-0000-0127", "Your card's security code is incorrect."},
		} {
			if msg := vcErr(t, e, "apiclasspayment", payParams(classID, priceID, tc.card)); msg != tc.want {
				t.Errorf("card %s: %q, want %q", tc.card, msg, tc.want)
			}
		}
		if msg := vcErr(t, e, "apiclasspayment", payParams(classID, priceID, "4242424242424242", "card_exp_year", "2020")); msg != "Your card has expired." {
			t.Errorf("past expiry: %q", msg)
		}

		// The seed's XML: <rsp status="ok"> with charge_id; errors in <message>.
		x := e.VC("apiclasspayment", payParams(classID, priceID, "4242424242424242", "format", "xml"))
		var rsp struct {
			Status   string `xml:"status,attr"`
			Method   string `xml:"method"`
			ChargeID string `xml:"charge_id"`
		}
		if err := xml.Unmarshal(x.Body, &rsp); err != nil || rsp.Status != "ok" || rsp.Method != "apiclasspayment" || rsp.ChargeID == "" {
			t.Errorf("xml success: %v %s", err, x.Body)
		}
		x = e.VC("apiclasspayment", payParams(classID, priceID, "4000000000000002", "format", "xml"))
		var xe struct {
			Status  string `xml:"status,attr"`
			Message string `xml:"message"`
		}
		if err := xml.Unmarshal(x.Body, &xe); err != nil || xe.Status != "error" || xe.Message != "Your card was declined." {
			t.Errorf("xml decline: %v %s", err, x.Body)
		}

		// apikey as a POST field (the seed) or in the query string.
		q := payParams(classID, priceID, "4242424242424242")
		r := e.Do(apitest.Request{Method: "POST", Path: "/v2/apiclasspayment?apikey=" + e.Domain.ClassroomKey, Form: q, NoAuth: true})
		if s, _ := apitest.Lookup(r.JSON(t), "0.status"); s != "ok" {
			t.Errorf("apikey in query: %s", r.Body)
		}

		for _, tc := range []struct {
			name   string
			params url.Values
			want   string
		}{
			{"no class", payParams("", priceID, "4242424242424242", "class_id", ""), "class_id is required"},
			{"no price", payParams(classID, "", "4242424242424242", "price_id", ""), "price_id is required"},
			{"no email", payParams(classID, priceID, "4242424242424242", "student_email", ""), "student_email is required"},
			{"bad email", payParams(classID, priceID, "4242424242424242", "student_email", "ann"), "student_email must be"},
			{"luhn", payParams(classID, priceID, "4242424242424241"), "card_number is not a valid card number"},
			{"no cvc", payParams(classID, priceID, "4242424242424242", "card_cvc", ""), "card_cvc is required"},
			{"bad month", payParams(classID, priceID, "4242424242424242", "card_exp_month", "13"), "card_exp_month must be"},
			{"bad return", payParams(classID, priceID, "4242424242424242", "returnUrl", "%%%"), "returnUrl must be base64"},
			{"unknown price", payParams(classID, "999999", "4242424242424242"), "Invalid price_id"},
			{"unknown coupon", payParams(classID, priceID, "4242424242424242", "coupon_code", "NOPE"), "Invalid coupon code"},
			{"not a test card", payParams(classID, priceID, "4111111111111111"), "test gateway takes only test cards"},
		} {
			if msg := vcErr(t, e, "apiclasspayment", tc.params); !strings.Contains(msg, tc.want) {
				t.Errorf("%s: %q, want %q", tc.name, msg, tc.want)
			}
		}
		// Card data in the URL is refused before anything else.
		r = e.Do(apitest.Request{Method: "POST", Path: "/v2/apiclasspayment?card_number=4242424242424242",
			Form: payParams(classID, priceID, "4242424242424242", "apikey", e.Domain.ClassroomKey), NoAuth: true})
		if msg, _ := apitest.Lookup(r.JSON(t), "0.error"); !strings.Contains(fmt.Sprint(msg), "never in the URL") {
			t.Errorf("card in URL: %s", r.Body)
		}

		// Domain B cannot pay for domain A's class.
		setGateway(t, e, e.Other, payment.Settings{Gateway: "test"})
		if msg := vcErr(t, e, "apiclasspayment", payParams(classID, priceID, "4242424242424242", "apikey", e.Other.ClassroomKey)); msg != "Invalid Class Owner" {
			t.Errorf("other domain: %q", msg)
		}
		// Orders: 4 paid (success, xml, query key), 5 failed.
		os, _, err := e.Store.Orders(context.Background(), e.Domain.ID, store.OrderFilter{}, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, o := range os {
			count[o.Status]++
		}
		if count["paid"] != 3 || count["failed"] != 6 || len(os) != 9 {
			t.Errorf("orders: %v", count)
		}
	}, seedStyle)
}

// TestCardDataNeverStored pays and declines with card numbers and CVCs,
// then searches every row of every table and the server's log for them.
func TestCardDataNeverStored(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		setGateway(t, e, e.Domain, payment.Settings{Gateway: "test"})
		classID, priceID := paidClass(t, e, "10")
		vcOK(t, e, "apiclasspayment", payParams(classID, priceID, "4242 4242 4242 4242", "card_cvc", "7319", "idempotency_key", "k1"))
		vcErr(t, e, "apiclasspayment", payParams(classID, priceID, "4000000000009995", "card_cvc", "8642"))
		// A bad card number is refused without being repeated.
		msg := vcErr(t, e, "apiclasspayment", payParams(classID, priceID, "4242424242424241", "card_cvc", "5531"))
		if strings.Contains(msg, "4242424242424241") {
			t.Errorf("error repeats the number: %q", msg)
		}
		secrets := []string{"4242424242424242", "4242 4242 4242 4242", "4000000000009995", "4242424242424241"}
		cvcs := []string{"7319", "8642", "5531"}

		db, _ := e.RawDB()
		tablesQ := "SELECT name FROM sqlite_master WHERE type = 'table'"
		if e.Backend.URL != "" {
			tablesQ = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
		}
		rows, err := db.Query(tablesQ)
		if err != nil {
			t.Fatal(err)
		}
		var tables []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			tables = append(tables, n)
		}
		rows.Close()
		if len(tables) < 20 {
			t.Fatalf("only %d tables found: %v", len(tables), tables)
		}
		cells := 0
		for _, table := range tables {
			rows, err := db.Query(`SELECT * FROM "` + table + `"`)
			if err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				for i, v := range vals {
					cell := fmt.Sprint(v)
					if b, ok := v.([]byte); ok {
						cell = string(b)
					}
					cells++
					for _, s := range secrets {
						if strings.Contains(cell, s) {
							t.Errorf("%s.%s holds a card number: %q", table, cols[i], cell)
						}
					}
					for _, c := range cvcs {
						if cell == c {
							t.Errorf("%s.%s holds a CVC", table, cols[i])
						}
					}
				}
			}
			rows.Close()
		}
		if cells < 100 {
			t.Fatalf("only %d cells read", cells)
		}
		logs := e.Logs.String()
		if !strings.Contains(logs, "/v2/apiclasspayment") {
			t.Fatalf("the log shows no payment request: %q", logs)
		}
		for _, s := range secrets {
			if strings.Contains(logs, s) {
				t.Errorf("the log holds %q", s)
			}
		}
		// A CVC is four digits, which a request id, a time or a duration
		// in the log can hold by chance ("time=...31.073193"); a CVC the
		// log repeated would stand alone ("card_cvc=7319&", "\"7319\"").
		for _, c := range cvcs {
			if containsToken(logs, c) {
				t.Errorf("the log holds %q", c)
			}
		}
	})
}

// containsToken reports whether tok occurs in s with neither a letter, a
// digit nor a '.' on either side.
func containsToken(s, tok string) bool {
	part := func(b byte) bool {
		return b == '.' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(s[i:], tok)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(tok)
		if (j == 0 || !part(s[j-1])) && (end == len(s) || !part(s[end])) {
			return true
		}
		i = j + 1
	}
}

// TestCouponLimitUnderParallelPayments: 50 buyers pay at once with a code
// limited to 5 uses; exactly 5 payments succeed, the rest are refused
// before any charge, and the code shows 5 uses.
func TestCouponLimitUnderParallelPayments(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		setGateway(t, e, e.Domain, payment.Settings{Gateway: "test"})
		classID, priceID := paidClass(t, e, "40")
		discountID := idString(t, vcOK(t, e, "addSpecials", vals("class_id", classID, "discount", "25", "discount_type", "1",
			"start_date", "2020-01-01", "discount_code", "FIVE", "discount_limit", "5"))["Discount id"])
		const buyers = 50
		var wg sync.WaitGroup
		results := make([]string, buyers)
		for i := range buyers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				params := payParams(classID, priceID, "4242424242424242", "coupon_code", "five",
					"student_email", fmt.Sprintf("buyer%d@example.com", i), "apikey", e.Domain.ClassroomKey)
				req, _ := http.NewRequest("POST", e.URL+"/v2/apiclasspayment", strings.NewReader(params.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				resp, err := e.Client.Do(req)
				if err != nil {
					results[i] = err.Error()
					return
				}
				defer resp.Body.Close()
				var b strings.Builder
				buf := make([]byte, 4096)
				for {
					n, err := resp.Body.Read(buf)
					b.Write(buf[:n])
					if err != nil {
						break
					}
				}
				results[i] = fmt.Sprintf("%d %s", resp.StatusCode, b.String())
			}()
		}
		wg.Wait()
		paid, refused := 0, 0
		for _, r := range results {
			switch {
			case strings.Contains(r, `"charge_id"`) && strings.Contains(r, `"amount":"30.00"`):
				paid++
			case strings.Contains(r, "used up"):
				refused++
			default:
				t.Errorf("unexpected answer: %s", r)
			}
		}
		if paid != 5 || refused != buyers-5 {
			t.Errorf("paid %d, refused %d; want 5 and %d", paid, refused, buyers-5)
		}
		d, err := e.Store.Discount(context.Background(), e.Domain.ID, mustInt(t, discountID))
		if err != nil || d.Used != 5 {
			t.Errorf("uses: %d %v", d.Used, err)
		}
		os, _, _ := e.Store.Orders(context.Background(), e.Domain.ID, store.OrderFilter{Status: store.OrderPaid}, 0, 100)
		if len(os) != 5 {
			t.Errorf("%d paid orders", len(os))
		}
	})
}

// TestDeclineReleasesCoupon: a declined card gives back the coupon use its
// order took; the next buyer gets it.
func TestDeclineReleasesCoupon(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		setGateway(t, e, e.Domain, payment.Settings{Gateway: "test"})
		classID, priceID := paidClass(t, e, "40")
		did := idString(t, vcOK(t, e, "addSpecials", vals("class_id", classID, "discount", "10", "discount_type", "0",
			"start_date", "2020-01-01", "discount_code", "ONCE", "discount_limit", "1"))["Discount id"])
		if msg := vcErr(t, e, "apiclasspayment", payParams(classID, priceID, "4000000000000002", "coupon_code", "ONCE")); msg != "Your card was declined." {
			t.Fatalf("decline: %q", msg)
		}
		if d, _ := e.Store.Discount(context.Background(), e.Domain.ID, mustInt(t, did)); d.Used != 0 {
			t.Errorf("after decline the coupon shows %d uses", d.Used)
		}
		ok := vcOK(t, e, "apiclasspayment", payParams(classID, priceID, "4242424242424242", "coupon_code", "ONCE"))
		if ok["amount"] != "30.00" {
			t.Errorf("paid with coupon: %v", ok)
		}
		if msg := vcErr(t, e, "apiclasspayment", payParams(classID, priceID, "4242424242424242", "coupon_code", "ONCE")); msg != "Coupon code has been used up" {
			t.Errorf("second use: %q", msg)
		}
		// A 100% coupon makes a free order: paid without the gateway.
		vcOK(t, e, "addSpecials", vals("class_id", classID, "discount", "100", "discount_type", "1",
			"start_date", "2020-01-01", "discount_code", "GIFT", "discount_limit", "1"))
		free := vcOK(t, e, "apiclasspayment", payParams(classID, priceID, "", "coupon_code", "GIFT", "card_number", "", "card_exp_month", "",
			"card_exp_year", "", "card_cvc", ""))
		if free["amount"] != "0.00" || !strings.HasPrefix(free["charge_id"].(string), "free_") {
			t.Errorf("free order: %v", free)
		}
	})
}

func TestClassPaymentIdempotency(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		setGateway(t, e, e.Domain, payment.Settings{Gateway: "test"})
		classID, priceID := paidClass(t, e, "12.50")
		send := func(params url.Values, header map[string]string) *apitest.Response {
			params.Set("apikey", e.Domain.ClassroomKey)
			return e.Do(apitest.Request{Method: "POST", Path: "/v2/apiclasspayment", Form: params, Header: header, NoAuth: true})
		}
		first := send(payParams(classID, priceID, "4242424242424242"), map[string]string{"Idempotency-Key": "pay-1"})
		again := send(payParams(classID, priceID, "4242424242424242"), map[string]string{"Idempotency-Key": "pay-1"})
		c1, _ := apitest.Lookup(first.JSON(t), "0.charge_id")
		c2, _ := apitest.Lookup(again.JSON(t), "0.charge_id")
		if c1 == nil || c1 != c2 {
			t.Errorf("retry: %s then %s", first.Body, again.Body)
		}
		// The parameter works as the header does.
		third := send(payParams(classID, priceID, "4242424242424242", "idempotency_key", "pay-1"), nil)
		if c3, _ := apitest.Lookup(third.JSON(t), "0.charge_id"); c3 != c1 {
			t.Errorf("idempotency_key parameter: %s", third.Body)
		}
		// Another request with the same key: 409.
		diff := send(payParams(classID, priceID, "4242424242424242", "student_email", "bob@example.com"), map[string]string{"Idempotency-Key": "pay-1"})
		if diff.Status != http.StatusConflict || !strings.Contains(string(diff.Body), "different request") {
			t.Errorf("different body: %d %s", diff.Status, diff.Body)
		}
		// A decline is a result too: the retry gets the same decline, no new order.
		d1 := send(payParams(classID, priceID, "4000000000009995"), map[string]string{"Idempotency-Key": "pay-2"})
		d2 := send(payParams(classID, priceID, "4000000000009995"), map[string]string{"Idempotency-Key": "pay-2"})
		if string(d1.Body) != string(d2.Body) || !strings.Contains(string(d1.Body), "insufficient funds") {
			t.Errorf("decline retry: %s then %s", d1.Body, d2.Body)
		}
		// A request refused before any order frees its key for a corrected retry.
		bad := send(payParams(classID, priceID, "4242424242424242", "student_email", "nope"), map[string]string{"Idempotency-Key": "pay-3"})
		good := send(payParams(classID, priceID, "4242424242424242"), map[string]string{"Idempotency-Key": "pay-3"})
		if !strings.Contains(string(bad.Body), "student_email") || !strings.Contains(string(good.Body), "charge_id") {
			t.Errorf("corrected retry: %s then %s", bad.Body, good.Body)
		}
		os, _, _ := e.Store.Orders(context.Background(), e.Domain.ID, store.OrderFilter{}, 0, 100)
		if len(os) != 3 {
			t.Errorf("%d orders, want 3 (pay-1, pay-2, pay-3)", len(os))
		}
	}, seedStyle)
}

// TestRedirectFlowTestGateway: without card fields the answer is a
// checkout page of Lectern's; paying there completes the order and grants
// the purchase, cancelling fails it and gives back the coupon.
func TestRedirectFlowTestGateway(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		setGateway(t, e, e.Domain, payment.Settings{Gateway: "test"})
		classID, priceID := paidClass(t, e, "15", "times", "1", "numbertimes", "3")
		noCard := func(kv ...string) url.Values {
			return payParams(classID, priceID, "", append([]string{"card_number", "", "card_exp_month", "", "card_exp_year", "", "card_cvc", ""}, kv...)...)
		}
		if msg := vcErr(t, e, "apiclasspayment", noCard("returnUrl", "")); !strings.Contains(msg, "returnUrl is required") {
			t.Errorf("no returnUrl: %q", msg)
		}
		start := vcOK(t, e, "apiclasspayment", noCard())
		page, _ := start["checkout_url"].(string)
		if start["payKey"] == "" || !strings.HasPrefix(page, e.URL+"/payments/test/checkout/") {
			t.Fatalf("start: %v", start)
		}
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get, _ := noRedirect.Get(page)
		if get.StatusCode != 200 {
			t.Fatalf("page: %d", get.StatusCode)
		}
		get.Body.Close()
		post := func(form url.Values) *http.Response {
			resp, err := noRedirect.PostForm(page, form)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		card := url.Values{"action": {"pay"}, "card_exp_month": {"12"}, "card_exp_year": {fmt.Sprint(time.Now().Year() + 1)}, "card_cvc": {"123"}}
		card.Set("card_number", "4000 0000 0000 0002")
		if r := post(card); r.StatusCode != http.StatusPaymentRequired {
			t.Errorf("declined card on the page: %d", r.StatusCode)
		}
		card.Set("card_number", "4242 4242 4242 4242")
		r := post(card)
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "https://school.example/thanks" {
			t.Errorf("paid: %d %s", r.StatusCode, r.Header.Get("Location"))
		}
		if r := post(card); r.StatusCode != http.StatusConflict {
			t.Errorf("paying twice: %d", r.StatusCode)
		}
		o, err := e.Store.Order(context.Background(), e.Domain.ID, mustInt(t, idString(t, start["order_id"])))
		if err != nil || o.Status != store.OrderPaid || !strings.HasPrefix(o.ChargeID, "ch_test_") {
			t.Errorf("order: %+v %v", o, err)
		}
		list := vcOK(t, e, "listpurchases", vals("class_id", classID))
		if list["email"] != "ann@example.com" || list["numbertimes"] != "3" || list["launches_left"] != "3" || list["valid"] != "1" {
			t.Errorf("listpurchases: %v", list)
		}

		// Cancelling gives the coupon back.
		vcOK(t, e, "addSpecials", vals("class_id", classID, "discount", "5", "discount_type", "0",
			"start_date", "2020-01-01", "discount_code", "BACK", "discount_limit", "1"))
		start = vcOK(t, e, "apiclasspayment", noCard("coupon_code", "BACK"))
		page = start["checkout_url"].(string)
		if msg := vcErr(t, e, "apiclasspayment", noCard("coupon_code", "BACK")); msg != "Coupon code has been used up" {
			t.Errorf("coupon held by the open checkout: %q", msg)
		}
		r = post(url.Values{"action": {"cancel"}})
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "https://school.example/cancel" {
			t.Errorf("cancel: %d %s", r.StatusCode, r.Header.Get("Location"))
		}
		if ok := vcOK(t, e, "apiclasspayment", noCard("coupon_code", "BACK")); ok["amount"] != "10.00" {
			t.Errorf("coupon after cancel: %v", ok)
		}
		// A page left open longer than an hour expires and gives its
		// coupon use back before the next order takes one.
		vcOK(t, e, "addSpecials", vals("class_id", classID, "discount", "5", "discount_type", "0",
			"start_date", "2020-01-01", "discount_code", "HOUR", "discount_limit", "1"))
		t0 := time.Now()
		e.Clock.Set(t0)
		abandoned := vcOK(t, e, "apiclasspayment", noCard("coupon_code", "HOUR"))
		e.Clock.Set(t0.Add(59 * time.Minute))
		if msg := vcErr(t, e, "apiclasspayment", noCard("coupon_code", "HOUR")); msg != "Coupon code has been used up" {
			t.Errorf("coupon held by a page open 59 minutes: %q", msg)
		}
		e.Clock.Set(t0.Add(61 * time.Minute))
		if ok := vcOK(t, e, "apiclasspayment", noCard("coupon_code", "HOUR")); ok["amount"] != "10.00" {
			t.Errorf("coupon after the page expired: %v", ok)
		}
		if o, _ := e.Store.Order(context.Background(), e.Domain.ID, mustInt(t, idString(t, abandoned["order_id"]))); o.Status != store.OrderFailed ||
			!strings.Contains(o.FailureReason, "expired") {
			t.Errorf("abandoned order: %s %q", o.Status, o.FailureReason)
		}
		page = abandoned["checkout_url"].(string)
		if r := post(card); r.StatusCode != http.StatusConflict {
			t.Errorf("paying on an expired page: %d", r.StatusCode)
		}
		e.Clock.Set(time.Time{})

		// A session of another domain's path is not found.
		other := strings.Replace(page, fmt.Sprintf("/checkout/%d/", e.Domain.ID), fmt.Sprintf("/checkout/%d/", e.Other.ID), 1)
		if resp, _ := noRedirect.Get(other); resp.StatusCode != 404 {
			t.Errorf("other domain's path: %d", resp.StatusCode)
		}
	})
}

// TestPurchaseGrantsLaunch: with the domain's rule on, a student's launch
// of a paid class needs a valid purchase matched by userEmail, and each
// launch uses one of the scheme's numbertimes.
func TestPurchaseGrantsLaunch(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		setGateway(t, e, e.Domain, payment.Settings{Gateway: "test"})
		start := time.Date(2031, 3, 10, 15, 0, 0, 0, time.UTC)
		cls, err := e.Store.CreateLiveClass(context.Background(), e.Domain.ID, lms.LiveClass{Title: "Paid", Date: "2031-03-10",
			StartMinute: 900, EndMinute: 960, TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", IsPaid: 1, Published: 1,
			Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		classID := itoa(cls.ID)
		priceID := idString(t, vcOK(t, e, "addSchemes", vals("class_id", classID, "price", "9", "scheme_days", "30", "times", "1", "numbertimes", "2"))["Price id"])
		e.Clock.Set(start.Add(-40 * 24 * time.Hour))
		vcOK(t, e, "apiclasspayment", payParams(classID, priceID, "4242424242424242"))
		e.Clock.Set(start)

		launch := func(email string, teacher string) url.Values {
			p := launchParams(classID, teacher)
			if email != "" {
				p.Set("userEmail", email)
			}
			return p
		}
		// Off by default: anyone launches.
		vcOK(t, e, "getclasslaunch", launch("", "0"))
		if err := e.Store.SetRequireGrant(context.Background(), e.Domain.ID, true); err != nil {
			t.Fatal(err)
		}
		// Bought 40 days before the class with 30 days of access: expired.
		if msg := vcErr(t, e, "getclasslaunch", launch("ann@example.com", "0")); !strings.Contains(msg, "No valid purchase") {
			t.Errorf("expired grant: %q", msg)
		}
		e.Clock.Set(start.Add(-10 * 24 * time.Hour))
		vcOK(t, e, "apiclasspayment", payParams(classID, priceID, "4242424242424242", "student_email", "Ann@Example.com"))
		e.Clock.Set(start)
		if msg := vcErr(t, e, "getclasslaunch", launch("", "0")); !strings.Contains(msg, "userEmail is required") {
			t.Errorf("no email: %q", msg)
		}
		vcOK(t, e, "getclasslaunch", launch("ann@example.com", "0"))
		vcOK(t, e, "getclasslaunch", launch("ANN@example.com", "0"))
		if msg := vcErr(t, e, "getclasslaunch", launch("ann@example.com", "0")); !strings.Contains(msg, "No valid purchase") {
			t.Errorf("third launch of two: %q", msg)
		}
		if msg := vcErr(t, e, "getclasslaunch", launch("bob@example.com", "0")); !strings.Contains(msg, "No valid purchase") {
			t.Errorf("someone else: %q", msg)
		}
		vcOK(t, e, "getclasslaunch", launch("", "1")) // teachers need none

		list := e.VC("listpurchases", vals("email", "ann@example.com")).JSON(t)
		if n, _ := apitest.Lookup(list, "#"); n != 2 {
			t.Fatalf("listpurchases by email: %v", list)
		}
		if apitest.Str(t, list, "0.valid") != "0" || apitest.Str(t, list, "1.launches_used") != "2" || apitest.Str(t, list, "1.launches_left") != "0" {
			t.Errorf("grants: %v", list)
		}
		if got := apitest.Str(t, e.VC("listpurchases", vals("email", "nobody@example.com")).JSON(t), "Purchase"); got != "No purchase found" {
			t.Errorf("empty: %q", got)
		}
		if msg := vcErr(t, e, "listpurchases", nil); !strings.Contains(msg, "class_id or email is required") {
			t.Errorf("no filter: %q", msg)
		}
		if msg := vcErr(t, e, "listpurchases", vals("class_id", classID, "apikey", e.Other.ClassroomKey)); msg != "Invalid Class Owner" {
			t.Errorf("other domain: %q", msg)
		}
		if got := apitest.Str(t, e.VC("listpurchases", vals("email", "ann@example.com", "apikey", e.Other.ClassroomKey)).JSON(t), "Purchase"); got != "No purchase found" {
			t.Errorf("other domain by email: %q", got)
		}
	})
}

func TestContainsToken(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"card_cvc=7319&x=1", true},
		{`{"card_cvc":"7319"}`, true},
		{"7319", true},
		{"time=2026-11-24T01:27:31.073193Z", false},
		{"duration=1.7319ms", false},
		{"request_id=AB7319CD", false},
		{"n=173190", false},
		{"a=17319 b=7319", true},
	} {
		if got := containsToken(c.s, "7319"); got != c.want {
			t.Errorf("containsToken(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}
