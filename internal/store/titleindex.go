package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The SQLite title index is kept behind the table (migration 0038): new
// classes are left out of it, and the indexer adds them in batches, so
// creating a class does not write an FTS5 segment of its own (FTS5 writes
// one at every savepoint release, and the group writer gives each write a
// savepoint). A search reads the domain's rows not yet indexed by id
// range (ListLiveClasses), so its results do not depend on how far the
// indexer has got.
//
// The indexer runs a pass when titleIndexAfter classes have been created
// since the last pass began (but not sooner than titlePassEvery after
// it), titleIndexDelay after the first of them if there are fewer, and at
// Close. A pass indexes every row above
// indexed_upto, at most titleIndexBatch rows per write transaction,
// through the store's single writer (s.tx), so it is serialized with the
// triggers and never holds the writer long.
//
// It wakes only on a class creation (wrote), at the end of Migrate
// (resumeTitleIndex: for the classes a stopped process did not index, and
// to look at the index's segments once), titleQuiet after its last pass
// (below), and at Close: a store that is not written to does nothing in
// the background after those first two looks.
//
// Each pass writes a segment, and FTS5 merges segments only a few at a
// time (automerge), so an index built over time is a dozen segments, and a
// search reads every one of them for each trigram: twice the CPU of a
// search of one segment at 100,000 classes (docs/performance.md). FTS5
// merges a level's segments at once when it has 4 (crisismerge, migration
// 0043): passes of a few rows, whose automerge work is as small as they
// are, would otherwise leave up to 15 segments of a page each. After a
// pass, when the smaller segments together hold at least
// 1/titleMergeShare of the pages of the largest, the indexer merges them
// all into one, titleMergePages pages per write transaction, so a merge
// never holds the writer long. The largest segment then grows by that
// share before the next merge, so each title is rewritten a bounded
// number of times however large the index grows (about titleMergeShare+1
// under a steady stream of creates).
//
// Once no pass has run for titleQuiet, the indexer looks again with the
// smaller share 1/titleQuietShare: an index left in a few segments by a
// burst of creates is then merged into one while the writer has nothing
// else to do, and the searches that follow seek each trigram once instead
// of once a segment. A trickle of creates, a quiet period after each, then
// rewrites each title at most about titleQuietShare+1 times.

const (
	// titleIndexAfter is how many created classes start a pass at once.
	// It bounds the rows a search reads without the index, at about 2 µs
	// each (the folded LIKE calls into Go): 256 of them doubled a search
	// of 2,000 classes (0.6 to 1.1-1.35 ms, BenchmarkListLiveClasses), while
	// passes of 64 rows instead of 256 did not change the cost of creating
	// a class beyond the benchmark's noise (BenchmarkCreateLiveClass).
	titleIndexAfter = 64
	// titleIndexDelay is how long after the first class created since
	// the last pass the next one runs, however few there were.
	titleIndexDelay = time.Second
	// titlePassEvery is the least time from one pass's start to the
	// next's: under a steady stream of creates, passes take what came in
	// that time (at 5,000 classes a second, 500 rows) instead of a
	// transaction, a segment and a look at the segments every 64 classes.
	titlePassEvery = 100 * time.Millisecond
	// titleIndexBatch bounds the rows indexed in one write transaction:
	// about 20 ms of the writer at 200,000 classes.
	titleIndexBatch = 1000
	// titleMergeShare: the index's segments are merged into one when
	// those but the largest hold 1/titleMergeShare of its pages. Each
	// merge rewrites the largest segment, so under a steady stream of
	// creates every title is written about titleMergeShare+1 times: with
	// 8, the merges were a tenth of the server's CPU under schedule at
	// 100,000 classes; with 2, schedule ran about 10 % faster (the median
	// of nine alternated runs on a quiet machine), and a search while
	// classes are created (more small segments to read until the next
	// merge) about 6 % slower (docs/performance.md, forty-eighth pass).
	titleMergeShare = 2
	// titleQuietShare is titleMergeShare once the creates have paused.
	titleQuietShare = 64
	// titleQuiet is how long after a pass, with no pass since, the
	// indexer looks at the segments with titleQuietShare.
	titleQuiet = 2 * time.Second
	// titleMergePages bounds the pages one merge step writes, in one
	// write transaction (FTS5's 'merge' command). A step shares its
	// transaction with the writes grouped with it, which wait for its
	// commit: with 256 pages a step, the p99 of creating classes at
	// 100,000 classes, while the index merged, was 31-38 ms; with 64,
	// 18-19 ms, at the same CPU per class (docs/performance.md).
	titleMergePages = 64
)

// titleIndexer indexes the live classes' titles behind the table.
type titleIndexer struct {
	s *Store
	// pending counts the classes created since the last pass began.
	pending atomic.Int64
	kick    chan struct{} // capacity 1: a pass may be due
	stop    chan struct{} // closed by close
	done    chan struct{} // closed when loop has returned
	once    sync.Once
	err     error     // the last pass's, read by close after done
	last    time.Time // when the last pass began; the loop's own
	// passes counts the passes begun with classes pending.
	passes atomic.Int64
	// quiet is titleQuiet, in nanoseconds; tests set it.
	quiet atomic.Int64
}

func newTitleIndexer(s *Store) *titleIndexer {
	x := &titleIndexer{s: s, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	x.quiet.Store(int64(titleQuiet))
	go x.loop()
	return x
}

// wrote notes that n live classes were created (committed). It is cheap:
// the indexer goroutine is woken only by the first write after a pass
// and by the one that makes titleIndexAfter.
func (x *titleIndexer) wrote(n int64) {
	if x == nil || n <= 0 {
		return
	}
	after := x.pending.Add(n)
	before := after - n
	if before == 0 || (before < titleIndexAfter && after >= titleIndexAfter) {
		x.wake()
	}
}

// wake wakes the indexer's loop, unless a wake is already waiting. With no
// class pending, the loop looks at the index's segments at once (a pass
// of nothing, then merge).
func (x *titleIndexer) wake() {
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// close runs a last pass, if classes were created since the last one,
// and stops the indexer. It returns that pass's error, if any.
func (x *titleIndexer) close() error {
	x.once.Do(func() { close(x.stop) })
	<-x.done
	return x.err
}

func (x *titleIndexer) loop() {
	defer close(x.done)
	var due <-chan time.Time // the delayed pass, when one is waiting
	var dueAt time.Time
	// at sets the delayed pass for t, unless one is due before.
	at := func(t time.Time) {
		if due == nil || t.Before(dueAt) {
			due, dueAt = time.After(time.Until(t)), t
		}
	}
	var quiet <-chan time.Time // the look once the creates have paused
	pass := func() {
		due = nil
		if x.err = x.pass(); x.err == nil {
			x.err = x.merge(titleMergeShare)
		}
		if x.err != nil {
			at(time.Now().Add(titleIndexDelay)) // try again
			return
		}
		quiet = time.After(time.Duration(x.quiet.Load()))
	}
	for {
		select {
		case <-quiet:
			quiet = nil
			if x.pending.Load() == 0 { // else a pass is to come, and looks again after it
				if x.err = x.merge(titleQuietShare); x.err != nil {
					at(time.Now().Add(titleIndexDelay))
				}
			}
		case <-x.kick:
			switch n := x.pending.Load(); {
			case n == 0:
				pass()
			case n < titleIndexAfter:
				at(time.Now().Add(titleIndexDelay))
			case time.Since(x.last) >= titlePassEvery:
				pass()
			default:
				at(x.last.Add(titlePassEvery))
			}
		case <-due:
			pass()
		case <-x.stop:
			if x.pending.Load() > 0 {
				x.err = x.pass()
			}
			return
		}
	}
}

// pass indexes every row above indexed_upto, one batch per transaction.
func (x *titleIndexer) pass() error {
	if x.pending.Swap(0) > 0 {
		x.passes.Add(1)
	}
	x.last = time.Now()
	ctx := context.Background()
	for {
		more, err := x.s.indexTitles(ctx, titleIndexBatch)
		if err != nil {
			x.pending.Add(1) // so that close tries again
			return err
		}
		if !more {
			return nil
		}
	}
}

// merge merges the index's segments into one when mergeDue says so for
// share, a step at a time. Between steps it runs the passes that fall
// due, and it stops at Close; a merge left unfinished is started again
// after the next pass.
func (x *titleIndexer) merge(share int64) error {
	ctx := context.Background()
	sizes, err := titleSegments(ctx, x.s.read())
	if err != nil || !mergeDue(sizes, share) {
		return err
	}
	for first := true; ; first = false {
		select {
		case <-x.stop:
			return nil
		default:
		}
		if x.pending.Load() >= titleIndexAfter && time.Since(x.last) >= titlePassEvery {
			if err := x.pass(); err != nil {
				return err
			}
		}
		worked, err := x.s.mergeTitles(ctx, first)
		if err != nil || !worked {
			return err
		}
	}
}

// mergeDue reports whether an index of segments of these sizes (any
// measure proportional to their pages) should be merged into one: when
// the segments other than the largest hold at least 1/share of its size.
func mergeDue(sizes []int64, share int64) bool {
	if len(sizes) < 2 {
		return false
	}
	var largest, all int64
	for _, n := range sizes {
		largest = max(largest, n)
		all += n
	}
	return (all-largest)*share >= largest
}

// titleSegments returns the size of each segment of the title index, in
// leaf pages. The segments are those live_classes_title_idx names (one row
// per leaf page that starts a term: too few to measure a segment by, as a
// long doclist fills pages of its own). FTS5 stores leaf page p of
// segment s as the live_classes_title_data row (s << 37) + p, pages
// numbered without gaps (its file format, fts5_index.c), so a segment's
// lowest and highest rows there give its size by two seeks.
func titleSegments(ctx context.Context, d db) ([]int64, error) {
	var sizes []int64
	err := scanRows(ctx, d, `SELECT
			(SELECT MAX(id) FROM live_classes_title_data WHERE id BETWEEN g.segid << 37 AND (g.segid << 37) + 2147483647) -
			(SELECT MIN(id) FROM live_classes_title_data WHERE id BETWEEN g.segid << 37 AND (g.segid << 37) + 2147483647) + 1
		FROM (SELECT DISTINCT segid FROM live_classes_title_idx) g`, nil, func(r *sql.Rows) error {
		var n int64
		sizes = append(sizes, n)
		return r.Scan(&sizes[len(sizes)-1])
	})
	return sizes, err
}

// mergeTitles runs one step of merging every segment of the title index
// into one, in a write transaction, and reports whether it did any work:
// when it did not, the index is one segment. The first step of a merge
// puts every segment on one level (FTS5's 'merge' with a negative page
// count); the next ones go on with that merge even if passes add segments
// meanwhile (a positive count), as FTS5's documentation advises.
func (s *Store) mergeTitles(ctx context.Context, first bool) (worked bool, err error) {
	pages := titleMergePages
	if first {
		pages = -pages
	}
	err = s.tx(ctx, func(tx db) error {
		// FTS5 tells that a merge did something by the changes it made:
		// two or more.
		var before, after int64
		if err := tx.queryRow(ctx, "SELECT total_changes()").Scan(&before); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "INSERT INTO live_classes_title (live_classes_title, rank) VALUES ('merge', ?)", pages); err != nil {
			return err
		}
		if err := tx.queryRow(ctx, "SELECT total_changes()").Scan(&after); err != nil {
			return err
		}
		worked = after-before >= 2
		return nil
	})
	return worked, err
}

// resumeTitleIndex starts a pass when there are classes above
// indexed_upto: those a process left when it stopped before indexing
// them (killed, or held in a test). With none, it has the indexer look
// at the index's segments once (wake, merge).
func (s *Store) resumeTitleIndex(ctx context.Context) error {
	if s.titles == nil {
		return nil
	}
	var upto, maxID int64
	if err := s.read().queryRow(ctx, `SELECT indexed_upto, (SELECT COALESCE(MAX(id), 0) FROM live_classes)
		FROM live_classes_title_state`).Scan(&upto, &maxID); err != nil {
		return fmt.Errorf("title index state: %w", err)
	}
	if maxID > upto {
		s.titles.wrote(maxID - upto)
	} else {
		s.titles.wake()
	}
	return nil
}

// indexTitles adds up to limit classes above indexed_upto to the title
// index, in id order, and moves indexed_upto past them, in one write
// transaction. more reports that it indexed limit rows: there may be more.
// With no class above indexed_upto it writes nothing: an empty write would
// still move the store's generation and so empty the record cache (the
// pass run at every start, resumeTitleIndex, is usually such).
func (s *Store) indexTitles(ctx context.Context, limit int) (more bool, err error) {
	var behind bool
	if err := s.read().queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM live_classes
		WHERE id > (SELECT indexed_upto FROM live_classes_title_state))`).Scan(&behind); err != nil {
		return false, err
	}
	if !behind {
		return false, nil
	}
	err = s.tx(ctx, func(tx db) error {
		var from int64
		if err := tx.queryRow(ctx, "SELECT indexed_upto FROM live_classes_title_state").Scan(&from); err != nil {
			return err
		}
		var upto sql.NullInt64
		var n int
		if err := tx.queryRow(ctx, `SELECT MAX(id), COUNT(*) FROM (SELECT id FROM live_classes WHERE id > ? ORDER BY id LIMIT +?)`,
			from, limit).Scan(&upto, &n); err != nil {
			return err
		}
		if !upto.Valid {
			more = false
			return nil
		}
		if _, err := tx.exec(ctx, `INSERT INTO live_classes_title (rowid, title)
			SELECT id, title FROM live_classes WHERE id > ? AND id <= ? ORDER BY id`, from, upto.Int64); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "UPDATE live_classes_title_state SET indexed_upto = ?", upto.Int64); err != nil {
			return err
		}
		more = n == limit
		return nil
	})
	return more, err
}
