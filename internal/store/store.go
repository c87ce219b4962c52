// Package store is Lectern's SQL store. One implementation serves SQLite (the
// embedded default) and PostgreSQL; queries are written with ? placeholders
// and rebound for PostgreSQL. Every query that touches tenant data is scoped
// by domain id.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"           // registers the "sqlite" driver (pure Go)
)

// Store is a handle on the database. It is safe for concurrent use.
type Store struct {
	pg bool
	// rdb serves reads. For SQLite it is a pool of connections on the same
	// file as wdb; for PostgreSQL it is wdb itself.
	rdb *sql.DB
	// wdb serves writes. For SQLite it holds a single connection, so writers
	// queue in Go instead of failing with SQLITE_BUSY.
	wdb *sql.DB
	// sdb, on PostgreSQL 12 and later, holds the connections of the title
	// searches that run from generic plans (pgGenericSearchIDs); nil on
	// SQLite and older PostgreSQL, whose searches are all planned for
	// their text.
	sdb *sql.DB
	// observe, when set, receives each statement's latency (observe.go).
	// Atomic: the title indexer may write while the server sets it.
	observe atomic.Pointer[func(op string, d time.Duration)]
	// writer groups concurrent write transactions into one commit on
	// SQLite (groupcommit.go); nil on PostgreSQL.
	writer *groupWriter
	// titles keeps the SQLite title index behind the table
	// (titleindex.go); nil on PostgreSQL.
	titles *titleIndexer
	// checkpoints copies SQLite's log into the database file behind the
	// writer (checkpoint.go); nil on PostgreSQL.
	checkpoints *checkpointer
	// titleSample steers PostgreSQL's title searches (titlestats.go).
	titleSample titleSampler
	// searches holds the title searches running at once (searchInTurn).
	searches gate
	// ids holds the ids of unfiltered listings (idindex.go); idsMu
	// guards the map.
	idsMu sync.RWMutex
	ids   map[idsKey]*idIndex
	// unlisting is held by a commit that deletes listed rows until their
	// ids are out of ids, and read-held by a check of ids against the
	// database (idindex.go); unlistings counts those commits.
	unlisting  sync.RWMutex
	unlistings atomic.Int64
	// keys remembers verified API keys for KeyCacheTTL (keycache.go).
	keys keyCache
	// gen moves on after each write transaction of this Store commits
	// (or fails to); the record caches serve an entry only while it has
	// not moved (recordcache.go).
	gen atomic.Uint64
	// hooks holds the domains' webhook endpoints for emit (SQLite).
	hooks        hookCache
	cacheRecords bool
	recordTTL    time.Duration
	recordClock  func() time.Time // time.Now; not Now, which tests may stop
	users        recordCache[recordKey, lms.User]
	courses      recordCache[recordKey, lms.Course]
	classes      recordCache[recordKey, lms.LiveClass]
	// Pages keep their records apart from point reads, so that a crawl
	// through a listing does not push out the records read one by one.
	listedClasses recordCache[recordKey, lms.LiveClass] // with sittings
	listedUsers   recordCache[recordKey, lms.User]      // as listings read them (userListCols)
	listedCourses recordCache[recordKey, CourseName]
	counts        recordCache[countKey, int64]
	// Now is the clock (time.Now when nil): the same one the APIs use,
	// set from Options.Now.
	Now func() time.Time
}

// Options configures Open.
type Options struct {
	// DatabaseURL selects PostgreSQL when it starts with postgres:// or
	// postgresql://. Empty means SQLite at DataDir/lectern.db; sqlite:PATH or
	// file:PATH name another SQLite file.
	DatabaseURL string
	DataDir     string
	// Now is the store's clock; nil means time.Now.
	Now func() time.Time
	// CacheRecords answers point reads of a user, a course or a live
	// class, the records of listings' pages (users, classes, course
	// names), and unfiltered listings' totals and ids, from memory
	// (recordcache.go, idindex.go). Set it only in a process that
	// is the only writer of those records: every write through this Store
	// is seen at once, but another process's (another node's) only after
	// RecordCacheTTL. The server sets it unless it is a cluster node.
	CacheRecords bool
}

// Open connects to the database. It does not migrate; call Migrate.
func Open(ctx context.Context, o Options) (*Store, error) {
	s, err := open(ctx, o)
	if err != nil {
		return nil, err
	}
	s.Now = o.Now
	s.cacheRecords = o.CacheRecords
	s.recordTTL = RecordCacheTTL
	s.recordClock = time.Now
	s.listedClasses.size = listedRecordsSize
	s.listedUsers.size = listedRecordsSize
	s.listedCourses.size = listedRecordsSize
	return s, nil
}

func open(ctx context.Context, o Options) (*Store, error) {
	u := o.DatabaseURL
	switch {
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
		return openPostgres(ctx, u)
	case u == "":
		if o.DataDir == "" {
			o.DataDir = "."
		}
		if err := os.MkdirAll(o.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
		return openSQLite(ctx, filepath.Join(o.DataDir, "lectern.db"))
	case strings.HasPrefix(u, "sqlite:"):
		return openSQLite(ctx, strings.TrimPrefix(strings.TrimPrefix(u, "sqlite:"), "//"))
	case strings.HasPrefix(u, "file:"):
		return openSQLite(ctx, strings.TrimPrefix(u, "file:"))
	}
	return nil, fmt.Errorf("database url: unsupported scheme in %q (want postgres://... or empty for SQLite)", redactURL(u))
}

func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to postgres at %s: %w", redactURL(dsn), err)
	}
	s := &Store{pg: true, rdb: db, wdb: db, searches: make(gate, readsAtOnce())}
	var version int
	if err := db.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres version: %w", err)
	}
	if version >= 120000 { // plan_cache_mode is PostgreSQL 12's
		if s.sdb, err = openSearchConns(dsn); err != nil {
			db.Close()
			return nil, fmt.Errorf("open postgres: %w", err)
		}
	}
	return s, nil
}

// openSearchConns opens the PostgreSQL connections of the title searches
// that run from a generic plan (pgGenericSearchIDs): every statement on them
// is planned once per connection (plan_cache_mode, set when each one
// connects) and its plan reused, where the store's other connections plan
// a search each time. They are as many as the searches run at once.
func openSearchConns(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(readsAtOnce())
	db.SetMaxIdleConns(readsAtOnce())
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

// SQLiteDSN is the name the "sqlite" driver opens the database file at
// path by, with a busy timeout: a connection waits up to 10 s for another
// one's write lock (the group writer's, the checkpointer's) instead of
// failing with SQLITE_BUSY. More options follow as "&name=value".
func SQLiteDSN(path string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(10000)"
}

func openSQLite(ctx context.Context, path string) (*Store, error) {
	usePageCacheBlock(readsAtOnce())
	// busy_timeout (SQLiteDSN's) first so that the following pragmas wait
	// rather than fail.
	base := SQLiteDSN(path) + "&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	// The writer checkpoints the log itself only once it holds
	// writerCheckpointPages; the checkpointer copies it before that
	// (checkpoint.go).
	wdb, err := openSQLiteDB(base + "&_txlock=immediate" + fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)&_pragma=cache_size(-%d)", writerCheckpointPages, writerCacheKiB))
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	if err := wdb.PingContext(ctx); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open sqlite file %s: %w", path, err)
	}
	// Readers keep a smaller page cache than the writer (readerCacheKiB):
	// with 8 of them at SQLite's 2 MiB, the peak RSS under load at 1M
	// classes was 95 MB, 72 MB at 512 KiB, with the same rates
	// (docs/performance.md). How many readers: readsAtOnce.
	rdb, err := openSQLiteDB(base + fmt.Sprintf("&_pragma=query_only(1)&_pragma=cache_size(-%d)", readerCacheKiB))
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	rdb.SetMaxOpenConns(readsAtOnce())
	rdb.SetMaxIdleConns(readsAtOnce())
	cdb, err := openSQLiteDB(base + fmt.Sprintf("&_pragma=cache_size(-%d)", checkpointerCacheKiB))
	if err != nil {
		wdb.Close()
		rdb.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	cdb.SetMaxOpenConns(1)
	cdb.SetMaxIdleConns(1)
	cdb.SetConnMaxIdleTime(0)
	s := &Store{rdb: rdb, wdb: wdb, searches: make(gate, readsAtOnce())}
	s.checkpoints = newCheckpointer(cdb)
	s.writer = newGroupWriter(s)
	s.titles = newTitleIndexer(s)
	return s, nil
}

// readsAtOnce is the number of SQLite read connections, and of title
// searches run at once (searchInTurn): twice the CPUs Go runs on, at
// least 4.
//
// A read keeps its SQLite connection busy only while it computes, so more
// connections than that add no throughput, and each one holds its own
// schema, statements and page cache (about 3 MB under load): on 2 CPUs
// with 1M classes, 4 readers instead of 8 answered at the same or a lower
// CPU cost per request, with a peak RSS of 58 MB instead of 70-72 MB
// (docs/performance.md, "Memory").
//
// A title search on PostgreSQL is the database's CPU. More of them at once
// than that only share the CPU and each takes longer: at 100,000 classes,
// with 32 clients searching and PostgreSQL on the same 2 CPUs, the slowest
// hundredth took 34-68 ms with 4 at once against 78-124 ms with up to the
// pool's 20, at the same or a higher rate (docs/performance.md,
// "Twenty-first pass").
func readsAtOnce() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// Close indexes the classes' titles not yet in the title index (SQLite),
// and closes every connection.
func (s *Store) Close() error {
	var err error
	if s.titles != nil {
		if e := s.titles.close(); e != nil {
			err = fmt.Errorf("store: index class titles: %w", e)
		}
	}
	if s.writer != nil {
		s.writer.close()
	}
	if s.checkpoints != nil {
		if e := s.checkpoints.close(); err == nil {
			err = e
		}
	}
	if e := s.wdb.Close(); err == nil {
		err = e
	}
	if s.rdb != s.wdb {
		if e := s.rdb.Close(); err == nil {
			err = e
		}
	}
	if s.sdb != nil {
		if e := s.sdb.Close(); err == nil {
			err = e
		}
	}
	return err
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.PingContext(ctx); err != nil {
		return err
	}
	var one int
	return s.rdb.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Postgres reports whether the store runs on PostgreSQL.
func (s *Store) Postgres() bool { return s.pg }

// runner is what *sql.DB and *sql.Tx have in common.
type runner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// db runs queries written with ? placeholders on either dialect.
type db struct {
	r   runner
	pg  bool
	obs func(op string, d time.Duration)
	s   *Store // for its clock
	// detached runs statements without their context's cancellation: set
	// inside a group commit, where an interrupted statement would roll
	// back the other callers' work (groupcommit.go).
	detached bool
	// uninterrupted runs a statement whose context is still live when it
	// starts without that context's cancellation: set on SQLite's read
	// connections. With a context that can end, database/sql and the SQLite
	// driver each start a goroutine per statement to watch it: about a
	// fifth of a point read's allocations (docs/performance.md, fourth
	// pass).
	// A read of SQLite is a page or a few rows and ends in milliseconds; a
	// context that ended before the statement still stops it.
	uninterrupted bool
	// unlisted collects, in a write transaction, the rows of unfiltered
	// listings it deleted, to take out of the ids held in memory when it
	// commits (idindex.go).
	unlisted *[]listedRow
	// counted collects, in a write transaction on SQLite, what its inserts
	// add to counters that no trigger keeps (countInserted).
	counted *[]countDelta
	// wrote, when set, counts the statements exec ran without an error:
	// the group writer's check that a function run without a savepoint
	// failed before it changed anything (txFirstWriteDecides).
	wrote *int
}

// now is the store's clock (see Store.now).
func (d db) now() time.Time { return d.s.now() }

func (d db) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	defer d.timed("exec", time.Now())
	if !d.pg && changesHooks(q) {
		d.s.hooks.clear()
	}
	res, err := d.r.ExecContext(d.ctx(ctx), rebind(q, d.pg), args...)
	if err == nil && d.wrote != nil {
		*d.wrote++
	}
	return res, err
}

func (d db) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	defer d.timed("query", time.Now())
	return d.r.QueryContext(d.ctx(ctx), rebind(q, d.pg), args...)
}

func (d db) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	defer d.timed("query_row", time.Now())
	return d.r.QueryRowContext(d.ctx(ctx), rebind(q, d.pg), args...)
}

// ctx is the context statements run with (see detached, uninterrupted).
func (d db) ctx(ctx context.Context) context.Context {
	if d.detached || d.uninterrupted && ctx.Err() == nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// insert runs an INSERT of one row and returns its new id: on PostgreSQL
// by RETURNING id; on SQLite from the connection's last inserted rowid,
// which is the id of every table it is used on (id INTEGER PRIMARY KEY;
// a trigger's own inserts do not change it once the statement is done).
// SQLite gathers a RETURNING clause's rows in a temporary table before
// the first is read, which was a tenth of a users/create's insert.
// An insert that wrote no row (none is ever skipped today) is
// sql.ErrNoRows on both.
func (d db) insert(ctx context.Context, q string, args ...any) (int64, error) {
	if d.pg {
		var id int64
		err := d.queryRow(ctx, q+" RETURNING id", args...).Scan(&id)
		return id, mapErr(err)
	}
	res, err := d.exec(ctx, q, args...)
	if err != nil {
		return 0, mapErr(err)
	}
	switch n, err := res.RowsAffected(); {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, sql.ErrNoRows
	case n > 1:
		return 0, fmt.Errorf("store: an insert of one row wrote %d", n)
	}
	return res.LastInsertId()
}

// count runs a query that returns one integer.
func (d db) count(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	err := d.queryRow(ctx, q, args...).Scan(intDest(&n))
	return n, err
}

// exists runs a SELECT 1 ... query and reports whether it found a row.
func (d db) exists(ctx context.Context, q string, args ...any) (bool, error) {
	var one int
	err := d.queryRow(ctx, q, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// on returns a handle running statements on r, with the store's dialect
// and query observer.
func (s *Store) on(r runner) db { return db{r: r, pg: s.pg, obs: s.observer(), s: s} }

// read returns a handle for reads outside a transaction.
func (s *Store) read() db {
	d := s.on(s.rdb)
	d.uninterrupted = !s.pg
	return d
}

// tx runs fn in a write transaction, committing if fn returns nil. On
// SQLite, fn may share the transaction and its commit with other callers'
// functions, each in a savepoint of its own (groupcommit.go); it returns
// once the commit is durable.
func (s *Store) tx(ctx context.Context, fn func(d db) error) error {
	return s.runTx(ctx, fn, false)
}

// txFirstWriteDecides is tx for a function whose first write is the
// only statement its input can make fail (a unique email taken), and that
// writes nothing before it: on SQLite it shares a group's transaction
// without a savepoint of its own, which was a tenth of a class's cost in
// the group writer (docs/performance.md, "Forty-ninth pass"). If it fails
// after a write all the same (a full disk), the group it shared is rolled
// back and each of its callers gets the error (groupWriter.callUnguarded).
func (s *Store) txFirstWriteDecides(ctx context.Context, fn func(d db) error) error {
	return s.runTx(ctx, fn, true)
}

func (s *Store) runTx(ctx context.Context, fn func(d db) error, firstWriteDecides bool) error {
	if s.writer != nil {
		return s.writer.run(ctx, fn, firstWriteDecides)
	}
	t, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	var unlisted []listedRow
	var counted []countDelta
	d := s.on(t)
	d.unlisted, d.counted = &unlisted, &counted
	if err := fn(d); err != nil {
		t.Rollback()
		return err
	}
	if err := writeCounted(ctx, d, counted); err != nil {
		t.Rollback()
		return err
	}
	defer s.wrote()
	if err := s.commitUnlisting(t, unlisted); err != nil {
		return mapErr(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// rebind turns ? placeholders into $1, $2, ... for PostgreSQL. Queries in
// this package never put a literal ? inside a string.
func rebind(q string, pg bool) string {
	if !pg || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// redactURL hides a password in a database URL so it can be printed.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable url)"
	}
	return u.Redacted()
}

// timeFormat is how instants are stored: UTC, fixed width, so text order is
// time order on both databases.
const timeFormat = "2006-01-02T15:04:05Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// storedTime scans a stored instant into *t. A value that is not one (a
// corrupt row) is an error, so the read fails loudly instead of going on
// with a zero time. optionalTime is the same for a column that holds ""
// for zero. Each holds one pointer, so it goes into a scan's []any
// without an allocation.
type (
	storedTime   struct{ t *time.Time }
	optionalTime struct{ t *time.Time }
)

// scannedText is a text column's value as the drivers give it to a
// sql.Scanner: a string or bytes, or nil for NULL (null true, s ""). ok is
// false for any other type.
func scannedText(v any) (s string, null, ok bool) {
	switch v := v.(type) {
	case string:
		return v, false, true
	case []byte:
		return string(v), false, true
	case nil:
		return "", true, true
	}
	return "", false, false
}

// timeCol scans a required instant into t.
func timeCol(t *time.Time) storedTime { return storedTime{t} }

// optTimeCol scans an optional instant ("" for zero) into t.
func optTimeCol(t *time.Time) optionalTime { return optionalTime{t} }

// Scan implements sql.Scanner.
func (st storedTime) Scan(v any) error { return scanTime(v, st.t, false) }

// Scan implements sql.Scanner.
func (ot optionalTime) Scan(v any) error { return scanTime(v, ot.t, true) }

func scanTime(v any, dst *time.Time, optional bool) error {
	s, _, ok := scannedText(v)
	if !ok {
		return fmt.Errorf("store: stored time is a %T, not text", v)
	}
	if s == "" && optional {
		*dst = time.Time{}
		return nil
	}
	t, err := parseTime(s)
	if err != nil {
		return fmt.Errorf("store: corrupt stored time %q: %w", s, err)
	}
	*dst = t
	return nil
}

// intCol scans an integer column into *p. database/sql converts the
// driver's int64 into an int by formatting it as text and parsing that
// back, through reflection, and into an int64 by reflection; this
// assigns it. It holds one pointer, so it goes into a scan's []any
// without an allocation. Text holding a number reads as database/sql
// reads it; NULL or anything else is an error, as it was there.
type intCol[T ~int | ~int64] struct{ p *T }

// intDest returns the intCol of p.
func intDest[T ~int | ~int64](p *T) intCol[T] { return intCol[T]{p} }

// Scan implements sql.Scanner.
func (c intCol[T]) Scan(v any) error {
	switch v := v.(type) {
	case int64:
		*c.p = T(v)
		return nil
	case string, []byte:
		s, _, _ := scannedText(v)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("store: integer column holds %q", s)
		}
		*c.p = T(n)
		return nil
	}
	return fmt.Errorf("store: integer column holds a %T", v)
}

// parseTime reads a stored instant (timeFormat). It reads the fixed-width
// form directly, which time.Parse spent about 8% of a page of users on, and
// leaves anything else, valid or not, to time.Parse.
func parseTime(s string) (time.Time, error) {
	if len(s) == len(timeFormat) && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == 'Z' {
		year, ok1 := digits(s[0:4])
		month, ok2 := digits(s[5:7])
		day, ok3 := digits(s[8:10])
		hour, ok4 := digits(s[11:13])
		minute, ok5 := digits(s[14:16])
		sec, ok6 := digits(s[17:19])
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && month >= 1 && month <= 12 && day >= 1 &&
			day <= daysIn(time.Month(month), year) && hour < 24 && minute < 60 && sec < 60 {
			return time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC), nil
		}
	}
	return time.Parse(timeFormat, s)
}

// digits reads s as a decimal number of ASCII digits only.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// daysIn is the number of days in month m of year.
func daysIn(m time.Month, year int) int {
	switch m {
	case time.February:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// now is the store's clock (Options.Now), in UTC, truncated to seconds
// (the stored precision). It is the one clock of every stored instant and
// of every rule the store applies (a discount's expiry, a login link's).
func (s *Store) now() time.Time { return s.clock().UTC().Truncate(time.Second) }

func (s *Store) clock() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// placeholders returns "?, ?, ?" for n values.
func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// inIDs returns the placeholders and arguments of "IN (...)" over ids,
// padded with the last id to the next power of two: the same rows match,
// and a list of any length is one of a few statements, so the prepared
// statement caches (per connection, bounded) are not filled with one
// statement per length. ids must not be empty.
func inIDs(ids []int64) (string, []any) {
	n := 1
	for n < len(ids) {
		n *= 2
	}
	args := make([]any, n)
	for i := range args {
		args[i] = ids[min(i, len(ids)-1)]
	}
	return placeholders(n), args
}

// idsCond returns a condition on id, to follow "id ", and its arguments,
// that holds for the rows of ids (ascending, not empty) and, on SQLite,
// for the others between the first and the last: there the range is one
// seek and a short scan. On PostgreSQL it is "IN (...)" (inIDs): a
// prepared statement is planned for its parameters' values at each of its
// first five runs, and after that with a plan made once when that plan
// costs about as much, which for a range of parameters it never does (it
// is costed as a two-hundredth of the table, 500 rows at 100,000
// classes). Each page read through a range was planned again, about two
// fifths of PostgreSQL's CPU for the page (docs/performance.md,
// "Forty-third pass").
func idsCond(d db, ids []int64) (string, []any) {
	if d.pg {
		in, args := inIDs(ids)
		return "IN (" + in + ")", args
	}
	return "BETWEEN ? AND ?", []any{ids[0], ids[len(ids)-1]}
}
