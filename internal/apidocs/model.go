package apidocs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// API is one OpenAPI document as the reference page shows it.
type API struct {
	Name        string // "lms" or "classroom"
	Title       string
	Version     string
	Description string
	Server      string
	Security    []Scheme
	Tags        []*Tag
	Schemas     []Schema
	Operations  int
}

// Scheme is a security scheme.
type Scheme struct{ Name, In, Param, Description string }

// Tag groups operations.
type Tag struct {
	Name string
	Ops  []*Operation
}

// Operation is one method on one path.
type Operation struct {
	ID, Method, Path, Summary, Description string
	Params                                 []Field
	Body                                   []Field
	BodyTypes                              []string
	Responses                              []Response
}

// Field is a parameter or a body property. A property of a nested inline
// object is named by its path (discount.code, questions[].id).
type Field struct {
	Name, In, Type, Rules, Description string
	Required                           bool
	// Ref names the component schema Type is (or is an array of), for a
	// link.
	Ref string
}

// Response is one status of an operation. Schema names its component
// schema; Data and DataRef give the type of the schema's data property
// when it has one (the LMS API's success envelope).
type Response struct{ Status, Description, Schema, Data, DataRef string }

// Schema is a named component schema with its properties.
type Schema struct {
	Name, Description, Type string
	Fields                  []Field
}

// raw is the document as decoded; maps whose order matters stay nodes.
type raw struct {
	Info struct {
		Title, Version, Description string
	}
	Servers []struct{ URL string }
	Paths   yaml.Node
	Comps   struct {
		SecuritySchemes map[string]struct {
			Type, In, Name, Description string
		} `yaml:"securitySchemes"`
		Parameters    map[string]rawParam
		RequestBodies map[string]rawBody `yaml:"requestBodies"`
		Responses     map[string]rawResponse
		Schemas       map[string]*rawSchema
	} `yaml:"components"`
}

type rawParam struct {
	Ref         string `yaml:"$ref"`
	Name, In    string
	Required    bool
	Description string
	Schema      *rawSchema
}

type rawBody struct {
	Ref     string `yaml:"$ref"`
	Content map[string]struct{ Schema *rawSchema }
}

type rawResponse struct {
	Ref         string `yaml:"$ref"`
	Description string
	Content     map[string]struct{ Schema *rawSchema }
}

type rawSchema struct {
	Ref                  string `yaml:"$ref"`
	Type                 any
	Format               string
	Description          string
	Required             []string
	Properties           yaml.Node
	Items                *rawSchema
	Enum                 []any
	Const                any
	Minimum, Maximum     *float64
	MinLength, MaxLength *int
	Default              any
	OneOf                []*rawSchema `yaml:"oneOf"`
	AnyOf                []*rawSchema `yaml:"anyOf"`
}

type rawOp struct {
	OperationID string `yaml:"operationId"`
	Tags        []string
	Summary     string
	Description string
	Parameters  []rawParam
	RequestBody *rawBody `yaml:"requestBody"`
	Responses   yaml.Node
}

// Parse reads an OpenAPI document into what the page shows.
func Parse(name string, doc []byte) (*API, error) {
	var r raw
	if err := yaml.Unmarshal(doc, &r); err != nil {
		return nil, err
	}
	api := &API{Name: name, Title: r.Info.Title, Version: r.Info.Version, Description: r.Info.Description}
	if len(r.Servers) > 0 {
		api.Server = r.Servers[0].URL
	}
	for _, k := range sortedKeys(r.Comps.SecuritySchemes) {
		s := r.Comps.SecuritySchemes[k]
		api.Security = append(api.Security, Scheme{Name: k, In: s.In, Param: s.Name, Description: s.Description})
	}
	tags := map[string]*Tag{}
	paths := r.Paths.Content
	for i := 0; i+1 < len(paths); i += 2 {
		path, methods := paths[i].Value, paths[i+1].Content
		for j := 0; j+1 < len(methods); j += 2 {
			var o rawOp
			if err := methods[j+1].Decode(&o); err != nil {
				return nil, fmt.Errorf("%s %s: %w", methods[j].Value, path, err)
			}
			op, err := r.operation(strings.ToUpper(methods[j].Value), path, o)
			if err != nil {
				return nil, err
			}
			tag := "other"
			if len(o.Tags) > 0 {
				tag = o.Tags[0]
			}
			t, ok := tags[tag]
			if !ok {
				t = &Tag{Name: tag}
				tags[tag] = t
				api.Tags = append(api.Tags, t)
			}
			t.Ops = append(t.Ops, op)
			api.Operations++
		}
	}
	// Schemas of request bodies are shown with their operations.
	inline := map[string]bool{}
	for _, b := range r.Comps.RequestBodies {
		for _, c := range b.Content {
			if c.Schema != nil && c.Schema.Ref != "" {
				inline[refName(c.Schema.Ref)] = true
			}
		}
	}
	for _, k := range sortedKeys(r.Comps.Schemas) {
		s := r.Comps.Schemas[k]
		if inline[k] {
			continue
		}
		api.Schemas = append(api.Schemas, Schema{Name: k, Description: s.Description, Type: typeOf(s), Fields: r.fields(s)})
	}
	return api, nil
}

func (r *raw) operation(method, path string, o rawOp) (*Operation, error) {
	op := &Operation{ID: o.OperationID, Method: method, Path: path, Summary: o.Summary, Description: o.Description}
	for _, p := range o.Parameters {
		if p.Ref != "" {
			p = r.Comps.Parameters[refName(p.Ref)]
		}
		f := Field{Name: p.Name, In: p.In, Required: p.Required, Description: p.Description}
		if p.Schema != nil {
			f.Type, f.Rules = typeOf(p.Schema), rules(p.Schema)
		}
		op.Params = append(op.Params, f)
	}
	if b := o.RequestBody; b != nil {
		if b.Ref != "" {
			rb, ok := r.Comps.RequestBodies[refName(b.Ref)]
			if !ok {
				return nil, fmt.Errorf("%s %s: no request body %s", method, path, b.Ref)
			}
			b = &rb
		}
		for _, ct := range sortedKeys(b.Content) {
			op.BodyTypes = append(op.BodyTypes, ct)
			if op.Body == nil {
				op.Body = r.fields(r.resolve(b.Content[ct].Schema))
			}
		}
	}
	rs := o.Responses.Content
	for i := 0; i+1 < len(rs); i += 2 {
		var resp rawResponse
		if err := rs[i+1].Decode(&resp); err != nil {
			return nil, err
		}
		if resp.Ref != "" {
			resp = r.Comps.Responses[refName(resp.Ref)]
		}
		out := Response{Status: rs[i].Value, Description: resp.Description}
		for _, ct := range sortedKeys(resp.Content) {
			if s := resp.Content[ct].Schema; s != nil && s.Ref != "" {
				out.Schema = refName(s.Ref)
				for _, f := range r.fields(r.resolve(s)) {
					if f.Name == "data" {
						out.Data, out.DataRef = f.Type, f.Ref
					}
				}
				break
			}
		}
		op.Responses = append(op.Responses, out)
	}
	return op, nil
}

func (r *raw) resolve(s *rawSchema) *rawSchema {
	for s != nil && s.Ref != "" {
		s = r.Comps.Schemas[refName(s.Ref)]
	}
	return s
}

// fields lists the properties of an object schema in document order,
// each followed by the properties of an inline object it holds (or an
// array of), named by their path.
func (r *raw) fields(s *rawSchema) []Field {
	return r.nestedFields(s, "")
}

func (r *raw) nestedFields(s *rawSchema, prefix string) []Field {
	if s == nil {
		return nil
	}
	var out []Field
	props := s.Properties.Content
	for i := 0; i+1 < len(props); i += 2 {
		var p rawSchema
		if err := props[i+1].Decode(&p); err != nil {
			continue
		}
		name := prefix + props[i].Value
		f := Field{Name: name, Required: contains(s.Required, props[i].Value), Description: p.Description}
		if p.Ref != "" {
			f.Type, f.Ref = refName(p.Ref), refName(p.Ref)
			if rs := r.resolve(&p); rs != nil && f.Description == "" {
				f.Description = rs.Description
			}
		} else {
			f.Type, f.Rules = typeOf(&p), rules(&p)
			if p.Items != nil && p.Items.Ref != "" {
				f.Ref = refName(p.Items.Ref)
			}
		}
		out = append(out, f)
		switch {
		case len(p.Properties.Content) > 0:
			out = append(out, r.nestedFields(&p, name+".")...)
		case p.Items != nil && len(p.Items.Properties.Content) > 0:
			out = append(out, r.nestedFields(p.Items, name+"[].")...)
		}
	}
	return out
}

func typeOf(s *rawSchema) string {
	if s.Ref != "" {
		return refName(s.Ref)
	}
	var t string
	switch v := s.Type.(type) {
	case string:
		t = v
	case []any:
		var parts []string
		for _, p := range v {
			parts = append(parts, fmt.Sprint(p))
		}
		t = strings.Join(parts, " | ")
	}
	if t == "array" && s.Items != nil {
		t = "array of " + typeOf(s.Items)
	}
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	if t == "" && s.Const != nil {
		t = "const"
	}
	if t == "" && len(s.OneOf)+len(s.AnyOf) > 0 {
		var parts []string
		for _, x := range append(s.OneOf, s.AnyOf...) {
			parts = append(parts, typeOf(x))
		}
		t = strings.Join(parts, " | ")
	}
	return t
}

// rules describes a schema's limits: range, length, enum, default.
func rules(s *rawSchema) string {
	var parts []string
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		parts = append(parts, num(*s.Minimum)+" to "+num(*s.Maximum))
	case s.Minimum != nil:
		parts = append(parts, "at least "+num(*s.Minimum))
	case s.Maximum != nil:
		parts = append(parts, "at most "+num(*s.Maximum))
	}
	if s.MinLength != nil {
		parts = append(parts, "at least "+strconv.Itoa(*s.MinLength)+" characters")
	}
	if s.MaxLength != nil {
		parts = append(parts, "at most "+strconv.Itoa(*s.MaxLength)+" characters")
	}
	if len(s.Enum) > 0 {
		var e []string
		for _, v := range s.Enum {
			e = append(e, fmt.Sprint(v))
		}
		parts = append(parts, "one of "+strings.Join(e, ", "))
	}
	if s.Const != nil {
		parts = append(parts, "always "+fmt.Sprint(s.Const))
	}
	if s.Default != nil {
		parts = append(parts, "default "+fmt.Sprint(s.Default))
	}
	return strings.Join(parts, "; ")
}

func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
