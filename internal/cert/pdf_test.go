package cert

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/lectern-lms/lectern/internal/store"
)

// tool returns the path of a command the test needs (poppler-utils,
// zbar-tools). Without it the test is skipped, with the reason, outside CI
// and fails under CI (.ci/run installs them), as the README says.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s must be installed under CI (apt-get install poppler-utils zbar-tools): %v", name, err)
		}
		t.Skipf("%s not installed: the test that reads the PDF back is skipped (apt-get install poppler-utils zbar-tools to run it)", name)
	}
	return p
}

func testCert(name string) store.Certificate {
	return store.Certificate{ID: 7, DomainID: 3, UserID: 5, CourseID: 9, TemplateID: 1, TemplateVersion: 1,
		Code: "7K3M9QXRT2AB", LearnerName: name, CourseTitle: "Introduction to Astronomy",
		IssuerName: "Example School", IssuedAt: time.Date(2026, 11, 23, 14, 5, 0, 0, time.UTC)}
}

func pngImage(t *testing.T, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if (x/8+y/8)%2 == 0 {
				img.Set(x, y, c)
			}
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func writePDF(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.pdf")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// pdfText is what pdftotext reads from the PDF.
func pdfText(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(tool(t, "pdftotext"), "-enc", "UTF-8", path, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, out)
	}
	return string(out)
}

// pdfQR renders the PDF's first page at 150 dpi and returns every QR code
// zbarimg finds on it.
func pdfQR(t *testing.T, path string) []string {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "page")
	if out, err := exec.Command(tool(t, "pdftoppm"), "-r", "150", "-png", "-singlefile", path, prefix).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	if dir := os.Getenv("LECTERN_CERT_PNG_DIR"); dir != "" {
		b, _ := os.ReadFile(prefix + ".png")
		os.WriteFile(filepath.Join(dir, t.Name()[strings.LastIndex(t.Name(), "/")+1:]+".png"), b, 0o644)
	}
	cmd := exec.Command(tool(t, "zbarimg"), "--quiet", "--raw", "-Sqrcode.enable", prefix+".png")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // zbarimg may chatter about D-Bus there
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zbarimg: %v: %s", err, stderr.Bytes())
	}
	return strings.Fields(string(out))
}

func TestPDF(t *testing.T) {
	url := "https://learn.example.com/verify/7K3M9QXRT2AB"
	full := NewTemplate("Full")
	full.Footer = "Example School · 1 Main Street · example.com"
	full.SignerName, full.SignerTitle = "Dr. Ada Lovelace", "Director of Studies"
	full.Logo = pngImage(t, 240, 80, color.NRGBA{0x1f, 0x3a, 0x5f, 0xff})
	full.Signature = pngImage(t, 300, 90, color.Black)
	portrait := NewTemplate("Portrait")
	portrait.Orientation = OrientPortrait
	portrait.PrimaryColor, portrait.BackgroundColor = "#7a1f3d", "#fffaf0"
	cases := []struct {
		name     string
		learner  string
		template store.CertificateTemplate
		want     []string // substrings of the extracted text
	}{
		{"latin", "Ann Example", NewTemplate("Plain"), []string{"Ann Example", "Introduction to Astronomy", "23 November 2026", "Certificate no. 7K3M-9QXR-T2AB", DefaultTitle}},
		{"full template", "José Ñúñez-García", full, []string{"José Ñúñez-García", "Dr. Ada Lovelace", "Director of Studies", "Example School · 1 Main Street"}},
		{"cyrillic and greek", "Анна Каренина Ωμέγα", portrait, []string{"Анна Каренина Ωμέγα", "Introduction to Astronomy"}},
		// Arabic is shaped and ordered for the PDF (shape.go); pdftotext
		// reads it back in logical order.
		{"arabic", "فاطمة الزهراء بنت أسامة", NewTemplate("Plain"), []string{"فاطمة الزهراء بنت أسامة", "Introduction to Astronomy"}},
		{"hebrew", "שרה לוי", NewTemplate("Plain"), []string{"שרה לוי"}},
		{"long name shrinks or wraps", strings.Repeat("Bartholomew ", 9) + "Smith", NewTemplate("Plain"), []string{"Bartholomew", "Smith"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := PDF(testCert(tc.learner), tc.template, url)
			if err != nil {
				t.Fatal(err)
			}
			path := writePDF(t, b)
			text := pdfText(t, path)
			// Compatibility-normalised (presentation forms to letters),
			// without bidi controls, spaces collapsed.
			flat := strings.Join(strings.Fields(strings.Map(func(r rune) rune {
				if r >= 0x202A && r <= 0x202E {
					return -1
				}
				return r
			}, norm.NFKC.String(text))), " ")
			for _, w := range tc.want {
				if !strings.Contains(flat, w) {
					t.Errorf("pdf text lacks %q; got:\n%s", w, text)
				}
			}
			codes := pdfQR(t, path)
			if len(codes) != 1 || codes[0] != url {
				t.Errorf("QR codes = %q, want [%q]", codes, url)
			}
		})
	}
}

func TestPDFDeterministic(t *testing.T) {
	tpl := NewTemplate("Plain")
	tpl.Logo = pngImage(t, 100, 40, color.Black)
	a, err := PDF(testCert("Ann Example"), tpl, "https://x.test/verify/7K3M9QXRT2AB")
	if err != nil {
		t.Fatal(err)
	}
	b, err := PDF(testCert("Ann Example"), tpl, "https://x.test/verify/7K3M9QXRT2AB")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("two renders of one certificate differ (%d and %d bytes)", len(a), len(b))
	}
}

// Characters DejaVu Sans lacks (CJK) print as U+FFFD; the rest of the
// certificate is intact.
func TestPDFMissingGlyphs(t *testing.T) {
	b, err := PDF(testCert("王小明 Wang"), NewTemplate("Plain"), "https://x.test/verify/7K3M9QXRT2AB")
	if err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, writePDF(t, b))
	if strings.Contains(text, "王") {
		t.Errorf("pdf text has a CJK character the font lacks: %s", text)
	}
	if !strings.Contains(text, "Wang") || !strings.Contains(text, "Introduction to Astronomy") {
		t.Errorf("pdf text lacks the rest of the certificate: %s", text)
	}
}
