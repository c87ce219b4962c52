package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math/big"
	"mime"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/internal/lms"
)

// fuzzStructured are the parameters FuzzReadParams lets take JSON arrays,
// objects and booleans.
var fuzzStructured = map[string]bool{"tags": true, "data": true}

// FuzzReadParams reads a request with a fuzzed content type, body and
// query string, and checks the parameter layer's rules: every error is
// ErrBodyTooLarge, ErrUnsupportedBody or an API error naming fields; every
// parameter read is UTF-8 text without NUL; a JSON body is one object whose
// strings and numbers arrive unchanged and whose other values only for
// structured parameters; a form body's values arrive unchanged; the query
// string fills in what the body did not send.
func FuzzReadParams(f *testing.F) {
	for _, c := range []struct{ ctype, body, query string }{
		{"application/json", `{"username":"a\u0000b"}`, ""},
		{"application/json", `{"a":"x"} trailing`, ""},
		{"application/json", `{"a":"x"}{"b":"y"}`, ""},
		{"application/json", `{"a":{"b":1},"c":true,"d":[1]}`, ""},
		{"application/json", `{"tags":["x"],"data":{"k":false}}`, "tags=q"},
		{"application/json", "{\"a\":\"\xff\xfeab\"}", ""},
		{"application/json", `{"a":12.50,"b":null,"c":2147483648}`, "b=query"},
		{"application/json", `[]`, ""},
		{"application/json", `{"a":"1","a":"2"}`, ""},
		{"", `{"a":"x"}`, "a=q"},
		{"application/x-www-form-urlencoded", "course_name=%FF%FEab", ""},
		{"application/x-www-form-urlencoded", "a=1&a=2&b=%00", "c=3"},
		{"application/x-www-form-urlencoded", "a=%zz", ""},
		{"multipart/form-data; boundary=X", "--X\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\xff\r\n--X--\r\n", ""},
		{"multipart/form-data", "--X\r\n", ""},
		{"text/plain", "hello", "search=a%00"},
		{"text/plain", "", "search=a%00"},
		{"application/merge-patch+json", `{"a":"x"}`, "%ff=1"},
	} {
		f.Add(c.ctype, []byte(c.body), c.query)
	}
	const maxBody = 4096
	f.Fuzz(func(t *testing.T, ctype string, body []byte, query string) {
		r := httptest.NewRequest("POST", "/x", bytes.NewReader(body))
		r.URL.RawQuery = query
		if ctype != "" {
			r.Header.Set("Content-Type", ctype)
		}
		p, err := ReadParamsStructured(r, maxBody, fuzzStructured)
		var apiErr *lms.Error
		switch {
		case err == nil, err == ErrUnsupportedBody:
		case err == ErrBodyTooLarge:
			if len(body) <= maxBody {
				t.Fatalf("a body of %d bytes is too large", len(body))
			}
			return
		case errors.As(err, &apiErr):
			if apiErr.Code != lms.CodeInvalid || len(apiErr.Fields) == 0 {
				t.Fatalf("an API error without fields: %+v", apiErr)
			}
			for _, fe := range apiErr.Fields {
				if fe.Field == "" || !utf8.ValidString(fe.Field) || strings.IndexByte(fe.Field, 0) >= 0 || fe.Message == "" {
					t.Fatalf("an API error names field %q: %q", fe.Field, fe.Message)
				}
			}
			return
		default:
			t.Fatalf("ReadParams: unexpected error %T %v", err, err)
		}
		for _, k := range p.Names() {
			if v := p.Raw(k); !utf8.ValidString(k) || !utf8.ValidString(v) || strings.ContainsRune(k+v, 0) {
				t.Fatalf("parameter %q = %q passed the text rule", k, v)
			}
		}
		fromBody := map[string]bool{}
		mt, _, _ := mime.ParseMediaType(ctype)
		trimmed := bytes.TrimSpace(body)
		switch {
		case len(trimmed) == 0 || err == ErrUnsupportedBody:
		case mt == "application/x-www-form-urlencoded":
			vals, perr := url.ParseQuery(string(body))
			if perr != nil {
				t.Fatalf("an urlencoded body that does not parse was read: %v", perr)
			}
			for k, vs := range vals {
				fromBody[k] = true
				if got := p.Raw(k); got != vs[len(vs)-1] {
					t.Fatalf("form %s = %q, read %q", k, vs[len(vs)-1], got)
				}
			}
		case mt == "multipart/form-data":
		default:
			checkJSONBody(t, p, trimmed, fromBody)
		}
		for k, vs := range r.URL.Query() {
			if !fromBody[k] && len(vs) > 0 {
				if got := p.Raw(k); got != vs[len(vs)-1] {
					t.Fatalf("query %s = %q, read %q", k, vs[len(vs)-1], got)
				}
			}
		}
	})
}

// checkJSONBody checks what ReadParams read from an accepted JSON body.
func checkJSONBody(t *testing.T, p *Params, body []byte, fromBody map[string]bool) {
	t.Helper()
	if body[0] != '{' || !json.Valid(body) {
		t.Fatalf("a JSON body that is not one object was accepted: %q", body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("an accepted JSON body does not decode: %v", err)
	}
	for k, v := range m {
		var want string
		switch v := v.(type) {
		case nil:
			continue
		case string:
			want = v
		case json.Number:
			want = v.String()
		default:
			if !fuzzStructured[k] {
				t.Fatalf("%s: a JSON %T was accepted for a parameter that takes strings and numbers", k, v)
			}
			b, _ := json.Marshal(v)
			want = string(b)
		}
		fromBody[k] = true
		if got := p.Raw(k); got != want {
			t.Fatalf("JSON %s = %q, read %q", k, want, got)
		}
	}
}

// intForm is ParseInt's documented grammar: an optional sign, digits, and
// optionally a zero fraction.
var intForm = regexp.MustCompile(`^[+-]?[0-9]+(\.0+)?$`)

// FuzzIntParams reads an integer parameter as Int, ID and Range do and
// checks the documented bounds: Int within 32 bits (issue 12, item 5), ID
// positive, Range within its limits; a refused value names the field.
func FuzzIntParams(f *testing.F) {
	for _, s := range []string{"0", "12", "-12", "+12", "12.0", "12.5", "12.", ".0", "2147483647", "2147483648", "-2147483648",
		"-2147483649", "9223372036854775807", "9223372036854775808", "1e3", "0x10", " 7 ", "7\x00", "٧", "--1", "1_000"} {
		f.Add(s, int64(1), int64(10))
	}
	f.Fuzz(func(t *testing.T, s string, lo, hi int64) {
		n, err := ParseInt(s)
		if err == nil {
			trimmed := strings.TrimSpace(s)
			if !intForm.MatchString(trimmed) {
				t.Fatalf("ParseInt(%q) = %d: accepted text outside the documented form", s, n)
			}
			whole, _, _ := strings.Cut(strings.TrimPrefix(trimmed, "+"), ".")
			if want, _ := new(big.Int).SetString(whole, 10); want.Cmp(big.NewInt(n)) != 0 {
				t.Fatalf("ParseInt(%q) = %d, want %s", s, n, want)
			}
		} else if b, ok := new(big.Int).SetString(strings.TrimPrefix(strings.TrimSpace(s), "+"), 10); ok && b.IsInt64() && intForm.MatchString(strings.TrimSpace(s)) {
			t.Fatalf("ParseInt(%q) refused an integer: %v", s, err)
		}
		p := NewParams(map[string]string{"n": s})
		var v lms.Validator
		got, ok := p.Int(&v, "n")
		switch {
		case ok && (err != nil || got != n || got < MinInt || got > MaxInt):
			t.Fatalf("Int(%q) = %d, ParseInt = %d, %v", s, got, n, err)
		case !ok && strings.TrimSpace(s) != "" && !v.Has("n"):
			t.Fatalf("Int(%q) refused without naming the field", s)
		case !ok && err == nil && n >= MinInt && n <= MaxInt && strings.TrimSpace(s) != "":
			t.Fatalf("Int(%q) refused %d, which is within 32 bits", s, n)
		}
		var v2 lms.Validator
		id := p.ID(&v2, "n")
		if v2.Valid() && id <= 0 {
			t.Fatalf("ID(%q) = %d accepted", s, id)
		}
		var v3 lms.Validator
		if r := p.Range(&v3, "n", lo, lo, hi); v3.Valid() && ok && (r < lo || r > hi) {
			t.Fatalf("Range(%q, %d, %d) = %d", s, lo, hi, r)
		}
	})
}

// FuzzAddQuery: addQuery keeps what url.ParseQuery gives, the last value
// of each name, and fails when it fails.
func FuzzAddQuery(f *testing.F) {
	for _, q := range []string{"", "a=1", "a=1&a=2", "a=1;b=2", "a=%zz&b=2", "%zz=1&b=2", "a", "a=", "=b", "&&a=1&",
		"a=1&b=x%20y+z", "a=%00", "a=1&a=%zz", "a=%2", "+=+", "é=ü"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		var set paramSet
		err := addQuery(&set, q)
		got := set.asMap()
		vals, wantErr := url.ParseQuery(q)
		want := map[string]string{}
		for k, vs := range vals {
			want[k] = vs[len(vs)-1]
		}
		if !maps.Equal(got, want) || (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: %v, %v; url.ParseQuery %v, %v", q, got, err, want, wantErr)
		}
	})
}

// TestAddQueryBound: more pairs than net/url allows add nothing, as
// url.ParseQuery gives nothing.
func TestAddQueryBound(t *testing.T) {
	for _, n := range []int{maxQueryParams, maxQueryParams + 1} {
		q := strings.Repeat("a=1&", n-1) + "b=2"
		var set paramSet
		err := addQuery(&set, q)
		got := set.asMap()
		vals, wantErr := url.ParseQuery(q)
		if len(got) != len(vals) || (err == nil) != (wantErr == nil) {
			t.Errorf("%d pairs: %d names, %v; url.ParseQuery %d, %v", n, len(got), err, len(vals), wantErr)
		}
	}
}
