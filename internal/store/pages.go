package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Listing totals and deep pages.
//
// The totals of the unfiltered listings of users, courses, live classes,
// orders, certificates and quiz attempts come from row_counts, a counter
// per domain and kind that triggers keep in the writing transaction
// (migrations 0033 and 0040), so a total costs a primary-key range read of
// at most 32 rows instead of a COUNT(*) over the domain, and stays exact.
// On SQLite the users and classes created are counted by the store
// instead, once a group of writes (countInserted, migration 0046).
// Filtered listings (a search, a name, a user) still count their matches.

// Counter kinds in row_counts.
const (
	countUsers                = "users"
	countCourses              = "courses"
	countLiveClasses          = "live_classes"
	countLiveClassesPublished = "live_classes_published"
	// Kinds named for their tables (listTotal).
	countOrders       = "orders"
	countCertificates = "certificates"
	countQuizAttempts = "quiz_attempts"
)

// rowCount returns the domain's counter of kind: the sum of its shards
// (at most 32 rows, read from the primary key); none is 0.
// Outside a transaction it is answered from memory when the store caches
// records (recordcache.go).
func rowCount(ctx context.Context, d db, domainID int64, kind string) (int64, error) {
	load := func(ctx context.Context) (int64, error) {
		return d.count(ctx, "SELECT COALESCE(SUM(n), 0) FROM row_counts WHERE domain_id = ? AND kind = ?", domainID, kind)
	}
	if d.r != runner(d.s.rdb) { // in a transaction
		return load(ctx)
	}
	return cachedRecord(ctx, d.s, &d.s.counts, countKey{domainID, kind}, countSize, load)
}

func countSize(int64) int { return 8 }

// listTotal returns the number of the domain's rows of table that where
// (with args) selects: the table's counter when filtered is false, where
// then selecting the whole domain, else a COUNT(*) of the matches.
func listTotal(ctx context.Context, d db, domainID int64, table string, filtered bool, where string, args []any) (int64, error) {
	if !filtered {
		return rowCount(ctx, d, domainID, table)
	}
	return d.count(ctx, "SELECT COUNT(*) FROM "+table+" WHERE "+where, args...)
}

// countDelta is what a transaction adds to one of a domain's counters.
type countDelta struct {
	domainID int64
	kind     string
	n        int64
}

// countInserted records that the transaction inserted n rows of kind in
// the domain, for a counter that only a trigger keeps on PostgreSQL: on
// SQLite, the users' and the live classes' (migration 0046). The group
// writer adds what the functions of a group recorded to the counters with
// one statement a counter before its commit (writeCounted); a function
// that failed adds nothing.
func (d db) countInserted(domainID int64, kind string, n int64) {
	if d.pg {
		return
	}
	*d.counted = append(*d.counted, countDelta{domainID, kind, n})
}

// writeCounted adds deltas to their counters (SQLite's shard 0), one
// statement for each domain and kind. There are none on PostgreSQL.
func writeCounted(ctx context.Context, d db, deltas []countDelta) error {
	if len(deltas) == 0 {
		return nil
	}
	sums := make([]countDelta, 0, 2)
next:
	for _, c := range deltas {
		for i := range sums {
			if sums[i].domainID == c.domainID && sums[i].kind == c.kind {
				sums[i].n += c.n
				continue next
			}
		}
		sums = append(sums, c)
	}
	for _, c := range sums {
		if _, err := d.exec(ctx, `INSERT INTO row_counts (domain_id, kind, n) VALUES (?, ?, ?)
			ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = n + excluded.n`, c.domainID, c.kind, c.n); err != nil {
			return err
		}
	}
	return nil
}

// countedKind is a counter with the rows it counts (a FROM clause whose
// one parameter is the domain's id), and whether on SQLite the store
// counts its inserts (countInserted) rather than a trigger.
type countedKind struct {
	kind, from    string
	bySQLiteStore bool
}

// countedKinds are the counters a domain import writes from the rows it
// inserted, where no trigger counted them.
var countedKinds = []countedKind{
	{countUsers, "users WHERE domain_id = ?", true},
	{countCourses, "courses WHERE domain_id = ?", false},
	{countLiveClasses, "live_classes WHERE domain_id = ?", true},
	{countLiveClassesPublished, "live_classes WHERE domain_id = ? AND published = 1", true},
	{countOrders, "orders WHERE domain_id = ?", false},
	{countCertificates, "certificates WHERE domain_id = ?", false},
	{countQuizAttempts, "quiz_attempts WHERE domain_id = ?", false},
}

// withoutCountTriggers runs fn, which inserts a new domain's rows, in tx
// with the PostgreSQL counter triggers off (migration 0039), then writes
// the domain's counters from its rows. The domain must have no counters
// yet. On SQLite the triggers stay on (they cost the same per row however
// many rows a transaction inserts), and only the users and the classes,
// which no trigger counts there (migration 0046), are counted from the
// rows.
func withoutCountTriggers(ctx context.Context, tx db, domainID int64, fn func() error) error {
	if tx.pg {
		if _, err := tx.exec(ctx, "SET LOCAL lectern.row_counts = 'off'"); err != nil {
			return err
		}
	}
	if err := fn(); err != nil {
		return err
	}
	for _, c := range countedKinds {
		if !tx.pg && !c.bySQLiteStore {
			continue
		}
		if _, err := tx.exec(ctx, "INSERT INTO row_counts (domain_id, kind, shard, n) SELECT ?, ?, 0, COUNT(*) FROM "+c.from,
			domainID, c.kind, domainID); err != nil {
			return err
		}
	}
	if !tx.pg {
		return nil
	}
	_, err := tx.exec(ctx, "SET LOCAL lectern.row_counts = 'on'")
	return err
}

// directPageOffset is the offset under which a page read forwards is read
// directly rather than by a deferred join (page.query): where stepping
// over the rows before it costs about what the join's list of ids does.
// A variable so that the tests can read small listings both ways.
var directPageOffset int64 = 256

// page describes one page of a domain's rows of table, in id order, when
// the number of all of them (total) is known. filter, with args, narrows
// the rows further (" AND published = 1").
type page struct {
	table    string
	domainID int64
	filter   string
	args     []any
	cols     string
	total    int64
	offset   int
	limit    int
}

// query returns the SQL and arguments reading the page, or ok false when
// the page lies past the last match (an empty page, nothing to read).
//
// The page is read forwards from its first id, which a subquery finds
// from the index on (domain_id, ..., id) alone, so the skipped rows cost
// an index step each, not a row read. For a page in the second half of
// the matches that subquery counts from the end (ORDER BY id DESC, to the
// page's first row), so the first and the last page both cost a seek plus
// the page, however many rows the domain holds; only pages near the
// middle walk far. (A deferred join, id IN (the page's ids), did the same
// before, but SQLite builds a temporary table of the ids for every page:
// the last page of 50 users 54-62 to 49-54 µs, on PostgreSQL 294-338 to
// 239-286 µs, BenchmarkListUsers.)
//
// A page near the start, read forwards (an offset under
// directPageOffset), is read directly instead, from the same index: it
// steps over few rows, and SQLite reads none of the rows it skips.
//
// LIMIT and OFFSET take their values as +?, never a bare ?, here and in
// every query of the store: SQLite plans with the value bound to a bare
// LIMIT ? and so re-prepares the statement whenever new values are bound,
// which cost more than running it (the per-connection statement cache
// saved nothing for listings). PostgreSQL reads +$1 as $1.
func (p page) query() (q string, args []any, ok bool) {
	if int64(p.offset) >= p.total {
		return "", nil, false
	}
	order, offset, limit := "id", int64(p.offset), int64(p.limit)
	if offset > p.total/2 {
		order = "id DESC"
		offset = p.total - offset - limit
		if offset < 0 {
			limit += offset
			offset = 0
		}
	}
	if order == "id" && offset < directPageOffset {
		q = "SELECT " + p.cols + " FROM " + p.table + " WHERE domain_id = ?" + p.filter + " ORDER BY id LIMIT +? OFFSET +?"
		args = append(append([]any{p.domainID}, p.args...), limit, offset)
		return q, args, true
	}
	// Counted from the end, the page's first row is its last; if there
	// is none (rows deleted since the total was read), the page starts at
	// the domain's first row.
	first := "(SELECT id FROM " + p.table + " WHERE domain_id = ?" + p.filter + " ORDER BY id LIMIT 1 OFFSET +?)"
	if order != "id" {
		first = "COALESCE((SELECT id FROM " + p.table + " WHERE domain_id = ?" + p.filter +
			" ORDER BY id DESC LIMIT 1 OFFSET +?), 0)"
		offset += limit - 1
	}
	q = "SELECT " + p.cols + " FROM " + p.table + " WHERE domain_id = ?" + p.filter + " AND id >= " + first +
		" ORDER BY id LIMIT +?"
	args = append([]any{p.domainID}, p.args...)
	args = append(append(append(args, p.domainID), p.args...), offset, limit)
	return q, args, true
}

// deep reports whether reading p steps over many rows (page.query): it
// lies at least directPageOffset rows from either end of the matches.
func (p page) deep() bool {
	return int64(p.offset) >= directPageOffset && p.total-int64(p.offset) >= directPageOffset
}

// listPage reads a page with query, passing each row to scan.
func listPage(ctx context.Context, d db, p page, scan func(*sql.Rows) error) error {
	q, args, ok := p.query()
	if !ok {
		return nil
	}
	return scanRows(ctx, d, q, args, scan)
}

// pageIDs returns the ids of page p (whatever its cols) in ascending
// order. On SQLite they are read as one value, the ids joined by commas:
// a row costs the driver a step and a column read, each taking the
// connection's mutex, and database/sql a Next and a Scan. A page of 50
// users so cost a fifth less alone (BenchmarkListUsers), 3 % less of a
// users/list through the server (docs/performance.md, "Thirteenth
// pass"). The aggregate is not asked for an order (SQLite sorts for one,
// dearer than the rows it saves), so the ids are sorted here. Nor are the
// ids cast to text: the aggregate writes an integer in decimal itself,
// and a CAST for each row was a fifth of the time of a page of 50 users
// (BenchmarkListUsers first page 23.3-24.3 to 18.2-19.4 µs). PostgreSQL
// reads rows: there the aggregate ran fewer pages a second.
func pageIDs(ctx context.Context, d db, p page) ([]int64, error) {
	p.cols = "id"
	q, args, ok := p.query()
	if !ok {
		return nil, nil
	}
	return queryIDs(ctx, d, q, args, nil)
}

// queryIDs appends to ids the ids q (with args) selects, in one column,
// ascending: as one value on SQLite (pageIDs), as rows on PostgreSQL.
func queryIDs(ctx context.Context, d db, q string, args []any, ids []int64) ([]int64, error) {
	if d.pg {
		err := scanRows(ctx, d, q, args, func(r *sql.Rows) error {
			ids = append(ids, 0)
			return r.Scan(&ids[len(ids)-1])
		})
		return ids, err
	}
	var s sql.NullString
	if err := d.queryRow(ctx, "SELECT string_agg(id, ',') FROM ("+q+") AS page", args...).Scan(&s); err != nil {
		return nil, err
	}
	ids, err := appendIDs(ids, s.String)
	if err != nil {
		return nil, fmt.Errorf("store: ids %q: %w", s.String, err)
	}
	return ids, nil
}

// scanRows runs q, passing each row to scan.
func scanRows(ctx context.Context, d db, q string, args []any, scan func(*sql.Rows) error) error {
	rows, err := d.query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// orEmpty returns s, or an empty slice where s is nil: a listing's page
// is allocated at its first row, and an empty page is still a list.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
