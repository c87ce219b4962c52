package i18n

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var want = []string{"ar", "de", "en", "es", "fr", "hi", "it", "ja", "ko", "nl", "pt", "ru", "tr", "zh"}

func TestTags(t *testing.T) {
	if got := Tags(); !slices.Equal(got, want) {
		t.Fatalf("Tags() = %v, want %v", got, want)
	}
}

var placeholder = regexp.MustCompile(`\{[A-Za-z0-9_]+\}`)

func placeholders(s string) []string {
	p := placeholder.FindAllString(s, -1)
	slices.Sort(p)
	return p
}

func TestCataloguesComplete(t *testing.T) {
	en, ok := Catalogue("en")
	if !ok || len(en) == 0 {
		t.Fatal("no English catalogue")
	}
	for _, tag := range Tags() {
		cat, ok := Catalogue(tag)
		if !ok {
			t.Fatalf("Catalogue(%q) missing", tag)
		}
		for key, v := range cat {
			if _, ok := en[key]; !ok {
				t.Errorf("%s: key %q is not in en", tag, key)
			}
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s: %q is empty", tag, key)
			}
		}
		for key, v := range en {
			tr, ok := cat[key]
			if !ok {
				t.Errorf("%s: missing %q", tag, key)
				continue
			}
			if a, b := placeholders(v), placeholders(tr); !slices.Equal(a, b) {
				t.Errorf("%s: %q has placeholders %v, en has %v", tag, key, b, a)
			}
		}
	}
}

func TestCatalogueIsACopy(t *testing.T) {
	a, _ := Catalogue("en")
	a["app.name"] = "changed"
	b, _ := Catalogue("en")
	if b["app.name"] == "changed" {
		t.Fatal("Catalogue returned the shared map")
	}
	if _, ok := Catalogue("xx"); ok {
		t.Fatal(`Catalogue("xx") found something`)
	}
}

func TestTag(t *testing.T) {
	tests := []struct {
		isLang int
		want   string
	}{
		{0, ""},
		{1, "ar"},
		{2, "en"}, // bosnian: no catalogue
		{5, "zh"},
		{6, "en"}, // chinese-traditional: no catalogue
		{10, "nl"},
		{11, "en"},
		{14, "fr"},
		{15, "de"},
		{18, "en"}, // hebrew
		{19, "hi"},
		{23, "it"},
		{24, "ja"},
		{26, "en"}, // klingon
		{27, "ko"},
		{33, "en"}, // persian
		{35, "pt"},
		{37, "ru"},
		{41, "es"},
		{46, "tr"},
		{47, "en"}, // ukrainian
		{50, "en"}, // welsh
	}
	for _, tc := range tests {
		if got := Tag(tc.isLang); got != tc.want {
			t.Errorf("Tag(%d) = %q, want %q", tc.isLang, got, tc.want)
		}
	}
	// Every id of 1-50 maps to a complete catalogue.
	for id := 1; id <= 50; id++ {
		if _, ok := Catalogue(Tag(id)); !ok {
			t.Errorf("Tag(%d) = %q has no catalogue", id, Tag(id))
		}
	}
}

func TestRTL(t *testing.T) {
	for _, tag := range Tags() {
		if got := RTL(tag); got != (tag == "ar") {
			t.Errorf("RTL(%q) = %v", tag, got)
		}
	}
}
