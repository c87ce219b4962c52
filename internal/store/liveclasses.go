package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

// classCols are the columns a class is read from, in classDest's order:
// the id, and every other field packed in one value (packed.go,
// classFields): twenty integers, the lengths of nine texts, ten texts (the
// last two the instants).
const classCols = `id,
	concat_ws(',', owner_user_id, start_minute, end_minute, timezone_id, is_recurring, repeat_kind, end_classes_count,
		ispaid, seat_attendees, record, is_recording_layout, is_video, is_board, is_lang, is_region, is_corporate,
		is_screenshare, is_private_chat, privacy, published,
		octet_length(title), octet_length(description), octet_length(date), octet_length(timezone_name),
		octet_length(weekdays), octet_length(end_date), octet_length(currency), octet_length(keyword),
		octet_length(created_at),
		title, description, date, timezone_name, weekdays, end_date, currency, keyword, created_at, updated_at)`

// scanClassSittings scans a row of classCols and, when sittings is true,
// a sittingsCol after them into the class's Occurrences.
func scanClassSittings(row interface{ Scan(...any) error }, sittings bool) (lms.LiveClass, error) {
	var c lms.LiveClass
	err := row.Scan(classDest(nil, &c, sittings)...)
	return c, err
}

// classDest returns the scan destinations of a row of classCols (and a
// sittingsCol when sittings is true) into *c, in dest's array: a listing
// reuses one for all its rows, and scans each into its slice's next
// element rather than copying a class there.
func classDest(dest []any, c *lms.LiveClass, sittings bool) []any {
	dest = append(dest[:0], intDest(&c.ID), classFields{c})
	if sittings {
		dest = append(dest, sittingsScanner{&c.Occurrences})
	}
	return dest
}

// classFields scans the integers and texts of classCols into *c.
type classFields struct{ c *lms.LiveClass }

// Scan implements sql.Scanner.
func (cf classFields) Scan(v any) error {
	s, err := packedText(v)
	if err != nil {
		return err
	}
	var n [29]int64 // twenty integers, nine lengths
	var texts [10]string
	if err := unpack(s, n[:], texts[:]); err != nil {
		return err
	}
	created, err1 := parseTime(texts[8])
	updated, err2 := parseTime(texts[9])
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("store: a class's fields %q: %w", s, err)
	}
	c := cf.c
	c.OwnerUserID = n[0]
	c.StartMinute, c.EndMinute, c.TimezoneID = int(n[1]), int(n[2]), int(n[3])
	c.IsRecurring = n[4] != 0
	c.Repeat, c.EndClassesCount, c.IsPaid, c.SeatAttendees, c.Record = int(n[5]), int(n[6]), int(n[7]), int(n[8]), int(n[9])
	c.IsRecordingLayout, c.IsVideo, c.IsBoard, c.IsLang, c.IsRegion = int(n[10]), int(n[11]), int(n[12]), int(n[13]), int(n[14])
	c.IsCorporate, c.IsScreenshare, c.IsPrivateChat, c.Privacy, c.Published = int(n[15]), int(n[16]), int(n[17]), int(n[18]), int(n[19])
	c.Title, c.Description, c.Date, c.TimezoneName = texts[0], texts[1], texts[2], texts[3]
	c.Weekdays, c.EndDate, c.Currency, c.Keyword = texts[4], texts[5], texts[6], texts[7]
	c.CreatedAt, c.UpdatedAt = created, updated
	return nil
}

// sittingsCol is a column giving the sittings of the class row of table
// (a table name or alias in the query) in one value, so a class and its
// sittings are one query: "seq,starts_at,ends_at,cancelled" per
// sitting, joined by ';'; NULL when the class has none. Stored instants
// hold neither ',' nor ';'. string_agg and concat_ws work on PostgreSQL
// and on SQLite from 3.44 (concat_ws: one allocation where a chain of ||
// made one at every step). The aggregate has no ORDER BY: on SQLite one
// builds and sorts a temporary table on every read (a fifth of a getclass's
// statement), though the rows come by seq from the table's (class_id,
// seq) key anyway; parseSittings puts them in seq order whatever their
// order.
func sittingsCol(table string) string {
	return `(SELECT string_agg(concat_ws(',', o.seq, o.starts_at, o.ends_at, o.cancelled), ';') FROM class_occurrences o
		WHERE o.class_id = ` + table + `.id AND o.domain_id = ` + table + `.domain_id)`
}

// sittingsScanner scans a sittingsCol into *occ: nil for NULL (no
// sittings), as a class without sittings has always read.
type sittingsScanner struct{ occ *[]lms.Occurrence }

// Scan implements sql.Scanner.
func (ss sittingsScanner) Scan(v any) error {
	s, _, ok := scannedText(v)
	if !ok {
		return fmt.Errorf("store: stored sittings are a %T, not text", v)
	}
	occ, err := parseSittings(s)
	*ss.occ = occ
	return err
}

// parseSittings parses the text of a sittingsCol into sittings in seq
// order; "" (NULL) is none, nil. A value not of that form is an error.
func parseSittings(s string) ([]lms.Occurrence, error) {
	if s == "" {
		return nil, nil
	}
	occ := make([]lms.Occurrence, 0, strings.Count(s, ";")+1)
	for rest, more := s, true; more; {
		var one string
		one, rest, more = strings.Cut(rest, ";")
		var f [4]string
		n := 0
		for field, ok := one, true; ok; n++ {
			if n == len(f) {
				return nil, fmt.Errorf("store: corrupt stored sitting %q: too many fields", one)
			}
			f[n], field, ok = strings.Cut(field, ",")
		}
		if n != len(f) {
			return nil, fmt.Errorf("store: corrupt stored sitting %q: %d fields, not %d", one, n, len(f))
		}
		var o lms.Occurrence
		var e1, e2, e3 error
		o.Seq, e1 = strconv.Atoi(f[0])
		o.Start, e2 = parseTime(f[1])
		o.End, e3 = parseTime(f[2])
		if err := errors.Join(e1, e2, e3); err != nil {
			return nil, fmt.Errorf("store: corrupt stored sitting %q: %w", one, err)
		}
		switch f[3] {
		case "0":
		case "1":
			o.Cancelled = true
		default:
			return nil, fmt.Errorf("store: corrupt stored sitting %q: cancelled is %q", one, f[3])
		}
		occ = append(occ, o)
	}
	bySeq := func(a, b lms.Occurrence) int { return a.Seq - b.Seq }
	if !slices.IsSortedFunc(occ, bySeq) {
		slices.SortFunc(occ, bySeq)
	}
	return occ, nil
}

// classArgCount is how many values appendClassArgs appends.
const classArgCount = 28

// appendClassArgs appends the values of a class's columns from
// owner_user_id to published, in the order of the table, to args: into
// the caller's slice, sized for the statement's other arguments too, so
// that a write makes one slice of them and not two.
func appendClassArgs(args []any, c *lms.LiveClass) []any {
	return append(args, c.OwnerUserID, c.Title, c.Description, c.Date, c.StartMinute, c.EndMinute, c.TimezoneID, c.TimezoneName,
		lms.Flag(c.IsRecurring), c.Repeat, c.Weekdays, c.EndClassesCount, c.EndDate, c.Currency, c.IsPaid, c.SeatAttendees, c.Record,
		c.IsRecordingLayout, c.IsVideo, c.IsBoard, c.IsLang, c.IsRegion, c.IsCorporate, c.IsScreenshare, c.IsPrivateChat,
		c.Keyword, c.Privacy, c.Published)
}

// sqlInsertLiveClass stores a class's row; its arguments are the domain's
// id, appendClassArgs's, created_at and updated_at.
var sqlInsertLiveClass = `INSERT INTO live_classes (domain_id, owner_user_id, title, description, date, start_minute,
	end_minute, timezone_id, timezone_name, is_recurring, repeat_kind, weekdays, end_classes_count, end_date, currency,
	ispaid, seat_attendees, record, is_recording_layout, is_video, is_board, is_lang, is_region, is_corporate,
	is_screenshare, is_private_chat, keyword, privacy, published, created_at, updated_at)
	VALUES (?, ` + placeholders(classArgCount+2) + `)`

// CreateLiveClass stores a class and its occurrences (c.Occurrences, at
// least one, computed by the caller) and returns it with ids set.
func (s *Store) CreateLiveClass(ctx context.Context, domainID int64, c lms.LiveClass) (lms.LiveClass, error) {
	if len(c.Occurrences) == 0 {
		return lms.LiveClass{}, errors.New("store: a live class needs at least one occurrence")
	}
	c.CreatedAt, c.UpdatedAt = s.now(), s.now()
	// The row's arguments are made here, by the caller's goroutine: on
	// SQLite the function below runs on the group writer's, which every
	// write waits for.
	args := appendClassArgs(append(make([]any, 0, 1+classArgCount+2), domainID), &c)
	args = append(args, formatTime(c.CreatedAt), formatTime(c.UpdatedAt))
	err := s.txFirstWriteDecides(ctx, func(tx db) error {
		var err error
		c.ID, err = tx.insert(ctx, sqlInsertLiveClass, args...)
		if err != nil {
			return err
		}
		if err := insertOccurrences(ctx, tx, domainID, c.ID, c.Occurrences); err != nil {
			return err
		}
		tx.countInserted(domainID, countLiveClasses, 1)
		if c.Published == 1 {
			tx.countInserted(domainID, countLiveClassesPublished, 1)
		}
		return emit(ctx, tx, domainID, event.ClassCreatedEvent(c))
	})
	if err == nil {
		s.titles.wrote(1)
	}
	return c, err
}

// EditLiveClass reads the class (with its occurrences) inside a write
// transaction holding its row lock, lets edit change it, and writes it
// back with the occurrences edit returns (nil keeps the current ones). Two
// concurrent edits of different fields both survive. An error from edit
// is returned and nothing is written.
func (s *Store) EditLiveClass(ctx context.Context, domainID, id int64, edit func(c *lms.LiveClass) (occ []lms.Occurrence, err error)) (lms.LiveClass, error) {
	err := s.tx(ctx, func(tx db) error {
		if err := lockRow(ctx, tx, "live_classes", domainID, id); err != nil {
			return err
		}
		c, err := liveClass(ctx, tx, domainID, id)
		if err != nil {
			return err
		}
		occ, err := edit(&c)
		if err != nil {
			return err
		}
		c.ID = id
		return s.updateLiveClass(ctx, tx, domainID, c, occ)
	})
	if err != nil {
		return lms.LiveClass{}, err
	}
	return s.LiveClass(ctx, domainID, id)
}

func (s *Store) updateLiveClass(ctx context.Context, tx db, domainID int64, c lms.LiveClass, occ []lms.Occurrence) error {
	c.UpdatedAt = s.now()
	res, err := tx.exec(ctx, `UPDATE live_classes SET owner_user_id = ?, title = ?, description = ?, date = ?,
		start_minute = ?, end_minute = ?, timezone_id = ?, timezone_name = ?, is_recurring = ?, repeat_kind = ?,
		weekdays = ?, end_classes_count = ?, end_date = ?, currency = ?, ispaid = ?, seat_attendees = ?, record = ?,
		is_recording_layout = ?, is_video = ?, is_board = ?, is_lang = ?, is_region = ?, is_corporate = ?,
		is_screenshare = ?, is_private_chat = ?, keyword = ?, privacy = ?, published = ?, updated_at = ?
		WHERE domain_id = ? AND id = ?`,
		append(appendClassArgs(make([]any, 0, classArgCount+3), &c), formatTime(c.UpdatedAt), domainID, c.ID)...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return lms.NotFoundf("live class %d not found", c.ID)
	}
	if occ == nil {
		return nil
	}
	if _, err := tx.exec(ctx, "DELETE FROM class_occurrences WHERE domain_id = ? AND class_id = ?", domainID, c.ID); err != nil {
		return err
	}
	return insertOccurrences(ctx, tx, domainID, c.ID, occ)
}

func insertOccurrences(ctx context.Context, tx db, domainID, classID int64, occ []lms.Occurrence) error {
	for i, o := range occ {
		if _, err := tx.exec(ctx, `INSERT INTO class_occurrences (domain_id, class_id, seq, starts_at, ends_at, cancelled)
			VALUES (?, ?, ?, ?, ?, ?)`, domainID, classID, i+1, formatTime(o.Start), formatTime(o.End), lms.Flag(o.Cancelled)); err != nil {
			return err
		}
	}
	return nil
}

// LiveClass returns one class of the domain with its occurrences in order.
// A point read is answered from memory when the store caches records
// (recordcache.go); the sittings are the caller's own copy.
func (s *Store) LiveClass(ctx context.Context, domainID, id int64) (lms.LiveClass, error) {
	c, err := cachedRecord(ctx, s, &s.classes, recordKey{domainID, id}, classSize, func(ctx context.Context) (lms.LiveClass, error) {
		return liveClass(ctx, s.read(), domainID, id)
	})
	if s.cacheRecords { // the cache holds the same sittings
		c.Occurrences = slices.Clone(c.Occurrences)
	}
	return c, err
}

// classSize is a class's size for the record cache, roughly.
func classSize(c lms.LiveClass) int {
	return 320 + len(c.Title) + len(c.Description) + len(c.Date) + len(c.TimezoneName) + len(c.Weekdays) +
		len(c.EndDate) + len(c.Currency) + len(c.Keyword) + 48*len(c.Occurrences)
}

func liveClass(ctx context.Context, d db, domainID, id int64) (lms.LiveClass, error) {
	c, err := scanClassSittings(d.queryRow(ctx, liveClassQuery, domainID, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return lms.LiveClass{}, lms.NotFoundf("live class %d not found", id)
	}
	if err != nil {
		return lms.LiveClass{}, err
	}
	return c, nil
}

// classSittingsCols is classCols and the row's sittingsCol, for a query
// on live_classes not aliased.
var classSittingsCols = classCols + ", " + sittingsCol("live_classes")

// liveClassQuery reads one class and its sittings, made once rather than
// joined on every read.
var liveClassQuery = "SELECT " + classSittingsCols + " FROM live_classes WHERE domain_id = ? AND id = ?"

// ClassFilter selects classes for ListLiveClasses.
type ClassFilter struct {
	Search        string // title contains, case-insensitive
	PublishedOnly bool
	// WithOccurrences loads each class's occurrences.
	WithOccurrences bool
}

// ListLiveClasses returns one page of the domain's classes by id (a Limit
// of 0: all of them), and the number of all matches.
func (s *Store) ListLiveClasses(ctx context.Context, domainID int64, f ClassFilter, p Page) ([]lms.LiveClass, int64, error) {
	d := s.read()
	where, args := classMatch(d, "", f), classMatchArgs(domainID, f)
	// A class is large: room for the page (appendRecord, at most 100
	// classes ahead) saves copying the classes as the slice grows. Made
	// before the first row, it went unused whenever the page came from
	// the record cache, a quarter of the bytes a listclass allocated.
	var classes []lms.LiveClass
	cols := classCols
	if f.WithOccurrences {
		cols = classSittingsCols
	}
	var dest []any
	scan := func(r *sql.Rows) error {
		dest = classDest(dest, s.listedClasses.appendRecord(&classes, min(p.Limit, 100)), f.WithOccurrences)
		return r.Scan(dest...)
	}
	// byID reads the classes of ids, in order of id.
	byID := func(ctx context.Context, ids []int64) ([]lms.LiveClass, error) {
		in, idArgs := inIDs(ids)
		err := scanRows(ctx, d, "SELECT "+cols+" FROM live_classes WHERE domain_id = ? AND id IN ("+in+") ORDER BY id",
			append([]any{domainID}, idArgs...), scan)
		return classes, err
	}
	// A page with sittings, as a point read has them, goes through the
	// record cache of listed classes (cachedListPage; a search's ids
	// through cachedPage). The generation is taken first.
	cached := s.cacheRecords && f.WithOccurrences
	gen := s.gen.Load()
	var total int64
	var err error
	if f.Search == "" && p.Limit > 0 {
		filter, kind := "", countLiveClasses
		if f.PublishedOnly {
			filter, kind = " AND published = 1", countLiveClassesPublished
		}
		if total, err = rowCount(ctx, d, domainID, kind); err != nil {
			return nil, 0, err
		}
		pg := page{table: "live_classes", domainID: domainID, filter: filter, cols: cols,
			total: total, offset: p.Offset, limit: p.Limit}
		if cached {
			classes, err = cachedListPage(ctx, s, d, &s.listedClasses, pg, gen, classSize, classID, scan,
				func() []lms.LiveClass { return classes })
		} else {
			err = listPage(ctx, d, pg, scan)
		}
	} else if p.Limit > 0 {
		var ids []int64
		ids, total, err = s.searchInTurn(ctx, d, domainID, f, where, args, p)
		if err == nil && len(ids) > 0 {
			if cached {
				// The ids come from the search in any case: whether the
				// page was in memory says nothing of the next page's cost.
				classes, _, err = cachedPage(ctx, s, &s.listedClasses, domainID, ids, nil, gen, classSize, classID, byID)
			} else {
				classes, err = byID(ctx, ids)
			}
		}
	} else {
		total, err = d.count(ctx, "SELECT COUNT(*) FROM live_classes WHERE "+where, args...)
		if err != nil {
			return nil, 0, err
		}
		err = scanRows(ctx, d, "SELECT "+cols+" FROM live_classes WHERE "+where+" ORDER BY id", args, scan)
	}
	if err != nil {
		return nil, 0, err
	}
	if cached {
		for i := range classes { // the cache holds the same sittings
			classes[i].Occurrences = slices.Clone(classes[i].Occurrences)
		}
	}
	return orEmpty(classes), total, nil
}

// ReleaseLiveClasses hands back a page that ListLiveClasses returned,
// once the caller is done with it and with everything that points into
// it: a later page is put together in the same memory. Handing pages back
// is optional; a page is handed back once at most (twice, two later pages
// would share it).
func (s *Store) ReleaseLiveClasses(classes []lms.LiveClass) { s.listedClasses.releasePage(classes) }

func classID(c lms.LiveClass) int64 { return c.ID }

// classMatch is the condition on live_classes, its columns named with
// prefix ("" or "c."), that selects a domain's classes f matches; its
// arguments are classMatchArgs. A search is a LIKE on the folded title,
// the same way on both databases; on PostgreSQL a trigram index serves it
// (migration 0034), on SQLite the title index narrows the rows first
// (searchIDs).
func classMatch(d db, prefix string, f ClassFilter) string {
	where := prefix + "domain_id = ?"
	if f.Search != "" {
		where += ` AND ` + d.fold(prefix+"title") + likeContains
	}
	if f.PublishedOnly {
		where += " AND " + prefix + "published = 1"
	}
	return where
}

// classMatchArgs are the arguments of classMatch.
func classMatchArgs(domainID int64, f ClassFilter) []any {
	if f.Search == "" {
		return []any{domainID}
	}
	return []any{domainID, likePattern(f.Search)}
}

// searchInTurn runs a title search (pgSearchIDs, pgGenericSearchIDs,
// searchIDs) once one of the readsAtOnce places of s.searches is free;
// searches wait for their turn in the order they came, and one whose
// request ends while it waits leaves with the request's error. The page's
// classes are read after the place is given back.
//
// A search is CPU, the database's (PostgreSQL) or this process's
// (SQLite, whose readers are readsAtOnce connections of a database/sql
// pool, which hands a freed connection to a random waiter). Taken in
// turn, searches wait about as long as one another: at 100,000 classes,
// with 32 clients searching on SQLite, the slowest hundredth took
// 19.0-20.8 ms against 22.0-26.3 ms without the gate, at the same rate
// (docs/performance.md, "Twenty-ninth pass"). On PostgreSQL, more
// searches at once than that only share the CPU and each takes longer
// ("Twenty-first pass").
//
// On PostgreSQL the text's window, and whether a generic plan serves the
// search, are chosen before the search waits: a fresh sample of the
// titles, now and then, is a query of its own.
func (s *Store) searchInTurn(ctx context.Context, d db, domainID int64, f ClassFilter, where string, args []any, p Page) (ids []int64, total int64, err error) {
	generic := false
	if s.pg {
		where, args, generic = s.pgSearchWindow(ctx, d, domainID, f, where, args)
	}
	if err := s.searches.enter(ctx); err != nil {
		return nil, 0, err
	}
	defer s.searches.leave()
	switch {
	case generic:
		return pgGenericSearchIDs(ctx, s.on(s.sdb), where, args, p)
	case s.pg:
		return pgSearchIDs(ctx, d, where, args, p)
	}
	return searchIDs(ctx, d, f, where, args, p)
}

// genericSearchShare: a PostgreSQL search runs from a generic plan
// (pgGenericSearchIDs) when its domain holds at least 1/genericSearchShare
// of the table's classes.
const genericSearchShare = 4

// pgSearchWindow returns the condition and arguments of a PostgreSQL
// search of f.Search that asks the trigram index for a window of the
// text, the cheapest by a sample of the titles (titlestats.go), while the
// LIKE on the whole text, on an expression the index does not serve,
// decides on the rows; where and args as they are when the window is the
// whole text.
//
// generic reports that the search is to run from a generic plan
// (pgGenericSearchIDs): when the store has the connections for it
// (PostgreSQL 12 and later), the window was chosen, so that the index has
// trigrams to look up, d is not a transaction, and the domain holds at
// least 1/genericSearchShare of the table's classes by the sample's
// count, so that the trigram index, which the generic plan always reads,
// is not mostly other domains' titles.
func (s *Store) pgSearchWindow(ctx context.Context, d db, domainID int64, f ClassFilter, where string, args []any) (_ string, _ []any, generic bool) {
	folded := strings.ToLower(f.Search)
	w := s.searchWindow(ctx, folded)
	if w == folded {
		return where, args, false
	}
	if sample := s.titleSample.cur.Load(); s.sdb != nil && sample != nil && sample.span > 0 && d.r == runner(s.rdb) {
		n, err := rowCount(ctx, d, domainID, countLiveClasses)
		generic = err == nil && n*genericSearchShare >= sample.span
	}
	where = "domain_id = ?"
	if generic {
		where = "domain_id + 0 = ?" // see pgGenericSearchIDs
	}
	where += " AND (LOWER(title) || '')" + likeContains + " AND LOWER(title)" + likeContains
	if f.PublishedOnly {
		where += " AND published = 1"
	}
	args = []any{domainID, likePattern(f.Search), likePattern(w)}
	return where, args, generic
}

// pgSearchIDs runs a search of the domain's classes on PostgreSQL (where
// and args select the matches, pgSearchWindow's) and returns the ids of page p and the
// number of all matches.
//
// The statement is planned for its search text every time (pgx's unnamed
// statement), never from a cached generic plan: the planner cannot tell a
// narrow text from a broad one without it, and after a few dear searches
// a prepared statement's generic plan read the domain's every class in id
// order for any text (35 ms at 100,000 classes against 0.45 ms by the
// trigram index). Planning costs 0.1-0.3 ms. pgGenericSearchIDs is the
// search without it, for the texts and domains where a generic plan is
// safe.
func pgSearchIDs(ctx context.Context, d db, where string, args []any, p Page) (ids []int64, total int64, err error) {
	return pgMatches(ctx, d, where, " ORDER BY id LIMIT +? OFFSET +?", append([]any{pgx.QueryExecModeExec}, args...), p)
}

// pgGenericSearchIDs is pgSearchIDs from a generic plan, on the search
// connections (openSearchConns), which plan the statement once per
// connection: the planning saved is 0.1-0.2 ms of PostgreSQL's CPU a
// search (docs/performance.md, "Thirtieth pass"). Its domain (in where,
// pgSearchWindow's) and its order are expressions no index serves
// (domain_id + 0, id + 0), which leaves the generic plan the trigram
// index or the whole table: read in id order, the plan that made
// pgSearchIDs give up cached plans, it would go through the domain's
// every class for a rare text. pgSearchWindow sends it only the searches
// whose window gives the index trigrams to look up, in domains that hold
// a good share of the table.
func pgGenericSearchIDs(ctx context.Context, d db, where string, args []any, p Page) (ids []int64, total int64, err error) {
	return pgMatches(ctx, d, where, " ORDER BY id + 0 LIMIT +? OFFSET +?", args, p)
}

// pgMatches reads the ids of page p of the classes where selects, in the
// order and page that tail gives, and the number of all matches (args:
// where's, then tail's after them).
//
// It first reads every match's id in no order, pgSortInGo+1 at most, and
// when there are no more than pgSortInGo it sorts and counts them here.
// A search that PostgreSQL sorts (the page's ORDER BY, with the window
// that counts) took its process several times the CPU of the same search
// unsorted on the virtual machine of docs/performance.md, and two such
// searches at once ran little faster than one: the sort's memory is taken
// from the system and given back at every statement ("Forty-first pass").
// A search with more matches (a text common in the domain) is run
// again sorted by PostgreSQL, which reads the page's ids and, by the
// window, the number of all matches in one pass; only past the last match
// is the count a query of its own.
func pgMatches(ctx context.Context, d db, where, tail string, args []any, p Page) (ids []int64, total int64, err error) {
	whereArgs := args[:len(args):len(args)]
	err = scanRows(ctx, d, "SELECT id FROM live_classes WHERE "+where+" LIMIT +?", append(whereArgs, pgSortInGo+1), func(r *sql.Rows) error {
		ids = append(ids, 0)
		return r.Scan(&ids[len(ids)-1])
	})
	if err != nil {
		return nil, 0, err
	}
	if len(ids) <= pgSortInGo {
		slices.Sort(ids)
		from := min(p.Offset, len(ids))
		return ids[from:min(from+p.Limit, len(ids))], int64(len(ids)), nil
	}
	ids = nil
	err = scanRows(ctx, d, "SELECT id, COUNT(*) OVER () FROM live_classes WHERE "+where+tail,
		append(whereArgs, p.Limit, p.Offset), func(r *sql.Rows) error {
			ids = append(ids, 0)
			return r.Scan(&ids[len(ids)-1], &total)
		})
	if err == nil && len(ids) == 0 && p.Offset > 0 {
		total, err = d.count(ctx, "SELECT COUNT(*) FROM live_classes WHERE "+where, args...)
	}
	return ids, total, err
}

// pgSortInGo is the most matches of a PostgreSQL search that pgMatches
// sorts and counts itself; a variable so that tests can lower it.
var pgSortInGo = 1000

// searchIDs runs a search of the domain's classes on SQLite (where and
// args select the matches, as for PostgreSQL) and returns the ids of page
// p and the number of all matches.
//
// The title index narrows the rows (migration 0034), joined to the table
// rather than as an IN list, which SQLite gathers in a temporary table
// first. The domain's rows above indexed_upto are not in the index yet
// (migration 0038, titleindex.go) and are all candidates, read by an id
// range of the (domain_id, id) index; a UNION ALL rather than an OR, with
// which SQLite reads every row of the domain. The LIKE decides in both.
//
// Every match's id is read, in order, and counted here; only the page's
// are kept. A window (COUNT(*) OVER (), as on PostgreSQL) made SQLite
// write the matches to a temporary table: 1.2 times the cost with 16
// matches in 100,000 classes, twice with 1,389 or 12,500
// (docs/performance.md, "Twelfth pass").
func searchIDs(ctx context.Context, d db, f ClassFilter, where string, args []any, p Page) (ids []int64, total int64, err error) {
	q := "SELECT id FROM live_classes WHERE " + where + " ORDER BY id"
	if utf8.RuneCountInString(f.Search) >= 3 {
		// CROSS JOIN keeps the index as the outer loop: the other order
		// reads every class of the domain.
		q = `SELECT id FROM (
			SELECT c.id AS id FROM live_classes_title t CROSS JOIN live_classes c
				WHERE t.live_classes_title MATCH ? AND c.id = t.rowid AND ` + classMatch(d, "c.", f) + `
			UNION ALL SELECT id FROM live_classes WHERE ` + where + ` AND id > (SELECT indexed_upto FROM live_classes_title_state)
		) ORDER BY id`
		args = append(append([]any{ftsSearch(f.Search)}, args...), args...)
	}
	err = scanRows(ctx, d, q, args, func(r *sql.Rows) error {
		if total >= int64(p.Offset) && total < int64(p.Offset)+int64(p.Limit) {
			ids = append(ids, 0)
			if err := r.Scan(&ids[len(ids)-1]); err != nil {
				return err
			}
		}
		total++
		return nil
	})
	return ids, total, err
}

// ftsPhrase is an FTS5 query for text as one phrase: with the trigram
// tokenizer, the rows whose title contains text, case-insensitively.
func ftsPhrase(text string) string {
	return `"` + strings.ReplaceAll(text, `"`, `""`) + `"`
}

// ftsSearch is the FTS5 query a title search asks the index: the phrase
// of text, or for a text of more than searchEnds*2-2 characters, the
// phrases of its first and of its last searchEnds characters, ANDed. A
// phrase makes FTS5 seek and walk the posting list of each of its
// trigrams (a third of a search was the seeks alone): "History 103" is
// nine trigrams, its two ends six. A title that holds both ends but not
// the text is rare, and the LIKE on the folded title decides in any case.
// (ANDing trigrams that were not consecutive, without positions, let
// hundreds of such titles through at 1,000,000 classes: docs/performance.md,
// "Tenth pass".)
func ftsSearch(text string) string {
	r := []rune(text)
	if len(r) <= searchEnds*2-2 {
		return ftsPhrase(text)
	}
	return ftsPhrase(string(r[:searchEnds])) + " AND " + ftsPhrase(string(r[len(r)-searchEnds:]))
}

// searchEnds is how many characters of each end of a long search text the
// index is asked for: three trigrams each.
const searchEnds = 5

// DeleteLiveClass deletes a class and everything that hangs on it.
func (s *Store) DeleteLiveClass(ctx context.Context, domainID, id int64) error {
	return s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "DELETE FROM live_classes WHERE domain_id = ? AND id = ?", domainID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.NotFoundf("live class %d not found", id)
		}
		tx.unlist("live_classes", domainID, id)
		if err := deleteOwned(ctx, tx, domainID, lms.KindClass, id); err != nil {
			return err
		}
		return emit(ctx, tx, domainID, event.ClassDeletedEvent(id))
	})
}

// SetSittingsCancelled cancels (or re-activates) one sitting of a class by
// its sequence number, or every sitting when seq is 0.
func (s *Store) SetSittingsCancelled(ctx context.Context, domainID, classID int64, seq int, cancelled bool) error {
	return s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindClass, classID); err != nil {
			return err
		}
		q := "UPDATE class_occurrences SET cancelled = ? WHERE domain_id = ? AND class_id = ?"
		args := []any{lms.Flag(cancelled), domainID, classID}
		if seq != 0 {
			q += " AND seq = ?"
			args = append(args, seq)
		}
		_, err := tx.exec(ctx, q, args...)
		return err
	})
}
