// Package httpx holds the HTTP plumbing both APIs share: parameter merging,
// JSON writing, routing with proper 404/405 answers, request ids, logging,
// rate limits and shutdown handling.
package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/mediatype"
)

// Params are a request's parameters merged from the path, the body (JSON,
// urlencoded or multipart) and the query string. When a name appears in
// more than one place the path wins over the body and the body over the
// query string.
type Params struct {
	values paramSet
	// first holds values' first pairs: most requests send a handful.
	first [smallParams]param
	// structured names the parameters that may arrive as JSON arrays,
	// objects or booleans (see ReadParamsStructured).
	structured map[string]bool
	// Files holds multipart file parts by field name.
	Files map[string][]byte
}

// NewParams returns Params holding m (for tests and internal callers).
func NewParams(m map[string]string) *Params {
	p := newParams(nil)
	for k, v := range m {
		p.values.set(k, v)
	}
	return p
}

func newParams(structured map[string]bool) *Params {
	p := &Params{structured: structured}
	p.values.list = p.first[:0]
	return p
}

// smallParams is how many parameters a Params holds without allocating
// more, and indexedParams how many it finds by scanning before it indexes
// them in a map.
const (
	smallParams   = 8
	indexedParams = 16
)

// param is one parameter: its name and its value.
type param struct{ name, value string }

// paramSet holds parameters by name, a value each. Most requests send a
// handful, which a slice scanned in order finds faster than a map, without
// a map's two allocations (a third of reading a launch's parameters). Past
// indexedParams names a map indexes the slice, so that a request of
// thousands of parameters is not read in quadratic time.
type paramSet struct {
	list  []param
	index map[string]int // name to its place in list, past indexedParams
}

func (s *paramSet) find(name string) int {
	if s.index != nil {
		if i, ok := s.index[name]; ok {
			return i
		}
		return -1
	}
	for i := range s.list {
		if s.list[i].name == name {
			return i
		}
	}
	return -1
}

func (s *paramSet) get(name string) (string, bool) {
	if i := s.find(name); i >= 0 {
		return s.list[i].value, true
	}
	return "", false
}

// set sets name's value, replacing the one it had.
func (s *paramSet) set(name, value string) {
	if i := s.find(name); i >= 0 {
		s.list[i].value = value
		return
	}
	s.list = append(s.list, param{name, value})
	switch {
	case s.index != nil:
		s.index[name] = len(s.list) - 1
	case len(s.list) > indexedParams:
		s.reindex()
	}
}

func (s *paramSet) del(name string) {
	i := s.find(name)
	if i < 0 {
		return
	}
	s.list = append(s.list[:i], s.list[i+1:]...)
	if s.index != nil {
		s.reindex()
	}
}

func (s *paramSet) reindex() {
	s.index = make(map[string]int, len(s.list))
	for i, p := range s.list {
		s.index[p.name] = i
	}
}

// ErrBodyTooLarge is returned by ReadParams when the body exceeds the limit.
var ErrBodyTooLarge = errors.New("request body too large")

// ErrUnsupportedBody is returned by ReadParams for a non-empty body whose
// content type is none of JSON, urlencoded or multipart. The Params
// returned with it hold the path and query parameters.
var ErrUnsupportedBody = errors.New("unsupported body content type")

// ReadParams reads and merges a request's parameters. The body is read at
// most up to maxBody bytes; a larger body gives ErrBodyTooLarge. GET and
// DELETE bodies are read like any other. An empty body is never an error,
// whatever its content type. A malformed JSON body is an *lms.Error naming
// the body.
//
// Every parameter, wherever it came from, must be valid UTF-8 without NUL
// characters: anything else is an *lms.Error naming the parameter, so that
// no database ever sees such text (PostgreSQL refuses both, SQLite would
// store them). In a JSON body a value must be a string, a number or null;
// arrays, objects and booleans are refused unless the parameter is one of
// structured (see ReadParamsStructured).
func ReadParams(r *http.Request, maxBody int64) (*Params, error) {
	return ReadParamsStructured(r, maxBody, nil)
}

// ReadParamsStructured is ReadParams for an API whose parameters named in
// structured take JSON arrays, objects or booleans (kept as their JSON
// text, booleans as "true" or "false").
func ReadParamsStructured(r *http.Request, maxBody int64, structured map[string]bool) (*Params, error) {
	p, err := readParams(r, maxBody, structured)
	if p != nil && (err == nil || err == ErrUnsupportedBody) {
		if verr := p.checkText(); verr != nil {
			return nil, verr
		}
	}
	return p, err
}

func readParams(r *http.Request, maxBody int64, structured map[string]bool) (*Params, error) {
	p := newParams(structured)
	addQuery(&p.values, r.URL.RawQuery) // pairs that do not parse are left out, as URL.Query leaves them
	if r.Body != nil && r.Body != http.NoBody {
		body, err := readAll(r, maxBody)
		if err != nil {
			return nil, err
		}
		if err := p.readBody(r, body); err != nil {
			if err == ErrUnsupportedBody {
				p.addPath(r)
				return p, err
			}
			return nil, err
		}
	}
	p.addPath(r)
	return p, nil
}

// readAll reads r's body, of at most maxBody bytes (ErrBodyTooLarge).
// A body of a declared length up to presized bytes is read into a slice of
// that length, where io.ReadAll starts at 512 bytes: most requests are a
// few dozen. A longer one grows as it arrives, so that a declared length
// alone allocates little.
func readAll(r *http.Request, maxBody int64) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n <= min(maxBody, presized) {
		// net/http ends the body at its declared length.
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, fmt.Errorf("read body: %w", err)
		}
		return body, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > maxBody {
		return nil, ErrBodyTooLarge
	}
	return body, nil
}

const presized = 16 << 10

// maxQueryParams is net/url's default bound on the pairs of a query
// (GODEBUG urlmaxqueryparams).
const maxQueryParams = 10000

// addQuery sets in values the last value of each name of the
// urlencoded text query. It parses as url.ParseQuery does, without
// building its map of slices (a tenth of a point read's handling, most of
// it garbage): the same pairs are left out, it fails when that fails,
// and a query of more than maxQueryParams pairs adds nothing
// (FuzzAddQuery).
func addQuery(values *paramSet, query string) (err error) {
	if strings.Count(query, "&")+1 > maxQueryParams {
		return errors.New("number of URL query parameters exceeded limit")
	}
	for query != "" {
		var pair string
		pair, query, _ = strings.Cut(query, "&")
		if strings.Contains(pair, ";") {
			if err == nil {
				err = errors.New("invalid semicolon separator in query")
			}
			continue
		}
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		if err1 == nil {
			v, err1 = url.QueryUnescape(v)
		}
		if err1 != nil {
			if err == nil {
				err = err1
			}
			continue
		}
		values.set(k, v)
	}
	return err
}

func (p *Params) addPath(r *http.Request) {
	for name, rest, ok := nextWildcard(r.Pattern); ok; name, rest, ok = nextWildcard(rest) {
		if v := r.PathValue(name); v != "" {
			p.values.set(name, v)
		}
	}
}

func (p *Params) readBody(r *http.Request, body []byte) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, mparams := mediatype.Parse(ct)
	switch {
	case mt == "application/x-www-form-urlencoded":
		if err := addQuery(&p.values, string(body)); err != nil {
			return &lms.Error{Code: lms.CodeInvalid, Message: "invalid input: the urlencoded body could not be parsed",
				Fields: []lms.FieldError{{Field: "body", Message: "is not valid urlencoded form data"}}}
		}
		return nil
	case mt == "multipart/form-data":
		return p.readMultipart(body, mparams["boundary"])
	case mt == "application/json" || strings.HasSuffix(mt, "+json") || trimmed[0] == '{':
		return p.readJSON(trimmed)
	}
	return ErrUnsupportedBody
}

func (p *Params) readJSON(body []byte) error {
	if !utf8.Valid(body) {
		return &lms.Error{Code: lms.CodeInvalid, Message: "invalid input: the JSON body is not valid UTF-8",
			Fields: []lms.FieldError{{Field: "body", Message: "is not valid UTF-8"}}}
	}
	if flatObject(body, p.values.set) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return &lms.Error{Code: lms.CodeInvalid, Message: "invalid input: the JSON body must be one object: " + jsonProblem(err),
			Fields: []lms.FieldError{{Field: "body", Message: "is not a JSON object"}}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &lms.Error{Code: lms.CodeInvalid, Message: fmt.Sprintf("invalid input: the JSON body must be one object: text follows it at byte %d", dec.InputOffset()),
			Fields: []lms.FieldError{{Field: "body", Message: "has text after the JSON object"}}}
	}
	var v lms.Validator
	for k, val := range m {
		switch val := val.(type) {
		case nil:
			// null means absent.
		case string:
			p.values.set(k, val)
		case json.Number:
			p.values.set(k, val.String())
		default:
			if !p.structured[k] {
				v.Add(k, "must be a string or a number, not a JSON "+jsonKind(val))
				continue
			}
			b, _ := json.Marshal(val)
			p.values.set(k, string(b))
		}
	}
	return v.Err()
}

func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return "object"
}

// checkText refuses parameter names and values that are not valid UTF-8 or
// that hold a NUL character.
func (p *Params) checkText() error {
	var v lms.Validator
	for _, kv := range p.values.list {
		k, val := kv.name, kv.value
		name := k
		if k == "" {
			// A parameter sent without a name ("=x") is named "".
			name = strconv.Quote(k)
		}
		if !utf8.ValidString(k) || strings.IndexByte(k, 0) >= 0 {
			// Named as a Go-quoted string: never empty (a name that is
			// only NUL characters), and the bytes sent stay visible.
			name = strconv.Quote(k)
			v.Add(name, "is not a valid parameter name (it must be UTF-8 text without NUL characters)")
			continue
		}
		switch {
		case !utf8.ValidString(val):
			v.Add(name, "must be valid UTF-8 text")
		case strings.IndexByte(val, 0) >= 0:
			v.Add(name, "must not contain NUL characters")
		}
	}
	return v.Err()
}

func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "found " + te.Value
	}
	return "unexpected end of input"
}

// nextWildcard returns the name of the first {name} wildcard of a
// ServeMux pattern and the pattern after it; ok is false when there is
// none. A loop over a pattern's wildcards with it makes no slice: one was
// made twice a request, for the parameters and for the log line.
func nextWildcard(pattern string) (name, rest string, ok bool) {
	i := strings.IndexByte(pattern, '{')
	if i < 0 {
		return "", "", false
	}
	j := strings.IndexByte(pattern[i:], '}')
	if j < 0 {
		return "", "", false
	}
	return strings.TrimSuffix(pattern[i+1:i+j], "..."), pattern[i+j+1:], true
}

// Get returns the named parameter, trimmed of surrounding space, or "".
func (p *Params) Get(name string) string { return strings.TrimSpace(p.Raw(name)) }

// Raw returns the named parameter exactly as sent.
func (p *Params) Raw(name string) string {
	v, _ := p.values.get(name)
	return v
}

// Has reports whether the named parameter was sent with a non-blank value.
func (p *Params) Has(name string) bool { return p.Get(name) != "" }

// Sent reports whether the parameter was sent at all, even empty.
func (p *Params) Sent(name string) bool {
	_, ok := p.values.get(name)
	return ok
}

// Set sets a parameter (used for aliases and defaults).
func (p *Params) Set(name, value string) { p.values.set(name, value) }

// Del removes a parameter.
func (p *Params) Del(name string) { p.values.del(name) }

// First returns the value and name of the first of names that was sent.
func (p *Params) First(names ...string) (value, name string) {
	for _, n := range names {
		if p.Has(n) {
			return p.Get(n), n
		}
	}
	return "", ""
}

// Names returns every parameter name sent.
func (p *Params) Names() []string {
	out := make([]string, 0, len(p.values.list))
	for _, kv := range p.values.list {
		out = append(out, kv.name)
	}
	return out
}

// Integer parameters other than ids are 32-bit: every integer column that
// is not an id is a 32-bit INTEGER on PostgreSQL, so a larger value is
// refused on input, the same way on both databases.
const (
	MinInt = -1 << 31
	MaxInt = 1<<31 - 1
)

// Int returns the named integer parameter, which must lie in [MinInt,
// MaxInt]. ok is false when it was not sent. A value that is not such an
// integer (JSON number or numeric string) is recorded in v and returns ok
// false.
func (p *Params) Int(v *lms.Validator, name string) (n int64, ok bool) {
	n, ok = p.int64(v, name)
	if ok && (n < MinInt || n > MaxInt) {
		v.Add(name, fmt.Sprintf("must be between %d and %d", MinInt, MaxInt))
		return 0, false
	}
	return n, ok
}

// int64 is Int without the 32-bit bound (for ids).
func (p *Params) int64(v *lms.Validator, name string) (n int64, ok bool) {
	s := p.Get(name)
	if s == "" {
		return 0, false
	}
	n, err := ParseInt(s)
	if err != nil {
		v.Add(name, "must be an integer")
		return 0, false
	}
	return n, true
}

// RequiredInt is Int that records a missing value in v.
func (p *Params) RequiredInt(v *lms.Validator, name string) int64 {
	if !p.Has(name) {
		v.Add(name, "is required")
		return 0
	}
	n, _ := p.Int(v, name)
	return n
}

// ID returns a required positive integer id (64-bit, like the id columns).
func (p *Params) ID(v *lms.Validator, name string) int64 {
	if !p.Has(name) {
		v.Add(name, "is required")
		return 0
	}
	n, _ := p.int64(v, name)
	if !v.Has(name) && n <= 0 {
		v.Add(name, "must be a positive integer")
	}
	return n
}

// Flag returns a 0/1 parameter, def when absent.
func (p *Params) Flag(v *lms.Validator, name string, def int64) int64 {
	return p.Range(v, name, def, 0, 1)
}

// Range returns an integer parameter within [lo, hi], def when absent.
func (p *Params) Range(v *lms.Validator, name string, def, lo, hi int64) int64 {
	n, ok := p.Int(v, name)
	if !ok {
		return def
	}
	if n < lo || n > hi {
		v.Add(name, fmt.Sprintf("must be between %d and %d", lo, hi))
		return def
	}
	return n
}

// RequiredString returns a required, non-blank string parameter.
func (p *Params) RequiredString(v *lms.Validator, name string) string {
	s := p.Get(name)
	if s == "" {
		v.Add(name, "is required")
	}
	return s
}

// ParseInt parses a decimal integer as sent in JSON or a form: digits with
// an optional sign. A JSON number with a zero fraction ("12.0") is accepted.
func ParseInt(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if whole, frac, ok := strings.Cut(s, "."); ok && frac != "" && strings.Trim(frac, "0") == "" {
		return strconv.ParseInt(whole, 10, 64)
	}
	return 0, fmt.Errorf("%q is not an integer", s)
}

func (p *Params) readMultipart(body []byte, boundary string) error {
	if boundary == "" {
		return &lms.Error{Code: lms.CodeInvalid, Message: "invalid input: multipart body without a boundary",
			Fields: []lms.FieldError{{Field: "body", Message: "is multipart without a boundary"}}}
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &lms.Error{Code: lms.CodeInvalid, Message: "invalid input: the multipart body could not be parsed",
				Fields: []lms.FieldError{{Field: "body", Message: "is not valid multipart form data"}}}
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return &lms.Error{Code: lms.CodeInvalid, Message: "invalid input: the multipart body could not be parsed",
				Fields: []lms.FieldError{{Field: "body", Message: "is not valid multipart form data"}}}
		}
		name := part.FormName()
		if name == "" {
			continue
		}
		if part.FileName() != "" {
			if p.Files == nil {
				p.Files = map[string][]byte{}
			}
			p.Files[name] = data
			continue
		}
		p.values.set(name, string(data))
	}
}
