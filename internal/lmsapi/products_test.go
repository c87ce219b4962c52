package lmsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lmsapi"
)

// TestProductRoutesRegister checks that the product patterns, some of
// which overlap, register on a ServeMux without a conflict panic.
func TestProductRoutesRegister(t *testing.T) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Register panicked: %v", p)
		}
	}()
	mux := http.NewServeMux()
	(&lmsapi.API{}).Register(mux)
	for _, path := range []string{"/api/v1/products/list", "/api/v1/products/7/price", "/api/v1/products/update/7",
		"/api/v1/products/product-categories/7", "/api/v1/products/product-categories"} {
		_, pattern := mux.Handler(httptest.NewRequest("GET", path, nil))
		if !strings.Contains(pattern, "/products/") {
			t.Errorf("%s routed to %q", path, pattern)
		}
	}
}

// createTestProduct makes a product as d (nil: e.Domain) and returns its id.
func createTestProduct(t *testing.T, e *Env, d *Domain, body map[string]any) int64 {
	t.Helper()
	r := e.Do(Request{Method: "POST", Path: "/api/v1/products/createProduct", Body: body, Domain: d})
	if r.Status != 200 {
		t.Fatalf("createProduct: %d %s", r.Status, r.Body)
	}
	return Int(t, r.JSON(t), "data.id")
}

func createTestCategory(t *testing.T, e *Env, d *Domain, name string) int64 {
	t.Helper()
	r := e.Do(Request{Method: "POST", Path: "/api/v1/products/createProductCategory", Body: map[string]any{"name": name}, Domain: d})
	if r.Status != 200 {
		t.Fatalf("createProductCategory: %d %s", r.Status, r.Body)
	}
	return Int(t, r.JSON(t), "data.id")
}

var productISOUTC = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// productRawNumber asserts that path holds a JSON number written exactly as want.
func productRawNumber(path, want string) func(t *testing.T, r *Response) {
	return func(t *testing.T, r *Response) {
		t.Helper()
		v, ok := Lookup(r.JSON(t), path)
		n, isNum := v.(json.Number)
		if !ok || !isNum || n.String() != want {
			t.Errorf("%s = %#v, want the JSON number %s; body %s", path, v, want, r.Body)
		}
	}
}

func TestProducts(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		p := "/api/v1/products"
		mug := createTestProduct(t, e, nil, map[string]any{"name": "Mug", "price": 12.5, "product_type": 1, "sku": "MUG-1", "is_track_stock": 1})
		ebook := createTestProduct(t, e, nil, map[string]any{"name": "E-book", "price": "0", "product_type": 2, "sku": "EB-1"})
		foreign := createTestProduct(t, e, &e.Other, map[string]any{"name": "Theirs", "price": 1, "product_type": 1, "sku": "MUG-1"})
		cat := createTestCategory(t, e, nil, "Merch")
		foreignCat := createTestCategory(t, e, &e.Other, "Theirs")
		doomed := createTestCategory(t, e, nil, "Doomed")
		user := Int(t, e.LMS("POST", "/users/create", map[string]any{"username": "ann", "email": "ann@example.com"}).JSON(t), "id")
		s := itoa

		e.Scenarios(t, []Scenario{
			// POST /products/createProduct
			{Name: "create answers the create result", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: `{"name": "Poster", "price": 19.99, "product_type": 1, "sku": "POS-1", "is_track_stock": 0}`},
				Status: 200, Want: map[string]any{"message": "Product created", "data.name": "Poster", "data.price": 19.99,
					"data.product_type": 1, "data.sku": "POS-1", "data.is_track_stock": 0, "data.lms_domain_id": e.Domain.ID},
				Check: func(t *testing.T, r *Response) {
					productRawNumber("data.price", "19.99")(t, r)
					body := r.JSON(t)
					Int(t, body, "data.id")
					if a := Str(t, body, "data.added"); !productISOUTC.MatchString(a) {
						t.Errorf("added = %q, want ISO 8601 UTC", a)
					}
				}},
			{Name: "create form body with price text", Request: Request{Method: "POST", Path: p + "/createProduct",
				Form: url.Values{"name": {"Cap"}, "price": {"7.5"}, "product_type": {"1"}, "sku": {"CAP-1"}}},
				Status: 200, Check: productRawNumber("data.price", "7.50")},
			{Name: "create query string", Request: Request{Method: "POST", Path: p + "/createProduct?name=Pin&price=1&product_type=2&sku=PIN-1"},
				Status: 200, Want: map[string]any{"data.is_track_stock": 0}, Check: productRawNumber("data.price", "1.00")},
			{Name: "create missing fields", Request: Request{Method: "POST", Path: p + "/createProduct", Body: map[string]any{}},
				Status: 400, Fields: []string{"name", "price", "product_type", "sku"}},
			{Name: "create price three decimals", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: `{"name": "X", "price": 19.999, "product_type": 1, "sku": "X-1"}`}, Status: 400, Fields: []string{"price"}},
			{Name: "create price negative", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: map[string]any{"name": "X", "price": -1, "product_type": 1, "sku": "X-1"}}, Status: 400, Fields: []string{"price"}},
			{Name: "create price exponent", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: `{"name": "X", "price": 1e2, "product_type": 1, "sku": "X-1"}`}, Status: 400, Fields: []string{"price"}},
			{Name: "create price not a number", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: map[string]any{"name": "X", "price": "cheap", "product_type": 1, "sku": "X-1"}}, Status: 400, Fields: []string{"price"}},
			{Name: "create product_type not an integer", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: map[string]any{"name": "X", "price": 1, "product_type": "book", "sku": "X-1"}}, Status: 400, Fields: []string{"product_type"}},
			{Name: "create product_type unknown", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: map[string]any{"name": "X", "price": 1, "product_type": 7, "sku": "X-1"}}, Status: 400, Fields: []string{"product_type"}},
			{Name: "create is_track_stock not 0/1", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: map[string]any{"name": "X", "price": 1, "product_type": 1, "sku": "X-1", "is_track_stock": 2}}, Status: 400, Fields: []string{"is_track_stock"}},
			{Name: "create every bad field at once", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: map[string]any{"name": " ", "price": "1.234", "product_type": "x", "is_track_stock": "yes"}},
				Status: 400, Fields: []string{"name", "price", "product_type", "sku", "is_track_stock"}},
			{Name: "create duplicate sku", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: map[string]any{"name": "Mug 2", "price": 1, "product_type": 1, "sku": "MUG-1"}}, Status: 409,
				Want: map[string]any{"code": "conflict"}},
			{Name: "create without auth", Request: Request{Method: "POST", Path: p + "/createProduct", NoAuth: true,
				Body: map[string]any{"name": "X", "price": 1, "product_type": 1, "sku": "X-1"}}, Status: 401},
			{Name: "create wrong method", Request: Request{Method: "GET", Path: p + "/createProduct"}, Status: 405,
				Check: productAllow("POST")},

			// GET /products/getproduct/{product_id}
			{Name: "get answers a Product", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(mug)}, Status: 200,
				Want: map[string]any{"message": "Product found", "data.id": mug, "data.name": "Mug", "data.type": "Physical",
					"data.sku": "MUG-1", "data.price": 12.5, "data.status": "Not Published", "data.category_id": nil,
					"data.is_track_stock": 1, "data.product_type": 1},
				Check: productRawNumber("data.price", "12.50")},
			{Name: "get digital", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(ebook)}, Status: 200,
				Want: map[string]any{"data.type": "Digital", "data.price": 0.0}},
			{Name: "get not a number", Request: Request{Method: "GET", Path: p + "/getproduct/abc"}, Status: 400, Fields: []string{"product_id"}},
			{Name: "get unknown", Request: Request{Method: "GET", Path: p + "/getproduct/999999"}, Status: 404},
			{Name: "get other domain", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(foreign)}, Status: 404},
			{Name: "get without auth", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(mug), NoAuth: true}, Status: 401},
			{Name: "get wrong method", Request: Request{Method: "POST", Path: p + "/getproduct/" + s(mug)}, Status: 405, Check: productAllow("GET, HEAD")},

			// GET /products/list
			{Name: "list answers the domain's products", Request: Request{Method: "GET", Path: p + "/list"}, Status: 200,
				Want: map[string]any{"message": "Products listed", "total": 5, "data.0.id": mug, "data.0.type": "Physical",
					"data.0.price": 12.5, "data.0.status": "Not Published", "data.1.id": ebook}},
			{Name: "list paginates", Request: Request{Method: "GET", Path: p + "/list?limit=2&page=2"}, Status: 200,
				Want: map[string]any{"total": 5, "data.#": 2, "page": 2, "limit": 2}},
			{Name: "list bad limit", Request: Request{Method: "GET", Path: p + "/list?limit=0"}, Status: 400, Fields: []string{"limit"}},
			{Name: "list other domain", Request: Request{Method: "GET", Path: p + "/list", Domain: &e.Other}, Status: 200,
				Want: map[string]any{"total": 1, "data.0.id": foreign}},
			{Name: "list without auth", Request: Request{Method: "GET", Path: p + "/list", NoAuth: true}, Status: 401},
			{Name: "list wrong method", Request: Request{Method: "POST", Path: p + "/list"}, Status: 405, Check: productAllow("GET, HEAD")},

			// POST /products/{product_id}/publish and unpublish
			{Name: "publish", Request: Request{Method: "POST", Path: p + "/" + s(mug) + "/publish"}, Status: 200,
				Want: map[string]any{"message": "Product status updated", "data.id": mug, "data.status": "Published"}},
			{Name: "publish again is fine", Request: Request{Method: "POST", Path: p + "/" + s(mug) + "/publish"}, Status: 200,
				Want: map[string]any{"data.status": "Published"}},
			{Name: "published shows in get", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(mug)}, Status: 200,
				Want: map[string]any{"data.status": "Published"}},
			{Name: "unpublish", Request: Request{Method: "POST", Path: p + "/" + s(mug) + "/unpublish"}, Status: 200,
				Want: map[string]any{"message": "Product status updated", "data.id": mug, "data.status": "Not Published"}},
			{Name: "publish not a number", Request: Request{Method: "POST", Path: p + "/abc/publish"}, Status: 400, Fields: []string{"product_id"}},
			{Name: "publish unknown", Request: Request{Method: "POST", Path: p + "/999999/publish"}, Status: 404},
			{Name: "publish other domain", Request: Request{Method: "POST", Path: p + "/" + s(foreign) + "/publish"}, Status: 404},
			{Name: "unpublish other domain", Request: Request{Method: "POST", Path: p + "/" + s(foreign) + "/unpublish"}, Status: 404},
			{Name: "publish without auth", Request: Request{Method: "POST", Path: p + "/" + s(mug) + "/publish", NoAuth: true}, Status: 401},
			{Name: "publish wrong method", Request: Request{Method: "GET", Path: p + "/" + s(mug) + "/publish"}, Status: 405, Check: productAllow("POST")},
			{Name: "unpublish wrong method", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/unpublish"}, Status: 405, Check: productAllow("POST")},
			{Name: "unknown action", Request: Request{Method: "POST", Path: p + "/" + s(mug) + "/frobnicate"}, Status: 404,
				Want: map[string]any{"code": "not_found"}},
			{Name: "unknown action is 404 before auth", Request: Request{Method: "POST", Path: p + "/" + s(mug) + "/frobnicate", NoAuth: true}, Status: 404},
			{Name: "wrong method is 405 before auth", Request: Request{Method: "DELETE", Path: p + "/" + s(mug) + "/price", NoAuth: true}, Status: 405, Check: productAllow("PUT")},

			// PUT /products/{product_id}/price
			{Name: "price answers a string", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/price", Body: `{"price": 19.99}`},
				Status: 200, Want: map[string]any{"message": "Product price updated", "data.id": mug, "data.price": "19.99"}},
			{Name: "price whole number as text", Request: Request{Method: "PUT", Path: p + "/" + s(ebook) + "/price", Body: map[string]any{"price": "20"}},
				Status: 200, Want: map[string]any{"data.price": "20.00"}},
			{Name: "price missing", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/price", Body: map[string]any{}}, Status: 400, Fields: []string{"price"}},
			{Name: "price three decimals", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/price", Body: `{"price": 1.005}`}, Status: 400, Fields: []string{"price"}},
			{Name: "price negative", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/price", Body: `{"price": -5}`}, Status: 400, Fields: []string{"price"}},
			{Name: "price exponent", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/price", Body: `{"price": 2E1}`}, Status: 400, Fields: []string{"price"}},
			{Name: "price not a number", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/price", Body: `{"price": true}`}, Status: 400, Fields: []string{"price"}},
			{Name: "price bad id and price", Request: Request{Method: "PUT", Path: p + "/abc/price", Body: `{"price": "x"}`}, Status: 400, Fields: []string{"product_id", "price"}},
			{Name: "price other domain", Request: Request{Method: "PUT", Path: p + "/" + s(foreign) + "/price", Body: `{"price": 1}`}, Status: 404},
			{Name: "price without auth", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/price", Body: `{"price": 1}`, NoAuth: true}, Status: 401},
			{Name: "price wrong method", Request: Request{Method: "POST", Path: p + "/" + s(mug) + "/price", Body: `{"price": 1}`}, Status: 405, Check: productAllow("PUT")},

			// PUT /products/{product_id}/shipping-charge
			{Name: "shipping answers a string", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/shipping-charge", Body: `{"shipping_charge": 4.5}`},
				Status: 200, Want: map[string]any{"message": "Product shipping charge updated", "data.id": mug, "data.shipping_charge": "4.50"}},
			{Name: "shipping shows in get", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(mug)}, Status: 200,
				Check: productRawNumber("data.shipping_charge", "4.50")},
			{Name: "shipping missing", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/shipping-charge", Body: map[string]any{"price": 1}}, Status: 400, Fields: []string{"shipping_charge"}},
			{Name: "shipping three decimals", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/shipping-charge", Body: `{"shipping_charge": "0.001"}`}, Status: 400, Fields: []string{"shipping_charge"}},
			{Name: "shipping negative", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/shipping-charge", Body: `{"shipping_charge": -0.5}`}, Status: 400, Fields: []string{"shipping_charge"}},
			{Name: "shipping other domain", Request: Request{Method: "PUT", Path: p + "/" + s(foreign) + "/shipping-charge", Body: `{"shipping_charge": 1}`}, Status: 404},
			{Name: "shipping without auth", Request: Request{Method: "PUT", Path: p + "/" + s(mug) + "/shipping-charge", Body: `{"shipping_charge": 1}`, NoAuth: true}, Status: 401},
			{Name: "shipping wrong method", Request: Request{Method: "GET", Path: p + "/" + s(mug) + "/shipping-charge"}, Status: 405, Check: productAllow("PUT")},

			// PUT /products/update/{product_id}
			{Name: "update", Request: Request{Method: "PUT", Path: p + "/update/" + s(mug),
				Body: map[string]any{"name": "Big Mug", "description": "350 ml", "price": "9.95", "category_id": cat}}, Status: 200,
				Want: map[string]any{"message": "Product updated", "data.id": mug, "data.name": "Big Mug", "data.description": "350 ml", "data.#": 3}},
			{Name: "update is stored", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(mug)}, Status: 200,
				Want:  map[string]any{"data.name": "Big Mug", "data.description": "350 ml", "data.category_id": cat, "data.sku": "MUG-1"},
				Check: productRawNumber("data.price", "9.95")},
			{Name: "update one field keeps the rest", Request: Request{Method: "PUT", Path: p + "/update/" + s(mug), Body: map[string]any{"description": ""}}, Status: 200,
				Want: map[string]any{"data.name": "Big Mug", "data.description": ""}},
			{Name: "update nothing", Request: Request{Method: "PUT", Path: p + "/update/" + s(mug), Body: map[string]any{}}, Status: 400, Fields: []string{"name"}},
			{Name: "update bad fields", Request: Request{Method: "PUT", Path: p + "/update/" + s(mug),
				Body: map[string]any{"name": "", "price": "1.001", "category_id": "x"}}, Status: 400, Fields: []string{"name", "price", "category_id"}},
			{Name: "update negative category", Request: Request{Method: "PUT", Path: p + "/update/" + s(mug), Body: map[string]any{"category_id": -1}}, Status: 400, Fields: []string{"category_id"}},
			{Name: "update unknown category", Request: Request{Method: "PUT", Path: p + "/update/" + s(mug), Body: map[string]any{"category_id": 999999}}, Status: 404,
				Want: map[string]any{"message": "product category 999999 not found"}},
			{Name: "update other domain's category", Request: Request{Method: "PUT", Path: p + "/update/" + s(mug), Body: map[string]any{"category_id": foreignCat}}, Status: 404,
				Want: map[string]any{"message": "product category " + s(foreignCat) + " not found"}},
			{Name: "update bad id", Request: Request{Method: "PUT", Path: p + "/update/abc", Body: map[string]any{"name": "x"}}, Status: 400, Fields: []string{"product_id"}},
			{Name: "update other domain's product", Request: Request{Method: "PUT", Path: p + "/update/" + s(foreign), Body: map[string]any{"name": "x"}}, Status: 404},
			{Name: "update without auth", Request: Request{Method: "PUT", Path: p + "/update/" + s(mug), Body: map[string]any{"name": "x"}, NoAuth: true}, Status: 401},
			{Name: "update wrong method", Request: Request{Method: "POST", Path: p + "/update/" + s(mug)}, Status: 405, Check: productAllow("PUT")},
			{Name: "literal first segment wins", Request: Request{Method: "PUT", Path: p + "/update/price", Body: map[string]any{"price": 1}},
				Status: 400, Fields: []string{"product_id"}},

			// POST /products/createProductCategory
			{Name: "create category", Request: Request{Method: "POST", Path: p + "/createProductCategory", Body: map[string]any{"name": "Books"}}, Status: 200,
				Want: map[string]any{"message": "Product category created", "data.name": "Books", "data.lms_domain_id": e.Domain.ID,
					"data.is_status": 1, "data.user_id": 0},
				Check: func(t *testing.T, r *Response) { Int(t, r.JSON(t), "data.id") }},
			{Name: "create inactive category for a user", Request: Request{Method: "POST", Path: p + "/createProductCategory",
				Body: map[string]any{"name": "Hidden", "is_status": 0, "user_id": user}}, Status: 200,
				Want: map[string]any{"data.is_status": 0, "data.user_id": user}},
			{Name: "create category missing name", Request: Request{Method: "POST", Path: p + "/createProductCategory", Body: map[string]any{}}, Status: 400, Fields: []string{"name"}},
			{Name: "create category bad flags", Request: Request{Method: "POST", Path: p + "/createProductCategory",
				Body: map[string]any{"name": "x", "is_status": 3, "user_id": "ann"}}, Status: 400, Fields: []string{"is_status", "user_id"}},
			{Name: "create category other domain's user", Request: Request{Method: "POST", Path: p + "/createProductCategory",
				Body: map[string]any{"name": "x", "user_id": user}, Domain: &e.Other}, Status: 404},
			{Name: "create category without auth", Request: Request{Method: "POST", Path: p + "/createProductCategory", Body: map[string]any{"name": "x"}, NoAuth: true}, Status: 401},
			{Name: "create category wrong method", Request: Request{Method: "PUT", Path: p + "/createProductCategory"}, Status: 405, Check: productAllow("POST")},

			// GET /products/product-categories
			{Name: "list categories", Request: Request{Method: "GET", Path: p + "/product-categories"}, Status: 200,
				Want: map[string]any{"message": "Product categories listed", "total": 4, "data.0.id": cat, "data.0.name": "Merch",
					"data.0.status": "Active", "data.3.name": "Hidden", "data.3.status": "Inactive", "data.0.lms_domain_id": Absent}},
			{Name: "list categories paginates", Request: Request{Method: "GET", Path: p + "/product-categories?limit=1&page=2"}, Status: 200,
				Want: map[string]any{"data.#": 1, "data.0.id": doomed, "total": 4}},
			{Name: "list categories bad page", Request: Request{Method: "GET", Path: p + "/product-categories?page=x"}, Status: 400, Fields: []string{"page"}},
			{Name: "list categories other domain", Request: Request{Method: "GET", Path: p + "/product-categories", Domain: &e.Other}, Status: 200,
				Want: map[string]any{"total": 1, "data.0.id": foreignCat}},
			{Name: "list categories without auth", Request: Request{Method: "GET", Path: p + "/product-categories", NoAuth: true}, Status: 401},
			{Name: "list categories wrong method", Request: Request{Method: "POST", Path: p + "/product-categories"}, Status: 405, Check: productAllow("GET, HEAD")},

			// PUT /products/product-categories/{category_id}
			{Name: "update category", Request: Request{Method: "PUT", Path: p + "/product-categories/" + s(cat), Body: map[string]any{"name": "Merchandise"}}, Status: 200,
				Want: map[string]any{"message": "Product category updated", "data.id": cat, "data.name": "Merchandise", "data.lms_domain_id": e.Domain.ID, "data.#": 3}},
			{Name: "update category status", Request: Request{Method: "PUT", Path: p + "/product-categories/" + s(cat), Body: map[string]any{"name": "Merchandise", "is_status": 0}}, Status: 200},
			{Name: "updated category in list", Request: Request{Method: "GET", Path: p + "/product-categories?limit=1"}, Status: 200,
				Want: map[string]any{"data.0.name": "Merchandise", "data.0.status": "Inactive"}},
			{Name: "update category missing name", Request: Request{Method: "PUT", Path: p + "/product-categories/" + s(cat), Body: map[string]any{}}, Status: 400, Fields: []string{"name"}},
			{Name: "update category bad status", Request: Request{Method: "PUT", Path: p + "/product-categories/" + s(cat), Body: map[string]any{"name": "x", "is_status": "on"}}, Status: 400, Fields: []string{"is_status"}},
			{Name: "update category bad id", Request: Request{Method: "PUT", Path: p + "/product-categories/price", Body: map[string]any{"name": "x"}}, Status: 400, Fields: []string{"category_id"}},
			{Name: "update category unknown", Request: Request{Method: "PUT", Path: p + "/product-categories/999999", Body: map[string]any{"name": "x"}}, Status: 404},
			{Name: "update category other domain", Request: Request{Method: "PUT", Path: p + "/product-categories/" + s(foreignCat), Body: map[string]any{"name": "x"}}, Status: 404},
			{Name: "update category without auth", Request: Request{Method: "PUT", Path: p + "/product-categories/" + s(cat), Body: map[string]any{"name": "x"}, NoAuth: true}, Status: 401},
			{Name: "category id path wrong method", Request: Request{Method: "GET", Path: p + "/product-categories/" + s(cat)}, Status: 405, Check: productAllow("DELETE, PUT")},

			// DELETE /products/product-categories/{category_id}
			{Name: "delete category bad id", Request: Request{Method: "DELETE", Path: p + "/product-categories/abc"}, Status: 400, Fields: []string{"category_id"}},
			{Name: "delete category other domain", Request: Request{Method: "DELETE", Path: p + "/product-categories/" + s(foreignCat)}, Status: 404},
			{Name: "delete category without auth", Request: Request{Method: "DELETE", Path: p + "/product-categories/" + s(cat), NoAuth: true}, Status: 401},
			{Name: "delete category detaches its products", Request: Request{Method: "DELETE", Path: p + "/product-categories/" + s(cat)}, Status: 200,
				Want: map[string]any{"message": "Product category deleted", "data.id": cat, "data.products_detached": 1}},
			{Name: "detached product is kept without category", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(mug)}, Status: 200,
				Want: map[string]any{"data.category_id": nil, "data.name": "Big Mug"}},
			{Name: "deleted category is gone", Request: Request{Method: "DELETE", Path: p + "/product-categories/" + s(cat)}, Status: 404},
			{Name: "delete empty category", Request: Request{Method: "DELETE", Path: p + "/product-categories/" + s(doomed)}, Status: 200,
				Want: map[string]any{"data.products_detached": 0}},
			{Name: "other domain's category untouched", Request: Request{Method: "GET", Path: p + "/product-categories", Domain: &e.Other}, Status: 200,
				Want: map[string]any{"total": 1}},

			// DELETE /products/delete/{product_id}
			{Name: "delete bad id", Request: Request{Method: "DELETE", Path: p + "/delete/0"}, Status: 400, Fields: []string{"product_id"}},
			{Name: "delete other domain", Request: Request{Method: "DELETE", Path: p + "/delete/" + s(foreign)}, Status: 404},
			{Name: "delete without auth", Request: Request{Method: "DELETE", Path: p + "/delete/" + s(ebook), NoAuth: true}, Status: 401},
			{Name: "delete wrong method", Request: Request{Method: "GET", Path: p + "/delete/" + s(ebook)}, Status: 405, Check: productAllow("DELETE")},
			{Name: "delete", Request: Request{Method: "DELETE", Path: p + "/delete/" + s(ebook)}, Status: 200,
				Want: map[string]any{"message": "Product deleted", "data.id": ebook}},
			{Name: "deleted is gone", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(ebook)}, Status: 404},
			{Name: "delete again", Request: Request{Method: "DELETE", Path: p + "/delete/" + s(ebook)}, Status: 404},
			{Name: "sku free again after delete", Request: Request{Method: "POST", Path: p + "/createProduct",
				Body: map[string]any{"name": "E-book 2", "price": 3, "product_type": 2, "sku": "EB-1"}}, Status: 200},
			{Name: "other domain's product untouched", Request: Request{Method: "GET", Path: p + "/getproduct/" + s(foreign), Domain: &e.Other}, Status: 200,
				Want: map[string]any{"data.name": "Theirs", "data.status": "Not Published"}},
		})
	})
}

// TestProductPriceExact checks that 19.99 is stored as 1999 minor units and
// comes back as exactly 19.99, whether sent as a JSON number or as text.
func TestProductPriceExact(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		for i, price := range []string{`19.99`, `"19.99"`} {
			r := e.LMS("POST", "/products/createProduct", json.RawMessage(
				`{"name": "P", "price": `+price+`, "product_type": 1, "sku": "SKU-`+itoa(int64(i))+`"}`))
			if r.Status != 200 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			if !strings.Contains(string(r.Body), `"price":19.99`) {
				t.Errorf("create answer %s lacks \"price\":19.99", r.Body)
			}
			id := Int(t, r.JSON(t), "data.id")
			stored, err := e.Store.Product(context.Background(), e.Domain.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			if stored.PriceCents != 1999 {
				t.Errorf("stored %d minor units, want 1999", stored.PriceCents)
			}
			got := e.LMS("GET", "/products/getproduct/"+itoa(id), nil)
			if !strings.Contains(string(got.Body), `"price":19.99,`) {
				t.Errorf("get answer %s lacks \"price\":19.99", got.Body)
			}
			list := e.LMS("GET", "/products/list", nil)
			if !strings.Contains(string(list.Body), `"price":19.99,`) {
				t.Errorf("list answer %s lacks \"price\":19.99", list.Body)
			}
			upd := e.LMS("PUT", "/products/"+itoa(id)+"/price", json.RawMessage(`{"price": `+price+`}`))
			if !strings.Contains(string(upd.Body), `"price":"19.99"`) {
				t.Errorf("price update answer %s lacks \"price\":\"19.99\"", upd.Body)
			}
			ship := e.LMS("PUT", "/products/"+itoa(id)+"/shipping-charge", json.RawMessage(`{"shipping_charge": 0.29}`))
			if !strings.Contains(string(ship.Body), `"shipping_charge":"0.29"`) {
				t.Errorf("shipping update answer %s lacks \"shipping_charge\":\"0.29\"", ship.Body)
			}
			if stored, _ := e.Store.Product(context.Background(), e.Domain.ID, id); stored.PriceCents != 1999 || stored.ShippingCents != 29 {
				t.Errorf("stored price %d shipping %d, want 1999 and 29", stored.PriceCents, stored.ShippingCents)
			}
		}
	})
}

func productAllow(want string) func(t *testing.T, r *Response) {
	return func(t *testing.T, r *Response) {
		t.Helper()
		if got := r.Header.Get("Allow"); got != want {
			t.Errorf("Allow = %q, want %q", got, want)
		}
	}
}
