package lmsapi

import (
	"net/http"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/money"
	"github.com/lectern-lms/lectern/internal/store"
)

// productRoutes registers the products and product categories endpoints.
//
// Routing: the seed's paths mix "literal word first"
// (/products/getproduct/{id}, /products/update/{id}, /products/delete/{id},
// /products/product-categories/{id}) with "product id first"
// (/products/{id}/publish, unpublish, price, shipping-charge). Registered
// one by one, /products/{product_id}/price and /products/update/{product_id}
// both match /products/update/price and neither is more specific, so
// ServeMux panics. The id-first routes are therefore one pattern,
// /products/{product_id}/{action}, dispatched here on the action word.
// ServeMux's most-specific rule makes every literal-first pattern win over
// it: /products/update/price is the update of product "price" (400: not an
// integer), never the price of product "update".
func (a *API) productRoutes(rt *httpx.Router) {
	a.handle(rt, "GET", "/products/list", a.listProducts)
	a.handle(rt, "GET", "/products/getproduct/{product_id}", a.getProduct)
	a.handle(rt, "POST", "/products/createProduct", a.createProduct)
	a.handle(rt, "DELETE", "/products/delete/{product_id}", a.deleteProduct)
	a.handle(rt, "PUT", "/products/update/{product_id}", a.updateProduct)
	a.handle(rt, "POST", "/products/createProductCategory", a.createProductCategory)
	a.handle(rt, "GET", "/products/product-categories", a.listProductCategories)
	a.handle(rt, "PUT", "/products/product-categories/{category_id}", a.updateProductCategory)
	a.handle(rt, "DELETE", "/products/product-categories/{category_id}", a.deleteProductCategory)
	a.productActions(rt, map[string]productAction{
		"publish":         {"POST", a.publishProduct},
		"unpublish":       {"POST", a.unpublishProduct},
		"price":           {"PUT", a.setProductPrice},
		"shipping-charge": {"PUT", a.setProductShipping},
	})
}

// productAction is one /products/{product_id}/{action} endpoint.
type productAction struct {
	method string
	h      handlerFunc
}

// productActions serves /products/{product_id}/{action}. An unknown action
// is 404 and a wrong method 405 (with Allow), both before authentication,
// as for every other route.
func (a *API) productActions(rt *httpx.Router, actions map[string]productAction) {
	handlers := map[string]http.Handler{}
	for name, act := range actions {
		handlers[name] = a.wrap(act.h)
		rt.Note(act.method, Prefix+"/products/{product_id}/"+name)
	}
	rt.Mux.HandleFunc(Prefix+"/products/{product_id}/{action}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("action")
		act, found := actions[name]
		if !found {
			a.writeError(w, r, &apiError{status: http.StatusNotFound, code: "not_found", message: "no such endpoint: " + r.URL.Path})
			return
		}
		if r.Method != act.method {
			allow := []string{act.method}
			w.Header().Set("Allow", act.method)
			rt.MethodNotAllowed(w, r, allow)
			return
		}
		handlers[name].ServeHTTP(w, r)
	})
}

// readMoney reads an optional money parameter; sent is false when it is
// absent or bad (bad values are recorded in v).
func readMoney(c *call, v *lms.Validator, name string) (m money.Money, sent bool) {
	s := c.P.Get(name)
	if s == "" {
		return 0, false
	}
	m, err := money.Parse(s)
	if err != nil {
		v.Add(name, err.Error())
		return 0, false
	}
	return m, true
}

// requiredMoney is readMoney that records a missing value in v.
func requiredMoney(c *call, v *lms.Validator, name string) money.Money {
	if !c.P.Has(name) {
		v.Add(name, "is required")
		return 0
	}
	m, _ := readMoney(c, v, name)
	return m
}

// Product types: product_type on input, type (its name) on output.
var productTypes = map[int64]string{1: "Physical", 2: "Digital"}

// Category status: is_status on input and in write answers, status (its
// name) in the list.
var productCategoryStatus = map[int64]string{1: "Active", 0: "Inactive"}

// productJSON is the seed's Product, plus the fields the other product
// endpoints read or write.
type productJSON struct {
	ID             int64       `json:"id"`
	Name           string      `json:"name"`
	Type           string      `json:"type"`
	SKU            string      `json:"sku"`
	Price          money.Money `json:"price"`
	Status         string      `json:"status"`
	Description    string      `json:"description"`
	ProductType    int64       `json:"product_type"`
	CategoryID     *int64      `json:"category_id"`
	ShippingCharge money.Money `json:"shipping_charge"`
	IsTrackStock   int64       `json:"is_track_stock"`
	Added          string      `json:"added"`
}

func toProductJSON(p store.Product) productJSON {
	j := productJSON{ID: p.ID, Name: p.Name, Type: productTypes[p.Type], SKU: p.SKU, Price: money.Money(p.PriceCents),
		Status: p.Status, Description: p.Description, ProductType: p.Type, ShippingCharge: money.Money(p.ShippingCents),
		IsTrackStock: p.TrackStock, Added: p.CreatedAt.UTC().Format(productTimeLayout)}
	if p.CategoryID != 0 {
		id := p.CategoryID
		j.CategoryID = &id
	}
	return j
}

// productTimeLayout is how instants are written: ISO 8601 in UTC.
const productTimeLayout = "2006-01-02T15:04:05Z"

// GET /products/list: page, limit.
func (a *API) listProducts(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	products, total, err := a.Store.ListProducts(r.Context(), c.Domain.ID, pg.store())
	if err != nil {
		return err
	}
	data := make([]productJSON, len(products))
	for i, p := range products {
		data[i] = toProductJSON(p)
	}
	return writeJSON(w, pg.body("Products", data, total))
}

// GET /products/getproduct/{product_id}.
func (a *API) getProduct(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "product_id")
	if err := v.Err(); err != nil {
		return err
	}
	p, err := a.Store.Product(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Product found", toProductJSON(p))
}

// POST /products/createProduct: name, price, product_type, sku, optional
// is_track_stock (default 0) and description.
func (a *API) createProduct(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	name := c.P.RequiredString(&v, "name")
	v.Check(!lms.TooLong(name, 255), "name", "must be at most 255 characters")
	price := requiredMoney(c, &v, "price")
	ptype := c.P.RequiredInt(&v, "product_type")
	if !v.Has("product_type") {
		v.Check(productTypes[ptype] != "", "product_type", "must be 1 (physical) or 2 (digital)")
	}
	sku := c.P.RequiredString(&v, "sku")
	v.Check(!lms.TooLong(sku, 100), "sku", "must be at most 100 characters")
	track := c.P.Flag(&v, "is_track_stock", 0)
	description := c.P.Get("description")
	if err := v.Err(); err != nil {
		return err
	}
	p, err := a.Store.CreateProduct(r.Context(), c.Domain.ID, store.Product{Name: name, Description: description,
		Type: ptype, SKU: sku, PriceCents: int64(price), TrackStock: track})
	if err != nil {
		return err
	}
	return ok(w, "Product created", map[string]any{
		"id": p.ID, "name": p.Name, "price": money.Money(p.PriceCents), "product_type": p.Type, "sku": p.SKU,
		"is_track_stock": p.TrackStock, "lms_domain_id": c.Domain.ID, "added": p.CreatedAt.UTC().Format(productTimeLayout)})
}

// DELETE /products/delete/{product_id}.
func (a *API) deleteProduct(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "product_id")
	if err := v.Err(); err != nil {
		return err
	}
	if err := a.Store.DeleteProduct(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	return ok(w, "Product deleted", map[string]any{"id": id})
}

// POST /products/{product_id}/publish.
func (a *API) publishProduct(w http.ResponseWriter, r *http.Request, c *call) error {
	return a.setProductStatus(w, r, c, store.ProductPublished)
}

// POST /products/{product_id}/unpublish.
func (a *API) unpublishProduct(w http.ResponseWriter, r *http.Request, c *call) error {
	return a.setProductStatus(w, r, c, store.ProductNotPublished)
}

// setProductStatus sets the publication state; setting the state a product
// already has is not an error.
func (a *API) setProductStatus(w http.ResponseWriter, r *http.Request, c *call, status string) error {
	var v lms.Validator
	id := c.P.ID(&v, "product_id")
	if err := v.Err(); err != nil {
		return err
	}
	p, err := a.Store.UpdateProduct(r.Context(), c.Domain.ID, id, store.ProductUpdate{Status: &status})
	if err != nil {
		return err
	}
	return ok(w, "Product status updated", map[string]any{"id": p.ID, "status": p.Status})
}

// PUT /products/update/{product_id}: any of name, description, price,
// category_id (0 removes the category); at least one.
func (a *API) updateProduct(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "product_id")
	var u store.ProductUpdate
	sent := false
	if c.P.Has("name") {
		name := c.P.Get("name")
		v.Check(!lms.TooLong(name, 255), "name", "must be at most 255 characters")
		u.Name, sent = &name, true
	} else if productParamSent(c, "name") {
		v.Add("name", "must not be blank")
	}
	if productParamSent(c, "description") {
		d := c.P.Get("description")
		u.Description, sent = &d, true
	}
	if productParamSent(c, "price") {
		sent = true
		if m, ok := readMoney(c, &v, "price"); ok {
			cents := int64(m)
			u.PriceCents = &cents
		} else if !v.Has("price") {
			v.Add("price", "must be an amount such as 19.99")
		}
	}
	if productParamSent(c, "category_id") {
		sent = true
		if cat, ok := c.P.Int(&v, "category_id"); ok {
			v.Check(cat >= 0, "category_id", "must be a category id, or 0 for none")
			u.CategoryID = &cat
		} else if !v.Has("category_id") {
			v.Add("category_id", "must be a category id, or 0 for none")
		}
	}
	if !sent && v.Valid() {
		v.Add("name", "or one of description, price, category_id is required")
	}
	if err := v.Err(); err != nil {
		return err
	}
	p, err := a.Store.UpdateProduct(r.Context(), c.Domain.ID, id, u)
	if err != nil {
		return err
	}
	return ok(w, "Product updated", map[string]any{"id": p.ID, "name": p.Name, "description": p.Description})
}

// productParamSent reports whether a parameter was sent at all, blank or not.
func productParamSent(c *call, name string) bool {
	for _, n := range c.P.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// PUT /products/{product_id}/price: price. Answers the price as a string.
func (a *API) setProductPrice(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "product_id")
	price := requiredMoney(c, &v, "price")
	if err := v.Err(); err != nil {
		return err
	}
	cents := int64(price)
	p, err := a.Store.UpdateProduct(r.Context(), c.Domain.ID, id, store.ProductUpdate{PriceCents: &cents})
	if err != nil {
		return err
	}
	return ok(w, "Product price updated", map[string]any{"id": p.ID, "price": money.Money(p.PriceCents).String()})
}

// PUT /products/{product_id}/shipping-charge: shipping_charge. Answers the
// charge as a string.
func (a *API) setProductShipping(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "product_id")
	charge := requiredMoney(c, &v, "shipping_charge")
	if err := v.Err(); err != nil {
		return err
	}
	cents := int64(charge)
	p, err := a.Store.UpdateProduct(r.Context(), c.Domain.ID, id, store.ProductUpdate{ShippingCents: &cents})
	if err != nil {
		return err
	}
	return ok(w, "Product shipping charge updated", map[string]any{"id": p.ID, "shipping_charge": money.Money(p.ShippingCents).String()})
}

// POST /products/createProductCategory: name, optional is_status (default
// 1) and user_id (a user of the domain; default 0, none).
func (a *API) createProductCategory(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	name := c.P.RequiredString(&v, "name")
	v.Check(!lms.TooLong(name, 255), "name", "must be at most 255 characters")
	isStatus := c.P.Flag(&v, "is_status", 1)
	var userID int64
	if c.P.Has("user_id") {
		userID = c.P.ID(&v, "user_id")
	}
	if err := v.Err(); err != nil {
		return err
	}
	cat, err := a.Store.CreateProductCategory(r.Context(), c.Domain.ID, store.ProductCategory{Name: name, IsStatus: isStatus, UserID: userID})
	if err != nil {
		return err
	}
	return ok(w, "Product category created", map[string]any{
		"id": cat.ID, "name": cat.Name, "lms_domain_id": c.Domain.ID, "is_status": cat.IsStatus, "user_id": cat.UserID})
}

// GET /products/product-categories: page, limit.
func (a *API) listProductCategories(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	cats, total, err := a.Store.ListProductCategories(r.Context(), c.Domain.ID, pg.store())
	if err != nil {
		return err
	}
	type item struct {
		ID     int64  `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
	}
	data := make([]item, len(cats))
	for i, cat := range cats {
		data[i] = item{ID: cat.ID, Name: cat.Name, Status: productCategoryStatus[cat.IsStatus]}
	}
	return writeJSON(w, pg.body("Product categories", data, total))
}

// PUT /products/product-categories/{category_id}: name, optional is_status.
func (a *API) updateProductCategory(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "category_id")
	name := c.P.RequiredString(&v, "name")
	v.Check(!lms.TooLong(name, 255), "name", "must be at most 255 characters")
	var isStatus *int64
	if c.P.Has("is_status") {
		s := c.P.Flag(&v, "is_status", 1)
		isStatus = &s
	}
	if err := v.Err(); err != nil {
		return err
	}
	cat, err := a.Store.UpdateProductCategory(r.Context(), c.Domain.ID, id, name, isStatus)
	if err != nil {
		return err
	}
	return ok(w, "Product category updated", map[string]any{"id": cat.ID, "name": cat.Name, "lms_domain_id": c.Domain.ID})
}

// DELETE /products/product-categories/{category_id}. Products filed under
// the category are kept and lose their category, in the same transaction.
func (a *API) deleteProductCategory(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "category_id")
	if err := v.Err(); err != nil {
		return err
	}
	detached, err := a.Store.DeleteProductCategory(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Product category deleted", map[string]any{"id": id, "products_detached": detached})
}
