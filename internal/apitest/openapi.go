package apitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"

	"github.com/lectern-lms/lectern/docs/openapi"
)

// Checker validates answers against the OpenAPI documents of both APIs:
// /api/v1 against lms.yaml, POST /, /v1 and /v2 against classroom.yaml.
// Other paths (pages, health checks, GET /) are not checked.
type Checker struct {
	mu  sync.Mutex
	lms validator.Validator
	vc  validator.Validator
	// errs are the documents' Error schemas, by document name: the shape
	// of answers to paths and methods no operation documents (an unknown
	// path, 405).
	errs map[string]*base.Schema
	// Checked counts the answers validated, by document name.
	Checked map[string]int
}

// NewChecker builds a Checker from documents (name to YAML); missing
// names come from the embedded docs/openapi files.
func NewChecker(documents map[string][]byte) (*Checker, error) {
	c := &Checker{Checked: map[string]int{}, errs: map[string]*base.Schema{}}
	for name, dst := range map[string]*validator.Validator{"lms.yaml": &c.lms, "classroom.yaml": &c.vc} {
		b, ok := documents[name]
		if !ok {
			var err error
			if b, err = openapi.Files.ReadFile(name); err != nil {
				return nil, err
			}
		}
		doc, err := libopenapi.NewDocument(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			return nil, fmt.Errorf("%s: %v", name, errs)
		}
		if ok, verrs := v.ValidateDocument(); !ok {
			return nil, fmt.Errorf("%s is not a valid OpenAPI document: %s", name, describe(verrs))
		}
		*dst = v
		model, err := doc.BuildV3Model()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		sp, ok := model.Model.Components.Schemas.Get("Error")
		if !ok {
			return nil, fmt.Errorf("%s has no Error schema", name)
		}
		c.errs[name] = sp.Schema()
	}
	return c, nil
}

// Check validates the answer resp to the request method path (path
// relative to the server, with its query string). It returns "" when the
// answer matches the document or the path belongs to neither API, else
// what is wrong.
func (c *Checker) Check(method, path string, resp *Response) string {
	p := path
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	var v validator.Validator
	var name string
	switch {
	case strings.HasPrefix(p, "/api/v1/"):
		v, name = c.lms, "lms.yaml"
	case p == "/" && method == http.MethodPost, p == "/v1", p == "/v2", strings.HasPrefix(p, "/v1/"), strings.HasPrefix(p, "/v2/"):
		v, name = c.vc, "classroom.yaml"
	default:
		return ""
	}
	req, err := http.NewRequest(method, "http://lectern.test"+path, nil)
	if err != nil {
		return err.Error()
	}
	hr := &http.Response{StatusCode: resp.Status, Header: resp.Header.Clone(), Body: io.NopCloser(bytes.NewReader(resp.Body)), Request: req}
	c.mu.Lock() // the validator's caches are not meant for concurrent use
	ok, errs := v.ValidateHttpResponse(req, hr)
	if !ok && resp.Status >= 400 && len(errs) == 1 && errs[0].ValidationType == "path" {
		ok, errs = true, nil // no operation (an unknown path, 405): checked below
	}
	// Every error answer of both APIs has the API's error shape (XML
	// answers aside), whether or not an operation documents the path.
	if ok && resp.Status >= 400 && !strings.Contains(resp.Header.Get("Content-Type"), "xml") {
		ok, errs = schema_validation.NewSchemaValidator().ValidateSchemaBytes(c.errs[name], resp.Body)
	}
	c.Checked[name]++
	c.mu.Unlock()
	if ok {
		return ""
	}
	return fmt.Sprintf("%s %s -> %d does not match %s: %s\nbody: %.300s", method, path, resp.Status, name, describe(errs), resp.Body)
}

// describe lists validation errors, one a line.
func describe(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    %s %s (%s)", f.FieldPath, f.Reason, f.KeywordLocation)
		}
	}
	return b.String()
}
