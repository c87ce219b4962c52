package cert

import (
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestVisualOrder(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"latin unchanged", "Ann Example", "Ann Example"},
		{"cyrillic unchanged", "Анна Каренина", "Анна Каренина"},
		// سلام: seen initial, lam-alef final ligature, meem isolated (alef
		// does not join to the next letter), drawn right to left.
		{"arabic word joins and reverses", "سلام", string([]rune{0xFEE1, 0xFEFC, 0xFEB3})},
		// Beh's initial form is a glyph the PDF cannot draw whole (see
		// brokenRunes): beh stays isolated and heh starts anew.
		{"two words", "بها جد", string([]rune{0xFEAA, 0xFE9F, ' ', 0xFE8E, 0xFEEB, 0xFE8F})},
		{"parentheses mirror in rtl", "علي (ب)", string([]rune{'(', 0xFE8F, ')', ' ', 0xFEF2, 0xFEE0, 0xFECB})},
		{"hebrew reverses", "שלום", "םולש"},
		{"digits stay left to right", "علي 42", "42 " + string([]rune{0xFEF2, 0xFEE0, 0xFECB})},
		{"latin paragraph with an arabic name", "Dr. علي", "Dr. " + string([]rune{0xFEF2, 0xFEE0, 0xFECB})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := visualOrder(tc.in); got != tc.want {
				t.Errorf("visualOrder(%q) = %q %U, want %q %U", tc.in, got, []rune(got), tc.want, []rune(tc.want))
			}
		})
	}
}

// Shaping then reading the glyphs back right to left, compatibility
// decomposed, gives the name again (lam-alef ligatures included).
func TestShapeRoundTrip(t *testing.T) {
	for _, name := range []string{"فاطمة الزهراء", "عبد الله", "سلام", "محمد بن سلمان", "لأحمد", "مُحَمَّد", "بنت", "أسامة", "مؤمن", "عائشة", "قيس", "إبراهيم"} {
		v := []rune(visualOrder(name))
		reverse(v) // back to logical order
		back := norm.NFKC.String(string(v))
		if back != norm.NFKC.String(name) && norm.NFD.String(back) != norm.NFD.String(name) {
			t.Errorf("%q: round trip gives %q", name, back)
		}
		for _, r := range visualOrder(name) {
			if r >= 0x0621 && r <= 0x064A {
				t.Errorf("%q: letter %U left unshaped", name, r)
			}
		}
		for _, r := range visualOrder(name) {
			if brokenRunes()[r] {
				t.Errorf("%q: %U is a glyph the PDF cannot draw whole", name, r)
			}
		}
	}
}
