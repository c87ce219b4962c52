package cert

import (
	"bytes"
	_ "embed"
	"fmt"
	"image"
	_ "image/jpeg" // logo and signature images may be JPEG
	_ "image/png"
	"strconv"
	"strings"
	"time"

	"github.com/signintech/gopdf"
	"rsc.io/qr"

	"github.com/lectern-lms/lectern/internal/store"
)

// dejaVuSans is the one font of every certificate (Latin, Greek, Cyrillic,
// and unshaped Arabic and Hebrew letters). Its licence is
// fonts/LICENSE-DejaVu.txt.
//
//go:embed fonts/DejaVuSans.ttf
var dejaVuSans []byte

// missingGlyph replaces, in the PDF, characters the font does not have
// (CJK, Indic, ...): U+FFFD, the replacement character. The verify page
// shows the name as it is.
const missingGlyph = '\uFFFD'

// Page sizes in points (A4).
const (
	a4Short = 595.28
	a4Long  = 841.89
)

// PDF renders a certificate from its snapshot and the template version it
// was issued with. verifyURL is printed and encoded in the QR code. The
// output depends only on its arguments: the same certificate renders to
// the same bytes.
func PDF(c store.Certificate, t store.CertificateTemplate, verifyURL string) ([]byte, error) {
	w, h := a4Long, a4Short
	if t.Orientation == "portrait" {
		w, h = a4Short, a4Long
	}
	pdf := &gopdf.GoPdf{}
	pdf.Start(gopdf.Config{PageSize: gopdf.Rect{W: w, H: h}, Unit: gopdf.UnitPT})
	pdf.SetInfo(gopdf.PdfInfo{Title: t.Title + " — " + c.LearnerName, Subject: c.CourseTitle, Author: c.IssuerName,
		Creator: "Lectern", Producer: "Lectern", CreationDate: c.IssuedAt.UTC()})
	pdf.SetCompressLevel(9)
	err := pdf.AddTTFFontDataWithOption("sans", dejaVuSans, gopdf.TtfOption{
		OnGlyphNotFoundSubstitute: func(rune) rune { return missingGlyph }})
	if err != nil {
		return nil, fmt.Errorf("certificate font: %w", err)
	}
	pdf.AddPage()
	d := drawer{pdf: pdf, w: w}

	primary, text, background := parseColor(t.PrimaryColor, 0x1f3a5f), parseColor(t.TextColor, 0x222222), parseColor(t.BackgroundColor, 0xffffff)

	// Background and a double frame.
	pdf.SetFillColor(background.rgb())
	pdf.RectFromUpperLeftWithStyle(0, 0, w, h, "F")
	pdf.SetStrokeColor(primary.rgb())
	pdf.SetLineWidth(4)
	pdf.RectFromUpperLeftWithStyle(18, 18, w-36, h-36, "D")
	pdf.SetLineWidth(1)
	pdf.RectFromUpperLeftWithStyle(27, 27, w-54, h-54, "D")

	portrait := t.Orientation == "portrait"
	margin := 60.0
	y := 48.0
	if len(t.Logo) > 0 {
		lh := 56.0
		if portrait {
			lh = 72
		}
		if err := d.image(t.Logo, w/2, y, 220, lh, true); err != nil {
			return nil, fmt.Errorf("logo: %w", err)
		}
		y += lh + 14
	} else {
		y += 24
	}
	if portrait {
		y += 150
	}

	// Title, intro, name, body, course, date.
	pdf.SetTextColor(primary.rgb())
	y = d.centered(t.Title, y, 34, 18, margin)
	y += 16
	pdf.SetTextColor(text.rgb())
	if t.Intro != "" {
		y = d.wrapped(t.Intro, y, 14, margin)
		y += 10
	}
	y = d.centered(c.LearnerName, y, 32, 14, margin)
	pdf.SetStrokeColor(primary.rgb())
	pdf.SetLineWidth(0.8)
	pdf.Line(w/2-180, y+4, w/2+180, y+4)
	y += 20
	if t.Body != "" {
		y = d.wrapped(t.Body, y, 14, margin)
		y += 8
	}
	pdf.SetTextColor(primary.rgb())
	y = d.centered(c.CourseTitle, y, 22, 12, margin)
	y += 12
	pdf.SetTextColor(text.rgb())
	d.centered(formatDate(c.IssuedAt), y, 13, 10, margin)

	// Bottom: signature on the left, QR code and serial on the right.
	bottom := h - 50
	if t.Footer != "" {
		pdf.SetTextColor(text.rgb())
		d.wrapped(t.Footer, bottom-6, 9, margin)
		bottom -= 22
	}
	qrSize := 84.0
	qx, qy := w-margin-qrSize, bottom-qrSize-30
	if err := d.qr(verifyURL, qx, qy, qrSize); err != nil {
		return nil, err
	}
	label := t.SerialLabel
	if label == "" {
		label = "Certificate"
	}
	pdf.SetTextColor(text.rgb())
	d.right(label+" "+FormatCode(c.Code), w-margin, qy+qrSize+6, 10)
	d.right(verifyURL, w-margin, qy+qrSize+20, 7)

	sx, sw := margin+10, 200.0
	lineY := bottom - 30
	if len(t.Signature) > 0 {
		if err := d.image(t.Signature, sx+sw/2, lineY-48, sw, 44, true); err != nil {
			return nil, fmt.Errorf("signature: %w", err)
		}
	}
	if t.SignerName != "" || t.SignerTitle != "" || len(t.Signature) > 0 {
		pdf.SetStrokeColor(text.rgb())
		pdf.SetLineWidth(0.6)
		pdf.Line(sx, lineY, sx+sw, lineY)
		d.cell(visualOrder(t.SignerName), sx, lineY+4, sw, 11, gopdf.Center)
		d.cell(visualOrder(t.SignerTitle), sx, lineY+18, sw, 9, gopdf.Center)
	}

	var out bytes.Buffer
	if err := pdf.Write(&out); err != nil {
		return nil, fmt.Errorf("write certificate pdf: %w", err)
	}
	return out.Bytes(), nil
}

// formatDate is how dates print on a certificate: 2 January 2006, UTC.
func formatDate(t time.Time) string { return t.UTC().Format("2 January 2006") }

type drawer struct {
	pdf *gopdf.GoPdf
	w   float64
}

// fit returns the largest font size from size down to min at which s fits
// in width.
func (d drawer) fit(s string, size, min, width float64) float64 {
	for ; size > min; size-- {
		d.pdf.SetFont("sans", "", size)
		if tw, err := d.pdf.MeasureTextWidth(s); err == nil && tw <= width {
			return size
		}
	}
	d.pdf.SetFont("sans", "", min)
	return min
}

// centered writes s centred on one line at y, shrinking it to fit between
// the margins (down to min; below that it wraps), and returns the y below
// it.
func (d drawer) centered(s string, y, size, min, margin float64) float64 {
	width := d.w - 2*margin
	visual := visualOrder(s)
	size = d.fit(visual, size, min, width)
	if tw, _ := d.pdf.MeasureTextWidth(visual); tw > width {
		return d.wrapped(s, y, size, margin)
	}
	d.cell(visual, margin, y, width, size, gopdf.Center)
	return y + size*1.25
}

// wrapped writes s centred, word-wrapped between the margins, and returns
// the y below it.
func (d drawer) wrapped(s string, y, size, margin float64) float64 {
	width := d.w - 2*margin
	d.pdf.SetFont("sans", "", size)
	for _, para := range strings.Split(s, "\n") {
		lines, err := d.pdf.SplitTextWithWordWrap(para, width)
		if err != nil || len(lines) == 0 {
			lines = []string{para}
		}
		for _, line := range lines {
			d.cell(visualOrder(line), margin, y, width, size, gopdf.Center)
			y += size * 1.3
		}
	}
	return y
}

// right writes s with its right edge at x.
func (d drawer) right(s string, x, y, size float64) {
	s = visualOrder(s)
	d.pdf.SetFont("sans", "", size)
	tw, _ := d.pdf.MeasureTextWidth(s)
	d.cell(s, x-tw-1, y, tw+1, size, gopdf.Right)
}

func (d drawer) cell(s string, x, y, width, size float64, align int) {
	if s == "" {
		return
	}
	d.pdf.SetFont("sans", "", size)
	d.pdf.SetXY(x, y)
	d.pdf.CellWithOption(&gopdf.Rect{W: width, H: size * 1.2}, s, gopdf.CellOption{Align: align | gopdf.Top})
}

// image draws a PNG or JPEG scaled to fit in maxW×maxH, centred on cx,
// its top at y.
func (d drawer) image(b []byte, cx, y, maxW, maxH float64, center bool) error {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if cfg.Width == 0 || cfg.Height == 0 {
		return fmt.Errorf("empty image")
	}
	scale := min(maxW/float64(cfg.Width), maxH/float64(cfg.Height))
	iw, ih := float64(cfg.Width)*scale, float64(cfg.Height)*scale
	holder, err := gopdf.ImageHolderByBytes(b)
	if err != nil {
		return err
	}
	x := cx - iw/2
	if !center {
		x = cx
	}
	return d.pdf.ImageByHolder(holder, x, y+(maxH-ih)/2, &gopdf.Rect{W: iw, H: ih})
}

// qr draws a QR code of s, size points wide, at x, y.
func (d drawer) qr(s string, x, y, size float64) error {
	code, err := qr.Encode(s, qr.M)
	if err != nil {
		return fmt.Errorf("qr code: %w", err)
	}
	code.Scale = 4
	holder, err := gopdf.ImageHolderByBytes(code.PNG())
	if err != nil {
		return err
	}
	return d.pdf.ImageByHolder(holder, x, y, &gopdf.Rect{W: size, H: size})
}

// rgbColor is an RGB colour.
type rgbColor uint32

func (c rgbColor) rgb() (uint8, uint8, uint8) { return uint8(c >> 16), uint8(c >> 8), uint8(c) }

// parseColor reads #rrggbb; anything else is def.
func parseColor(s string, def rgbColor) rgbColor {
	if !ValidColor(s) {
		return def
	}
	n, _ := strconv.ParseUint(s[1:], 16, 32)
	return rgbColor(n)
}

// ValidColor reports whether s is a colour as templates store them:
// #rrggbb.
func ValidColor(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	_, err := strconv.ParseUint(s[1:], 16, 32)
	return err == nil
}
