package portal

import (
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom/i18n"
)

// The portal's strings are the catalogues' "learn." keys: every key the
// pages use exists in English (the i18n package's test checks the other
// languages against English), and every "learn." key is used.
func TestPageStrings(t *testing.T) {
	files, _ := filepath.Glob("templates/*.html")
	gos, _ := filepath.Glob("pages*.go")
	signin, _ := filepath.Glob("signin*.go")
	attempt, _ := filepath.Glob("attempt*.go")
	gos = append(gos, signin...)
	gos = append(gos, attempt...)
	gos = append(gos, "portal.go")
	for _, g := range gos {
		if !strings.HasSuffix(g, "_test.go") {
			files = append(files, g)
		}
	}
	used := map[string]bool{}
	key := regexp.MustCompile(`"(learn\.[A-Za-z0-9_.]+)"`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range key.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
	}
	en, _ := i18n.Catalogue("en")
	for k := range used {
		if _, ok := en[k]; !ok {
			t.Errorf("%s is used but not in en.json", k)
		}
	}
	for k := range en {
		if strings.HasPrefix(k, "learn.") && !used[k] {
			t.Errorf("%s is in en.json but no page uses it", k)
		}
	}
}

func TestTranslate(t *testing.T) {
	d := &pageData{cat: map[string]string{"learn.lock.at": "Opens on {date}", "learn.progress": "{percent}% <done>"}}
	tests := []struct {
		key  string
		args []any
		want string
	}{
		{"learn.progress", []any{"percent", 40}, "40% &lt;done&gt;"},
		{"learn.lock.at", []any{"date", "<b>"}, "Opens on &lt;b&gt;"},
		{"learn.lock.at", []any{"date", timeHTML(time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC), false)},
			`Opens on <time datetime="2026-03-08T09:00:00Z" data-format="date">2026-03-08</time>`},
		{"learn.lock.at", nil, "Opens on {date}"},
		{"learn.nav.home", nil, "My learning"}, // from English
		{"no.such.key", nil, "no.such.key"},
	}
	for _, tc := range tests {
		if got := string(d.T(tc.key, tc.args...)); got != tc.want {
			t.Errorf("T(%q, %v) = %q, want %q", tc.key, tc.args, got, tc.want)
		}
	}
	if got := d.S("learn.lock.at", "date", timeHTML(time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC), true)); got != "Opens on 2026-03-08 09:00 UTC" {
		t.Errorf("S with a <time>: %q", got)
	}
}

func TestMediaClock(t *testing.T) {
	for s, want := range map[int]string{-3: "0:00", 0: "0:00", 9: "0:09", 75: "1:15", 3600: "1:00:00", 3725: "1:02:05"} {
		if got := mediaClock(s); got != want {
			t.Errorf("mediaClock(%d) = %q, want %q", s, got, want)
		}
	}
}

func TestFileSize(t *testing.T) {
	for n, want := range map[int64]string{0: "", 999: "999 B", 1499: "1 KB", 250_000: "250 KB", 3_456_789: "3.5 MB"} {
		if got := fileSize(n); got != want {
			t.Errorf("fileSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDemoteHeadings(t *testing.T) {
	in := template.HTML(`<h1>A</h1><h2 id="b">B</h2><p>h1</p><h6>F</h6><header>x</header>`)
	want := `<h2>A</h2><h3 id="b">B</h3><p>h1</p><h6>F</h6><header>x</header>`
	if got := string(demoteHeadings(in)); got != want {
		t.Errorf("demoteHeadings = %q, want %q", got, want)
	}
}
