package cert

import (
	"net/http/httptest"
	"testing"
)

func TestPageLang(t *testing.T) {
	cases := []struct {
		query, accept, want string
	}{
		{"", "", "en"},
		{"", "de-DE,de;q=0.9,en;q=0.8", "de"},
		{"", "xx-YY, fr;q=0.5, en;q=0.4", "fr"},
		{"", "en;q=0.2, ja;q=0.9", "ja"},
		{"", "zh-Hant-TW", "zh"},
		{"", "fr;q=0, es", "es"},
		{"", "tlh, sjn", "en"},
		{"ar", "de", "ar"},
		{"AR", "", "ar"},
		{"xx", "pt-BR", "pt"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/verify/7K3M9QXRT2AB?lang="+tc.query, nil)
		if tc.accept != "" {
			r.Header.Set("Accept-Language", tc.accept)
		}
		if got := pageLang(r); got != tc.want {
			t.Errorf("lang=%q Accept-Language %q: %q, want %q", tc.query, tc.accept, got, tc.want)
		}
	}
}

// Every string of the verify page exists in English, so a page never
// shows a key.
func TestPageStrings(t *testing.T) {
	d := newPageData(httptest.NewRequest("GET", "/verify/x", nil))
	for _, key := range []string{"cert.verify.title", "cert.verify.valid", "cert.verify.revoked", "cert.verify.awardedTo",
		"cert.verify.course", "cert.verify.date", "cert.verify.issuer", "cert.verify.code", "cert.verify.pdf",
		"cert.verify.credential", "cert.verify.note", "cert.verify.notFoundTitle", "cert.verify.notFound", "cert.verify.error"} {
		if s := d.T(key); s == "" || s == key {
			t.Errorf("%s: %q", key, s)
		}
	}
	if got := d.T("cert.verify.revoked", "date", "1 May 2026"); got != "Revoked on 1 May 2026" {
		t.Errorf("revoked = %q", got)
	}
}
