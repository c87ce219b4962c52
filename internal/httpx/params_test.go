package httpx

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/lms"
)

func TestReadParamsMerge(t *testing.T) {
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("a", "multipart")
	mw.Close()
	cases := []struct {
		name, ctype, body string
		want              map[string]string
	}{
		{"JSON types", "application/json", `{"a":"s","n":12,"f":1.50,"z":null}`,
			map[string]string{"a": "s", "n": "12", "f": "1.50", "q": "query"}},
		{"JSON structured", "application/json", `{"t":true,"o":{"x":1},"l":[1,2]}`,
			map[string]string{"t": "true", "o": `{"x":1}`, "l": "[1,2]"}},
		{"JSON wins over query", "application/json", `{"q":"body"}`, map[string]string{"q": "body"}},
		{"urlencoded", "application/x-www-form-urlencoded", "a=form&q=form", map[string]string{"a": "form", "q": "form"}},
		{"multipart", mw.FormDataContentType(), mp.String(), map[string]string{"a": "multipart", "q": "query"}},
		{"empty body any type", "application/json", "", map[string]string{"q": "query"}},
		{"JSON without a content type", "", `{"a":"x"}`, map[string]string{"a": "x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/x?q=query", strings.NewReader(c.body))
			if c.ctype != "" {
				r.Header.Set("Content-Type", c.ctype)
			}
			p, err := ReadParamsStructured(r, 1<<20, map[string]bool{"t": true, "o": true, "l": true})
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if got := p.Raw(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if p.Has("z") {
				t.Error("null must read as absent")
			}
		})
	}
}

// asMap is s as a map. It panics when s holds a name twice.
func (s *paramSet) asMap() map[string]string {
	m := make(map[string]string, len(s.list))
	for _, p := range s.list {
		if _, ok := m[p.name]; ok {
			panic("paramSet holds " + strconv.Quote(p.name) + " twice")
		}
		m[p.name] = p.value
	}
	return m
}

// TestParamSet: a paramSet answers as a map does through sets, replaces
// and deletions, below and past the count at which it indexes its names.
func TestParamSet(t *testing.T) {
	for _, names := range []int{1, smallParams, indexedParams, indexedParams + 1, 100} {
		var s paramSet
		want := map[string]string{}
		rng := rand.New(rand.NewPCG(1, uint64(names)))
		for step := range 2000 {
			name := "p" + strconv.Itoa(rng.IntN(names))
			switch rng.IntN(4) {
			case 0:
				s.del(name)
				delete(want, name)
			default:
				v := strconv.Itoa(step)
				s.set(name, v)
				want[name] = v
			}
			if got, ok := s.get(name); got != want[name] || ok != (want[name] != "") {
				t.Fatalf("%d names, step %d: get(%s) = %q, %v; want %q", names, step, name, got, ok, want[name])
			}
		}
		if got := s.asMap(); !maps.Equal(got, want) {
			t.Fatalf("%d names: %v, want %v", names, got, want)
		}
		if indexed := s.index != nil; indexed != (names > indexedParams) {
			t.Errorf("%d names: indexed %v", names, indexed)
		}
		for name, v := range want {
			if got, _ := s.get(name); got != v {
				t.Errorf("%d names: get(%s) = %q, want %q", names, name, got, v)
			}
		}
	}
}

func TestReadParamsPathWins(t *testing.T) {
	mux := http.NewServeMux()
	var got string
	mux.HandleFunc("/c/{id}", func(w http.ResponseWriter, r *http.Request) {
		p, _ := ReadParams(r, 1024)
		got = p.Get("id")
	})
	r := httptest.NewRequest("POST", "/c/7?id=8", strings.NewReader(`{"id":9}`))
	mux.ServeHTTP(httptest.NewRecorder(), r)
	if got != "7" {
		t.Fatalf("id = %q, want the path's 7", got)
	}
}

// TestNextWildcard: every wildcard of a pattern, in order, "..." dropped;
// an unclosed brace ends the list.
func TestNextWildcard(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    string
	}{
		{"/v2/{operation}", "operation"},
		{"GET example.com/a/{id}/b/{name}/{rest...}", "id,name,rest"},
		{"/{$}", "$"},
		{"/plain/path", ""},
		{"/a/{id}/{oops", "id"},
		{"", ""},
	} {
		var got []string
		for name, rest, ok := nextWildcard(c.pattern); ok; name, rest, ok = nextWildcard(rest) {
			got = append(got, name)
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("%q: %q, want %q", c.pattern, got, c.want)
		}
	}
}

// TestReadParamsTwoWildcards: each wildcard of the pattern is a parameter.
func TestReadParamsTwoWildcards(t *testing.T) {
	mux := http.NewServeMux()
	var got [2]string
	mux.HandleFunc("/c/{course}/u/{user}", func(w http.ResponseWriter, r *http.Request) {
		p, _ := ReadParams(r, 1024)
		got = [2]string{p.Get("course"), p.Get("user")}
	})
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/c/7/u/9", nil))
	if got != [2]string{"7", "9"} {
		t.Fatalf("course and user = %q, want 7 and 9", got)
	}
}

func TestReadParamsErrors(t *testing.T) {
	r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 100)))
	r.Header.Set("Content-Type", "application/json")
	if _, err := ReadParams(r, 50); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("large body: %v", err)
	}
	r = httptest.NewRequest("POST", "/?a=1", strings.NewReader("hello"))
	r.Header.Set("Content-Type", "text/plain")
	p, err := ReadParams(r, 50)
	if !errors.Is(err, ErrUnsupportedBody) || p == nil || p.Get("a") != "1" {
		t.Errorf("text body: %v %v", err, p)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(`{"a":`))
	r.Header.Set("Content-Type", "application/json")
	if _, err := ReadParams(r, 50); lms.ErrorCode(err) != lms.CodeInvalid {
		t.Errorf("bad JSON: %v", err)
	}
}

// TestReadParamsBodyLengths reads bodies around the limit, of a declared
// length (read into a slice of that size up to presized bytes) and not
// (chunked), and one shorter than it declares.
func TestReadParamsBodyLengths(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size     int
		declared int64 // -1: not declared
		max      int64
		want     error // nil: read whole
	}{
		{"empty", 0, 0, 50, nil},
		{"at the limit", 50, 50, 50, nil},
		{"past the limit", 51, 51, 50, ErrBodyTooLarge},
		{"chunked at the limit", 50, -1, 50, nil},
		{"chunked past the limit", 51, -1, 50, ErrBodyTooLarge},
		{"longer than presized", presized + 1, presized + 1, 1 << 20, nil},
		{"chunked, longer than presized", presized + 1, -1, 1 << 20, nil},
		{"shorter than declared", 20, 30, 50, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := strings.Repeat("x", max(tc.size-8, 0))
			body := `{"v":"` + v + `"}`
			if tc.size < 8 {
				body = ""
			}
			r := httptest.NewRequest("POST", "/", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.ContentLength = tc.declared
			if tc.size < 8 {
				r.Body = http.NoBody
			}
			p, err := ReadParams(r, tc.max)
			switch {
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("err = %v, want %v", err, tc.want)
			case tc.want == nil && err != nil:
				t.Fatal(err)
			case tc.want == nil && tc.size >= 8 && p.Get("v") != v:
				t.Fatalf("v is %d bytes, want %d", len(p.Get("v")), len(v))
			}
		})
	}
}

func TestParamNumbers(t *testing.T) {
	p := NewParams(map[string]string{"a": "12", "b": "12.0", "c": "1.5", "d": "abc", "e": " 7 ", "f": "true", "g": "-3"})
	var v lms.Validator
	for name, want := range map[string]int64{"a": 12, "b": 12, "e": 7, "g": -3} {
		if n, ok := p.Int(&v, name); !ok || n != want {
			t.Errorf("%s: %d %v", name, n, ok)
		}
	}
	for _, name := range []string{"c", "d", "f"} {
		if _, ok := p.Int(&v, name); ok || !v.Has(name) {
			t.Errorf("%s accepted as an integer", name)
		}
	}
	if p.ID(&v, "g"); !v.Has("g") {
		t.Error("negative id accepted")
	}
	if p.Range(&v, "a", 0, 0, 10); !v.Has("a") {
		t.Error("out of range accepted")
	}
	if _, ok := p.Int(&v, "missing"); ok || v.Has("missing") {
		t.Error("absent parameter must be ok=false without an error")
	}
}

// TestReadParamsNamesBadNames: a parameter name that is not UTF-8 or holds
// NUL characters is refused under its quoted form, never under an empty
// name (found by FuzzReadParams: a name of only NUL was blamed on "").
func TestReadParamsNamesBadNames(t *testing.T) {
	for _, tt := range []struct{ query, field string }{
		{"%00=1", `"\x00"`},
		{"a%00b=1", `"a\x00b"`},
		{"%FF=1", `"\xff"`},
		{"=%00", `""`}, // a nameless parameter with a NUL value
	} {
		r := httptest.NewRequest("GET", "/x?"+tt.query, nil)
		_, err := ReadParams(r, 1<<20)
		var apiErr *lms.Error
		if !errors.As(err, &apiErr) || len(apiErr.Fields) != 1 || apiErr.Fields[0].Field != tt.field {
			t.Errorf("%s: %v, want an error naming %s", tt.query, err, tt.field)
		}
	}
}

// BenchmarkReadParams reads a classroom call as clients send it: the key
// and class in the query, the rest a urlencoded body.
func BenchmarkReadParams(b *testing.B) {
	const body = "userId=u-17&userName=Ann+Smith&isTeacher=0&lessonName=Lesson+1&courseName=Maths&isExtend=0"
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/v2/getclasslaunch?apikey=ck_0123456789abcdef&class_id=42", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if p, err := ReadParams(r, 1<<20); err != nil || p.Get("userName") != "Ann Smith" {
			b.Fatal(p, err)
		}
	}
}

// BenchmarkReadParamsJSON reads LMS calls as clients send them: a JSON
// body of strings and numbers, the flat object nearly every call is.
func BenchmarkReadParamsJSON(b *testing.B) {
	for _, tc := range []struct{ name, body, key, want string }{
		{"users-list", `{"limit":50}`, "limit", "50"},
		{"users-create", `{"username":"load_3_1047","email":"load_3_1047@example.com"}`, "email", "load_3_1047@example.com"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("POST", "/api/v1/users/list", strings.NewReader(tc.body))
				r.Header.Set("Content-Type", "application/json")
				if p, err := ReadParams(r, 1<<20); err != nil || p.Get(tc.key) != tc.want {
					b.Fatal(p, err)
				}
			}
		})
	}
}
