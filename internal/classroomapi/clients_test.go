package classroomapi_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
)

// A clientFamily sends requests exactly as one family of public clients
// of the hosted service does (see docs/api/classroom.md, "What clients
// send and read") and reads the answer the way that client reads it.
type clientFamily struct {
	name string
	// request builds the HTTP request of op with params (apikey included).
	request func(op string, params url.Values) apitest.Request
	// decode turns the answer into what the client's code then looks at;
	// an error is the client failing (a PHP TypeError, a Python crash).
	decode func(r *apitest.Response) (any, error)
	// isError is how the client tells an error answer from a success.
	isError func(v any) bool
}

// phpCurlJSON is php-curl-class's test for a JSON answer, which it then
// decodes itself.
var phpCurlJSON = regexp.MustCompile(`(?i)^(?:application|text)/(?:[a-z]+(?:[\.-][0-9a-z]+)*[\+\.]|x-)?json(?:-[a-z]+)?`)

// decodeAny parses the body whatever its label (Moodle json_decode, Odoo
// requests' .json(), Ruby JSON.parse, Laravel $response->json()).
func decodeAny(r *apitest.Response) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	err := dec.Decode(&v)
	return v, err
}

// statusError reads $r['status'] / res.get('status') of an object: an
// array answer has no status (PHP reads null, Python crashes on .get).
func statusError(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["status"] == "error"
}

// clientFamilies are the families of issue 16, each sending what it sends.
var clientFamilies = []clientFamily{
	{
		// Laravel's HTTP client (Guzzle 7): every parameter in the query
		// string, Content-Type: application/json and the body [].
		name: "Laravel []-body with query parameters",
		request: func(op string, p url.Values) apitest.Request {
			return apitest.Request{Method: "POST", Path: "/v2/" + op + "?" + p.Encode(), Body: "[]",
				Header: map[string]string{"Content-Type": "application/json", "User-Agent": "GuzzleHttp/7"}}
		},
		decode: decodeAny,
		// Arr::has($data, 'error') on the decoded array.
		isError: func(v any) bool { _, ok := v.(map[string]any)["error"]; return ok },
	},
	{
		// Both Ruby gems: base URL .../v1, POST <base>/<operation> with a
		// form body holding format=json (Net::HTTP sends Accept: */*).
		name: "Ruby gems /v1/<op> form posts",
		request: func(op string, p url.Values) apitest.Request {
			p.Set("format", "json")
			return apitest.Request{Method: "POST", Path: "/v1/" + op, Form: p,
				Header: map[string]string{"Accept": "*/*", "User-Agent": "Ruby"}}
		},
		decode: decodeAny,
		// body.kind_of?(Hash) && body['status'] == 'error': an array
		// would be read as success.
		isError: statusError,
	},
	{
		// A PHP library on php-curl-class: form posts; php-curl-class
		// decodes an answer labelled JSON itself, and the library then
		// json_decode()s the result again (a TypeError on PHP 8).
		name: "php-curl-class form posts",
		request: func(op string, p url.Values) apitest.Request {
			return apitest.Request{Method: "POST", Path: "/v2/" + op, Form: p,
				Header: map[string]string{"Accept": "*/*", "User-Agent": "PHP-Curl-Class/9.19.2"}}
		},
		decode: func(r *apitest.Response) (any, error) {
			if ct := r.Header.Get("Content-Type"); phpCurlJSON.MatchString(ct) {
				return nil, &clientFailure{"json_decode(): Argument #1 must be of type string, array given (answer labelled " + ct + ")"}
			}
			return decodeAny(r)
		},
		isError: statusError,
	},
	{
		// A jQuery integration: $.post(url, data) without dataType, then
		// JSON.parse of what jQuery hands over (already parsed when the
		// answer is labelled JSON).
		name: "jQuery $.post then JSON.parse",
		request: func(op string, p url.Values) apitest.Request {
			return apitest.Request{Method: "POST", Path: "/v2/" + op, Form: p,
				Header: map[string]string{"Accept": "*/*", "X-Requested-With": "XMLHttpRequest"}}
		},
		decode: func(r *apitest.Response) (any, error) {
			if strings.Contains(r.Header.Get("Content-Type"), "json") {
				return nil, &clientFailure{"JSON.parse: unexpected character (jQuery already parsed the answer)"}
			}
			return decodeAny(r)
		},
		isError: statusError,
	},
	{
		// The Moodle module: POST with every parameter in the query
		// string and an empty body; $r = json_decode(..., true);
		// $r['status'].
		name: "Moodle query-string posts",
		request: func(op string, p url.Values) apitest.Request {
			return apitest.Request{Method: "POST", Path: "/v2/" + op + "?" + p.Encode(),
				Header: map[string]string{"Accept": "*/*", "Content-Type": "application/x-www-form-urlencoded"}}
		},
		decode:  decodeAny,
		isError: statusError,
	},
	{
		// The Odoo module: requests.post(url, data={...}) (a form body,
		// Accept: */*); res.json().get('status').
		name: "Odoo requests.post(url, data=...)",
		request: func(op string, p url.Values) apitest.Request {
			return apitest.Request{Method: "POST", Path: "/v2/" + op, Form: p,
				Header: map[string]string{"Accept": "*/*", "User-Agent": "python-requests/2.31.0"}}
		},
		decode:  decodeAny,
		isError: statusError,
	},
	{
		// Odoo's other calls: Content-Type: application/json and no body
		// at all, parameters in the query string.
		name: "Odoo JSON-labelled empty posts",
		request: func(op string, p url.Values) apitest.Request {
			return apitest.Request{Method: "POST", Path: "/v2/" + op + "?" + p.Encode(),
				Header: map[string]string{"Accept": "*/*", "Content-Type": "application/json"}}
		},
		decode:  decodeAny,
		isError: statusError,
	},
}

type clientFailure struct{ msg string }

func (e *clientFailure) Error() string { return e.msg }

// TestClientFamilies sends, family by family, what each public client
// sends to a server started with no setting changed, and asserts what the
// client reads back: a class id from schedule (a number, as observed), a
// launch URL, a class record, a discount removed (by discount_id, as the
// Laravel package sends it) and a wrong key read as an error.
func TestClientFamilies(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		e.Clock.Set(time.Date(2031, 3, 10, 15, 5, 0, 0, time.UTC))
		for _, f := range clientFamilies {
			t.Run(f.name, func(t *testing.T) {
				call := func(op string, kv ...string) any {
					t.Helper()
					p := vals(kv...)
					if !p.Has("apikey") {
						p.Set("apikey", e.Domain.ClassroomKey)
					}
					req := f.request(op, p)
					req.NoAuth = true
					r := e.Do(req)
					if r.Status != 200 {
						t.Fatalf("%s: HTTP %d %s", op, r.Status, r.Body)
					}
					v, err := f.decode(r)
					if err != nil {
						t.Fatalf("%s: the client fails: %v; body %s", op, err, r.Body)
					}
					return v
				}
				object := func(op string, v any) map[string]any {
					t.Helper()
					m, ok := v.(map[string]any)
					if !ok {
						t.Fatalf("%s: the client reads an object, got %v", op, v)
					}
					if f.isError(m) || m["status"] != "ok" {
						t.Fatalf("%s: the client reads a failure: %v", op, m)
					}
					return m
				}

				sched := object("schedule", call("schedule", "title", "Client "+f.name, "timezone", "28", "date", "2031-03-10",
					"start_time", "03:00 PM", "end_time", "04:00 PM"))
				n, ok := sched["class_id"].(json.Number)
				if !ok {
					t.Fatalf("schedule: class_id %#v is not a number: %v", sched["class_id"], sched)
				}
				id := n.String()

				launch := object("getclasslaunch", call("getclasslaunch", "class_id", id, "userId", "7", "userName", "Ann",
					"isTeacher", "1", "lessonName", "L1", "courseName", "C1"))
				if u, _ := launch["encryptedlaunchurl"].(string); !strings.HasPrefix(u, e.URL+"/") {
					t.Errorf("getclasslaunch: encryptedlaunchurl %q", u)
				}

				cls, ok := call("getclass", "class_id", id).([]any)
				if !ok || len(cls) != 1 || cls[0].(map[string]any)["id"] != id {
					t.Errorf("getclass: %v", cls)
				}

				disc := object("addSpecials", call("addSpecials", "class_id", id, "discount", "5", "discount_type", "0", "start_date", "2031-01-01"))
				did := disc["discount_id"].(json.Number).String()
				rm := object("removediscount", call("removediscount", "discount_id", did))
				if rm["method"] != "removediscount" || rm["discount_id"].(json.Number).String() != did {
					t.Errorf("removediscount: %v", rm)
				}

				bad := call("getclass", "apikey", "wrong-key", "class_id", id)
				if !f.isError(bad) || bad.(map[string]any)["error"] != "Invalid API KEY" {
					t.Errorf("a wrong key is not read as an error: %v", bad)
				}
				owner := call("getclass", "apikey", e.Other.ClassroomKey, "class_id", id)
				if !f.isError(owner) || owner.(map[string]any)["error"] != "Invalid Class Owner" {
					t.Errorf("another domain's class is not read as an error: %v", owner)
				}
			})
		}
	})
}
