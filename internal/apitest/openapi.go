package apitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"go.yaml.in/yaml/v3"

	"github.com/lectern-lms/lectern/docs/openapi"
)

// Checker validates answers against the OpenAPI documents of both APIs:
// /api/v1 against lms.yaml, POST /, /v1 and /v2 against classroom.yaml.
// Other paths (pages, health checks, GET /) are not checked.
//
// The Checker is stricter than the documents: it reads every object schema
// that lists properties and says nothing about others as closed
// (additionalProperties: false), so an answer field the document does not
// name fails. The published documents leave objects open, so that clients
// generated from them tolerate fields a later server adds.
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
	// Covered lists, by document name, the operations ("METHOD /path" as
	// the document writes the path) with a 2xx answer that matched and is
	// not a classroom API error (those are HTTP 200 too).
	Covered map[string]map[string]bool
	// Ops lists, by document name, every operation ("METHOD /path") with
	// its first tag.
	Ops    map[string]map[string]string
	models map[string]*v3.Document
}

// NewChecker builds a Checker from documents (name to YAML); missing
// names come from the embedded docs/openapi files.
func NewChecker(documents map[string][]byte) (*Checker, error) {
	c := &Checker{Checked: map[string]int{}, errs: map[string]*base.Schema{}, Covered: map[string]map[string]bool{},
		Ops: map[string]map[string]string{}, models: map[string]*v3.Document{}}
	for name, dst := range map[string]*validator.Validator{"lms.yaml": &c.lms, "classroom.yaml": &c.vc} {
		b, ok := documents[name]
		if !ok {
			var err error
			if b, err = openapi.Files.ReadFile(name); err != nil {
				return nil, err
			}
		}
		b, err := Closed(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
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
		c.models[name] = &model.Model
		c.Covered[name] = map[string]bool{}
		c.Ops[name] = map[string]string{}
		for path, item := range model.Model.Paths.PathItems.FromOldest() {
			for method, op := range item.GetOperations().FromOldest() {
				tag := ""
				if len(op.Tags) > 0 {
					tag = op.Tags[0]
				}
				c.Ops[name][strings.ToUpper(method)+" "+path] = tag
			}
		}
	}
	return c, nil
}

// Closed returns the OpenAPI document doc with every object schema under
// components/schemas that lists properties and has no additionalProperties
// closed to other properties. A schema that means to be open says
// additionalProperties: true (or gives a schema for them).
func Closed(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("empty document")
	}
	schemas := child(child(root.Content[0], "components"), "schemas")
	if schemas == nil {
		return nil, fmt.Errorf("no components/schemas")
	}
	closeObjects(schemas)
	return yaml.Marshal(&root)
}

// closeObjects adds additionalProperties: false to every mapping below n
// that has properties and no additionalProperties.
func closeObjects(n *yaml.Node) {
	if n.Kind == yaml.MappingNode && child(n, "properties") != nil && child(n, "additionalProperties") == nil {
		n.Content = append(n.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "additionalProperties"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false"})
	}
	for i, c := range n.Content {
		// The names under properties are property names, not keywords: a
		// property called "properties" is not a schema keyword.
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			continue
		}
		closeObjects(c)
	}
}

// child returns the value of key in the mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
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
	if name == "classroom.yaml" && strings.HasPrefix(p, "/v2/") {
		// Operation names match in any letter case (as the document
		// says); validate under the document's spelling.
		for op := range c.Ops[name] {
			if documented := strings.TrimPrefix(op, "POST "); strings.EqualFold(documented, p) {
				path = documented + path[len(p):]
				break
			}
		}
	}
	req, err := http.NewRequest(method, "http://lectern.test"+path, nil)
	if err != nil {
		return err.Error()
	}
	hr := &http.Response{StatusCode: resp.Status, Header: resp.Header.Clone(), Body: io.NopCloser(bytes.NewReader(resp.Body)), Request: req}
	if name == "classroom.yaml" && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		// The compat style labels its JSON text/html (the document gives
		// that type the JSON schema); the validator reads only JSON types.
		hr.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
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
	if ok && resp.Status/100 == 2 && !bytes.Contains(resp.Body, []byte(`"status":"error"`)) {
		if _, _, tmpl := paths.FindPath(req, c.models[name], nil); tmpl != "" {
			c.Covered[name][method+" "+tmpl] = true
		}
	}
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

// EnvCheckAll names the variable that, when set, makes Env.Do check every
// answer of every scenario test against the OpenAPI documents (a slower
// run that finds answers the documents do not describe).
const EnvCheckAll = "LECTERN_TEST_OPENAPI"

var checkAll struct {
	once sync.Once
	c    *Checker
	err  error
}

// checkAnswer checks r against the documents when EnvCheckAll is set.
func (e *Env) checkAnswer(req Request, r *Response) {
	if os.Getenv(EnvCheckAll) == "" {
		return
	}
	checkAll.once.Do(func() { checkAll.c, checkAll.err = NewChecker(nil) })
	if checkAll.err != nil {
		e.T.Errorf("%s: %v", EnvCheckAll, checkAll.err)
		return
	}
	if msg := checkAll.c.Check(req.Method, req.Path, r); msg != "" {
		e.T.Errorf("%s: %s", EnvCheckAll, msg)
	}
}
