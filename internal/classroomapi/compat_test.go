package classroomapi_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/payment"
)

// TestCompatIsTheDefault: a server started with no settings answers in
// the compat style: bare objects, errors as one object, ids of write
// operations as numbers, records with string values.
func TestCompatIsTheDefault(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		sched := e.VC("schedule", classParams()).JSON(t)
		if apitest.Str(t, sched, "status") != "ok" || apitest.Str(t, sched, "method") != "addclass" || apitest.Str(t, sched, "title") != "Algebra" {
			t.Fatalf("schedule: %v", sched)
		}
		id := itoa(apitest.Int(t, sched, "class_id"))
		got := e.VC("getclass", vals("class_id", id)).JSON(t)
		if apitest.Str(t, got, "0.id") != id || apitest.Str(t, got, "0.title") != "Algebra" {
			t.Fatalf("getclass keeps records as an array of string values: %v", got)
		}
		bad := e.VC("getclass", vals("apikey", "wrong")).JSON(t)
		if apitest.Str(t, bad, "status") != "error" || apitest.Str(t, bad, "error") != "Invalid API KEY" {
			t.Fatalf("wrong key: %v", bad)
		}
	})
}

// TestCompatErrors is TestErrors in the compat style: every error is one
// object with status "error".
func TestCompatErrors(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		key := e.Domain.ClassroomKey
		cases := []struct {
			name   string
			req    apitest.Request
			status int
			want   string
		}{
			{"missing key", apitest.Request{Method: "POST", Path: "/v2/getservers"}, 200, "Invalid API KEY"},
			{"wrong key", apitest.Request{Method: "POST", Path: "/v2/getservers?apikey=nope"}, 200, "Invalid API KEY"},
			{"LMS key is not a classroom key", apitest.Request{Method: "POST", Path: "/v2/getservers?apikey=" + e.Domain.LMSKey}, 200, "Invalid API KEY"},
			{"unknown operation", apitest.Request{Method: "POST", Path: "/v2/nosuchthing?apikey=" + key}, 404, `unknown operation "nosuchthing"`},
			{"legacy without task", apitest.Request{Method: "POST", Path: "/v2?apikey=" + key}, 200, "task is required"},
			{"GET is refused", apitest.Request{Method: "GET", Path: "/v2/getservers?apikey=" + key}, 405, "every classroom API operation is a POST"},
			{"bad format", apitest.Request{Method: "POST", Path: "/v2/getservers?format=yaml&apikey=" + key}, 200, "format must be json or xml"},
			{"bad input", apitest.Request{Method: "POST", Path: "/v2/getclass?class_id=abc&apikey=" + key}, 200, "class_id must be a positive whole number"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.req.NoAuth = true
				r := e.Do(c.req)
				if r.Status != c.status {
					t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
				}
				body := r.Object(t)
				if body["status"] != "error" || !strings.Contains(body["error"].(string), c.want) {
					t.Fatalf("got %s, want an error object containing %q", r.Body, c.want)
				}
			})
		}
	})
}

// TestStyleOfEarlyErrors: errors raised before the operation runs (wrong
// key, unreadable body, unknown operation or path, wrong method) come in
// the style the same client gets for everything else: the key's domain's
// style when the key is valid, else the server's.
func TestStyleOfEarlyErrors(t *testing.T) {
	for _, server := range []string{"compat", "seed"} {
		for _, domain := range []string{"", "compat", "seed"} {
			want := domain
			if want == "" {
				want = server
			}
			t.Run("server "+server+", domain "+domain, func(t *testing.T) {
				apitest.Run(t, func(t *testing.T, e *apitest.Env) {
					if err := e.Store.SetResponseStyle(context.Background(), e.Domain.ID, domain); err != nil {
						t.Fatal(err)
					}
					key := url.QueryEscape(e.Domain.ClassroomKey)
					cases := []struct {
						name  string
						req   apitest.Request
						style string
					}{
						{"success", apitest.Request{Method: "POST", Path: "/v2/getplan?apikey=" + key}, want},
						{"wrong key", apitest.Request{Method: "POST", Path: "/v2/getplan?apikey=nope"}, server},
						{"no key", apitest.Request{Method: "POST", Path: "/v2/getplan"}, server},
						{"unknown operation", apitest.Request{Method: "POST", Path: "/v2/nosuch?apikey=" + key}, want},
						{"unknown path", apitest.Request{Method: "POST", Path: "/v2/getplan/extra?apikey=" + key}, want},
						{"wrong method", apitest.Request{Method: "GET", Path: "/v1/getplan?apikey=" + key}, want},
						{"JSON body not an object", apitest.Request{Method: "POST", Path: "/v2/getplan?apikey=" + key, Body: `[1]`}, want},
						{"malformed JSON body", apitest.Request{Method: "POST", Path: "/v2/getplan?apikey=" + key, Body: `{"a":`}, want},
						{"bad format", apitest.Request{Method: "POST", Path: "/v2/getplan?format=csv&apikey=" + key}, want},
					}
					for _, c := range cases {
						c.req.NoAuth = true
						r := e.Do(c.req)
						_, isArray := r.JSON(t).([]any)
						if got := map[bool]string{true: "seed", false: "compat"}[isArray]; got != c.style {
							t.Errorf("%s: answered in the %s style, want %s: %s", c.name, got, c.style, r.Body)
						}
					}
				}, func(c *config.Config) { c.ResponseStyle = server })
			})
		}
	}
}

// TestV1OperationPaths: POST /v1/<operation> is /v2/<operation> (the v1
// API had that shape; both Ruby gems call it), and task= on /v1 stays.
func TestV1OperationPaths(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		key := e.Domain.ClassroomKey
		for _, req := range []apitest.Request{
			{Method: "POST", Path: "/v1/schedule", Form: url.Values{"apikey": {key}, "format": {"json"}}},
			{Method: "POST", Path: "/v1/Schedule?apikey=" + url.QueryEscape(key)},
			{Method: "POST", Path: "/v1", Form: url.Values{"apikey": {key}, "task": {"schedule"}}},
		} {
			form := classParams()
			for k, v := range req.Form {
				form[k] = v
			}
			req.Form, req.NoAuth = form, true
			r := e.Do(req)
			body := r.Object(t)
			if r.Status != 200 || body["status"] != "ok" || body["method"] != "addclass" || apitest.Int(t, body, "class_id") <= 0 {
				t.Errorf("%s: %d %s", req.Path, r.Status, r.Body)
			}
		}
		x := e.Do(apitest.Request{Method: "POST", Path: "/v1/getclass", NoAuth: true, Form: url.Values{"apikey": {key}, "format": {"xml"}, "class_id": {"999999"}}})
		var rsp struct {
			Status string `xml:"status,attr"`
			Errors string `xml:"errors"`
		}
		if err := xml.Unmarshal(x.Body, &rsp); err != nil || rsp.Status != "error" || !strings.Contains(rsp.Errors, "no class 999999") {
			t.Errorf("/v1 XML: %v %s", err, x.Body)
		}
	})
}

// TestUnknownPaths: every other path under /v1/ and /v2/ answers 404 in
// the API's error shape, never plain text.
func TestUnknownPaths(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		for _, req := range []apitest.Request{
			{Method: "POST", Path: "/v2/"},
			{Method: "POST", Path: "/v1/"},
			{Method: "POST", Path: "/v2/getclass/12"},
			{Method: "POST", Path: "/v1/a/b/c?apikey=x"},
			{Method: "GET", Path: "/v2/getclass/"},
			{Method: "POST", Path: "/v2/x/y?format=xml"},
		} {
			req.NoAuth = true
			r := e.Do(req)
			if r.Status != 404 {
				t.Errorf("%s %s: status %d, want 404", req.Method, req.Path, r.Status)
			}
			if strings.Contains(req.Path, "format=xml") {
				if !strings.Contains(string(r.Body), `<rsp status="error"><errors>unknown path`) {
					t.Errorf("%s: %s", req.Path, r.Body)
				}
				continue
			}
			body := r.Object(t)
			if body["status"] != "error" || !strings.HasPrefix(body["error"].(string), "unknown path") {
				t.Errorf("%s %s: %s", req.Method, req.Path, r.Body)
			}
		}
	})
}

// TestJSONBodyRules: on the classroom API an empty JSON array or object
// counts as no body (the query string is read); any other JSON that is not
// an object is refused naming what was found.
func TestJSONBodyRules(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		q := "/v2/getplan?apikey=" + url.QueryEscape(e.Domain.ClassroomKey)
		for _, body := range []string{`[]`, `{}`, ` [ ] `, "{\n}", ""} {
			r := e.Do(apitest.Request{Method: "POST", Path: q, Body: body, NoAuth: true})
			if got := r.Object(t); got["status"] != "ok" || got["method"] != "getplan" {
				t.Errorf("body %q: %s", body, r.Body)
			}
		}
		for _, c := range []struct{ body, want string }{
			{`[1]`, "not an array with elements"},
			{`["apikey"]`, "not an array with elements"},
			{`"x"`, "not a string"},
			{`12`, "not a number"},
			{`null`, "not null"},
			{`true`, "not a boolean"},
			{`apikey=x`, "not text that is not JSON"},
			{`[`, "not a malformed JSON array"},
		} {
			r := e.Do(apitest.Request{Method: "POST", Path: q, Body: c.body, NoAuth: true})
			got := r.Object(t)
			msg, _ := got["error"].(string)
			if r.Status != 200 || got["status"] != "error" || !strings.Contains(msg, "JSON body must be an object") || !strings.Contains(msg, c.want) {
				t.Errorf("body %q: %d %s, want an error saying %q", c.body, r.Status, r.Body, c.want)
			}
		}
		// A JSON object's fields are parameters; they win over the query.
		r := e.Do(apitest.Request{Method: "POST", Path: "/v2/getplan?apikey=wrong", Body: map[string]string{"apikey": e.Domain.ClassroomKey}, NoAuth: true})
		if r.Object(t)["status"] != "ok" {
			t.Errorf("object body: %s", r.Body)
		}
		// The LMS API keeps its strict JSON rules.
		lms := e.Do(apitest.Request{Method: "POST", Path: "/api/v1/users/create", Body: `[]`})
		if lms.Status != 400 {
			t.Errorf("LMS API with a [] body: %d %s, want 400", lms.Status, lms.Body)
		}
	})
}

// TestCompatContentType: compat answers are labelled as the hosted
// service labels them (text/html; charset=UTF-8) unless Accept names
// JSON, and carry nosniff and a sandboxing Content-Security-Policy; a class
// title holding <script> never appears as markup.
func TestCompatContentType(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		title := `<script>alert("x")</script> & <b>`
		id := scheduleID(t, e, classParams("title", title))
		key := url.QueryEscape(e.Domain.ClassroomKey)
		for _, c := range []struct {
			accept, want string
		}{
			{"", "text/html; charset=UTF-8"},
			{"*/*", "text/html; charset=UTF-8"},
			{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html; charset=UTF-8"},
			{"application/json;q=0, */*", "text/html; charset=UTF-8"},
			{"application/json", "application/json; charset=utf-8"},
			{"application/json, text/plain, */*", "application/json; charset=utf-8"},
			{"application/vnd.api+json", "application/json; charset=utf-8"},
		} {
			for _, op := range []string{"getclass", "nosuch"} {
				r := e.Do(apitest.Request{Method: "POST", Path: "/v2/" + op + "?class_id=" + id + "&apikey=" + key,
					Header: map[string]string{"Accept": c.accept}, NoAuth: true})
				if got := r.Header.Get("Content-Type"); got != c.want {
					t.Errorf("%s, Accept %q: Content-Type %q, want %q", op, c.accept, got, c.want)
				}
				if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Content-Security-Policy") != "default-src 'none'; sandbox" {
					t.Errorf("%s, Accept %q: headers %v", op, c.accept, r.Header)
				}
				if op != "getclass" {
					continue
				}
				if strings.ContainsAny(string(r.Body), "<>") || strings.Contains(string(r.Body), "&") {
					t.Errorf("Accept %q: the title appears as markup: %s", c.accept, r.Body)
				}
				if got := apitest.Str(t, r.JSON(t), "0.title"); got != title {
					t.Errorf("title %q, want %q", got, title)
				}
			}
		}
		// XML and the seed style keep their own labels.
		x := e.Do(apitest.Request{Method: "POST", Path: "/v2/getclass?format=xml&class_id=" + id + "&apikey=" + key, NoAuth: true})
		if got := x.Header.Get("Content-Type"); got != "application/xml; charset=utf-8" || x.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("XML: %q %v", got, x.Header)
		}
		if err := e.Store.SetResponseStyle(context.Background(), e.Domain.ID, "seed"); err != nil {
			t.Fatal(err)
		}
		s := e.Do(apitest.Request{Method: "POST", Path: "/v2/getclass?class_id=" + id + "&apikey=" + key, NoAuth: true})
		if got := s.Header.Get("Content-Type"); got != "application/json; charset=utf-8" {
			t.Errorf("seed style: %q", got)
		}
		if strings.ContainsAny(string(s.Body), "<>") {
			t.Errorf("seed style: the title appears as markup: %s", s.Body)
		}
	})
}

// TestWriteIDsAreNumbers: in the compat style the ids write operations
// return are JSON numbers (as the hosted service's schedule answers were
// observed); ids inside records, and everything in the seed style, are
// strings.
func TestWriteIDsAreNumbers(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		e.Clock.Set(time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC))
		seed := e.NewDomain("Seed")
		if err := e.Store.SetResponseStyle(context.Background(), seed.ID, "seed"); err != nil {
			t.Fatal(err)
		}
		for _, d := range []apitest.Domain{e.Domain, seed} {
			compat := d.ID == e.Domain.ID
			call := func(op string, kv ...string) map[string]any {
				t.Helper()
				p := vals(kv...)
				p.Set("apikey", d.ClassroomKey)
				r := e.VC(op, p)
				body := r.JSON(t)
				if arr, ok := body.([]any); ok {
					// Records are arrays in both styles; an action is
					// one bare object in the compat style.
					if (compat && !readOps[op]) || len(arr) != 1 {
						t.Fatalf("%s: %s", op, r.Body)
					}
					body = arr[0]
				}
				m := body.(map[string]any)
				if m["status"] == "error" {
					t.Fatalf("%s: %s", op, r.Body)
				}
				return m
			}
			id := func(m map[string]any, key string) string {
				t.Helper()
				switch v := m[key].(type) {
				case json.Number:
					if !compat {
						t.Errorf("seed %s %s is a number: %v", m["method"], key, m)
					}
					return v.String()
				case string:
					if compat {
						t.Errorf("compat %s %s is a string: %v", m["method"], key, m)
					}
					return v
				}
				t.Fatalf("%s: no %s in %v", m["method"], key, m)
				return ""
			}
			p := classParams()
			kv := []string{}
			for k := range p {
				kv = append(kv, k, p.Get(k))
			}
			cid := id(call("schedule", kv...), "class_id")
			id(call("schedule", "cid", cid, "title", "Renamed"), "class_id")
			id(call("updateclass", "id", cid, "title", "Renamed again"), "class_id")
			price := call("addSchemes", "class_id", cid, "price", "10", "scheme_days", "1", "times", "0")
			pid := id(price, "Price id")
			if compat && id(price, "price_id") != pid {
				t.Errorf("price_id and Price id differ: %v", price)
			}
			id(call("addSchemes", "class_id", cid, "id", pid, "price", "12"), "Price id")
			did := id(call("addSpecials", "class_id", cid, "discount", "1", "discount_type", "0", "start_date", "2031-01-01"), "Discount id")
			id(call("addSpecials", "class_id", cid, "discountid", did, "discount", "2"), "Discount id")
			id(call("cancelclass", "class_id", cid, "isCancel", "1"), "class_id")
			id(call("cancelclass", "class_id", cid, "isCancel", "0"), "class_id")

			// Reads keep strings in both styles.
			rec := call("getclass", "class_id", cid)
			if _, ok := rec["id"].(string); !ok {
				t.Errorf("getclass id is not a string: %v", rec)
			}
			if _, ok := call("classprice", "class_id", cid, "price_id", pid)["id"].(string); !ok {
				t.Errorf("classprice id is not a string")
			}
			if v, ok := call("availableAttendees", "class_id", cid)["class_id"].(string); !ok || v != cid {
				t.Errorf("availableAttendees class_id is not the string %q", cid)
			}

			id(call("removediscount", "discountid", did), "discount_id")
			id(call("removeprice", "id", pid), "price_id")
			id(call("removeclass", "cid", cid), "class_id")
		}
	})
}

// TestPaymentOrderIDIsANumber: apiclasspayment is a write operation too:
// its order_id is a number in the compat style, a string in seed; the
// charge id stays a string.
func TestPaymentOrderIDIsANumber(t *testing.T) {
	for _, style := range []string{"compat", "seed"} {
		t.Run(style, func(t *testing.T) {
			apitest.Run(t, func(t *testing.T, e *apitest.Env) {
				setGateway(t, e, e.Domain, payment.Settings{Gateway: "test"})
				classID, priceID := paidClass(t, e, "19.99")
				ok := vcOK(t, e, "apiclasspayment", payParams(classID, priceID, "4242 4242 4242 4242"))
				_, isNumber := ok["order_id"].(json.Number)
				if isNumber != (style == "compat") {
					t.Errorf("%s: order_id %#v", style, ok["order_id"])
				}
				if _, isString := ok["charge_id"].(string); !isString {
					t.Errorf("charge_id %#v is not a string", ok["charge_id"])
				}
			}, func(c *config.Config) { c.ResponseStyle = style })
		})
	}
}

// readOps are the operations TestWriteIDsAreNumbers reads with: records
// (arrays in both styles) or informational objects.
var readOps = map[string]bool{"getclass": true, "classprice": true, "availableAttendees": true}

// TestDiscountIDAlias: removediscount (and addSpecials' update) take the
// discount's id as discountid or, as a Laravel package sends it,
// discount_id.
func TestDiscountIDAlias(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		cid := scheduleID(t, e, classParams())
		add := func() string {
			return idString(t, vcOK(t, e, "addSpecials", vals("class_id", cid, "discount", "1", "discount_type", "0", "start_date", "2031-01-01"))["discount_id"])
		}
		did := add()
		up := vcOK(t, e, "addSpecials", vals("class_id", cid, "discount_id", did, "discount", "3"))
		if up["method"] != "updateDiscount" || idString(t, up["discount_id"]) != did {
			t.Errorf("update by discount_id: %v", up)
		}
		rm := vcOK(t, e, "removediscount", vals("discount_id", did))
		if rm["method"] != "removediscount" || idString(t, rm["discount_id"]) != did {
			t.Errorf("remove by discount_id: %v", rm)
		}
		if msg := vcErr(t, e, "removediscount", vals("discount_id", did)); !strings.Contains(msg, "Invalid discountid: there is no class discount") {
			t.Errorf("removing it again: %q", msg)
		}
		if msg := vcErr(t, e, "removediscount", nil); msg != "discountid is required" {
			t.Errorf("no id: %q", msg)
		}
		// Another domain's discount is not found under either name.
		other := add()
		for _, name := range []string{"discountid", "discount_id"} {
			if msg := vcErr(t, e, "removediscount", vals("apikey", e.Other.ClassroomKey, name, other)); !strings.Contains(msg, "no class discount") {
				t.Errorf("domain B removing A's discount by %s: %q", name, msg)
			}
		}
	})
}
