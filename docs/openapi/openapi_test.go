package openapi_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/lectern-lms/lectern/docs/openapi"
	"github.com/lectern-lms/lectern/internal/classroomapi"
	"github.com/lectern-lms/lectern/internal/lmsapi"
)

// document is the part of an OpenAPI document the route walk reads.
type document struct {
	OpenAPI string `yaml:"openapi"`
	Servers []struct {
		URL string `yaml:"url"`
	} `yaml:"servers"`
	Paths map[string]map[string]struct {
		Parameters []struct {
			Name   string `yaml:"name"`
			Schema struct {
				Enum []string `yaml:"enum"`
			} `yaml:"schema"`
		} `yaml:"parameters"`
	} `yaml:"paths"`
}

func load(t *testing.T, name string) document {
	t.Helper()
	b, err := openapi.Files.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var d document
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if d.OpenAPI != "3.1.0" {
		t.Errorf("%s: openapi = %q, want 3.1.0", name, d.OpenAPI)
	}
	return d
}

// routes lists the document's operations as "METHOD /server/path".
func (d document) routes() []string {
	base := strings.TrimSuffix(d.Servers[0].URL, "/")
	var out []string
	for path, ops := range d.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			out = append(out, strings.ToUpper(method)+" "+base+path)
		}
	}
	sort.Strings(out)
	return out
}

// diff reports what is in want and not in got, and the reverse.
func diff(t *testing.T, what string, routed, documented []string) {
	t.Helper()
	for _, r := range routed {
		if !slices.Contains(documented, r) {
			t.Errorf("%s: route %s is missing from the spec", what, r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(routed, r) {
			t.Errorf("%s: the spec names %s, which is not routed", what, r)
		}
	}
}

// TestLMSRoutesMatchSpec walks the /api/v1 router: every route is in
// lms.yaml and every path of lms.yaml is routed.
func TestLMSRoutesMatchSpec(t *testing.T) {
	d := load(t, "lms.yaml")
	routed := lmsapi.Routes()
	if len(routed) < 100 {
		t.Fatalf("only %d routes: the walk is broken", len(routed))
	}
	diff(t, "lms.yaml", routed, d.routes())
}

// TestClassroomRoutesMatchSpec checks classroom.yaml against the operation
// table: POST /v2/<operation> for each operation and nothing else, plus the
// entry points /v1/{operation}, /v2, /v1 and / whose operation or task
// enum lists exactly the operations.
func TestClassroomRoutesMatchSpec(t *testing.T) {
	d := load(t, "classroom.yaml")
	ops := classroomapi.Operations()
	if len(ops) < 20 {
		t.Fatalf("only %d operations: the walk is broken", len(ops))
	}
	routed := []string{"POST /", "POST /v1", "POST /v1/{operation}", "POST /v2"}
	for _, op := range ops {
		routed = append(routed, "POST /v2/"+op)
	}
	diff(t, "classroom.yaml", routed, d.routes())
	want := slices.Sorted(slices.Values(ops))
	for path, param := range map[string]string{"/v1/{operation}": "operation", "/v2": "task", "/v1": "task", "/": "task"} {
		op, ok := d.Paths[path]["post"]
		if !ok {
			continue // reported above
		}
		var got []string
		for _, p := range op.Parameters {
			if p.Name == param {
				got = slices.Sorted(slices.Values(p.Schema.Enum))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("classroom.yaml %s: %s enum = %v, want the operations %v", path, param, got, want)
		}
	}
}
