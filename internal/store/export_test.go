package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Test-only access to the store, for the store's own tests.

// PointsHistory returns the user's ledger rows, oldest first.
func (s *Store) PointsHistory(ctx context.Context, domainID, userID int64) ([]PointsEntry, error) {
	d := s.read()
	rows, err := d.query(ctx, `SELECT id, user_id, points, reason, event, created_at FROM points_ledger
		WHERE domain_id = ? AND user_id = ? ORDER BY created_at, id`, domainID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []PointsEntry{}
	for rows.Next() {
		var e PointsEntry
		if err := rows.Scan(&e.ID, &e.UserID, &e.Points, &e.Reason, &e.Event, timeCol(&e.CreatedAt)); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// SetPGSortInGo sets, until the test ends, the most matches of a
// PostgreSQL title search that the store sorts and counts itself.
func SetPGSortInGo(t testing.TB, n int) {
	old := pgSortInGo
	pgSortInGo = n
	t.Cleanup(func() { pgSortInGo = old })
}

// TitlePasses returns how many passes the title indexer has begun with
// classes pending.
func (s *Store) TitlePasses() int64 { return s.titles.passes.Load() }

// TitlePassEvery is the least time between two title index passes.
const TitlePassEvery = titlePassEvery

// TitleMergeShare and TitleQuietShare are the shares of the title index's
// pages, outside its largest segment, that start a merge while classes are
// being created and once they have paused.
const TitleMergeShare, TitleQuietShare = titleMergeShare, titleQuietShare

// SetTitleQuiet sets how long after a pass the title indexer looks at the
// segments with TitleQuietShare; it applies from the next pass.
func (s *Store) SetTitleQuiet(d time.Duration) { s.titles.quiet.Store(int64(d)) }

// HoldTitleIndex stops the SQLite title indexer without a pass: classes
// created afterwards stay above indexed_upto until IndexClassTitles, and
// Close does not index them. Call it before the store is written to.
func (s *Store) HoldTitleIndex() {
	if s.titles == nil {
		return
	}
	x := s.titles
	s.titles = nil
	x.pending.Store(0)
	x.close()
}

// IndexClassTitles indexes every class above indexed_upto, batch rows
// per transaction, as the indexer's pass does.
func (s *Store) IndexClassTitles(ctx context.Context, batch int) error {
	for {
		more, err := s.indexTitles(ctx, batch)
		if err != nil || !more {
			return err
		}
	}
}

// SetDirectPageOffset sets the offset under which a page read forwards is
// read directly (page.query) until t ends.
func SetDirectPageOffset(t interface{ Cleanup(func()) }, n int64) {
	old := directPageOffset
	directPageOffset = n
	t.Cleanup(func() { directPageOffset = old })
}

// ClassTitleTrigramOptions returns the storage options of PostgreSQL's
// trigram index of class titles (migrations 0034, 0041), as
// pg_class.reloptions shows them, one "name=value" a line.
func (s *Store) ClassTitleTrigramOptions(ctx context.Context) (string, error) {
	var opts sql.NullString
	err := s.read().queryRow(ctx, `SELECT array_to_string(reloptions, E'\n') FROM pg_class
		WHERE oid = to_regclass('live_classes_title_trgm')`).Scan(&opts)
	return opts.String, err
}

// ClassTitleLargestLeaf returns the size in bytes of the title index's
// largest leaf page (the rows of titleLeafRows).
func (s *Store) ClassTitleLargestLeaf(ctx context.Context) (int64, error) {
	var n sql.NullInt64
	err := s.read().queryRow(ctx, "SELECT MAX(length(block)) FROM live_classes_title_data WHERE "+titleLeafRows).Scan(&n)
	return n.Int64, err
}

// ClassTitleSegmentsAndLeafPages returns the size of each segment of the
// SQLite title index (titleSegments) and the number of leaf pages of all
// of them, counted by reading them (FTS5's row ids: segment << 37, then a
// doclist-index bit and a height, zero for a leaf, then the page number),
// both in one snapshot: the indexer may merge the segments between two
// reads.
func (s *Store) ClassTitleSegmentsAndLeafPages(ctx context.Context) ([]int64, int64, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	d := s.on(tx)
	sizes, err := titleSegments(ctx, d)
	if err != nil {
		return nil, 0, err
	}
	leaves, err := d.count(ctx, "SELECT COUNT(*) FROM live_classes_title_data WHERE "+titleLeafRows)
	return sizes, leaves, err
}

// titleLeafRows selects the rows of live_classes_title_data that are leaf
// pages of a segment.
const titleLeafRows = "id >= 1 << 37 AND (id >> 31) & 63 = 0"

// MergeClassTitleSteps runs steps of merging the title index into one
// segment, as the indexer does, the first one starting the merge: all of
// them when steps is 0. It returns the number of steps that did work.
func (s *Store) MergeClassTitleSteps(ctx context.Context, first bool, steps int) (int, error) {
	n := 0
	for steps == 0 || n < steps {
		worked, err := s.mergeTitles(ctx, first)
		if err != nil || !worked {
			return n, err
		}
		first = false
		n++
	}
	return n, nil
}

// ClassTitleIndexState returns indexed_upto and the highest class id
// (0 when there is none).
func (s *Store) ClassTitleIndexState(ctx context.Context) (indexedUpto, maxID int64, err error) {
	err = s.read().queryRow(ctx, `SELECT (SELECT indexed_upto FROM live_classes_title_state),
		(SELECT COALESCE(MAX(id), 0) FROM live_classes)`).Scan(&indexedUpto, &maxID)
	return indexedUpto, maxID, err
}

// CheckClassTitleIndex checks the SQLite title index: FTS5's own
// integrity check; then every class at or below indexed_upto whose title
// has a trigram is found in the index by its title, and none above it is
// in the index. When full, the index must hold every class: FTS5 compares
// it with the table (integrity-check with rank 1).
func (s *Store) CheckClassTitleIndex(ctx context.Context, full bool) error {
	rank := 0
	if full {
		rank = 1
	}
	if err := s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, "INSERT INTO live_classes_title (live_classes_title, rank) VALUES ('integrity-check', ?)", rank)
		return err
	}); err != nil {
		return fmt.Errorf("integrity-check %d: %w", rank, err)
	}
	d := s.read()
	var upto int64
	if err := d.queryRow(ctx, "SELECT indexed_upto FROM live_classes_title_state").Scan(&upto); err != nil {
		return err
	}
	type class struct {
		id    int64
		title string
	}
	var classes []class
	if err := scanRows(ctx, d, "SELECT id, title FROM live_classes ORDER BY id", nil, func(r *sql.Rows) error {
		var c class
		classes = append(classes, c)
		return r.Scan(&classes[len(classes)-1].id, &classes[len(classes)-1].title)
	}); err != nil {
		return err
	}
	for _, c := range classes {
		if utf8.RuneCountInString(c.title) < 3 {
			continue
		}
		found, err := d.exists(ctx, "SELECT 1 FROM live_classes_title WHERE live_classes_title MATCH ? AND rowid = ?", ftsPhrase(c.title), c.id)
		if err != nil {
			return err
		}
		if found != (c.id <= upto) {
			return fmt.Errorf("class %d (%q), indexed_upto %d: found by the index %v", c.id, c.title, upto, found)
		}
	}
	return nil
}

// SetRecordClock sets the clock the record caches expire entries by.
func (s *Store) SetRecordClock(now func() time.Time) { s.recordClock = now }

// SetCacheRecords turns the record caches on or off.
func (s *Store) SetCacheRecords(on bool) { s.cacheRecords = on }

// Wrote marks a write committed, as every write transaction does: every
// record kept so far is stale.
func (s *Store) Wrote() { s.wrote() }

// SearchConns returns the PostgreSQL connections of the searches that run
// from a generic plan (openSearchConns); nil on SQLite.
func (s *Store) SearchConns() *sql.DB { return s.sdb }

// ReadConns returns the connections the store reads through.
func (s *Store) ReadConns() *sql.DB { return s.rdb }

// TitleSearchWindow returns the part of text a PostgreSQL title search
// asks the trigram index for (titlestats.go).
func (s *Store) TitleSearchWindow(ctx context.Context, text string) string {
	return s.searchWindow(ctx, strings.ToLower(text))
}

// TitleTrigrams returns the trigrams the sample takes from a title, in
// order: those the trigram index keeps for it (titlestats.go).
func TitleTrigrams(title string) []string {
	var out []string
	for _, g := range trigrams(nil, trigramText(strings.ToLower(title)), false) {
		out = append(out, g.String())
	}
	return out
}

// TakeSearchPlaces takes every place of the gate title searches pass
// (searchInTurn), so a search waits until the returned function gives
// them back.
func (s *Store) TakeSearchPlaces() (giveBack func()) {
	for range cap(s.searches) {
		s.searches <- struct{}{}
	}
	return func() {
		for range cap(s.searches) {
			<-s.searches
		}
	}
}

// UserIDsAbove returns the domain's user counter and its users' ids above
// after, reading them chunk a statement as a check of the listed ids does.
func (s *Store) UserIDsAbove(ctx context.Context, domainID, after int64, chunk int) (int64, []int64, error) {
	return idsAbove(ctx, s.read(), "users", domainID, "users", after, chunk)
}

// ReadAhead is how many classes a page of a listing read in order reads
// when it reads any (readAhead).
const ReadAhead = readAhead

// ListedClassesInMemory returns how many of the classes ids the record
// cache of listed classes holds as read at the store's generation.
func (s *Store) ListedClassesInMemory(domainID int64, ids []int64) int {
	gen, now := s.gen.Load(), s.recordClock()
	n := 0
	for _, id := range ids {
		if _, ok := s.listedClasses.get(recordKey{domainID, id}, gen, now); ok {
			n++
		}
	}
	return n
}
