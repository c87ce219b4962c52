package store

import (
	"context"
	"database/sql"
)

// Listing totals and deep pages.
//
// The totals of the unfiltered listings of users, courses, live classes,
// orders, certificates and quiz attempts come from row_counts, a counter
// per domain and kind that triggers keep in the writing transaction
// (migrations 0033 and 0040), so a total costs a primary-key range read of
// at most 32 rows instead of a COUNT(*) over the domain, and stays exact.
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
func rowCount(ctx context.Context, d db, domainID int64, kind string) (int64, error) {
	return d.count(ctx, "SELECT COALESCE(SUM(n), 0) FROM row_counts WHERE domain_id = ? AND kind = ?", domainID, kind)
}

// listTotal returns the number of the domain's rows of table that where
// (with args) selects: the table's counter when filtered is false, where
// then selecting the whole domain, else a COUNT(*) of the matches.
func listTotal(ctx context.Context, d db, domainID int64, table string, filtered bool, where string, args []any) (int64, error) {
	if !filtered {
		return rowCount(ctx, d, domainID, table)
	}
	return d.count(ctx, "SELECT COUNT(*) FROM "+table+" WHERE "+where, args...)
}

// withoutCountTriggers runs fn, which inserts a new domain's rows, in tx
// with the PostgreSQL counter triggers off (migration 0039), then writes
// the domain's counters from its rows. The domain must have no counters
// yet. On SQLite it only runs fn: its triggers cost the same per row
// however many rows a transaction inserts.
func withoutCountTriggers(ctx context.Context, tx db, domainID int64, fn func() error) error {
	if !tx.pg {
		return fn()
	}
	if _, err := tx.exec(ctx, "SET LOCAL lectern.row_counts = 'off'"); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	for _, c := range []struct{ kind, from string }{
		{countUsers, "users WHERE domain_id = ?"},
		{countCourses, "courses WHERE domain_id = ?"},
		{countLiveClasses, "live_classes WHERE domain_id = ?"},
		{countLiveClassesPublished, "live_classes WHERE domain_id = ? AND published = 1"},
		{countOrders, "orders WHERE domain_id = ?"},
		{countCertificates, "certificates WHERE domain_id = ?"},
		{countQuizAttempts, "quiz_attempts WHERE domain_id = ?"},
	} {
		if _, err := tx.exec(ctx, "INSERT INTO row_counts (domain_id, kind, shard, n) SELECT ?, ?, 0, COUNT(*) FROM "+c.from,
			domainID, c.kind, domainID); err != nil {
			return err
		}
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
// The page's ids are chosen from the index on (domain_id, ..., id) alone
// and only those rows are read from the table (a deferred join), so the
// skipped rows cost an index step each, not a row read. A page in the
// second half of the matches is chosen backwards from the end (ORDER BY id
// DESC with the offset counted from the end), so the first and the last
// page both cost a seek plus the page, however many rows the domain holds;
// only pages near the middle walk far.
//
// A page near the start, read forwards (an offset under
// directPageOffset), is read directly instead, from the same index: it
// steps over few rows, and the deferred join's list of ids cost more than
// that (a first page of 50 courses: 37 to 29 µs; of 10 classes with their
// sittings: 100 to 94 µs). Read backwards, the direct form must sort its
// rows back into id order, which cost more than the deferred join saves.
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
	q = "SELECT " + p.cols + " FROM " + p.table + " WHERE +domain_id = ? AND id IN (SELECT id FROM " + p.table +
		" WHERE domain_id = ?" + p.filter + " ORDER BY " + order + " LIMIT +? OFFSET +?) ORDER BY id"
	args = append(append([]any{p.domainID, p.domainID}, p.args...), limit, offset)
	return q, args, true
}

// listPage reads a page with query, passing each row to scan.
func listPage(ctx context.Context, d db, p page, scan func(*sql.Rows) error) error {
	q, args, ok := p.query()
	if !ok {
		return nil
	}
	return scanRows(ctx, d, q, args, scan)
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
