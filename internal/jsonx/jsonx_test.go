package jsonx

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// jsonStrings are texts that exercise every escape of encoding/json.
func jsonStrings() []string {
	s := []string{"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "tab\tnl\ncr\r\b\f",
		"\u2028\u2029", "é ü 中文 🎓", "bad \xff\xfe utf8 \xc3", "\x00\x01\x1f\x7f", "end\xe2\x80"}
	for c := 0; c < 256; c++ {
		s = append(s, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	return s
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonStrings() {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("%q: got %s want x%s", s, got, want)
		}
	}
}

// Texts escaped one after another, without quotes between them, are the
// JSON string of their concatenation when each but the last is valid
// UTF-8.
func TestAppendEscapedJoinsTexts(t *testing.T) {
	texts := jsonStrings()
	for i, s := range texts {
		if !utf8.ValidString(s) {
			continue
		}
		u := texts[(i*7+3)%len(texts)]
		want, _ := json.Marshal(s + u)
		got := append(AppendEscaped(AppendEscaped([]byte(`x"`), s), u), '"')
		if !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("%q + %q: got %s want x%s", s, u, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range jsonStrings() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	})
}

// BenchmarkAppendString writes a class title, an email and a text with
// characters to escape.
func BenchmarkAppendString(b *testing.B) {
	for _, s := range []string{"Algebra 123456", "someone.with.a.long.name@example.com",
		"Notes: <b>bold</b> & \"quoted\"\nnext line — é"} {
		b.Run(s[:5], func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				buf = AppendString(buf[:0], s)
			}
		})
	}
}
