package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// A search asks the index for the choice of its text, itself or a window,
// that costs least by the sample: the postings of its trigrams and the
// rows that hold them all. Texts of titleWindow characters or fewer, or
// longer than titleChoiceMax, are asked whole, and so is a text when no
// window is cheaper.
func TestTitleSampleWindow(t *testing.T) {
	var titles []string
	for n := range 300 {
		titles = append(titles, fmt.Sprintf("algebra %d", 100+n), fmt.Sprintf("french %d", 100+n))
	}
	titles = append(titles, "vol. 9 of a set", "éléphant rose")
	sample := newTitleSample(time.Time{}, titles)
	// A megabyte of characters, each of its trigrams different.
	var long strings.Builder
	for r := rune(0x4e00); long.Len() < 1<<20; r++ {
		long.WriteRune(r)
	}
	for _, c := range []struct{ text, want string }{
		{"alg", "alg"},
		{"algebra", "algeb"}, // the same rows; the first window with the fewest postings
		{"algebra 157", "a 157"},
		// The index takes "ra " from "ra 15", and "  1" and " 15": the
		// 10 titles of "algebra 15", with fewer postings than the whole.
		{"algebra 15", "ra 15"},
		{"french 157", "h 157"},
		{"zoology", "zoology"}, // in no sampled title, as every window: a tie
		{"unseen words", "unseen words"},
		{"a - b - c - d", "a - b - c - d"}, // single letters, in no sampled title: a tie
		// A sign is a space between words: "vol. " is the word "vol", in
		// one title.
		{"set vol. 157", "vol. "},
		{"éléphant 157", "éléph"}, // characters, not bytes
		// Longer than titleChoiceMax: asked whole, its windows not weighed.
		{strings.Repeat("algebra ", 8) + "157", strings.Repeat("algebra ", 8) + "157"},
		{long.String(), long.String()},
	} {
		if got := sample.window(c.text); got != c.want {
			t.Errorf("window(%.60q) = %.60q, want %.60q", c.text, got, c.want)
		}
	}
}

// BenchmarkTitleSampleWindow is the CPU a PostgreSQL search spends
// choosing its window, on a sample of 1,024 titles as lectern-bench makes
// them.
func BenchmarkTitleSampleWindow(b *testing.B) {
	words := []string{"algebra", "biology", "chemistry", "drawing", "economics", "french", "geometry", "history"}
	var titles []string
	for i := range titleSampleSize {
		n := i * 97
		titles = append(titles, fmt.Sprintf("%s %d", words[n%8], n))
	}
	sample := newTitleSample(time.Time{}, titles)
	for _, text := range []string{"history 107", "introduction to algebra and geometry"} {
		b.Run(strings.ReplaceAll(text, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sample.window(text)
			}
		})
	}
}

// The sample keeps, for each trigram, the titles that hold it: as a list
// for every trigram, and as a set too for those in titleSetAt titles or
// more. Both are checked against the titles themselves.
func TestTitleSampleHolders(t *testing.T) {
	var titles []string
	for n := range 200 {
		titles = append(titles, fmt.Sprintf("algebra %d", n))
	}
	titles = append(titles, "vol. 9 of a set", "éléphant rose", "")
	// "qqq" in titleSetAt titles, kept as a set too; "www" in one fewer.
	for n := range titleSetAt {
		titles = append(titles, "qqq")
		if n > 0 {
			titles = append(titles, "www")
		}
	}
	p := newTitleSample(time.Time{}, titles)
	want := map[trigram][]uint16{}
	for i, title := range titles {
		for _, g := range trigrams(nil, trigramText(title), false) {
			want[g] = append(want[g], uint16(i))
		}
	}
	if len(p.grams) != len(want) {
		t.Errorf("%d trigrams kept, want %d", len(p.grams), len(want))
	}
	sets := 0
	for g, w := range want {
		got, set := p.holders(g)
		if !slices.Equal(got, w) {
			t.Errorf("titles of %q: %v, want %v", g, got, w)
		}
		if (set != nil) != (len(w) >= titleSetAt) {
			t.Errorf("%q in %d titles: set kept %v", g, len(w), set != nil)
		}
		if set != nil {
			sets++
			var each titleSet
			for _, i := range w {
				each[i/64] |= 1 << (i % 64)
			}
			if *set != each {
				t.Errorf("set of %q is not its titles", g)
			}
		}
	}
	if sets == 0 {
		t.Error("no trigram kept as a set")
	}
	if got, set := p.holders(gram('z', 'z', 'z')); got != nil || set != nil {
		t.Errorf("titles of a trigram in none: %v, %v", got, set)
	}
}
