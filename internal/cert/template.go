package cert

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"strconv"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Bounds of template fields.
const (
	MaxTemplateText = 500       // title, intro, body, footer, signer fields, serial label (characters)
	MaxTemplateName = 255       // the template's own name
	MaxImageBytes   = 256 << 10 // logo and signature, decoded
	maxImagePixels  = 4000
	DefaultTitle    = "Certificate of Completion"
	DefaultIntro    = "This certifies that"
	DefaultBody     = "has successfully completed the course"
	DefaultSerial   = "Certificate no."
	OrientLandscape = "landscape"
	OrientPortrait  = "portrait"
)

// NewTemplate returns a template with the defaults a school gets when it
// sends only a name.
func NewTemplate(name string) store.CertificateTemplate {
	return store.CertificateTemplate{Name: name, Title: DefaultTitle, Intro: DefaultIntro, Body: DefaultBody,
		SerialLabel: DefaultSerial, Orientation: OrientLandscape,
		PrimaryColor: "#1f3a5f", TextColor: "#222222", BackgroundColor: "#ffffff"}
}

// CheckTemplate records in v every field of t that a certificate cannot
// be made with.
func CheckTemplate(v *lms.Validator, t store.CertificateTemplate) {
	v.Check(t.Name != "", "name", "is required")
	v.Check(utf8.RuneCountInString(t.Name) <= MaxTemplateName, "name", "must be at most "+strconv.Itoa(MaxTemplateName)+" characters")
	v.Check(t.Title != "", "title", "must not be blank")
	for field, s := range map[string]string{"title": t.Title, "intro": t.Intro, "body": t.Body, "footer": t.Footer,
		"signer_name": t.SignerName, "signer_title": t.SignerTitle, "serial_label": t.SerialLabel} {
		v.Check(utf8.RuneCountInString(s) <= MaxTemplateText, field, "must be at most "+strconv.Itoa(MaxTemplateText)+" characters")
		v.Check(utf8.ValidString(s), field, "must be valid UTF-8")
	}
	v.Check(t.Orientation == OrientLandscape || t.Orientation == OrientPortrait, "orientation", "must be landscape or portrait")
	for field, s := range map[string]string{"primary_color": t.PrimaryColor, "text_color": t.TextColor, "background_color": t.BackgroundColor} {
		v.Check(ValidColor(s), field, "must be a colour as #rrggbb")
	}
}

// ReadImage checks a logo or signature image as sent (PNG or JPEG, at
// most MaxImageBytes, at most 4000 pixels a side) and returns it
// re-encoded as PNG, the one form certificates embed. On a bad image it
// records field in v.
func ReadImage(v *lms.Validator, field string, b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	out, msg := normalizeImage(b)
	if msg != "" {
		v.Add(field, msg)
		return nil
	}
	return out
}

func normalizeImage(b []byte) ([]byte, string) {
	if len(b) > MaxImageBytes {
		return nil, "must be at most " + strconv.Itoa(MaxImageBytes>>10) + " KB"
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil || (format != "png" && format != "jpeg") {
		return nil, "must be a PNG or JPEG image"
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > maxImagePixels || cfg.Height > maxImagePixels {
		return nil, "must be between 1 and " + strconv.Itoa(maxImagePixels) + " pixels on each side"
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, "must be a PNG or JPEG image"
	}
	// Re-encode as 8-bit RGBA PNG: one form the PDF writer always takes.
	rgba := image.NewNRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
	var out bytes.Buffer
	if err := png.Encode(&out, rgba); err != nil {
		return nil, "must be a PNG or JPEG image"
	}
	return out.Bytes(), ""
}
