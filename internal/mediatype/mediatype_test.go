package mediatype

import (
	"maps"
	"mime"
	"testing"
)

var seeds = []string{"", "application/json", "Application/JSON", "application/x-www-form-urlencoded",
	"application/json; charset=utf-8", "multipart/form-data; boundary=xyz", " application/json", "application/json ",
	"application/", "/json", "/", "application", "application/json/x", "text/plain;", "a/b c", "a/b\t", "a@b/c",
	"application/vnd.api+json", "x/y=z", "é/json", "a/b;q=\"1\"", "a//b", "A/B"}

// Parse answers as mime.ParseMediaType does, bare types included.
func TestParseMatchesMime(t *testing.T) {
	for _, ct := range seeds {
		check(t, ct)
	}
}

func FuzzParse(f *testing.F) {
	for _, ct := range seeds {
		f.Add(ct)
	}
	f.Fuzz(check)
}

func check(t *testing.T, ct string) {
	mt, params := Parse(ct)
	want, wantParams, _ := mime.ParseMediaType(ct)
	if mt != want || len(params) != len(wantParams) || !maps.Equal(params, wantParams) {
		t.Fatalf("%q: %q %v, want %q %v", ct, mt, params, want, wantParams)
	}
}

func BenchmarkParse(b *testing.B) {
	for _, ct := range []string{"application/x-www-form-urlencoded", "application/json; charset=utf-8"} {
		b.Run(ct[:16], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Parse(ct)
			}
		})
	}
}
