package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Searching classes by title goes through a text index on each database
// (migration 0034) and must mean exactly what it meant before: the
// case-folded title contains the case-folded text. The expectation is
// computed here with strings.ToLower over the titles, and follows renames
// and deletes. On SQLite the titles are created twice: the first time
// indexed, then renamed and deleted in the index, the second time left
// above indexed_upto, so that a search's matches and pages come from both
// (migration 0038). Every third class is unpublished, for the searches
// of published classes only.
func TestClassTitleSearchMatchesAFoldedContains(t *testing.T) {
	titles := []string{"Algebra 101", "ALGEBRA 102", "Linear algebra", "Élodie's class", "ÉLODIE AGAIN", "élodie small",
		`Quote "x" here`, "50% off", "a_b c", "Straße", "ΣΊΣΥΦΟΣ", "短い授業", "Al", "İSTANBUL trip",
		"Ghi def abc", "abcdefghi jk", "abcde and fghij"}
	searches := []string{"algebra", "ALGEBRA 1", "élodie", "ÉLO", "lodie'", `"x"`, `e "x`, "50%", "%", "_", "a_b", "ß",
		"σίσυφος", "授業", "al", "a", "xyz", "gebra 10", "İstanbul", "i\u0307stanbul", "STANBUL",
		// The trigrams of these are in "Ghi def abc" too, but not the text.
		"ABCDEFGHI", "abcdefghi j", "defghi",
		// "abcde and fghij" holds both ends of this one, not the text.
		"abcdefghij", "and fghi", "Linear algebra", "Élodie's cla"}
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			st.HoldTitleIndex()
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			other, _, err := st.CreateDomain(ctx, "B")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			byID := map[int64]string{}
			published := map[int64]bool{}
			var ids []int64
			mk := func(domainID int64, title string) lms.LiveClass {
				c, err := st.CreateLiveClass(ctx, domainID, lms.LiveClass{Title: title, Date: "2030-01-02", StartMinute: 540,
					EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: lms.Flag(len(ids)%3 != 2),
					Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
				if err != nil {
					t.Fatal(err)
				}
				if domainID == d.ID {
					byID[c.ID] = title
					published[c.ID] = c.Published == 1
					ids = append(ids, c.ID)
				}
				return c
			}
			for _, title := range titles {
				mk(other.ID, title) // never found from domain A
				mk(d.ID, title)
			}
			if !st.Postgres() {
				if err := st.IndexClassTitles(ctx, 1000); err != nil {
					t.Fatal(err)
				}
			}
			// A rename and a delete must reach the index.
			renamed, err := st.EditLiveClass(ctx, d.ID, ids[0], func(c *lms.LiveClass) ([]lms.Occurrence, error) {
				c.Title = "Geometry 101"
				return nil, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			byID[ids[0]] = renamed.Title
			if err := st.DeleteLiveClass(ctx, d.ID, ids[1]); err != nil {
				t.Fatal(err)
			}
			delete(byID, ids[1])
			ids = append(ids[:1], ids[2:]...)
			searches = append(searches, "geometry", "ALGEBRA 102")
			// The same titles again, not indexed on SQLite.
			for _, title := range titles {
				mk(d.ID, title)
			}

			for _, f := range []store.ClassFilter{{}, {PublishedOnly: true}} {
				for _, q := range searches {
					f.Search = q
					want := []int64{}
					for _, id := range ids {
						if strings.Contains(strings.ToLower(byID[id]), strings.ToLower(q)) && (published[id] || !f.PublishedOnly) {
							want = append(want, id)
						}
					}
					got, total, err := st.ListLiveClasses(ctx, d.ID, f, store.Page{Limit: 100})
					if err != nil {
						t.Fatalf("search %+v: %v", f, err)
					}
					gotIDs := idsOf(got, func(c lms.LiveClass) int64 { return c.ID })
					if fmt.Sprint(gotIDs) != fmt.Sprint(want) || total != int64(len(want)) {
						t.Errorf("search %+v: got %v (total %d), want %v", f, gotIDs, total, want)
					}
					// Pages of 2, up to one past the last: the same matches
					// in order, and the total of all of them on every page.
					for off := 0; off <= len(want)+2; off++ {
						got, total, err := st.ListLiveClasses(ctx, d.ID, f, store.Page{Offset: off, Limit: 2})
						if err != nil {
							t.Fatalf("search %+v at %d: %v", f, off, err)
						}
						page := want[min(off, len(want)):min(off+2, len(want))]
						gotIDs := idsOf(got, func(c lms.LiveClass) int64 { return c.ID })
						if fmt.Sprint(gotIDs) != fmt.Sprint(page) || total != int64(len(want)) {
							t.Errorf("search %+v at %d: got %v (total %d), want %v (total %d)", f, off, gotIDs, total, page, len(want))
						}
					}
				}
			}
		})
	}
}

// On PostgreSQL the trigram index of titles takes new titles straight in,
// not through GIN's pending list, which every search reads whole
// (migration 0041).
func TestPostgresTitleIndexHasNoPendingList(t *testing.T) {
	st := apitest.OpenStore(t, apitest.Postgres(t))
	opts, err := st.ClassTitleTrigramOptions(context.Background())
	if err != nil || !slices.Contains(strings.Split(opts, "\n"), "fastupdate=off") {
		t.Fatalf("options of the trigram index: %q, %v; want fastupdate=off", opts, err)
	}
}

// On PostgreSQL a search asks the trigram index for the window of its
// text that a sample of the titles says is cheapest, and the LIKE on the
// whole text decides (titlestats.go). The sample is taken again once it is
// older than its time to live, and the choice follows the titles.
func TestPostgresSearchAsksTheIndexForARareWindow(t *testing.T) {
	ctx := context.Background()
	st := apitest.OpenStore(t, apitest.Postgres(t))
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st.SetRecordClock(func() time.Time { return now })
	d, _, err := st.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	mk := func(title string) int64 {
		c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: title, Date: "2030-01-02", StartMinute: 540,
			EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1,
			Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	var want int64
	for n := 100; n < 200; n++ {
		if id := mk(fmt.Sprintf("Algebra %d", n)); n == 157 {
			want = id
		}
		mk(fmt.Sprintf("Geometry %d", n))
	}
	search := func(text string) {
		t.Helper()
		got, total, err := st.ListLiveClasses(ctx, d.ID, store.ClassFilter{Search: text}, store.Page{Limit: 10})
		if err != nil || total != 1 || len(got) != 1 || got[0].ID != want {
			t.Fatalf("search %q: %d classes (total %d), %v; want class %d alone", text, len(got), total, err, want)
		}
	}
	// The sample sees a title's trigrams as the index does.
	pool, _ := st.Pools()
	for _, title := range []string{"Algebra 157", "vol. 9 of a set", "a-b  c", "Week 12: (Review)"} {
		var shown string
		if err := pool.QueryRowContext(ctx, "SELECT array_to_string(public.show_trgm($1::text), '|')", title).Scan(&shown); err != nil {
			t.Fatal(err)
		}
		want := strings.Split(shown, "|")
		got := store.TitleTrigrams(title)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("trigrams of %q: %q, the index's %q", title, got, want)
		}
	}
	// The first search takes the sample, and one that has ended already
	// still takes it whole: an empty sample would stand for ten minutes.
	ended, cancel := context.WithCancel(ctx)
	cancel()
	st.TitleSearchWindow(ended, "Algebra 157")
	search("ALGEBRA 157")
	// "157" is in 2 titles of 200, "alg" in 100: the window ends in it.
	if w := st.TitleSearchWindow(ctx, "Algebra 157"); w != "a 157" {
		t.Errorf("window of %q: %q, want %q", "Algebra 157", w, "a 157")
	}
	if w := st.TitleSearchWindow(ctx, "Alg"); w != "alg" {
		t.Errorf("window of %q: %q, want the text", "Alg", w)
	}

	// "157" becomes the most common of its trigrams, but the sample is
	// kept until it is older than its time to live.
	for n := range 300 {
		mk(fmt.Sprintf("Physics 157%03d", n))
	}
	if w := st.TitleSearchWindow(ctx, "Algebra 157"); w != "a 157" {
		t.Errorf("window of %q with the sample kept: %q, want %q", "Algebra 157", w, "a 157")
	}
	now = now.Add(10 * time.Minute)
	// In the new one "157" is in 302 titles of 500: the whole text is
	// cheaper, its words narrowing the candidates to the one title.
	if w := st.TitleSearchWindow(ctx, "Algebra 157"); w != "algebra 157" {
		t.Errorf("window of %q after a new sample: %q, want the text", "Algebra 157", w)
	}
	search("algebra 157")
}

// On PostgreSQL a search whose window gives the trigram index something
// to look up, in a domain that holds a good share of the table, runs from
// a generic plan on the search connections, and finds what the planned
// search finds: the same matches, pages and totals. A small domain beside
// a large one keeps the search planned for its text (its own index may
// serve it better than the trigram index of every domain).
func TestPostgresGenericSearchFindsWhatThePlannedOneFinds(t *testing.T) {
	ctx := context.Background()
	st := apitest.OpenStore(t, apitest.Postgres(t))
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st.SetRecordClock(func() time.Time { return now })
	big, _, err := st.CreateDomain(ctx, "Big")
	if err != nil {
		t.Fatal(err)
	}
	small, _, err := st.CreateDomain(ctx, "Small")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	titles := map[int64]map[int64]string{big.ID: {}, small.ID: {}}
	published := map[int64]bool{}
	mk := func(domainID int64, title string) {
		c, err := st.CreateLiveClass(ctx, domainID, lms.LiveClass{Title: title, Date: "2030-01-02", StartMinute: 540,
			EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: lms.Flag(len(published)%3 != 2),
			Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		titles[domainID][c.ID] = title
		published[c.ID] = c.Published == 1
	}
	for n := 100; n < 200; n++ {
		mk(big.ID, fmt.Sprintf("Algebra %d", n))
		mk(big.ID, fmt.Sprintf("Geometry %d", n))
	}
	for n := 150; n < 160; n++ {
		mk(small.ID, fmt.Sprintf("Algebra %d", n))
	}
	// The first class renamed: its row's new version is written after the
	// others, so the matches of "ebra 10" and "ALGEBRA 1" are not read in
	// id order and must be sorted.
	first := slices.Min(slices.Collect(maps.Keys(titles[big.ID])))
	if _, err := st.EditLiveClass(ctx, big.ID, first, func(c *lms.LiveClass) ([]lms.Occurrence, error) {
		c.Title = "Algebra 1000"
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	titles[big.ID][first] = "Algebra 1000"
	conns := st.SearchConns()
	var mode string
	if err := conns.QueryRowContext(ctx, "SHOW plan_cache_mode").Scan(&mode); err != nil || mode != "force_generic_plan" {
		t.Fatalf("the search connections' plan_cache_mode: %q, %v", mode, err)
	}
	conns.SetMaxIdleConns(0) // so that a search there shows as a connection opened
	conns.SetMaxIdleConns(4)
	opened := func() int64 {
		t.Helper()
		s := conns.Stats()
		return int64(s.OpenConnections) + s.MaxIdleClosed
	}
	check := func(domainID int64, q string) {
		t.Helper()
		for _, f := range []store.ClassFilter{{Search: q}, {Search: q, PublishedOnly: true}} {
			var want []int64
			for id, title := range titles[domainID] {
				if strings.Contains(strings.ToLower(title), strings.ToLower(q)) && (published[id] || !f.PublishedOnly) {
					want = append(want, id)
				}
			}
			slices.Sort(want)
			for off := 0; off <= len(want)+1; off += 3 {
				got, total, err := st.ListLiveClasses(ctx, domainID, f, store.Page{Offset: off, Limit: 3})
				if err != nil {
					t.Fatalf("search %+v at %d: %v", f, off, err)
				}
				page := want[min(off, len(want)):min(off+3, len(want))]
				gotIDs := idsOf(got, func(c lms.LiveClass) int64 { return c.ID })
				if fmt.Sprint(gotIDs) != fmt.Sprint(page) || total != int64(len(want)) {
					t.Errorf("search %+v at %d: got %v (total %d), want %v (total %d)", f, off, gotIDs, total, page, len(want))
				}
			}
		}
	}
	if w := st.TitleSearchWindow(ctx, "Algebra 157"); w != "a 157" {
		t.Fatalf("window of %q: %q, want %q", "Algebra 157", w, "a 157")
	}
	base := opened()
	// 10 classes of 210: planned for the text, not on the search
	// connections.
	for _, q := range []string{"Algebra 157", "algebra 15"} {
		check(small.ID, q)
	}
	if n := opened(); n != base {
		t.Errorf("a search of the small domain went to the search connections (%d connections against %d)", n, base)
	}
	// 200 of 210: a generic plan.
	for _, q := range []string{"Algebra 157", "ALGEBRA 1", "geometry 19", "Geometry 1999", "ebra 10"} {
		check(big.ID, q)
	}
	if n := opened(); n == base {
		t.Error("no search of the big domain went to the search connections")
	}
	// Every search above had few enough matches for the store to sort and
	// count them; with more than 5, PostgreSQL sorts and counts, on both
	// kinds of plan.
	store.SetPGSortInGo(t, 5)
	for _, q := range []string{"Algebra 157", "algebra 15"} {
		check(small.ID, q)
	}
	for _, q := range []string{"Algebra 157", "ALGEBRA 1", "geometry 19", "Geometry 1999", "ebra 10"} {
		check(big.ID, q)
	}
}

// A title search waits for a place among the few that run at once (the
// gate of searchInTurn), on either database; one whose request ends
// meanwhile gives up with the request's error, and a waiting one runs once
// a place is free.
func TestSearchesWaitForAPlace(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { testSearchesWaitForAPlace(t, b) })
	}
}

func testSearchesWaitForAPlace(t *testing.T, b apitest.Backend) {
	ctx := context.Background()
	st := apitest.OpenStore(t, b)
	d, _, err := st.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "Algebra 1", Date: "2030-01-02", StartMinute: 540,
		EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1,
		Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
	if err != nil {
		t.Fatal(err)
	}
	search := func(ctx context.Context) error {
		got, total, err := st.ListLiveClasses(ctx, d.ID, store.ClassFilter{Search: "algebra"}, store.Page{Limit: 10})
		if err == nil && (total != 1 || len(got) != 1 || got[0].ID != c.ID) {
			return fmt.Errorf("%d classes (total %d), want class %d alone", len(got), total, c.ID)
		}
		return err
	}
	// A listing without a search text does not pass the gate.
	giveBack := st.TakeSearchPlaces()
	if _, _, err := st.ListLiveClasses(ctx, d.ID, store.ClassFilter{}, store.Page{Limit: 10}); err != nil {
		t.Fatalf("listing with every search place taken: %v", err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := search(ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("search with every place taken, request ended: %v, want context.Canceled", err)
	}
	waiting := make(chan error)
	go func() { waiting <- search(ctx) }()
	// It waits at the gate until a place is given back.
	for !strings.Contains(goroutines(), "store.gate.enter") {
		select {
		case err := <-waiting:
			t.Fatalf("search ran with every place taken: %v", err)
		default:
			runtime.Gosched()
		}
	}
	giveBack()
	if err := <-waiting; err != nil {
		t.Fatalf("search once the places are given back: %v", err)
	}
}

// goroutines returns the stacks of every goroutine.
func goroutines() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
