package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// On SQLite the title index is kept behind the table (migration 0038,
// titleindex.go): classes above indexed_upto are not in it yet. A search
// must give the same classes whatever the indexer's progress.

// titleSearches are searched in the tests below: texts of 3 characters
// and more use the index; shorter ones do not.
var titleSearches = []string{"algebra", "ALGEBRA 1", "élodie", "geometry", "straße", "σίσυφος", "授業", "al", "xyz",
	"class", "new", "renamed", "gebra 10"}

// classTitles is a domain's classes by id, as the test expects them.
type classTitles map[int64]string

// checkSearches checks that each search finds, in domainID, the classes of
// want whose lowered title contains the lowered text, in id order, with
// their total.
func checkSearches(t *testing.T, st *store.Store, domainID int64, want classTitles, when string) {
	t.Helper()
	ctx := context.Background()
	ids := make([]int64, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, q := range titleSearches {
		match := []int64{}
		for _, id := range ids {
			if strings.Contains(strings.ToLower(want[id]), strings.ToLower(q)) {
				match = append(match, id)
			}
		}
		got, total, err := st.ListLiveClasses(ctx, domainID, store.ClassFilter{Search: q}, store.Page{Limit: 1000})
		if err != nil {
			t.Fatalf("%s: search %q: %v", when, q, err)
		}
		gotIDs := idsOf(got, func(c lms.LiveClass) int64 { return c.ID })
		if fmt.Sprint(gotIDs) != fmt.Sprint(match) || total != int64(len(match)) {
			t.Errorf("%s: search %q: got %v (total %d), want %v", when, q, gotIDs, total, match)
		}
		// The count alone (a Limit of 0 lists every match).
		all, total, err := st.ListLiveClasses(ctx, domainID, store.ClassFilter{Search: q}, store.Page{})
		if err != nil || len(all) != len(match) || total != int64(len(match)) {
			t.Errorf("%s: search %q, no limit: %d classes (total %d, %v), want %d", when, q, len(all), total, err, len(match))
		}
	}
}

func newClass(title string) lms.LiveClass {
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	return lms.LiveClass{Title: title, Date: "2030-01-02", StartMinute: 540, EndMinute: 600, TimezoneName: "UTC",
		Currency: "usd", Published: 1, Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}}
}

func createClasses(t testing.TB, st *store.Store, domainID int64, want classTitles, titles ...string) []int64 {
	t.Helper()
	var ids []int64
	for _, title := range titles {
		c, err := st.CreateLiveClass(context.Background(), domainID, newClass(title))
		if err != nil {
			t.Fatal(err)
		}
		if want != nil {
			want[c.ID] = title
		}
		ids = append(ids, c.ID)
	}
	return ids
}

func renameClass(t testing.TB, st *store.Store, domainID, id int64, want classTitles, title string) {
	t.Helper()
	if _, err := st.EditLiveClass(context.Background(), domainID, id, func(c *lms.LiveClass) ([]lms.Occurrence, error) {
		c.Title = title
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if want != nil {
		want[id] = title
	}
}

func deleteClass(t testing.TB, st *store.Store, domainID, id int64, want classTitles) {
	t.Helper()
	if err := st.DeleteLiveClass(context.Background(), domainID, id); err != nil {
		t.Fatal(err)
	}
	delete(want, id)
}

// checkIndex checks the SQLite title index against the table (see
// CheckClassTitleIndex) and that indexed_upto is wantUpto, or the highest
// class id when wantUpto is -1 (the index is complete).
func checkIndex(t *testing.T, st *store.Store, wantUpto int64, when string) {
	t.Helper()
	ctx := context.Background()
	upto, maxID, err := st.ClassTitleIndexState(ctx)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	full := wantUpto == -1
	if full {
		wantUpto = maxID
	}
	if upto != wantUpto {
		t.Errorf("%s: indexed_upto %d, want %d (highest id %d)", when, upto, wantUpto, maxID)
	}
	if err := st.CheckClassTitleIndex(ctx, full && upto == maxID); err != nil {
		t.Errorf("%s: %v", when, err)
	}
}

// openAt opens and migrates a store on b's database at url (PostgreSQL)
// or in dir (SQLite), closed when t ends unless closed before.
func openAt(t *testing.T, url, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{DatabaseURL: url, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

// checkReopened closes st, opens dir again with the indexer held, and
// checks that the index is complete and agrees with the searches.
func checkReopened(t *testing.T, st *store.Store, dir string, domainID int64, want classTitles, when string) {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openAt(t, "", dir)
	st.HoldTitleIndex()
	checkIndex(t, st, -1, when)
	checkSearches(t, st, domainID, want, when)
}

// sqliteDomain opens a SQLite store in dir and creates a domain in it.
func sqliteDomain(t *testing.T, dir string) (*store.Store, store.Domain) {
	t.Helper()
	st := openAt(t, "", dir)
	d, _, err := st.CreateDomain(context.Background(), "A")
	if err != nil {
		t.Fatal(err)
	}
	return st, d
}

func TestClassTitleSearchBehindTheIndex(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			sqlite := b.URL == ""
			ctx := context.Background()
			url, dir := apitest.IsolatedURL(t, b.URL), t.TempDir()
			st := openAt(t, url, dir)
			st.HoldTitleIndex()
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			other, _, err := st.CreateDomain(ctx, "B")
			if err != nil {
				t.Fatal(err)
			}
			want := classTitles{}
			titles := []string{"Algebra 101", "ALGEBRA 102", "Linear algebra", "Élodie's class", "Straße", "ΣΊΣΥΦΟΣ",
				"短い授業", "Al", "Geometry"}
			// Indexed: the classes created before the pass.
			indexed := createClasses(t, st, d.ID, want, titles...)
			createClasses(t, st, other.ID, nil, titles...) // never found from domain A
			if sqlite {
				checkIndex(t, st, 0, "before any pass")
				if err := st.IndexClassTitles(ctx, 4); err != nil {
					t.Fatal(err)
				}
				checkIndex(t, st, -1, "after the first pass")
			}
			checkSearches(t, st, d.ID, want, "all indexed")

			// Not indexed: created after the pass.
			fresh := createClasses(t, st, d.ID, want, "New algebra 103", "new élodie", "A new class", "xy", "Σίσυφος new")
			createClasses(t, st, other.ID, nil, "New algebra 103", "new élodie")
			if sqlite {
				upto, _, _ := st.ClassTitleIndexState(ctx)
				checkIndex(t, st, upto, "with rows above indexed_upto")
				if upto >= fresh[0] {
					t.Fatalf("indexed_upto %d reaches the new classes (%v)", upto, fresh)
				}
			}
			checkSearches(t, st, d.ID, want, "rows above indexed_upto")

			// Renames and deletes on both sides of indexed_upto, and a
			// rename to the same title.
			renameClass(t, st, d.ID, indexed[0], want, "Renamed geometry")
			renameClass(t, st, d.ID, indexed[2], want, want[indexed[2]])
			renameClass(t, st, d.ID, fresh[0], want, "Renamed fresh algebra")
			renameClass(t, st, d.ID, fresh[1], want, "NEW ÉLODIE renamed twice")
			renameClass(t, st, d.ID, fresh[1], want, "new élodie renamed again")
			deleteClass(t, st, d.ID, indexed[1], want)
			deleteClass(t, st, d.ID, fresh[2], want)
			if sqlite {
				upto, _, _ := st.ClassTitleIndexState(ctx)
				checkIndex(t, st, upto, "after renames and deletes")
			}
			checkSearches(t, st, d.ID, want, "after renames and deletes")

			// The indexer catches up; the index then agrees with the
			// table, and the same changes again on indexed rows.
			if sqlite {
				if err := st.IndexClassTitles(ctx, 2); err != nil {
					t.Fatal(err)
				}
				checkIndex(t, st, -1, "caught up")
			}
			checkSearches(t, st, d.ID, want, "caught up")
			renameClass(t, st, d.ID, fresh[0], want, "Algebra again")
			deleteClass(t, st, d.ID, fresh[3], want)
			if sqlite {
				checkIndex(t, st, -1, "caught up, renamed and deleted")
			}
			checkSearches(t, st, d.ID, want, "caught up, renamed and deleted")

			// Left behind at Close (the indexer is held): still found
			// after reopening, and indexed by the next pass.
			createClasses(t, st, d.ID, want, "Last algebra", "last class")
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			st = openAt(t, url, dir)
			st.HoldTitleIndex()
			checkSearches(t, st, d.ID, want, "reopened")
			if sqlite {
				if err := st.IndexClassTitles(ctx, 5000); err != nil {
					t.Fatal(err)
				}
				checkIndex(t, st, -1, "reopened, caught up")
			}
			checkSearches(t, st, d.ID, want, "reopened, caught up")
		})
	}
}

// The indexer runs by itself: after many classes at once, a second after
// a few, and at Close.
func TestClassTitleIndexerCatchesUp(t *testing.T) {
	dir := t.TempDir()
	st, d := sqliteDomain(t, dir)
	want := classTitles{}
	titles := make([]string, 300)
	for i := range titles {
		titles[i] = fmt.Sprintf("Class %d", i)
	}
	createClasses(t, st, d.ID, want, titles...)
	waitIndexed(t, st, "after 300 classes", 5*time.Second)
	createClasses(t, st, d.ID, want, "Algebra", "Geometry")
	waitIndexed(t, st, "after 2 classes", 5*time.Second)

	createClasses(t, st, d.ID, want, "Algebra at close", "new class at close")
	checkReopened(t, st, dir, d.ID, want, "after Close")
}

// Concurrent creates, renames, deletes and searches with the indexer
// running (run with -race): searches see every committed class, and the
// index ends up agreeing with the table.
func TestClassTitleIndexerConcurrent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, d := sqliteDomain(t, dir)
	const writers, perWriter = 8, 80
	var mu sync.Mutex
	want := classTitles{}
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				title := fmt.Sprintf("Writer %d class %d", w, i)
				c, err := st.CreateLiveClass(ctx, d.ID, newClass(title))
				if err != nil {
					errs <- err
					return
				}
				// A search right after the commit finds the class,
				// indexed or not.
				got, _, err := st.ListLiveClasses(ctx, d.ID, store.ClassFilter{Search: title}, store.Page{Limit: 10})
				if err != nil || len(got) != 1 || got[0].ID != c.ID {
					errs <- fmt.Errorf("search %q right after creating it: %d classes, %v", title, len(got), err)
					return
				}
				switch i % 10 {
				case 3:
					title = fmt.Sprintf("Renamed writer %d class %d", w, i)
					if _, err := st.EditLiveClass(ctx, d.ID, c.ID, func(c *lms.LiveClass) ([]lms.Occurrence, error) {
						c.Title = title
						return nil, nil
					}); err != nil {
						errs <- err
						return
					}
				case 7:
					if err := st.DeleteLiveClass(ctx, d.ID, c.ID); err != nil {
						errs <- err
						return
					}
					continue
				}
				mu.Lock()
				want[c.ID] = title
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkSearches(t, st, d.ID, want, "after the writers")
	checkReopened(t, st, dir, d.ID, want, "reopened")
}

// Classes a stopped process left out of the index are indexed once the
// next process has migrated, without waiting for a class to be created.
func TestClassTitleIndexResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	st, d := sqliteDomain(t, dir)
	st.HoldTitleIndex() // as a process killed before its pass
	want := classTitles{}
	createClasses(t, st, d.ID, want, "Algebra", "Geometry", "History")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openAt(t, "", dir)
	waitIndexed(t, st, "resumed", 5*time.Second)
	checkSearches(t, st, d.ID, want, "resumed")
}

// waitIndexed waits until the indexer has indexed every class, then
// checks the index (checkIndex); it fails after within.
func waitIndexed(t *testing.T, st *store.Store, when string, within time.Duration) {
	t.Helper()
	waitUntil(t, within, func() (bool, string) {
		upto, maxID, err := st.ClassTitleIndexState(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return upto == maxID, fmt.Sprintf("%s: indexed_upto %d, highest id %d", when, upto, maxID)
	})
	checkIndex(t, st, -1, when)
}

// waitUntil calls check until it reports done; it fails after within
// with what check said last.
func waitUntil(t *testing.T, within time.Duration, check func() (done bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		done, state := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %v", state, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// indexInPasses creates n classes titled "<word> <word> ... <i>" in
// domainID and indexes them a few at a time, one segment per pass, as an
// index built over time is. The repeated words make long doclists, which
// fill leaf pages of their own.
func indexInPasses(t *testing.T, st *store.Store, domainID int64, want classTitles, n, perPass int) {
	t.Helper()
	words := []string{"Algebra", "Biology", "Chemistry", "Geometry"}
	for i := 0; i < n; i += perPass {
		var titles []string
		for j := i; j < min(n, i+perPass); j++ {
			titles = append(titles, fmt.Sprintf("%s%d", strings.Repeat(words[j%len(words)]+" ", 6), j))
		}
		createClasses(t, st, domainID, want, titles...)
		if err := st.IndexClassTitles(context.Background(), perPass); err != nil {
			t.Fatal(err)
		}
	}
}

// segments returns the sizes of the title index's segments, and checks
// that they add up to its leaf pages.
func segments(t *testing.T, st *store.Store) []int64 {
	t.Helper()
	// One snapshot: the indexer may be merging meanwhile.
	sizes, leaves, err := st.ClassTitleSegmentsAndLeafPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, n := range sizes {
		sum += n
	}
	if sum != leaves {
		t.Errorf("segments %v: %d pages, the index has %d leaf pages", sizes, sum, leaves)
	}
	return sizes
}

// Merging the index's segments into one, a step at a time, with classes
// created, indexed, renamed and deleted between the steps: searches are
// the same before, during and after, and the index ends as one segment
// that agrees with the table.
func TestClassTitleIndexMerge(t *testing.T) {
	ctx := context.Background()
	st, d := sqliteDomain(t, t.TempDir())
	st.HoldTitleIndex()
	want := classTitles{}
	indexInPasses(t, st, d.ID, want, 400, 10)
	if n := len(segments(t, st)); n < 4 {
		t.Fatalf("%d segments after 40 passes, want several", n)
	}
	checkSearches(t, st, d.ID, want, "before merging")

	steps, err := st.MergeClassTitleSteps(ctx, true, 1)
	if err != nil || steps != 1 {
		t.Fatalf("first merge step: %d steps, %v", steps, err)
	}
	checkSearches(t, st, d.ID, want, "after the first step")
	// A pass, a rename and a delete in the middle of the merge.
	ids := createClasses(t, st, d.ID, want, "Algebra during the merge", "History during the merge")
	if err := st.IndexClassTitles(ctx, 10); err != nil {
		t.Fatal(err)
	}
	renameClass(t, st, d.ID, ids[0], want, "Geometry renamed during the merge")
	for id := range want {
		if id != ids[0] && id != ids[1] {
			deleteClass(t, st, d.ID, id, want)
			break
		}
	}
	checkSearches(t, st, d.ID, want, "in the middle of the merge")

	if _, err := st.MergeClassTitleSteps(ctx, false, 0); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, st, -1, "merge finished")
	checkSearches(t, st, d.ID, want, "merge finished")
	// The merge went on with the segments it started with; those the
	// writes above made are merged by the next one.
	if sizes := segments(t, st); len(sizes) < 2 {
		t.Errorf("segments after the merge: %v, want the writes' own besides", sizes)
	}
	if _, err := st.MergeClassTitleSteps(ctx, true, 0); err != nil {
		t.Fatal(err)
	}
	if sizes := segments(t, st); len(sizes) != 1 {
		t.Errorf("segments after the second merge: %v, want one", sizes)
	}
	checkIndex(t, st, -1, "merged")
	checkSearches(t, st, d.ID, want, "merged")
	// Nothing left to do.
	if steps, err := st.MergeClassTitleSteps(ctx, true, 0); err != nil || steps != 0 {
		t.Errorf("merging a merged index: %d steps, %v", steps, err)
	}
}

// The indexer merges the segments it finds when the store opens; those
// its passes add once they hold 1/TitleMergeShare of the largest, not
// before; and, once the creates pause, those that hold 1/TitleQuietShare.
func TestClassTitleIndexerMerges(t *testing.T) {
	dir := t.TempDir()
	st, d := sqliteDomain(t, dir)
	st.HoldTitleIndex() // so that the passes below are the test's
	want := classTitles{}
	indexInPasses(t, st, d.ID, want, 1000, 50)
	// FTS5 merges each level at 4 segments (migration 0043): 20 passes
	// leave a few levels' segments.
	if n := len(segments(t, st)); n < 2 {
		t.Fatalf("%d segments after 20 passes, want several", n)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openAt(t, "", dir)
	waitSegments(t, st, "after opening", 10*time.Second)
	checkSearches(t, st, d.ID, want, "merged after opening")
	merged := segments(t, st)[0]
	st.SetTitleQuiet(time.Hour) // no merge for a pause until the end

	// Each round is a pass at once (64 classes), a segment of its own.
	round := func(r int) {
		titles := make([]string, 64)
		for i := range titles {
			titles[i] = fmt.Sprintf("History %d-%d", r, i)
		}
		createClasses(t, st, d.ID, want, titles...)
		waitIndexed(t, st, "a pass", 5*time.Second)
	}
	// largestAndRest returns the largest segment's pages and the others'.
	largestAndRest := func() (largest, rest int64) {
		for _, n := range segments(t, st) {
			largest, rest = max(largest, n), rest+min(largest, n)
		}
		return largest, rest
	}
	round(0)
	time.Sleep(100 * time.Millisecond) // the merge, if one were due, would start at once
	if largest, rest := largestAndRest(); largest != merged || rest == 0 || rest*store.TitleMergeShare >= largest {
		t.Fatalf("after a pass of 64 classes: %d pages in the largest segment and %d in the others, want %d and a few",
			largest, rest, merged)
	}
	// More rounds: once the small segments hold 1/TitleMergeShare of the
	// pages, the indexer merges them.
	r := 1
	for ; ; r++ {
		if r > 40 {
			t.Fatalf("no merge after 40 passes of 64 classes")
		}
		round(r)
		if largest, rest := largestAndRest(); rest == 0 || rest*store.TitleMergeShare >= largest {
			break
		}
	}
	waitSegments(t, st, "after the rounds", 10*time.Second)
	checkSearches(t, st, d.ID, want, "merged after passes")

	// Two rounds more leave small segments, under 1/TitleMergeShare but
	// over 1/TitleQuietShare of the largest: they stay while the creates
	// may go on, and are merged once they have paused.
	round(r + 1)
	round(r + 2)
	time.Sleep(100 * time.Millisecond)
	largest, rest := largestAndRest()
	if rest == 0 || rest*store.TitleMergeShare >= largest || rest*store.TitleQuietShare < largest {
		t.Fatalf("after two passes of 64 classes: %d pages in the largest segment and %d in the others, want 1/%d to 1/%d",
			largest, rest, store.TitleQuietShare, store.TitleMergeShare)
	}
	st.SetTitleQuiet(50 * time.Millisecond)
	round(r + 3) // its pass starts the shorter wait
	waitSegments(t, st, "after the creates paused", 10*time.Second)
	checkSearches(t, st, d.ID, want, "merged after the pause")
}

// waitSegments waits until the title index is one segment; it fails
// after within.
func waitSegments(t *testing.T, st *store.Store, when string, within time.Duration) {
	t.Helper()
	waitUntil(t, within, func() (bool, string) {
		sizes := segments(t, st)
		return len(sizes) == 1, fmt.Sprintf("%s: segments %v, want one", when, sizes)
	})
}

// mergedTitleIndex returns a SQLite store whose indexer is held, with n
// classes indexed in passes of perPass, then merged into one segment.
func mergedTitleIndex(t *testing.T, n, perPass int) (*store.Store, store.Domain, classTitles) {
	t.Helper()
	st, d := sqliteDomain(t, t.TempDir())
	st.HoldTitleIndex() // so that the passes are the test's
	want := classTitles{}
	indexInPasses(t, st, d.ID, want, n, perPass)
	if _, err := st.MergeClassTitleSteps(context.Background(), true, 0); err != nil {
		t.Fatal(err)
	}
	return st, d, want
}

// The title index writes leaf pages of about 1,000 bytes (migration 0044),
// so that a search walks fewer entries to the rows it jumps to, and
// searches find the same classes through them.
func TestClassTitleIndexSmallPages(t *testing.T) {
	st, d, want := mergedTitleIndex(t, 1200, 400)
	sizes := segments(t, st)
	largest, err := st.ClassTitleLargestLeaf(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// FTS5 ends a page at the first entry past the size, so a page may
	// go a few bytes over it.
	// The same titles fill 25 pages of FTS5's default size.
	if len(sizes) != 1 || sizes[0] < 80 || largest > 1100 {
		t.Errorf("merged index: segments %v of pages up to %d bytes, want one of 80 pages or more, each about 1,000 bytes", sizes, largest)
	}
	checkIndex(t, st, -1, "merged")
	checkSearches(t, st, d.ID, want, "merged")
}

// Passes of a few classes each, as an index grown through the API gets,
// leave a few segments besides the largest, not a dozen: FTS5 merges a
// level's segments once it has 4 (migration 0043). Those merges climb the
// levels as a ladder, so the largest segment's level, and a rewrite of
// it, is reached only after 4, 16, 64... passes: at most twice in 40.
func TestClassTitleIndexFewSegmentsAfterSmallPasses(t *testing.T) {
	st, d, want := mergedTitleIndex(t, 800, 200) // one large segment, as the indexer leaves it
	largest, rewrites := segments(t, st)[0], 0
	for pass := range 40 {
		indexInPasses(t, st, d.ID, want, 2, 2)
		sizes := segments(t, st)
		if len(sizes) > 6 {
			t.Errorf("segments after %d passes of 2 classes: %v, want at most 6", pass+1, sizes)
		}
		if n := slices.Max(sizes); n != largest {
			t.Logf("pass %d: the largest segment %d to %d pages", pass+1, largest, n)
			largest, rewrites = n, rewrites+1
		}
	}
	if rewrites > 2 {
		t.Errorf("the largest segment rewritten %d times in 40 passes of 2 classes, want at most 2", rewrites)
	}
	checkIndex(t, st, -1, "after the small passes")
	checkSearches(t, st, d.ID, want, "after the small passes")
}

// Under a stream of creates the indexer runs a pass at most every
// TitlePassEvery, each taking what came in meanwhile, rather than one
// every 64 classes; and it still indexes every class.
func TestTitlePassesPacedUnderWrites(t *testing.T) {
	ctx := context.Background()
	st, d := sqliteDomain(t, t.TempDir())
	const writers, perWriter = 8, 250 // 2,000 classes: 31 passes of 64
	began := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				if _, err := st.CreateLiveClass(ctx, d.ID, newClass(fmt.Sprintf("Writer %d class %d", w, i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A pass may start at the first kick, then one every TitlePassEvery,
	// and the one that takes the last classes may end the stream.
	passes := st.TitlePasses()
	if most := int64(took/store.TitlePassEvery) + 2; passes > most {
		t.Errorf("%d passes while %d classes were created in %v; want at most %d (one each %v)",
			passes, writers*perWriter, took.Round(time.Millisecond), most, store.TitlePassEvery)
	}
	waitIndexed(t, st, "after the stream", 10*time.Second)
	t.Logf("%d classes in %v, %d passes", writers*perWriter, took.Round(time.Millisecond), passes)
}
