package httpx

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"testing"
	"unicode/utf8"
)

// flatSeeds are bodies flatObject reads and bodies it leaves to
// encoding/json.
var flatSeeds = []string{
	`{}`, ` { } `, `{"limit":50}`, `{"a":"x","b":-0.5e+3,"c":null}`, "{\"a\"\t:\r\n\"\u00e9\u2028\"}",
	`{"a":"x\"y"}`, `{"a\u0062":"x"}`, `{"a":"1","a":"2"}`, `{"a":"1","a":null}`, `{"a":true}`, `{"a":{}}`,
	`{"a":[1]}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":"x"} x`, `{"a":"x",}`,
	`{"a" "x"}`, `{a:1}`, `{"a":nul}`, `{"a":"x"`, `[]`, `null`, "{\"a\":\"\x01\"}", `{"a":1}{}`,
	`{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":11,"12":12,"13":13,"14":14,"15":15,"16":16}`,
	`{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":11,"12":12,"13":13,"14":14,"15":15,"16":16,"17":17}`,
}

// What flatObject reads from a body must be what encoding/json reads from
// it, as readJSON reads it without flatObject: one object, nothing after
// it, and the same names with the same texts, null ones left out. The
// seeds check too that the common shapes are read by flatObject, not
// handed on.
func TestFlatObjectReadsTheCommonShapes(t *testing.T) {
	for _, body := range []string{`{}`, `{"limit":50}`, `{"username":"ann","email":"ann@example.com","page":"2"}`,
		`{"a":"x","b":-0.5e+3,"c":null}`, "{\"a\"\t:\r\n\"\u00e9\"}",
		`{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":11,"12":12,"13":13,"14":14,"15":15,"16":16}`} {
		if !flatObject([]byte(body), func(k, v string) {}) {
			t.Errorf("%s: handed on", body)
		}
		checkFlatObject(t, []byte(body))
	}
	for _, body := range []string{`{"a":"x\"y"}`, `{"a":"1","a":null}`, `{"a":true}`, `{"a":01}`, `{"a":"x"} x`, `null`,
		`{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":11,"12":12,"13":13,"14":14,"15":15,"16":16,"17":17}`} {
		if flatObject([]byte(body), func(k, v string) { t.Errorf("%s: set %q", body, k) }) {
			t.Errorf("%s: read, want it handed on", body)
		}
	}
}

func FuzzFlatObject(f *testing.F) {
	for _, s := range flatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkFlatObject(t, bytes.TrimSpace(body))
	})
}

// checkFlatObject compares what flatObject reads from body with what
// encoding/json reads, when flatObject reads it.
func checkFlatObject(t *testing.T, body []byte) {
	t.Helper()
	if !utf8.Valid(body) { // readJSON refuses it before
		return
	}
	got := map[string]string{}
	if !flatObject(body, func(k, v string) { got[k] = v }) {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		t.Fatalf("%q: flatObject read %v, encoding/json: %v, %v", body, got, m, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("%q: flatObject read %v, encoding/json finds more: %v", body, got, err)
	}
	want := map[string]string{}
	for k, v := range m {
		switch v := v.(type) {
		case nil:
		case string:
			want[k] = v
		case json.Number:
			want[k] = v.String()
		default:
			t.Fatalf("%q: flatObject read %v, encoding/json a %T for %q", body, got, v, k)
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("%q: flatObject read %v, encoding/json %v", body, got, want)
	}
}
