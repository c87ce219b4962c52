package apitest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Scenario is one row of a table-driven HTTP test.
type Scenario struct {
	Name string
	Request
	Status int
	// Want maps paths into the JSON body (see Lookup) to expected values.
	// Expected numbers may be any Go integer or float; the value Absent
	// asserts the path is missing.
	Want map[string]any
	// Fields lists the field names a 400 must name in its fields array.
	Fields []string
	// Check runs extra assertions.
	Check func(t *testing.T, r *Response)
}

// Absent in Scenario.Want asserts that a path does not exist.
var Absent = absent{}

type absent struct{}

// Scenarios runs each scenario as a subtest of t.
func (e *Env) Scenarios(t *testing.T, ss []Scenario) {
	t.Helper()
	for _, s := range ss {
		t.Run(s.Name, func(t *testing.T) {
			r := e.Do(s.Request)
			e.Expect(t, r, s)
		})
	}
}

// Expect asserts a response against a scenario's expectations.
func (e *Env) Expect(t *testing.T, r *Response, s Scenario) {
	t.Helper()
	if s.Status != 0 && r.Status != s.Status {
		t.Fatalf("%s %s: status %d, want %d; body %s", s.Method, s.Path, r.Status, s.Status, r.Body)
	}
	if len(s.Want) > 0 || len(s.Fields) > 0 || r.Status >= 400 {
		body := r.JSON(t)
		if r.Status >= 400 && strings.HasPrefix(s.Path, "/api/") {
			ExpectErrorShape(t, body)
		}
		for path, want := range s.Want {
			got, ok := Lookup(body, path)
			if _, isAbsent := want.(absent); isAbsent {
				if ok {
					t.Errorf("%s: present (%v), want absent; body %s", path, got, r.Body)
				}
				continue
			}
			if !ok {
				t.Errorf("%s: missing; body %s", path, r.Body)
				continue
			}
			if !Equal(got, want) {
				t.Errorf("%s = %#v, want %#v; body %s", path, got, want, r.Body)
			}
		}
		if len(s.Fields) > 0 {
			named := FieldNames(body)
			for _, f := range s.Fields {
				if !named[f] {
					t.Errorf("error does not name field %q; body %s", f, r.Body)
				}
			}
		}
	}
	if s.Check != nil {
		s.Check(t, r)
	}
}

// ExpectErrorShape asserts the /api/v1 error shape: message, code and
// request_id strings.
func ExpectErrorShape(t testing.TB, body any) {
	t.Helper()
	m, ok := body.(map[string]any)
	if !ok {
		t.Fatalf("error body is not an object: %v", body)
	}
	for _, k := range []string{"message", "code", "request_id"} {
		if s, ok := m[k].(string); !ok || s == "" {
			t.Errorf("error body lacks %q: %v", k, body)
		}
	}
}

// FieldNames returns the field names listed in an error body's fields.
func FieldNames(body any) map[string]bool {
	out := map[string]bool{}
	m, _ := body.(map[string]any)
	fs, _ := m["fields"].([]any)
	for _, f := range fs {
		if fm, ok := f.(map[string]any); ok {
			if name, ok := fm["field"].(string); ok {
				out[name] = true
			}
		}
	}
	return out
}

// Lookup follows a dot-separated path ("data.0.email") into a decoded JSON
// value. "#" as the last element gives the length of an array or object.
func Lookup(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	for _, part := range strings.Split(path, ".") {
		switch cur := v.(type) {
		case map[string]any:
			if part == "#" {
				return len(cur), true
			}
			next, ok := cur[part]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			if part == "#" {
				return len(cur), true
			}
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(cur) {
				return nil, false
			}
			v = cur[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// Equal compares a decoded JSON value with an expected Go value: numbers
// by value (json.Number against any integer or float; a JSON string never
// equals a Go number), strings, bools and nil directly.
func Equal(got, want any) bool {
	switch w := want.(type) {
	case int, int64, int32, float64, uint, uint64:
		n, ok := got.(json.Number)
		if !ok {
			if i, isInt := got.(int); isInt {
				return fmt.Sprint(i) == fmt.Sprint(w)
			}
			return false
		}
		return numEqual(n, w)
	case string:
		s, ok := got.(string)
		return ok && s == w
	case bool:
		b, ok := got.(bool)
		return ok && b == w
	case nil:
		return got == nil
	}
	return fmt.Sprint(got) == fmt.Sprint(want)
}

func numEqual(n json.Number, want any) bool {
	if f, ok := want.(float64); ok {
		g, err := n.Float64()
		return err == nil && g == f
	}
	return n.String() == fmt.Sprint(want)
}

// Int reads an integer at path from a decoded JSON body, failing t if
// absent or not a number.
func Int(t testing.TB, body any, path string) int64 {
	t.Helper()
	v, ok := Lookup(body, path)
	if !ok {
		t.Fatalf("%s: missing in %v", path, body)
	}
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%s: %#v is not a JSON number", path, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return i
}

// Str reads a string at path from a decoded JSON body.
func Str(t testing.TB, body any, path string) string {
	t.Helper()
	v, ok := Lookup(body, path)
	if !ok {
		t.Fatalf("%s: missing in %v", path, body)
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s: %#v is not a string", path, v)
	}
	return s
}
