package store

import (
	"cmp"
	"context"
	"database/sql"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// On PostgreSQL a title search is a LIKE on the folded title, served by
// the trigram index (migration 0034). Asked for the whole text, the index
// reads the posting list of each of its trigrams, and those of common
// words are long: for "algebra 103" at 100,000 classes, 0.78 ms in the
// index for 26 candidates, against 0.11 ms for the 224 candidates of
// "a 103" alone (docs/performance.md, "Twentieth pass"). But a window too
// common costs more than the whole: "algeb" has 15,000 candidates, each
// a row read and checked, 9.8 ms. So a search asks the index for the
// window of the text, or the whole text, that looks cheapest by the
// trigrams of a sample of the titles, and the LIKE on the whole text
// decides on the rows. The choice changes the cost of a search, never its
// matches.
//
// The sample is of the whole table, all domains, and taken again when
// older than titleSampleTTL, by the first search that finds it so; the
// searches meanwhile use the older one, or the whole text before the
// first. A sample that fails is tried again titleSampleTTL later, the
// whole text asked for until then. It holds titleSampleSize titles at
// most: a trigram in fewer than one title in that many counts as absent.

const (
	// titleSampleSize bounds the titles a sample reads: a multiple of 64.
	titleSampleSize = 1024
	// titleSampleTTL is how long a sample serves.
	titleSampleTTL = 10 * time.Minute
	// titleWindow is the length, in characters, of the windows a search
	// chooses from: three trigrams within a word. The last 4 or 5
	// characters were the cheapest windows for the load tool's searches
	// (0.37-0.40 ms each, against 0.54-0.95 for the last 3 or 6-8, and
	// 0.94 for the whole text).
	titleWindow = 5
	// titleRowCost is what reading and checking one candidate row costs,
	// in trigram postings read from the index. On the machine of
	// docs/performance.md a candidate cost about 0.6 µs (15,000 of them
	// 9.8 ms), a posting 6-26 ns (the index skips through long lists
	// when a rare trigram leads).
	titleRowCost = 100
	// titleChoiceMax bounds the characters of a text whose windows are
	// weighed: a longer one (a request may carry a megabyte) is asked
	// for whole, as every text was before the sample.
	titleChoiceMax = 64
)

// titleSampler keeps the current sample of the titles.
type titleSampler struct {
	cur     atomic.Pointer[titleSample]
	running sync.Mutex // held while a sample is taken
}

// titleSample holds, for each trigram of the sampled titles (as the
// index takes them from a folded title, see trigrams), the sampled titles
// that hold it: the trigrams in order, each one's titles as their numbers
// in the sample, and as a set of titleSampleSize bits for those in many
// titles. Most trigrams are in a few titles, and a set for each, as this
// kept before, took 2.5 MB for titles of random letters, where nearly
// every trigram is in one title; the lists take 0.33 MB
// (docs/performance.md, "Twenty-fourth pass"). The sets keep weighing a
// window of common trigrams as quick as it was.
type titleSample struct {
	at time.Time
	// span is the ids from the table's first to its last when the sample
	// was taken: about its rows, more if rows were deleted.
	span  int64
	grams []trigram
	// ends[i] is where grams[i]'s titles end in titles, and start at
	// ends[i-1] (0 for the first).
	ends   []int32
	titles []uint16
	// set[i], when not 0, is grams[i]'s titles as sets[set[i]-1].
	set  []int32
	sets []titleSet
}

// titleSetAt is the number of titles from which a trigram's titles are
// also kept as a set: a set is 128 bytes, the titles' list 2 each.
const titleSetAt = 64

// holders returns the sampled titles that hold g, by their numbers, in
// order, and as a set when it keeps one; none when no sampled title does.
func (p *titleSample) holders(g trigram) ([]uint16, *titleSet) {
	i, ok := slices.BinarySearch(p.grams, g)
	if !ok {
		return nil, nil
	}
	start := int32(0)
	if i > 0 {
		start = p.ends[i-1]
	}
	var set *titleSet
	if k := p.set[i]; k > 0 {
		set = &p.sets[k-1]
	}
	return p.titles[start:p.ends[i]], set
}

// titleSet is a set of sampled titles.
type titleSet [titleSampleSize / 64]uint64

// titleSetOf returns the set of the sampled titles numbered in titles.
func titleSetOf(titles []uint16) titleSet {
	var set titleSet
	for _, t := range titles {
		set[t/64] |= 1 << (t % 64)
	}
	return set
}

func (b *titleSet) count() int64 {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return int64(n)
}

// trigram is three characters, 21 bits each.
type trigram uint64

func gram(a, b, c rune) trigram { return trigram(a)<<42 | trigram(b)<<21 | trigram(c) }

func (g trigram) String() string {
	const mask = 1<<21 - 1
	return string([]rune{rune(g >> 42 & mask), rune(g >> 21 & mask), rune(g & mask)})
}

// newTitleSample makes the sample of the folded titles given, at most
// titleSampleSize of them.
func newTitleSample(at time.Time, titles []string) *titleSample {
	p := &titleSample{at: at}
	// Each trigram of each title, with the title's number: sorted, the
	// trigrams in order, each with its titles.
	type holding struct {
		g trigram
		t uint16
	}
	var held []holding
	var grams []trigram
	for i, title := range titles[:min(len(titles), titleSampleSize)] {
		grams = trigrams(grams[:0], trigramText(title), false)
		for _, g := range grams {
			held = append(held, holding{g, uint16(i)})
		}
	}
	slices.SortFunc(held, func(a, b holding) int {
		return cmp.Or(cmp.Compare(a.g, b.g), cmp.Compare(a.t, b.t))
	})
	p.titles = make([]uint16, len(held))
	for k, h := range held {
		if len(p.grams) == 0 || p.grams[len(p.grams)-1] != h.g {
			p.grams = append(p.grams, h.g)
			p.ends = append(p.ends, 0)
		}
		p.ends[len(p.ends)-1] = int32(k + 1)
		p.titles[k] = h.t
	}
	p.set = make([]int32, len(p.grams))
	start := int32(0)
	for i, end := range p.ends {
		if end-start >= titleSetAt {
			p.sets = append(p.sets, titleSetOf(p.titles[start:end]))
			p.set[i] = int32(len(p.sets))
		}
		start = end
	}
	return p
}

// searchWindow returns the part of the folded search text to ask the
// trigram index for: text itself, or a window of it that the sample says
// is cheaper.
func (s *Store) searchWindow(ctx context.Context, text string) string {
	sample := s.titleSample.cur.Load()
	if s.titleSampleStale(sample) && s.titleSample.running.TryLock() {
		if sample = s.titleSample.cur.Load(); s.titleSampleStale(sample) {
			// A search that ends while the sample is read leaves it
			// to finish, a few milliseconds: an empty sample would
			// stand for titleSampleTTL.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			fresh, err := s.sampleTitles(sctx)
			cancel()
			if err != nil {
				// Not the search's failure: it asks for the whole text,
				// as every search does until the next try.
				fresh = &titleSample{at: s.recordClock()}
			}
			sample = fresh
			s.titleSample.cur.Store(fresh)
		}
		s.titleSample.running.Unlock()
	}
	if sample == nil {
		return text
	}
	return sample.window(text)
}

// titleSampleStale reports whether sample is missing or due to be taken
// again.
func (s *Store) titleSampleStale(sample *titleSample) bool {
	return sample == nil || s.recordClock().Sub(sample.at) >= titleSampleTTL
}

// sampleTitles reads the folded titles of up to titleSampleSize ids drawn
// at random between the table's first and last: rows apart from each
// other, however they were inserted, at the cost of an index lookup each.
// A block sample (TABLESAMPLE SYSTEM) reads rows inserted together, a
// block's worth at a time, and those are often alike (a series of
// classes named in sequence). A table of fewer ids than the sample is
// read whole. A title counts by its first 4*titleChoiceMax characters:
// enough for the texts weighed, and a megabyte of title costs no more.
func (s *Store) sampleTitles(ctx context.Context) (*titleSample, error) {
	d := s.read()
	var first, last int64
	if err := d.queryRow(ctx, "SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0) FROM live_classes").Scan(&first, &last); err != nil {
		return nil, err
	}
	q, args := "SELECT LOWER(LEFT(title, "+strconv.Itoa(titleChoiceMax*4)+")) FROM live_classes", []any(nil)
	if last-first >= titleSampleSize {
		ids := make([]byte, 0, titleSampleSize*8)
		ids = append(ids, '{')
		for i := range titleSampleSize {
			if i > 0 {
				ids = append(ids, ',')
			}
			ids = strconv.AppendInt(ids, first+rand.Int64N(last-first+1), 10)
		}
		q, args = q+" WHERE id = ANY (CAST(? AS bigint[]))", []any{string(append(ids, '}'))}
	}
	var titles []string
	err := scanRows(ctx, d, q, args, func(r *sql.Rows) error {
		titles = append(titles, "")
		return r.Scan(&titles[len(titles)-1])
	})
	if err != nil {
		return nil, err
	}
	p := newTitleSample(s.recordClock(), titles)
	if last > 0 {
		p.span = last - first + 1
	}
	return p, nil
}

// window returns the cheapest of text and its windows of titleWindow
// characters (text itself when it is no longer than a window, or longer
// than titleChoiceMax). A choice's cost is the postings of its trigrams,
// the index's work, plus titleRowCost for each row that holds them all,
// the candidates to read and check, both as counted in the sample. A
// window the index would take no trigram from is not a choice: the index
// would read all of itself. Ties keep the whole text, or the first
// window.
func (p *titleSample) window(text string) string {
	if n := utf8.RuneCountInString(text); n <= titleWindow || n > titleChoiceMax {
		return text
	}
	t := trigramText(text)
	grams := trigrams(nil, t, true)
	if len(grams) == 0 {
		return text
	}
	best, bestCost := -1, p.cost(grams)
	for i := 0; i+titleWindow <= len(t); i++ {
		grams = trigrams(grams[:0], t[i:i+titleWindow], true)
		if len(grams) == 0 {
			continue
		}
		if c := p.cost(grams); c < bestCost {
			best, bestCost = i, c
		}
	}
	if best < 0 {
		return text
	}
	return string([]rune(text)[best : best+titleWindow])
}

// cost is the cost of asking the index for the trigrams grams (see
// window).
func (p *titleSample) cost(grams []trigram) int64 {
	var postings int64
	var all titleSet // the sampled titles that hold every trigram so far
	for i := range all {
		all[i] = ^uint64(0)
	}
	for _, g := range grams {
		holders, set := p.holders(g)
		if len(holders) == 0 {
			return postings // in no sampled title: no candidates
		}
		postings += int64(len(holders))
		var few titleSet // a trigram in few titles keeps no set: made here
		if set == nil {
			few = titleSetOf(holders)
			set = &few
		}
		for j := range all {
			all[j] &= set[j]
		}
	}
	return postings + titleRowCost*all.count()
}

// trigramText is s as the trigram index sees it: its letters and digits,
// every other character a space between words.
func trigramText(s string) []rune {
	t := []rune(s)
	for i, r := range t {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			t[i] = ' '
		}
	}
	return t
}

// trigrams appends to dst, once each, the trigrams the index takes from
// t, a trigramText: those of each word with two spaces before it and one
// after, as the index keeps a title's. In a LIKE pattern's text (wild),
// a word at an end of t, next to the pattern's %, is not padded there.
func trigrams(dst []trigram, t []rune, wild bool) []trigram {
	for i := 0; i < len(t); {
		if t[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(t) && t[j] != ' ' {
			j++
		}
		pre, post := 2, 1
		if wild && i == 0 {
			pre = 0
		}
		if wild && j == len(t) {
			post = 0
		}
		// The k-th character of the padded word.
		at := func(k int) rune {
			if k < pre || k >= pre+j-i {
				return ' '
			}
			return t[i+k-pre]
		}
		for k := 0; k+3 <= pre+j-i+post; k++ {
			if g := gram(at(k), at(k+1), at(k+2)); !slices.Contains(dst, g) {
				dst = append(dst, g)
			}
		}
		i = j
	}
	return dst
}
