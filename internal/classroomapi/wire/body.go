package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/lectern-lms/lectern/internal/mediatype"
)

// EmptyJSONBody applies the classroom API's rule for JSON bodies before
// the parameters are read. An empty JSON array or object ([] or {}, any
// spacing) counts as no body: Laravel's HTTP client sends every call as
// POST /v2/<op>?apikey=...&... with Content-Type: application/json and the
// body [], and the hosted service, which ignores JSON bodies, reads only
// the query string. Any other JSON body that is not an object is refused
// with an error naming what was found. A JSON object is left for
// httpx.ReadParams (its fields are parameters). Only bodies labelled JSON
// are looked at; the body is put back for the reader.
func EmptyJSONBody(r *http.Request, maxBody int64) error {
	if r.Body == nil || r.Body == http.NoBody || !IsJSONType(r.Header.Get("Content-Type")) {
		return nil
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("request body could not be read")
	}
	if int64(len(head)) > maxBody {
		// Too large: httpx.ReadParams reads it again and says so.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		return nil
	}
	trimmed := bytes.TrimSpace(head)
	if len(trimmed) > 0 && trimmed[0] != '{' {
		var compact bytes.Buffer
		if json.Compact(&compact, trimmed) == nil && compact.String() == "[]" {
			r.Body, r.ContentLength = http.NoBody, 0
			return nil
		}
		return fmt.Errorf(`the JSON body must be an object of parameters such as {"class_id":"12"}, not %s (an empty [] or {} counts as no body; parameters may also come in the query string or a form body)`, jsonKindOf(trimmed))
	}
	var compact bytes.Buffer
	if json.Compact(&compact, trimmed) == nil && compact.String() == "{}" {
		r.Body, r.ContentLength = http.NoBody, 0
		return nil
	}
	r.Body = readCloser{bytes.NewReader(head), r.Body}
	return nil
}

// IsJSONType reports whether a Content-Type names JSON.
func IsJSONType(ctype string) bool {
	mt, _ := mediatype.Parse(ctype)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// jsonKindOf names what a body that is not a JSON object holds.
func jsonKindOf(b []byte) string {
	if !json.Valid(b) {
		switch b[0] {
		case '[':
			return "a malformed JSON array"
		}
		return "text that is not JSON"
	}
	switch b[0] {
	case '[':
		return "an array with elements"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// readCloser reads from one reader and closes another (the original body).
type readCloser struct {
	io.Reader
	io.Closer
}
