package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// On PostgreSQL a title search is a LIKE on the folded title, served by
// the trigram index (migration 0034). Asked for the whole text, the index
// reads the posting list of each of its trigrams, and those of common
// words are long: for "algebra 103" at 100,000 classes, 0.78 ms in the
// index for 26 candidates, against 0.11 ms for the 224 candidates of
// "a 103" alone (docs/performance.md, "Twentieth pass"). But a window too
// common costs more than the whole: "algeb" has 15,000 candidates, each
// a row read and checked, 9.8 ms. So a search asks the index for the
// window of the text that looks cheapest by the trigrams of a sample of
// the titles, and the LIKE on the whole text decides on the rows. Which
// window is chosen changes the cost of a search, never its matches.
//
// The sample is of the whole table, all domains, and taken again when
// older than titleSampleTTL, by the first search that finds it so; the
// searches meanwhile use the older one, or the whole text before the
// first. A sample that fails is tried again titleSampleTTL later, the
// whole text asked for until then. It holds titleSampleSize titles at most: a trigram in fewer than
// one title in that many counts as absent.

const (
	// titleSampleSize bounds the titles a sample reads.
	titleSampleSize = 2000
	// titleSampleTTL is how long a sample serves.
	titleSampleTTL = 10 * time.Minute
	// titleWindow is the length, in characters, of the windows a search
	// chooses from: three trigrams. Windows of 4 and 5 characters were the
	// cheapest for the load tool's searches (0.37-0.40 ms each, against
	// 0.54-0.95 for 3 or 6-8 characters, and 0.94 for the whole text).
	titleWindow = 5
	// titleRowCost is what reading and checking one candidate row costs,
	// in trigram postings read from the index: 570 ns a row against 26 ns a
	// posting on the machine of docs/performance.md.
	titleRowCost = 20
)

// titleSampler keeps the trigram counts of a sample of the titles.
type titleSampler struct {
	cur     atomic.Pointer[titleSample]
	running sync.Mutex // held while a sample is taken
}

// titleSample counts, for each trigram (three characters of the folded
// titles, spaces and signs included), the sampled titles that hold it.
type titleSample struct {
	at    time.Time
	grams map[string]int32
}

// searchWindow returns the part of the folded search text to ask the
// trigram index for: text itself, or a window of it that the sample says
// is cheaper.
func (s *Store) searchWindow(ctx context.Context, text string) string {
	if len([]rune(text)) <= titleWindow {
		return text
	}
	sample := s.titleSample.cur.Load()
	if sample == nil || s.recordClock().Sub(sample.at) >= titleSampleTTL {
		if s.titleSample.running.TryLock() {
			fresh, err := s.sampleTitles(ctx)
			if err != nil {
				// Not the search's failure: it asks for the whole text,
				// as every search does until the next try.
				fresh = &titleSample{at: s.recordClock()}
			}
			sample = fresh
			s.titleSample.cur.Store(fresh)
			s.titleSample.running.Unlock()
		}
	}
	if sample == nil {
		return text
	}
	return sample.window(text)
}

// sampleTitles reads about titleSampleSize folded titles, spread over the
// table by block (TABLESAMPLE SYSTEM, by the table's estimated rows; the
// whole table, first rows first, when there is no estimate yet).
func (s *Store) sampleTitles(ctx context.Context) (*titleSample, error) {
	d := s.read()
	var rows float64
	if err := d.queryRow(ctx, "SELECT reltuples FROM pg_class WHERE oid = 'live_classes'::regclass").Scan(&rows); err != nil {
		return nil, err
	}
	percent := 100.0
	if rows > titleSampleSize {
		percent = min(100, 100*2*titleSampleSize/rows) // twice: blocks vary
	}
	sample := &titleSample{at: s.recordClock(), grams: map[string]int32{}}
	seen := map[string]bool{}
	err := scanRows(ctx, d, "SELECT LOWER(title) FROM live_classes TABLESAMPLE SYSTEM (?) LIMIT +?",
		[]any{percent, titleSampleSize}, func(r *sql.Rows) error {
			var title string
			if err := r.Scan(&title); err != nil {
				return err
			}
			clear(seen)
			t := trigramText(title)
			for i := 0; i+3 <= len(t); i++ {
				if g := string(t[i : i+3]); hasWord(t[i:i+3], 1) && !seen[g] {
					seen[g] = true
					sample.grams[g]++
				}
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return sample, nil
}

// window returns the cheapest of text and its windows of titleWindow
// characters. A choice's cost is the postings of its trigrams, the
// index's work, plus titleRowCost for each row the rarest of them is in,
// an estimate of the candidates to check (the rows that hold all of them
// are fewer). Only a window with three letters or digits in a row is
// eligible: the index takes its trigrams from words, and a window of
// short words and signs could give it none, and make it read everything.
//
// Ties keep the longer choice: its trigrams are all rare alike.
func (p *titleSample) window(text string) string {
	t := trigramText(text)
	best, bestCost := text, p.cost(t)
	for i := 0; i+titleWindow <= len(t); i++ {
		w := t[i : i+titleWindow]
		if !hasWord(w, 3) {
			continue
		}
		if c := p.cost(w); c < bestCost {
			best, bestCost = string([]rune(text)[i:i+titleWindow]), c
		}
	}
	return best
}

// cost is the cost of asking the index for t, a trigramText (see window).
func (p *titleSample) cost(t []rune) int64 {
	var sum, rarest int64 = 0, -1
	for i := 0; i+3 <= len(t); i++ {
		if !hasWord(t[i:i+3], 1) {
			continue // not a trigram the index keeps
		}
		n := int64(p.grams[string(t[i:i+3])])
		sum += n
		if rarest < 0 || n < rarest {
			rarest = n
		}
	}
	return sum + titleRowCost*max(rarest, 0)
}

// trigramText is s as the trigram index sees it: its letters and digits,
// every other character a space between words.
func trigramText(s string) []rune {
	t := []rune(s)
	for i, r := range t {
		if !isWordRune(r) {
			t[i] = ' '
		}
	}
	return t
}

// hasWord reports whether t has n letters or digits in a row.
func hasWord(t []rune, n int) bool {
	run := 0
	for _, r := range t {
		if !isWordRune(r) {
			run = 0
		} else if run++; run == n {
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
