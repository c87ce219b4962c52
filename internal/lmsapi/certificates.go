package lmsapi

import (
	"encoding/base64"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/internal/cert"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// maxRevokeReason bounds the reason of a revocation.
const maxRevokeReason = 500

// certificateRoutes registers the certificate templates, the course's
// template and the certificates themselves (docs/api/learning.md,
// Certificates).
func (a *API) certificateRoutes(rt *httpx.Router) {
	a.handle(rt, "POST", "/certificates/templates/create", a.createCertTemplate)
	a.handle(rt, "POST", "/certificates/templates/list", a.listCertTemplates)
	a.handle(rt, "GET", "/certificates/templates/get/{id}", a.getCertTemplate)
	a.handle(rt, "PUT", "/certificates/templates/update/{id}", a.updateCertTemplate)
	a.handle(rt, "GET", "/courses/certificate/{course_id}", a.getCourseCertificate)
	a.handle(rt, "PUT", "/courses/certificate/{course_id}", a.setCourseCertificate)
	a.handle(rt, "POST", "/certificates/list", a.listCertificates)
	a.handle(rt, "GET", "/certificates/get/{id}", a.getCertificate)
	a.handle(rt, "POST", "/certificates/issue", a.issueCertificate)
	a.handle(rt, "POST", "/certificates/revoke/{id}", a.revokeCertificate)
}

// certTemplateJSON is a template as the API shows it. Images are data
// URLs (PNG), or "" for none.
type certTemplateJSON struct {
	ID              int64  `json:"id"`
	Name            string `json:"name"`
	Version         int    `json:"version"`
	Title           string `json:"title"`
	Intro           string `json:"intro"`
	Body            string `json:"body"`
	Footer          string `json:"footer"`
	SignerName      string `json:"signer_name"`
	SignerTitle     string `json:"signer_title"`
	SerialLabel     string `json:"serial_label"`
	Orientation     string `json:"orientation"`
	PrimaryColor    string `json:"primary_color"`
	TextColor       string `json:"text_color"`
	BackgroundColor string `json:"background_color"`
	Logo            string `json:"logo"`
	Signature       string `json:"signature"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
}

func dataURL(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)
}

func toCertTemplateJSON(t store.CertificateTemplate) certTemplateJSON {
	return certTemplateJSON{ID: t.ID, Name: t.Name, Version: t.Version, Title: t.Title, Intro: t.Intro, Body: t.Body,
		Footer: t.Footer, SignerName: t.SignerName, SignerTitle: t.SignerTitle, SerialLabel: t.SerialLabel,
		Orientation: t.Orientation, PrimaryColor: t.PrimaryColor, TextColor: t.TextColor, BackgroundColor: t.BackgroundColor,
		Logo: dataURL(t.Logo), Signature: dataURL(t.Signature),
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: t.UpdatedAt.UTC().Format(time.RFC3339)}
}

// templateText are a template's text fields by parameter name.
func templateText(t *store.CertificateTemplate) map[string]*string {
	return map[string]*string{
		"name": &t.Name, "title": &t.Title, "intro": &t.Intro, "body": &t.Body, "footer": &t.Footer,
		"signer_name": &t.SignerName, "signer_title": &t.SignerTitle, "serial_label": &t.SerialLabel,
		"orientation": &t.Orientation, "primary_color": &t.PrimaryColor, "text_color": &t.TextColor,
		"background_color": &t.BackgroundColor,
	}
}

// readImageParam reads a logo or signature sent as base64 or as a data
// URL (data:image/png;base64,...). Sent empty, it removes the image.
func readImageParam(c *call, v *lms.Validator, name string) []byte {
	s := c.P.Get(name)
	if s == "" {
		return nil
	}
	if strings.HasPrefix(s, "data:") {
		_, after, found := strings.Cut(s, ",")
		if !found || !strings.Contains(s[:len(s)-len(after)], ";base64") {
			v.Add(name, "must be base64 or a base64 data URL")
			return nil
		}
		s = after
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(s); err != nil {
			v.Add(name, "must be base64 or a base64 data URL")
			return nil
		}
	}
	return cert.ReadImage(v, name, b)
}

// applyTemplateParams sets on t every template field the request sent,
// and checks the result.
func applyTemplateParams(c *call, t *store.CertificateTemplate) error {
	var v lms.Validator
	for name, dst := range templateText(t) {
		if c.P.Sent(name) {
			*dst = c.P.Get(name)
		}
	}
	if c.P.Sent("orientation") {
		t.Orientation = strings.ToLower(t.Orientation)
	}
	if c.P.Sent("logo") {
		t.Logo = readImageParam(c, &v, "logo")
	}
	if c.P.Sent("signature") {
		t.Signature = readImageParam(c, &v, "signature")
	}
	cert.CheckTemplate(&v, *t)
	return v.Err()
}

// POST /certificates/templates/create: name (required); title, intro,
// body, footer, signer_name, signer_title, serial_label, orientation,
// primary_color, text_color, background_color, logo, signature (each
// with a default).
func (a *API) createCertTemplate(w http.ResponseWriter, r *http.Request, c *call) error {
	t := cert.NewTemplate("")
	if err := applyTemplateParams(c, &t); err != nil {
		return err
	}
	t, err := a.Store.CreateCertificateTemplate(r.Context(), c.Domain.ID, t)
	if err != nil {
		return err
	}
	return ok(w, "Certificate template created", toCertTemplateJSON(t))
}

// POST /certificates/templates/list: page, limit. Images are left out
// (has_logo, has_signature say whether there are any).
func (a *API) listCertTemplates(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	ts, total, err := a.Store.ListCertificateTemplates(r.Context(), c.Domain.ID, pg.store())
	if err != nil {
		return err
	}
	type item struct {
		certTemplateJSON
		Logo         string `json:"logo,omitempty"`
		Signature    string `json:"signature,omitempty"`
		HasLogo      bool   `json:"has_logo"`
		HasSignature bool   `json:"has_signature"`
	}
	data := make([]item, len(ts))
	for i, t := range ts {
		data[i] = item{certTemplateJSON: toCertTemplateJSON(t), HasLogo: len(t.Logo) > 0, HasSignature: len(t.Signature) > 0}
	}
	return writeJSON(w, pg.body("Certificate templates", data, total))
}

// GET /certificates/templates/get/{id}.
func (a *API) getCertTemplate(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	t, err := a.Store.CertificateTemplate(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Certificate template found", toCertTemplateJSON(t))
}

// PUT /certificates/templates/update/{id}: any template field; fields
// not sent keep their value. Each update makes a new version; issued
// certificates keep theirs.
func (a *API) updateCertTemplate(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	t, err := a.Store.UpdateCertificateTemplate(r.Context(), c.Domain.ID, id, func(t *store.CertificateTemplate) error {
		return applyTemplateParams(c, t)
	})
	if err != nil {
		return err
	}
	return ok(w, "Certificate template updated", toCertTemplateJSON(t))
}

// GET /courses/certificate/{course_id}: the template the course issues
// (template_id null when none).
func (a *API) getCourseCertificate(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "course_id")
	if err != nil {
		return err
	}
	tid, err := a.Store.CourseCertificateTemplate(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Course certificate template", courseCertJSON(id, tid))
}

func courseCertJSON(courseID, templateID int64) map[string]any {
	var t any
	if templateID != 0 {
		t = templateID
	}
	return map[string]any{"course_id": courseID, "template_id": t}
}

// PUT /courses/certificate/{course_id}: template_id (0 removes the
// course's template: completions then issue no certificate).
func (a *API) setCourseCertificate(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "course_id")
	var tid int64
	if c.P.Has("template_id") {
		tid = c.P.Range(&v, "template_id", 0, 0, 1<<62)
	} else {
		v.Add("template_id", "is required (0 removes the course's template)")
	}
	if err := v.Err(); err != nil {
		return err
	}
	if err := a.Store.SetCourseCertificateTemplate(r.Context(), c.Domain.ID, id, tid); err != nil {
		return err
	}
	msg := "Course certificate template set"
	if tid == 0 {
		msg = "Course certificate template removed"
	}
	return ok(w, msg, courseCertJSON(id, tid))
}

// certificateJSON is an issued certificate as the API shows it.
type certificateJSON struct {
	ID              int64  `json:"id"`
	Code            string `json:"code"`
	Status          string `json:"status"`
	UserID          int64  `json:"user_id"`
	CourseID        *int64 `json:"course_id"`
	TemplateID      int64  `json:"template_id"`
	TemplateVersion int    `json:"template_version"`
	LearnerName     string `json:"learner_name"`
	CourseTitle     string `json:"course_title"`
	IssuerName      string `json:"issuer_name"`
	IssuedAt        string `json:"issued_at"`
	Source          string `json:"source"`
	RevokedAt       string `json:"revoked_at,omitempty"`
	RevokeReason    string `json:"revoke_reason,omitempty"`
	cert.URLs
}

func (a *API) toCertificateJSON(co store.Certificate) certificateJSON {
	j := certificateJSON{ID: co.ID, Code: co.Code, Status: "valid", UserID: co.UserID, TemplateID: co.TemplateID,
		TemplateVersion: co.TemplateVersion, LearnerName: co.LearnerName, CourseTitle: co.CourseTitle,
		IssuerName: co.IssuerName, IssuedAt: co.IssuedAt.UTC().Format(time.RFC3339), Source: co.Source}
	if co.CourseID != 0 {
		id := co.CourseID
		j.CourseID = &id
	}
	if co.Revoked() {
		j.Status, j.RevokedAt, j.RevokeReason = "revoked", co.RevokedAt.UTC().Format(time.RFC3339), co.RevokeReason
	}
	if a.Certs != nil {
		j.URLs = a.Certs.LinksFor(co)
	}
	return j
}

// courseParam reads courseId (alias course_id); required says whether it
// must be sent.
func courseParam(c *call, v *lms.Validator, required bool) int64 {
	name := "courseId"
	if !c.P.Has(name) && c.P.Has("course_id") {
		name = "course_id"
	}
	if !required && !c.P.Has(name) {
		return 0
	}
	return c.P.ID(v, name)
}

// POST /certificates/list: optional courseId, optional email or user_id;
// page, limit. Newest first.
func (a *API) listCertificates(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	f := store.CertificateFilter{CourseID: courseParam(c, &v, false)}
	pg := readPage(c, &v)
	var ref userRef
	byUser := c.P.Has("email") || c.P.Has("user_id") || c.P.Has("userId")
	if byUser {
		ref = readUserRef(c, &v)
	}
	if err := v.Err(); err != nil {
		return err
	}
	if byUser {
		id, err := a.resolveUser(r.Context(), c.Domain.ID, ref)
		if err != nil {
			return err
		}
		f.UserID = id
	}
	if f.CourseID != 0 {
		if _, err := a.Store.Course(r.Context(), c.Domain.ID, f.CourseID); err != nil {
			return err
		}
	}
	cs, total, err := a.Store.ListCertificates(r.Context(), c.Domain.ID, f, pg.store())
	if err != nil {
		return err
	}
	data := make([]certificateJSON, len(cs))
	for i, co := range cs {
		data[i] = a.toCertificateJSON(co)
	}
	return writeJSON(w, pg.body("Certificates", data, total))
}

// GET /certificates/get/{id}.
func (a *API) getCertificate(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	co, err := a.Store.Certificate(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Certificate found", a.toCertificateJSON(co))
}

// POST /certificates/issue: courseId, email or user_id, optional
// template_id (default: the course's). Issuing again while a valid
// certificate exists returns it (data.already_issued true).
func (a *API) issueCertificate(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	courseID := courseParam(c, &v, true)
	ref := readUserRef(c, &v)
	tid := c.P.Range(&v, "template_id", 0, 0, 1<<62)
	if err := v.Err(); err != nil {
		return err
	}
	userID, err := a.resolveUser(r.Context(), c.Domain.ID, ref)
	if err != nil {
		return err
	}
	co, created, err := a.Certs.Issue(r.Context(), c.Domain.ID, courseID, userID, tid)
	if err != nil {
		return err
	}
	msg := "Certificate issued"
	if !created {
		msg = "Certificate already issued; nothing changed"
	}
	return ok(w, msg, struct {
		certificateJSON
		Already bool `json:"already_issued"`
	}{a.toCertificateJSON(co), !created})
}

// POST /certificates/revoke/{id}: reason (required). The public page
// then says revoked, with the date (not the reason); the PDF and the
// credential are no longer served.
func (a *API) revokeCertificate(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "id")
	reason := c.P.RequiredString(&v, "reason")
	v.Check(utf8.RuneCountInString(reason) <= maxRevokeReason, "reason", "must be at most 500 characters")
	if err := v.Err(); err != nil {
		return err
	}
	co, err := a.Certs.Revoke(r.Context(), c.Domain.ID, id, reason)
	if err != nil {
		return err
	}
	return ok(w, "Certificate revoked", a.toCertificateJSON(co))
}
