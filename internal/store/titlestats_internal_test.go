package store

import "testing"

// A search asks the index for the window of its text whose trigrams cost
// least by the sample: the postings of its trigrams and the rows the
// rarest of them is in. Texts of titleWindow characters or fewer, and
// windows without three letters or digits in a row, are asked whole.
func TestTitleSampleWindow(t *testing.T) {
	sample := &titleSample{grams: map[string]int32{
		// 100 of the titles are "Algebra 1xx", 20 of them "Algebra 15x".
		"alg": 100, "lge": 100, "geb": 100, "ebr": 100, "bra": 100, "ra ": 100, "a 1": 100,
		" 15": 20, "157": 2,
		"l  ": 5, "l 1": 5, "ol ": 5, "vol": 5,
		"bio": 3, "iol": 40, "olo": 90, "log": 90, "ogy": 90,
	}}
	for _, c := range []struct{ text, want string }{
		{"alg", "alg"},
		{"algebra", "algeb"}, // the first of equals: the three of its trigrams the index reads
		{"algebra 157", "a 157"},
		// "ra 15", the window of " 15", has no word; the whole text
		// costs less than a window of common trigrams.
		{"algebra 15", "algebra 15"},
		{"biology", "biolo"},
		{"zoology", "zoolo"}, // unseen, "zoo" and "ool"
		{"unseen words", "unseen words"},
		{"a - b - c - d", "a - b - c - d"}, // no window has a word
		{"x. y. z. 157", "x. y. z. 157"},   // "x ", " y ", " z " unseen
		{"vol. 157", ". 157"},              // a sign is a space between words
		{"ünïcödé 157", "ünïcö"},           // characters, not bytes; unseen costs nothing
		{"éléphant", "éléphant"},           // no window cheaper than nothing
	} {
		if got := sample.window(c.text); got != c.want {
			t.Errorf("window(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
