package lmsapi_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/cert"
	"github.com/lectern-lms/lectern/internal/config"
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

// rawExec runs SQL on the server's database directly, for changes the API
// does not offer (renaming a user).
func rawExec(t *testing.T, e *Env, q string, args ...any) {
	t.Helper()
	db, ph := e.RawDB()
	q = strings.ReplaceAll(q, "?", ph)
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// public fetches a public (unauthenticated) path.
func public(t *testing.T, e *Env, path string, accept string) *Response {
	t.Helper()
	h := map[string]string{}
	if accept != "" {
		h["Accept"] = accept
	}
	return e.Do(Request{Method: "GET", Path: path, NoAuth: true, Header: h})
}

func TestCertificateIssueAndRevoke(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		f := newCertFixture(t, e)
		bob := create(t, e, "/users/create", map[string]any{"username": "bob", "email": "bob@example.com", "name": "Bob"}, "id")
		noTemplate := create(t, e, "/courses/create", map[string]any{"course_name": "No certificate"}, "data.course_id")
		bUser := e.Do(other(e, "POST", "/users/create", map[string]any{"username": "zed", "email": "zed@example.com"}))
		if bUser.Status != 200 {
			t.Fatal(string(bUser.Body))
		}
		e.LMS("PUT", "/gamification/rules", map[string]any{"event": "certificate_earned", "points": 25})
		var id int64
		var code string
		e.Scenarios(t, []Scenario{
			{Name: "issue", Request: api("POST", "/certificates/issue", map[string]any{"courseId": f.course, "email": "ann@example.com"}), Status: 200,
				Want: map[string]any{"message": "Certificate issued", "data.already_issued": false, "data.status": "valid",
					"data.learner_name": "Ann Example", "data.course_title": "Astronomy 101", "data.issuer_name": "Domain A",
					"data.course_id": f.course, "data.user_id": f.user, "data.template_id": f.template, "data.template_version": 1, "data.source": "manual"},
				Check: func(t *testing.T, r *Response) {
					body := r.JSON(t)
					id = Int(t, body, "data.id")
					c, _ := Lookup(body, "data.code")
					code = c.(string)
					if n, ok := cert.NormalizeCode(code); !ok || n != code {
						t.Errorf("code %q is not 12 Crockford base32 characters", code)
					}
					if v, _ := Lookup(body, "data.verify_url"); v != e.URL+"/verify/"+code {
						t.Errorf("verify_url = %v", v)
					}
				}},
		})
		if id == 0 {
			t.Fatal("no certificate issued")
		}
		e.Scenarios(t, []Scenario{
			{Name: "issue again returns the same", Request: api("POST", "/certificates/issue", map[string]any{"course_id": f.course, "user_id": f.user}), Status: 200,
				Want: map[string]any{"message": "Certificate already issued; nothing changed", "data.already_issued": true},
				Check: func(t *testing.T, r *Response) {
					if got := Int(t, r.JSON(t), "data.id"); got != id {
						t.Errorf("id = %d, want %d", got, id)
					}
				}},
			{Name: "points awarded once", Request: api("POST", "/gamification/user-points", map[string]any{"user_id": f.user}), Status: 200,
				Want: map[string]any{"data.gamification_points": 25}},
			{Name: "issue without fields", Request: api("POST", "/certificates/issue", map[string]any{}), Status: 400, Fields: []string{"courseId", "user_id", "email"}},
			{Name: "issue bad template_id", Request: api("POST", "/certificates/issue", map[string]any{"courseId": f.course, "email": "bob@example.com", "template_id": -1}),
				Status: 400, Fields: []string{"template_id"}},
			{Name: "issue unknown user", Request: api("POST", "/certificates/issue", map[string]any{"courseId": f.course, "email": "nobody@example.com"}), Status: 404},
			{Name: "issue unknown course", Request: api("POST", "/certificates/issue", map[string]any{"courseId": 999999, "email": "bob@example.com"}), Status: 404},
			{Name: "issue course without template", Request: api("POST", "/certificates/issue", map[string]any{"courseId": noTemplate, "email": "bob@example.com"}),
				Status: 409, Want: map[string]any{"code": "conflict"}},
			{Name: "issue with an explicit template", Request: api("POST", "/certificates/issue", map[string]any{"courseId": noTemplate, "email": "bob@example.com", "template_id": f.template}),
				Status: 200, Want: map[string]any{"data.course_title": "No certificate", "data.learner_name": "Bob"}},
			{Name: "get", Request: api("GET", "/certificates/get/"+itoa(id), nil), Status: 200, Want: map[string]any{"data.id": id, "data.status": "valid"}},
			{Name: "get bad id", Request: api("GET", "/certificates/get/x", nil), Status: 400, Fields: []string{"id"}},
			{Name: "get unknown", Request: api("GET", "/certificates/get/999999", nil), Status: 404},
			{Name: "list all", Request: api("POST", "/certificates/list", map[string]any{}), Status: 200, Want: map[string]any{"total": 2, "data.#": 2}},
			{Name: "list by course", Request: api("POST", "/certificates/list", map[string]any{"courseId": f.course}), Status: 200,
				Want: map[string]any{"total": 1, "data.0.id": id}},
			{Name: "list by email", Request: api("POST", "/certificates/list", map[string]any{"email": "bob@example.com"}), Status: 200,
				Want: map[string]any{"total": 1, "data.0.learner_name": "Bob"}},
			{Name: "list by course and user", Request: api("POST", "/certificates/list", map[string]any{"courseId": f.course, "user_id": bob}), Status: 200,
				Want: map[string]any{"total": 0}},
			{Name: "list unknown email", Request: api("POST", "/certificates/list", map[string]any{"email": "nobody@example.com"}), Status: 404},
			{Name: "list bad course", Request: api("POST", "/certificates/list", map[string]any{"courseId": "abc"}), Status: 400, Fields: []string{"courseId"}},
			{Name: "list bad page", Request: api("POST", "/certificates/list", map[string]any{"page": 0}), Status: 400, Fields: []string{"page"}},
			{Name: "revoke without reason", Request: api("POST", "/certificates/revoke/"+itoa(id), map[string]any{}), Status: 400, Fields: []string{"reason"}},
			{Name: "revoke reason too long", Request: api("POST", "/certificates/revoke/"+itoa(id), map[string]any{"reason": strings.Repeat("r", 501)}),
				Status: 400, Fields: []string{"reason"}},
			{Name: "revoke bad id", Request: api("POST", "/certificates/revoke/x", map[string]any{"reason": "r"}), Status: 400, Fields: []string{"id"}},
			// Domain B cannot see or touch domain A's certificates.
			{Name: "other domain: get", Request: other(e, "GET", "/certificates/get/"+itoa(id), nil), Status: 404},
			{Name: "other domain: revoke", Request: other(e, "POST", "/certificates/revoke/"+itoa(id), map[string]any{"reason": "r"}), Status: 404},
			{Name: "other domain: list", Request: other(e, "POST", "/certificates/list", map[string]any{}), Status: 200, Want: map[string]any{"total": 0}},
			{Name: "other domain: list by A's course", Request: other(e, "POST", "/certificates/list", map[string]any{"courseId": f.course}), Status: 404},
			{Name: "other domain: issue for A's course", Request: other(e, "POST", "/certificates/issue", map[string]any{"courseId": f.course, "email": "zed@example.com"}), Status: 404},
			{Name: "other domain: issue to A's user", Request: other(e, "POST", "/certificates/issue", map[string]any{"courseId": f.course, "email": "ann@example.com"}), Status: 404},
			{Name: "revoke", Request: api("POST", "/certificates/revoke/"+itoa(id), map[string]any{"reason": "Issued by mistake"}), Status: 200,
				Want: map[string]any{"message": "Certificate revoked", "data.status": "revoked", "data.revoke_reason": "Issued by mistake"}},
			{Name: "revoke again", Request: api("POST", "/certificates/revoke/"+itoa(id), map[string]any{"reason": "again"}), Status: 409},
			{Name: "get shows revoked", Request: api("GET", "/certificates/get/"+itoa(id), nil), Status: 200,
				Want: map[string]any{"data.status": "revoked", "data.revoke_reason": "Issued by mistake"}},
		})
		// The public page says revoked, with the date and without the reason.
		r := public(t, e, "/verify/"+code, "application/json")
		if r.Status != 200 {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		e.Expect(t, r, Scenario{Want: map[string]any{"status": "revoked", "revoked_on": time.Now().UTC().Format(time.DateOnly),
			"pdf_url": Absent, "credential_url": Absent, "revoke_reason": Absent}})
		if strings.Contains(string(r.Body), "mistake") {
			t.Errorf("public verify shows the revocation reason: %s", r.Body)
		}
		// A manual issue replaces a revoked certificate with a new code;
		// the points are not given twice.
		e.Scenarios(t, []Scenario{
			{Name: "re-issue after revoke", Request: api("POST", "/certificates/issue", map[string]any{"courseId": f.course, "email": "ann@example.com"}), Status: 200,
				Want: map[string]any{"message": "Certificate issued", "data.status": "valid"},
				Check: func(t *testing.T, r *Response) {
					if c, _ := Lookup(r.JSON(t), "data.code"); c == code {
						t.Errorf("re-issued certificate has the revoked one's code")
					}
				}},
			{Name: "points still once", Request: api("POST", "/gamification/user-points", map[string]any{"user_id": f.user}), Status: 200,
				Want: map[string]any{"data.gamification_points": 25}},
		})
	})
}

// A certificate says what was true when it was issued: renaming the
// course or the learner, editing the template, or deleting the course
// afterwards changes nothing it shows.
func TestCertificateSnapshot(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		f := newCertFixture(t, e)
		r := e.LMS("POST", "/certificates/issue", map[string]any{"courseId": f.course, "email": "ann@example.com"})
		if r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		id := Int(t, r.JSON(t), "data.id")
		code, _ := Lookup(r.JSON(t), "data.code")
		before := public(t, e, "/verify/"+code.(string)+".pdf", "")
		if before.Status != 200 {
			t.Fatalf("pdf: %d %s", before.Status, before.Body)
		}

		if r := e.LMS("PUT", "/courses/update", map[string]any{"course_id": f.course, "course_name": "Astronomy 102 (renamed)"}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		rawExec(t, e, "UPDATE users SET name = ? WHERE id = "+itoa(f.user), "Ann Renamed")
		if r := e.LMS("PUT", "/certificates/templates/update/"+itoa(f.template), map[string]any{"title": "A New Title"}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		want := map[string]any{"data.learner_name": "Ann Example", "data.course_title": "Astronomy 101", "data.template_version": 1}
		e.Scenarios(t, []Scenario{
			{Name: "get after renames", Request: api("GET", "/certificates/get/"+itoa(id), nil), Status: 200, Want: want},
			{Name: "verify after renames", Request: Request{Method: "GET", Path: "/verify/" + code.(string), NoAuth: true,
				Header: map[string]string{"Accept": "application/json"}}, Status: 200,
				Want: map[string]any{"learner_name": "Ann Example", "course_title": "Astronomy 101"}},
		})
		after := public(t, e, "/verify/"+code.(string)+".pdf", "")
		if after.Status != 200 || string(after.Body) != string(before.Body) {
			t.Errorf("the PDF changed after the renames (status %d, %d bytes before, %d after)", after.Status, len(before.Body), len(after.Body))
		}
		if r := e.LMS("DELETE", "/courses/delete/"+itoa(f.course), nil); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		e.Scenarios(t, []Scenario{
			{Name: "get after the course is deleted", Request: api("GET", "/certificates/get/"+itoa(id), nil), Status: 200,
				Want: map[string]any{"data.course_id": nil, "data.course_title": "Astronomy 101", "data.status": "valid"}},
		})
		if r := public(t, e, "/verify/"+code.(string)+".pdf", ""); r.Status != 200 || string(r.Body) != string(before.Body) {
			t.Errorf("the PDF changed after the course was deleted (status %d)", r.Status)
		}
	})
}

// The completion hook the content service calls: one certificate per
// learner and course, none without a template, points once.
func TestCertificateOnCourseCompleted(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		f := newCertFixture(t, e)
		noTemplate := create(t, e, "/courses/create", map[string]any{"course_name": "No certificate"}, "data.course_id")
		e.LMS("PUT", "/gamification/rules", map[string]any{"event": "certificate_earned", "points": 10})
		hook := e.Main.Learn.OnCourseCompleted
		if hook == nil {
			t.Fatal("learn.Service.OnCourseCompleted is not wired")
		}
		ctx := context.Background()
		at := time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)
		for range 3 {
			if err := hook(ctx, e.Domain.ID, f.course, f.user, at); err != nil {
				t.Fatal(err)
			}
		}
		if err := hook(ctx, e.Domain.ID, noTemplate, f.user, at); err != nil {
			t.Fatalf("a course without a template: %v", err)
		}
		e.Scenarios(t, []Scenario{
			{Name: "one certificate, dated at completion", Request: api("POST", "/certificates/list", map[string]any{"email": "ann@example.com"}), Status: 200,
				Want: map[string]any{"total": 1, "data.0.course_id": f.course, "data.0.issued_at": "2026-03-29T01:30:00Z", "data.0.source": "completion"}},
			{Name: "points once", Request: api("POST", "/gamification/user-points", map[string]any{"user_id": f.user}), Status: 200,
				Want: map[string]any{"data.gamification_points": 10}},
		})
		// Revoked: completing again issues nothing new.
		id := Int(t, e.LMS("POST", "/certificates/list", map[string]any{"email": "ann@example.com"}).JSON(t), "data.0.id")
		e.LMS("POST", "/certificates/revoke/"+itoa(id), map[string]any{"reason": "test"})
		if err := hook(ctx, e.Domain.ID, f.course, f.user, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		e.Scenarios(t, []Scenario{
			{Name: "no re-issue after a revocation", Request: api("POST", "/certificates/list", map[string]any{"email": "ann@example.com"}), Status: 200,
				Want: map[string]any{"total": 1, "data.0.status": "revoked"}},
		})
		// Another domain's ids issue nothing.
		if err := hook(ctx, e.Other.ID, f.course, f.user, at); err == nil {
			t.Error("the hook issued for another domain's course and user")
		}
	})
}

// jwks fetches a domain's public keys by kid.
func jwks(t *testing.T, e *Env, domainID int64) map[string]ed25519.PublicKey {
	t.Helper()
	r := public(t, e, "/issuers/"+itoa(domainID)+"/jwks.json", "")
	if r.Status != 200 {
		t.Fatalf("jwks: %d %s", r.Status, r.Body)
	}
	var set struct {
		Keys []struct{ Kty, Crv, X, Kid, Alg string }
	}
	if err := json.Unmarshal(r.Body, &set); err != nil {
		t.Fatal(err)
	}
	out := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" || k.Alg != "EdDSA" {
			t.Errorf("key %+v is not an Ed25519 JWK", k)
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			t.Fatalf("key %s: bad x", k.Kid)
		}
		out[k.Kid] = ed25519.PublicKey(x)
	}
	return out
}

// verifyJWT checks a VC-JWT against the keys and returns its claims and
// kid.
func verifyJWT(t *testing.T, token string, keys map[string]ed25519.PublicKey) (jwt.MapClaims, string) {
	t.Helper()
	var kid string
	tok, err := jwt.Parse(token, func(tok *jwt.Token) (any, error) {
		kid, _ = tok.Header["kid"].(string)
		k, ok := keys[kid]
		if !ok {
			return nil, errors.New("no key " + kid)
		}
		return k, nil
	}, jwt.WithValidMethods([]string{"EdDSA"}))
	if err != nil {
		t.Fatalf("credential does not verify: %v", err)
	}
	return tok.Claims.(jwt.MapClaims), kid
}

func TestCertificatePublicRoutes(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		f := newCertFixture(t, e)
		rawExec(t, e, "UPDATE users SET name = ? WHERE id = "+itoa(f.user), "فاطمة الزهراء")
		r := e.LMS("POST", "/certificates/issue", map[string]any{"courseId": f.course, "email": "ann@example.com"})
		if r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		id := Int(t, r.JSON(t), "data.id")
		c, _ := Lookup(r.JSON(t), "data.code")
		code := c.(string)
		lower := strings.ToLower(cert.FormatCode(code))
		e.Scenarios(t, []Scenario{
			{Name: "verify JSON", Request: Request{Method: "GET", Path: "/verify/" + code, NoAuth: true, Header: map[string]string{"Accept": "application/json"}},
				Status: 200, Want: map[string]any{"code": code, "status": "valid", "learner_name": "فاطمة الزهراء", "course_title": "Astronomy 101",
					"issued_on": time.Now().UTC().Format(time.DateOnly), "issuer.name": "Domain A", "issuer.id": e.URL + "/issuers/" + itoa(e.Domain.ID),
					"pdf_url": e.URL + "/verify/" + code + ".pdf", "credential_url": e.URL + "/verify/" + code + ".jwt"}},
			{Name: "verify JSON by .json", Request: Request{Method: "GET", Path: "/verify/" + code + ".json", NoAuth: true}, Status: 200,
				Want: map[string]any{"status": "valid"}},
			{Name: "verify as typed (lower case, hyphens)", Request: Request{Method: "GET", Path: "/verify/" + lower, NoAuth: true,
				Header: map[string]string{"Accept": "application/json"}}, Status: 200, Want: map[string]any{"code": code}},
			{Name: "verify unknown code JSON", Request: Request{Method: "GET", Path: "/verify/ABCDEFGHJKMN", NoAuth: true,
				Header: map[string]string{"Accept": "application/json"}}, Status: 404, Want: map[string]any{"status": "not_found"}},
			{Name: "jwks of an unknown domain", Request: Request{Method: "GET", Path: "/issuers/999999/jwks.json", NoAuth: true}, Status: 404},
			{Name: "jwks of a bad domain", Request: Request{Method: "GET", Path: "/issuers/abc/jwks.json", NoAuth: true}, Status: 404},
			{Name: "issuer profile", Request: Request{Method: "GET", Path: "/issuers/" + itoa(e.Domain.ID), NoAuth: true}, Status: 200,
				Want: map[string]any{"id": e.URL + "/issuers/" + itoa(e.Domain.ID), "name": "Domain A", "type.0": "Profile"}},
		})
		if keys := jwks(t, e, e.Domain.ID); len(keys) != 1 {
			t.Fatalf("after the first certificate the JWKS has %d keys, want 1", len(keys))
		}
		page := public(t, e, "/verify/"+code, "text/html")
		if page.Status != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("verify page: %d %s", page.Status, page.Header.Get("Content-Type"))
		}
		for _, s := range []string{`data-status="valid"`, "<bdi>فاطمة الزهراء</bdi>", "Astronomy 101", "Domain A", cert.FormatCode(code)} {
			if !strings.Contains(string(page.Body), s) {
				t.Errorf("verify page lacks %q", s)
			}
		}
		// The page speaks the reader's language (?lang= or Accept-Language).
		for _, tc := range []struct{ path, acceptLang, want string }{
			{"/verify/" + code + "?lang=ar", "", `lang="ar" dir="rtl"`},
			{"/verify/" + code + "?lang=ar", "", "شهادة صالحة"},
			{"/verify/" + code, "de-DE,de;q=0.9", "Gültiges Zertifikat"},
			{"/verify/" + code, "de-DE,de;q=0.9", time.Now().UTC().Format(time.DateOnly)},
			{"/verify/NOTACODE", "ja", "修了証が見つかりません"},
		} {
			r := e.Do(Request{Method: "GET", Path: tc.path, NoAuth: true, Header: map[string]string{"Accept": "text/html", "Accept-Language": tc.acceptLang}})
			if !strings.Contains(string(r.Body), tc.want) {
				t.Errorf("%s (Accept-Language %q) lacks %q", tc.path, tc.acceptLang, tc.want)
			}
		}
		if r := public(t, e, "/verify/NOTACODE", "text/html"); r.Status != 404 || !strings.Contains(string(r.Body), "No certificate has this code") {
			t.Errorf("unknown code page: %d %s", r.Status, r.Body)
		}

		pdf := public(t, e, "/verify/"+code+".pdf", "")
		if pdf.Status != 200 || pdf.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(string(pdf.Body), "%PDF-") {
			t.Fatalf("pdf: %d %s", pdf.Status, pdf.Header.Get("Content-Type"))
		}
		if etag := pdf.Header.Get("ETag"); etag == "" {
			t.Error("pdf has no ETag")
		} else if r := e.Do(Request{Method: "GET", Path: "/verify/" + code + ".pdf", NoAuth: true, Header: map[string]string{"If-None-Match": etag}}); r.Status != 304 {
			t.Errorf("pdf with If-None-Match: %d, want 304", r.Status)
		}

		// The credential verifies against the published keys.
		jr := public(t, e, "/verify/"+code+".jwt", "")
		if jr.Status != 200 {
			t.Fatalf("jwt: %d %s", jr.Status, jr.Body)
		}
		claims, kid := verifyJWT(t, string(jr.Body), jwks(t, e, e.Domain.ID))
		e.Expect(t, &Response{Status: 200, Body: mustJSON(t, claims)}, Scenario{Want: map[string]any{
			"iss": e.URL + "/issuers/" + itoa(e.Domain.ID), "jti": e.URL + "/verify/" + code, "id": e.URL + "/verify/" + code,
			"type.1": "OpenBadgeCredential", "@context.0": "https://www.w3.org/ns/credentials/v2",
			"issuer.id": e.URL + "/issuers/" + itoa(e.Domain.ID), "issuer.name": "Domain A",
			"credentialSubject.type.0": "AchievementSubject", "credentialSubject.identifier.0.identityHash": "فاطمة الزهراء",
			"credentialSubject.achievement.name": "Astronomy 101", "credentialSubject.achievement.type.0": "Achievement",
		}})
		// A domain that has issued nothing is no issuer: its profile and
		// keys are 404, so the public routes do not list every domain.
		for _, p := range []string{"/issuers/" + itoa(e.Other.ID), "/issuers/" + itoa(e.Other.ID) + "/jwks.json"} {
			if r := public(t, e, p, ""); r.Status != 404 {
				t.Errorf("%s of a domain without certificates: %d, want 404", p, r.Status)
			}
		}

		// After a rotation the old credential still verifies (its key is
		// still published) and new ones use the new key.
		is := &cert.Issuer{Store: e.Store, BaseURL: e.Main.BaseURL, Secret: e.Main.Secret}
		if _, err := is.RotateKey(context.Background(), e.Domain.ID); err != nil {
			t.Fatal(err)
		}
		keys := jwks(t, e, e.Domain.ID)
		if len(keys) != 2 {
			t.Fatalf("jwks after rotation has %d keys, want 2", len(keys))
		}
		verifyJWT(t, string(jr.Body), keys)
		if _, kid2 := verifyJWT(t, string(public(t, e, "/verify/"+code+".jwt", "").Body), keys); kid2 == kid {
			t.Errorf("after rotation the credential is still signed with %s", kid)
		}

		// Revoked: the page says so; the PDF and credential are gone.
		if r := e.LMS("POST", "/certificates/revoke/"+itoa(id), map[string]any{"reason": "test"}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		if r := public(t, e, "/verify/"+code, "text/html"); !strings.Contains(string(r.Body), `data-status="revoked"`) ||
			!strings.Contains(string(r.Body), "Revoked on "+time.Now().UTC().Format("2 January 2006")) {
			t.Errorf("verify page after revoke: %s", r.Body)
		}
		for _, ext := range []string{".pdf", ".jwt"} {
			if r := public(t, e, "/verify/"+code+ext, ""); r.Status != 410 {
				t.Errorf("%s after revoke: %d, want 410", ext, r.Status)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The public routes are rate-limited per client address, like the APIs.
func TestCertificatePublicRateLimit(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		var last *Response
		for range 4 {
			last = public(t, e, "/verify/ABCDEFGHJKMN", "application/json")
		}
		if last.Status != 429 || last.Header.Get("Retry-After") == "" {
			t.Errorf("4th request at burst 3: %d (Retry-After %q), want 429", last.Status, last.Header.Get("Retry-After"))
		}
	}, func(c *config.Config) { c.RateLimit, c.RateBurst = 0.01, 3 })
}

// Issues racing for one learner and course make one certificate and award
// the points once, on both databases.
func TestCertificateIssueRace(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		f := newCertFixture(t, e)
		e.LMS("PUT", "/gamification/rules", map[string]any{"event": "certificate_earned", "points": 5})
		const n = 8
		ids := make(chan int64, n)
		hook := e.Main.Learn.OnCourseCompleted
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 { // half through the completion hook, half by hand
					if err := hook(context.Background(), e.Domain.ID, f.course, f.user, time.Now()); err != nil {
						t.Error(err)
					}
					return
				}
				r := e.LMS("POST", "/certificates/issue", map[string]any{"courseId": f.course, "user_id": f.user})
				if r.Status != 200 {
					t.Errorf("issue: %d %s", r.Status, r.Body)
					return
				}
				ids <- Int(t, r.JSON(t), "data.id")
			}()
		}
		wg.Wait()
		close(ids)
		var first int64
		for id := range ids {
			if first == 0 {
				first = id
			}
			if id != first {
				t.Errorf("two certificates issued: %d and %d", first, id)
			}
		}
		e.Scenarios(t, []Scenario{
			{Name: "one certificate", Request: api("POST", "/certificates/list", map[string]any{"courseId": f.course}), Status: 200,
				Want: map[string]any{"total": 1}},
			{Name: "points once", Request: api("POST", "/gamification/user-points", map[string]any{"user_id": f.user}), Status: 200,
				Want: map[string]any{"data.gamification_points": 5}},
		})
	})
}

// The whole chain through the content service: the learner's last
// required lesson completes the course, the course's template issues the
// certificate (dated at completion), and the verify page says valid.
func TestCertificateFromCourseCompletion(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		f := newCertFixture(t, e)
		e.LMS("PUT", "/gamification/rules", map[string]any{"event": "certificate_earned", "points": 7})
		section := create(t, e, "/sections/create", map[string]any{"course_id": f.course, "title": "Only"}, "data.id")
		lessons := []int64{
			create(t, e, "/lessons/create", map[string]any{"section_id": section, "title": "One", "type": "text", "body_md": "one"}, "data.id"),
			create(t, e, "/lessons/create", map[string]any{"section_id": section, "title": "Two", "type": "text", "body_md": "two"}, "data.id"),
		}
		if r := e.LMS("POST", "/courses/enroll", map[string]any{"courseId": f.course, "email": "ann@example.com"}); r.Status != 200 {
			t.Fatal(string(r.Body))
		}
		list := func() *Response { return e.LMS("POST", "/certificates/list", map[string]any{"courseId": f.course}) }
		e.Scenarios(t, []Scenario{
			{Name: "first lesson", Request: api("POST", "/progress/markComplete", map[string]any{"lessonId": lessons[0], "email": "ann@example.com"}), Status: 200},
		})
		if total := Int(t, list().JSON(t), "total"); total != 0 {
			t.Fatalf("a certificate before the course is complete (%d)", total)
		}
		var completed any
		e.Scenarios(t, []Scenario{
			{Name: "last lesson", Request: api("POST", "/progress/markComplete", map[string]any{"lessonId": lessons[1], "email": "ann@example.com"}), Status: 200,
				Check: func(t *testing.T, r *Response) { completed, _ = Lookup(r.JSON(t), "data.course_completed_at") }},
		})
		if completed == nil {
			t.Fatal("the course did not complete")
		}
		r := list()
		e.Expect(t, r, Scenario{Want: map[string]any{"total": 1, "data.0.source": "completion", "data.0.learner_name": "Ann Example",
			"data.0.issued_at": completed, "data.0.status": "valid"}})
		code, _ := Lookup(r.JSON(t), "data.0.code")
		e.Scenarios(t, []Scenario{
			{Name: "verify", Request: Request{Method: "GET", Path: "/verify/" + code.(string), NoAuth: true, Header: map[string]string{"Accept": "application/json"}},
				Status: 200, Want: map[string]any{"status": "valid", "course_title": "Astronomy 101"}},
			{Name: "points", Request: api("POST", "/gamification/user-points", map[string]any{"user_id": f.user}), Status: 200,
				Want: map[string]any{"data.gamification_points": 7}},
		})
	})
}
