package lmsapi_test

import (
	"encoding/base64"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/cert"
)

// onePixelPNG is a valid 1×1 PNG.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// certFixture is a course with a template and an enrolled learner.
type certFixture struct {
	course, template, user int64
}

func newCertFixture(t *testing.T, e *Env) certFixture {
	t.Helper()
	var f certFixture
	f.course = create(t, e, "/courses/create", map[string]any{"course_name": "Astronomy 101"}, "data.course_id")
	f.template = create(t, e, "/certificates/templates/create", map[string]any{"name": "Default"}, "data.id")
	f.user = create(t, e, "/users/create", map[string]any{"username": "ann", "email": "ann@example.com", "name": "Ann Example"}, "id")
	r := e.LMS("PUT", "/courses/certificate/"+itoa(f.course), map[string]any{"template_id": f.template})
	if r.Status != 200 {
		t.Fatalf("attach template: %d %s", r.Status, r.Body)
	}
	return f
}

func TestCertificateTemplates(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		var id int64
		e.Scenarios(t, []Scenario{
			{Name: "create with defaults", Request: api("POST", "/certificates/templates/create", map[string]any{"name": "Default"}), Status: 200,
				Want: map[string]any{"message": "Certificate template created", "data.name": "Default", "data.version": 1,
					"data.title": cert.DefaultTitle, "data.orientation": "landscape", "data.primary_color": "#1f3a5f", "data.logo": ""},
				Check: func(t *testing.T, r *Response) { id = Int(t, r.JSON(t), "data.id") }},
			{Name: "create with every field", Request: api("POST", "/certificates/templates/create", map[string]any{
				"name": "Gala", "title": "Diploma", "intro": "We proudly certify that", "body": "completed", "footer": "Small print",
				"signer_name": "Dr. Who", "signer_title": "Dean", "serial_label": "No.", "orientation": "Portrait",
				"primary_color": "#AA0000", "text_color": "#000000", "background_color": "#fffaf0",
				"logo": "data:image/png;base64," + onePixelPNG, "signature": onePixelPNG}), Status: 200,
				Want: map[string]any{"data.title": "Diploma", "data.orientation": "portrait", "data.signer_title": "Dean"},
				Check: func(t *testing.T, r *Response) {
					for _, p := range []string{"data.logo", "data.signature"} {
						if s, _ := Lookup(r.JSON(t), p); !strings.HasPrefix(s.(string), "data:image/png;base64,") {
							t.Errorf("%s = %.40v, want a PNG data URL", p, s)
						}
					}
				}},
			{Name: "create without name", Request: api("POST", "/certificates/templates/create", map[string]any{}), Status: 400, Fields: []string{"name"}},
			{Name: "create with bad fields", Request: api("POST", "/certificates/templates/create", map[string]any{
				"name": "Bad", "title": "", "orientation": "diagonal", "primary_color": "red", "text_color": "#12345",
				"background_color": "#gggggg", "logo": "not base64!", "signature": base64.StdEncoding.EncodeToString([]byte("GIF89a....")),
				"footer": strings.Repeat("x", 501)}), Status: 400,
				Fields: []string{"title", "orientation", "primary_color", "text_color", "background_color", "logo", "signature", "footer"}},
			{Name: "create name too long", Request: api("POST", "/certificates/templates/create", map[string]any{"name": strings.Repeat("n", 256)}),
				Status: 400, Fields: []string{"name"}},
		})
		e.Scenarios(t, []Scenario{
			{Name: "update makes a new version", Request: api("PUT", "/certificates/templates/update/"+itoa(id), map[string]any{"title": "Certificate of Achievement", "logo": onePixelPNG}),
				Status: 200, Want: map[string]any{"data.version": 2, "data.title": "Certificate of Achievement", "data.name": "Default", "data.intro": cert.DefaultIntro}},
			{Name: "update removes the logo", Request: api("PUT", "/certificates/templates/update/"+itoa(id), map[string]any{"logo": ""}),
				Status: 200, Want: map[string]any{"data.version": 3, "data.logo": ""}},
			{Name: "update bad colour", Request: api("PUT", "/certificates/templates/update/"+itoa(id), map[string]any{"text_color": "blue"}),
				Status: 400, Fields: []string{"text_color"}},
			{Name: "update bad id", Request: api("PUT", "/certificates/templates/update/abc", map[string]any{"title": "x"}), Status: 400, Fields: []string{"id"}},
			{Name: "update unknown", Request: api("PUT", "/certificates/templates/update/999999", map[string]any{"title": "x"}), Status: 404},
			{Name: "get", Request: api("GET", "/certificates/templates/get/"+itoa(id), nil), Status: 200, Want: map[string]any{"data.version": 3}},
			{Name: "list", Request: api("POST", "/certificates/templates/list", map[string]any{}), Status: 200,
				Want: map[string]any{"total": 2, "data.#": 2, "data.0.id": id, "data.0.has_logo": false, "data.1.has_logo": true, "data.1.logo": Absent}},
			{Name: "list bad limit", Request: api("POST", "/certificates/templates/list", map[string]any{"limit": 0}), Status: 400, Fields: []string{"limit"}},
			// Domain B sees none of domain A's templates.
			{Name: "other domain: get", Request: other(e, "GET", "/certificates/templates/get/"+itoa(id), nil), Status: 404},
			{Name: "other domain: update", Request: other(e, "PUT", "/certificates/templates/update/"+itoa(id), map[string]any{"title": "x"}), Status: 404},
			{Name: "other domain: list", Request: other(e, "POST", "/certificates/templates/list", map[string]any{}), Status: 200, Want: map[string]any{"total": 0}},
			{Name: "without auth", Request: Request{Method: "POST", Path: "/api/v1/certificates/templates/list", NoAuth: true}, Status: 401},
		})
	})
}

func TestCourseCertificateTemplate(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		f := newCertFixture(t, e)
		otherCourse := create(t, e, "/courses/create", map[string]any{"course_name": "Other"}, "data.course_id")
		bTemplate := e.Do(other(e, "POST", "/certificates/templates/create", map[string]any{"name": "B's"}))
		bID := Int(t, bTemplate.JSON(t), "data.id")
		path := "/courses/certificate/" + itoa(f.course)
		e.Scenarios(t, []Scenario{
			{Name: "get", Request: api("GET", path, nil), Status: 200, Want: map[string]any{"data.course_id": f.course, "data.template_id": f.template}},
			{Name: "get course without template", Request: api("GET", "/courses/certificate/"+itoa(otherCourse), nil), Status: 200,
				Want: map[string]any{"data.template_id": nil}},
			{Name: "set without template_id", Request: api("PUT", path, map[string]any{}), Status: 400, Fields: []string{"template_id"}},
			{Name: "set bad template_id", Request: api("PUT", path, map[string]any{"template_id": "x"}), Status: 400, Fields: []string{"template_id"}},
			{Name: "set unknown template", Request: api("PUT", path, map[string]any{"template_id": 999999}), Status: 404},
			{Name: "set another domain's template", Request: api("PUT", path, map[string]any{"template_id": bID}), Status: 404},
			{Name: "set unknown course", Request: api("PUT", "/courses/certificate/999999", map[string]any{"template_id": f.template}), Status: 404},
			{Name: "other domain: get", Request: other(e, "GET", path, nil), Status: 404},
			{Name: "other domain: set", Request: other(e, "PUT", path, map[string]any{"template_id": bID}), Status: 404},
			{Name: "null is not a template", Request: api("PUT", path, map[string]any{"template_id": nil}), Status: 400, Fields: []string{"template_id"}},
			{Name: "remove with 0", Request: api("PUT", path, map[string]any{"template_id": 0}), Status: 200,
				Want: map[string]any{"message": "Course certificate template removed", "data.template_id": nil}},
			{Name: "removed", Request: api("GET", path, nil), Status: 200, Want: map[string]any{"data.template_id": nil}},
			{Name: "set again", Request: api("PUT", path, map[string]any{"template_id": f.template}), Status: 200, Want: map[string]any{"data.template_id": f.template}},
		})
	})
}
