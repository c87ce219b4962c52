package lmsapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/payment"
	"github.com/lectern-lms/lectern/internal/store"
)

func testGateway(t *testing.T, e *Env, d Domain) {
	t.Helper()
	svc := &payment.Service{Store: e.Store, Secret: e.Main.Secret}
	if err := svc.SetGateway(context.Background(), d.ID, payment.Settings{Gateway: "test"}); err != nil {
		t.Fatal(err)
	}
}

// pricing adds a scheme to an item and returns its id.
func pricing(t *testing.T, e *Env, segment, param string, id int64, price string) int64 {
	t.Helper()
	return create(t, e, "/shoppingCart/"+segment+"/addpricing", map[string]any{param: id, "scheme_price": price, "scheme_days": 30}, "data.id")
}

// shop is a catalog with prices: a course (20.00), a test (5.50), a live
// class (10.00), a bundle of the course and the test (25.50 from their
// prices) and a product (7.00 + 1.00 shipping).
type shop struct {
	course, test, class, bundle, product  int64
	courseScheme, testScheme, classScheme int64
}

func newShop(t *testing.T, e *Env) shop {
	var s shop
	s.course, s.test, s.class = items(t, e)
	s.courseScheme = pricing(t, e, "courses", "course_id", s.course, "20")
	s.testScheme = pricing(t, e, "tests", "test_id", s.test, "5.50")
	s.classScheme = pricing(t, e, "live-classes", "class_id", s.class, "10")
	ctx := context.Background()
	b, err := e.Store.CreateBundle(ctx, e.Domain.ID, lms.Bundle{Name: "Pack"})
	if err != nil {
		t.Fatal(err)
	}
	s.bundle = b.ID
	second, _ := e.Store.CreateCourse(ctx, e.Domain.ID, lms.Course{Name: "In the bundle"})
	pricing(t, e, "courses", "course_id", second.ID, "25.50")
	e.Store.AddBundleItem(ctx, e.Domain.ID, b.ID, lms.Item{Kind: lms.KindCourse, ID: second.ID})
	p, err := e.Store.CreateProduct(ctx, e.Domain.ID, store.Product{Name: "Book", SKU: "B1", PriceCents: 700, ShippingCents: 100, Type: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.product = p.ID
	return s
}

func card(number string) map[string]any {
	return map[string]any{"card_number": number, "card_exp_month": 12, "card_exp_year": 2040, "card_cvc": "123"}
}

func checkoutBody(s shop, email string, extra map[string]any) map[string]any {
	b := map[string]any{"email": email, "items": []map[string]any{
		{"course_id": s.course, "price_scheme_id": s.courseScheme},
		{"test_id": s.test, "price_scheme_id": s.testScheme},
		{"class_id": s.class, "price_scheme_id": s.classScheme},
		{"bundle_id": s.bundle},
		{"product_id": s.product},
	}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func with(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func TestCheckoutEnrollsAndRefunds(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		s := newShop(t, e)
		ctx := context.Background()
		if r := e.LMS("POST", "/shoppingCart/checkout", checkoutBody(s, "new@example.com", card("4242424242424242"))); r.Status != 409 ||
			!strings.Contains(string(r.Body), "payments are not set up") {
			t.Errorf("no gateway: %d %s", r.Status, r.Body)
		}
		testGateway(t, e, e.Domain)
		e.Store.SetPointRule(ctx, e.Domain.ID, store.EventCourseEnrolled, 10)
		e.Store.SetPointRule(ctx, e.Domain.ID, store.EventClassEnrolled, 3)
		usersTotal := func() int64 {
			r := e.LMS("POST", "/users/list", map[string]any{"limit": 1})
			if r.Status != 200 {
				t.Fatalf("users/list: %d %s", r.Status, r.Body)
			}
			return Int(t, r.JSON(t), "total")
		}
		usersBefore := usersTotal()
		r := e.LMS("POST", "/shoppingCart/checkout", checkoutBody(s, "new@example.com", card("4242 4242 4242 4242")))
		if r.Status != 200 {
			t.Fatalf("checkout: %d %s", r.Status, r.Body)
		}
		body := r.JSON(t)
		// 20 + 5.50 + 10 + 25.50 + 8.00
		for path, want := range map[string]any{"data.status": "paid", "data.total": 69.0, "data.subtotal": 69.0, "data.currency": "usd",
			"data.lines.#": 5, "data.lines.3.kind": "bundle", "data.lines.3.base_price": 25.5, "data.lines.4.amount": 8.0,
			"data.lines.0.enrolled": true, "data.email": "new@example.com"} {
			if got, _ := Lookup(body, path); !Equal(got, want) {
				t.Errorf("%s = %v, want %v", path, got, want)
			}
		}
		orderID := Int(t, body, "data.id")
		u, err := e.Store.UserByEmail(ctx, e.Domain.ID, "new@example.com")
		if err != nil {
			t.Fatalf("buyer not created: %v", err)
		}
		if got := usersTotal(); got != usersBefore+1 {
			t.Errorf("users/list total after the checkout made its buyer a user: %d, want %d", got, usersBefore+1)
		}
		for _, it := range []struct {
			kind string
			id   int64
		}{{lms.KindCourse, s.course}, {lms.KindTest, s.test}, {lms.KindClass, s.class}, {lms.KindBundle, s.bundle}} {
			if ok, _ := e.Store.IsEnrolled(ctx, e.Domain.ID, u.ID, it.kind, it.id); !ok {
				t.Errorf("not enrolled in %s %d", it.kind, it.id)
			}
		}
		bundled, _ := e.Store.Bundle(ctx, e.Domain.ID, s.bundle)
		if ok, _ := e.Store.IsEnrolled(ctx, e.Domain.ID, u.ID, lms.KindCourse, bundled.Items[0].ID); !ok {
			t.Errorf("bundle not expanded")
		}
		if pts, _ := e.Store.UserPoints(ctx, e.Domain.ID, u.ID); pts != 13 {
			t.Errorf("points: %d, want 13 (course 10 + class 3)", pts)
		}

		// Orders: list, get, domain B sees none of them.
		e.Scenarios(t, []Scenario{
			{Name: "list", Request: api("GET", "/orders/list?status=paid", nil), Status: 200, Want: map[string]any{"total": 1, "data.0.id": orderID}},
			{Name: "list by email", Request: api("POST", "/orders/list", map[string]any{"email": "NEW@example.com"}), Status: 200, Want: map[string]any{"total": 1}},
			{Name: "bad status", Request: api("GET", "/orders/list?status=done", nil), Status: 400, Fields: []string{"status"}},
			{Name: "get", Request: api("GET", "/orders/get/"+itoa(orderID), nil), Status: 200, Want: map[string]any{"data.lines.#": 5, "data.refunds.#": 0}},
			{Name: "other domain get", Request: other(e, "GET", "/orders/get/"+itoa(orderID), nil), Status: 404},
			{Name: "other domain list", Request: other(e, "GET", "/orders/list", nil), Status: 200, Want: map[string]any{"total": 0}},
			{Name: "other domain refund", Request: other(e, "POST", "/orders/refund/"+itoa(orderID), nil), Status: 404},
			{Name: "refund too much", Request: api("POST", "/orders/refund/"+itoa(orderID), map[string]any{"amount": "69.01"}), Status: 400, Fields: []string{"amount"}},
			{Name: "partial refund", Request: api("POST", "/orders/refund/"+itoa(orderID), map[string]any{"amount": "9"}), Status: 200,
				Want: map[string]any{"data.status": "paid", "data.refunded": 9.0, "data.refunds.#": 1}},
		})
		if ok, _ := e.Store.IsEnrolled(ctx, e.Domain.ID, u.ID, lms.KindCourse, s.course); !ok {
			t.Errorf("a partial refund unenrolled")
		}
		e.Scenarios(t, []Scenario{
			{Name: "full refund of the rest", Request: api("POST", "/orders/refund/"+itoa(orderID), nil), Status: 200,
				Want: map[string]any{"data.status": "refunded", "data.refunded": 69.0, "data.refunds.#": 2, "data.refunds.1.amount": 60.0}},
			{Name: "refund a refunded order", Request: api("POST", "/orders/refund/"+itoa(orderID), nil), Status: 409},
		})
		for _, it := range []struct {
			kind string
			id   int64
		}{{lms.KindCourse, s.course}, {lms.KindTest, s.test}, {lms.KindClass, s.class}, {lms.KindBundle, s.bundle}, {lms.KindCourse, bundled.Items[0].ID}} {
			if ok, _ := e.Store.IsEnrolled(ctx, e.Domain.ID, u.ID, it.kind, it.id); ok {
				t.Errorf("still enrolled in %s %d after a full refund", it.kind, it.id)
			}
		}
		if gs, _ := e.Store.Grants(ctx, e.Domain.ID, s.class, "new@example.com"); len(gs) != 1 || !gs[0].Revoked {
			t.Errorf("grant after refund: %+v", gs)
		}
	})
}

// TestCheckoutKeepsWhatWasThere: a refund does not unenroll from what the
// buyer had before the order.
func TestCheckoutKeepsWhatWasThere(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		s := newShop(t, e)
		testGateway(t, e, e.Domain)
		user(t, e, "old@example.com")
		if r := e.LMS("POST", "/courses/enroll", map[string]any{"email": "old@example.com", "courseId": s.course}); r.Status != 200 {
			t.Fatalf("enroll: %s", r.Body)
		}
		r := e.LMS("POST", "/shoppingCart/checkout", with(map[string]any{"email": "old@example.com",
			"items": []map[string]any{{"course_id": s.course, "price_scheme_id": s.courseScheme}, {"test_id": s.test, "price_scheme_id": s.testScheme}}},
			card("4242424242424242")))
		body := r.JSON(t)
		if got, _ := Lookup(body, "data.lines.0.enrolled"); got != false {
			t.Errorf("already enrolled line: %s", r.Body)
		}
		e.LMS("POST", "/orders/refund/"+itoa(Int(t, body, "data.id")), nil)
		ctx := context.Background()
		u, _ := e.Store.UserByEmail(ctx, e.Domain.ID, "old@example.com")
		if ok, _ := e.Store.IsEnrolled(ctx, e.Domain.ID, u.ID, lms.KindCourse, s.course); !ok {
			t.Errorf("refund removed an enrollment the order did not make")
		}
		if ok, _ := e.Store.IsEnrolled(ctx, e.Domain.ID, u.ID, lms.KindTest, s.test); ok {
			t.Errorf("refund kept the test the order enrolled")
		}
	})
}

func TestCheckoutValidationAndDeclines(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		s := newShop(t, e)
		testGateway(t, e, e.Domain)
		e.Store.AddDiscount(context.Background(), e.Domain.ID, lms.Discount{Kind: lms.KindGlobal, Code: "TENOFF", UseCode: true, Limit: 5,
			Type: lms.DiscountPercentage, Value: 1000})
		course := []map[string]any{{"course_id": s.course, "price_scheme_id": s.courseScheme}}
		e.Scenarios(t, []Scenario{
			{Name: "no items", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com"}, card("4242424242424242"))),
				Status: 400, Fields: []string{"items"}},
			{Name: "item without id", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com",
				"items": []map[string]any{{"price_scheme_id": 1}}}, card("4242424242424242"))), Status: 400, Fields: []string{"items[0]"}},
			{Name: "course without scheme", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com",
				"items": []map[string]any{{"course_id": s.course}}}, card("4242424242424242"))), Status: 400, Fields: []string{"items[0].price_scheme_id"}},
			{Name: "duplicate", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com",
				"items": append(course, course...)}, card("4242424242424242"))), Status: 400, Fields: []string{"items[1]"}},
			{Name: "no email", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"items": course}, card("4242424242424242"))),
				Status: 400, Fields: []string{"email"}},
			{Name: "bad card", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com", "items": course},
				card("4242424242424241"))), Status: 400, Fields: []string{"card_number"}},
			{Name: "no card, no return url", Request: api("POST", "/shoppingCart/checkout", map[string]any{"email": "a@example.com", "items": course}),
				Status: 400, Fields: []string{"return_url", "cancel_url"}},
			{Name: "card in the URL", Request: api("POST", "/shoppingCart/checkout?card_number=4242424242424242",
				with(map[string]any{"email": "a@example.com", "items": course}, card("4242424242424242"))), Status: 400, Fields: []string{"card_number"}},
			{Name: "other domain's course", Request: other(e, "POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com", "items": course},
				card("4242424242424242"))), Status: 404},
			{Name: "currency mismatch", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com", "currency": "eur",
				"items": []map[string]any{{"class_id": s.class, "price_scheme_id": s.classScheme}}}, card("4242424242424242"))), Status: 400, Fields: []string{"items[0]"}},
			{Name: "unknown coupon", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com", "items": course,
				"discount_code": "NOPE"}, card("4242424242424242"))), Status: 400, Fields: []string{"coupon_code"}},
			{Name: "declined", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com", "items": course},
				card("4000000000000002"))), Status: 402, Want: map[string]any{"code": "payment_declined"},
				Check: func(t *testing.T, r *Response) {
					if !strings.HasPrefix(Str(t, r.JSON(t), "message"), "Your card was declined.") {
						t.Errorf("message: %s", r.Body)
					}
				}},
			{Name: "insufficient funds", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com", "items": course},
				card("4000000000009995"))), Status: 402},
			{Name: "coupon", Request: api("POST", "/shoppingCart/checkout", with(map[string]any{"email": "a@example.com", "items": course,
				"coupon_code": "tenoff"}, card("4242424242424242"))), Status: 200, Want: map[string]any{"data.total": 18.0, "data.discount": 2.0}},
		})
		if _, err := e.Store.UserByEmail(context.Background(), e.Domain.ID, "a@example.com"); err != nil {
			t.Errorf("buyer of the paid order: %v", err)
		}
	})
}

func TestCheckoutIdempotencyAndRedirect(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		s := newShop(t, e)
		testGateway(t, e, e.Domain)
		body := with(map[string]any{"email": "b@example.com", "items": []map[string]any{{"test_id": s.test, "price_scheme_id": s.testScheme}}},
			card("4242424242424242"))
		key := map[string]string{"Idempotency-Key": "cart-1"}
		r1 := e.Do(Request{Method: "POST", Path: "/api/v1/shoppingCart/checkout", Body: body, Header: key})
		r2 := e.Do(Request{Method: "POST", Path: "/api/v1/shoppingCart/checkout", Body: body, Header: key})
		if r1.Status != 200 || r2.Status != 200 || Int(t, r1.JSON(t), "data.id") != Int(t, r2.JSON(t), "data.id") ||
			!strings.Contains(Str(t, r2.JSON(t), "message"), "replay") {
			t.Errorf("retry: %s / %s", r1.Body, r2.Body)
		}
		body["email"] = "c@example.com"
		if r := e.Do(Request{Method: "POST", Path: "/api/v1/shoppingCart/checkout", Body: body, Header: key}); r.Status != http.StatusConflict {
			t.Errorf("different body: %d %s", r.Status, r.Body)
		}
		orderID := itoa(Int(t, r1.JSON(t), "data.id"))
		ref := map[string]string{"Idempotency-Key": "refund-1"}
		f1 := e.Do(Request{Method: "POST", Path: "/api/v1/orders/refund/" + orderID, Body: map[string]any{"amount": "1"}, Header: ref})
		f2 := e.Do(Request{Method: "POST", Path: "/api/v1/orders/refund/" + orderID, Body: map[string]any{"amount": "1"}, Header: ref})
		if f1.Status != 200 || f2.Status != 200 {
			t.Fatalf("refunds: %s / %s", f1.Body, f2.Body)
		}
		if got, _ := Lookup(f2.JSON(t), "data.refunds.#"); got != 1 {
			t.Errorf("a retried refund refunded twice: %s", f2.Body)
		}

		// Redirect flow: the test gateway's page completes the order.
		r := e.LMS("POST", "/shoppingCart/checkout", map[string]any{"email": "d@example.com", "return_url": "https://s.example/ok",
			"cancel_url": "https://s.example/no", "items": []map[string]any{{"course_id": s.course, "price_scheme_id": s.courseScheme}}})
		page := Str(t, r.JSON(t), "data.checkout_url")
		if Str(t, r.JSON(t), "data.status") != "pending" || page == "" {
			t.Fatalf("redirect: %s", r.Body)
		}
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.PostForm(page, map[string][]string{"action": {"pay"}, "card_number": {"4242424242424242"},
			"card_exp_month": {"1"}, "card_exp_year": {"40"}, "card_cvc": {"999"}})
		if err != nil || resp.StatusCode != 303 {
			t.Fatalf("pay on page: %v %v", resp, err)
		}
		resp.Body.Close()
		got := e.LMS("GET", "/orders/get/"+itoa(Int(t, r.JSON(t), "data.id")), nil)
		if Str(t, got.JSON(t), "data.status") != "paid" {
			t.Errorf("after the page: %s", got.Body)
		}
		u, _ := e.Store.UserByEmail(context.Background(), e.Domain.ID, "d@example.com")
		if ok, _ := e.Store.IsEnrolled(context.Background(), e.Domain.ID, u.ID, lms.KindCourse, s.course); !ok {
			t.Errorf("redirect checkout did not enroll")
		}
	})
}
