package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/lectern-lms/lectern/internal/lms"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Group commit is SQLite's (PostgreSQL runs each transaction on its own
// connection), so these tests open SQLite stores.

// openSQLiteStore opens a migrated SQLite store in a new directory,
// closed when the test ends.
func openSQLiteStore(t *testing.T) *Store {
	t.Helper()
	return openSQLiteStoreIn(t, t.TempDir())
}

// openSQLiteStoreIn opens a migrated SQLite store in dir, closed when the
// test ends.
func openSQLiteStoreIn(t *testing.T, dir string) *Store {
	t.Helper()
	ctx := context.Background()
	st, err := Open(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

func openGroupStore(t *testing.T) (*Store, int64) {
	t.Helper()
	st := openSQLiteStore(t)
	d, _, err := st.CreateDomain(context.Background(), "A")
	if err != nil {
		t.Fatal(err)
	}
	return st, d.ID
}

// holdWriter starts a transaction function that blocks the group writer
// until release is called, so the functions queued meanwhile run in the
// same group as it. It returns the held call's outcome channel.
func holdWriter(t *testing.T, st *Store, domainID int64) (release func(), result <-chan error) {
	t.Helper()
	started, proceed := make(chan struct{}), make(chan struct{})
	out := make(chan error, 1)
	go func() {
		out <- st.tx(context.Background(), func(d db) error {
			close(started)
			<-proceed
			return insertUser(context.Background(), d, domainID, "held")
		})
	}()
	<-started
	return func() { close(proceed) }, out
}

// waitQueued waits until n calls are queued behind the held one.
func waitQueued(t *testing.T, st *Store, n int) {
	t.Helper()
	for range 5000 {
		if len(st.writer.queue) >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d calls queued, want %d", len(st.writer.queue), n)
}

func insertUser(ctx context.Context, d db, domainID int64, name string) error {
	_, err := insertUserRow(ctx, d, domainID, lms.User{Name: name, Username: name, Email: name + "@example.com", CreatedAt: time.Now()})
	if isUnique(err) {
		return fmt.Errorf("duplicate %s: %w", name, err)
	}
	return err
}

func userNames(t *testing.T, st *Store, domainID int64) map[string]bool {
	t.Helper()
	rows, err := st.read().query(context.Background(), "SELECT name FROM users WHERE domain_id = ?", domainID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	names := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names[n] = true
	}
	return names
}

// checkUserCount checks that the users counter (counted by the group
// writer, migration 0046) equals the rows and want.
func checkUserCount(t *testing.T, st *Store, domainID int64, want int) {
	t.Helper()
	checkCounter(t, st, domainID, countUsers, int64(want))
}

// checkCounter checks the domain's counter of kind against its rows (as
// countedKinds selects them) and against want.
func checkCounter(t *testing.T, st *Store, domainID int64, kind string, want int64) {
	t.Helper()
	ctx := context.Background()
	i := slices.IndexFunc(countedKinds, func(c countedKind) bool { return c.kind == kind })
	n, err := rowCount(ctx, st.read(), domainID, kind)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.read().count(ctx, "SELECT COUNT(*) FROM "+countedKinds[i].from, domainID)
	if err != nil {
		t.Fatal(err)
	}
	if n != rows || n != want {
		t.Errorf("%s counter %d, rows %d, want %d", kind, n, rows, want)
	}
}

// A function that fails inside a group undoes only its own writes (and
// what it counted); the others of the group commit, and each caller gets
// its own outcome.
func TestGroupCommitFailureUndoesOnlyItsOwnWork(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	release, held := holdWriter(t, st, dom)
	boom := errors.New("boom")
	type outcome struct {
		name string
		err  error
	}
	fns := []struct {
		name string
		fn   func(d db) error
		want error
	}{
		{"ok1", func(d db) error { return insertUser(ctx, d, dom, "ok1") }, nil},
		{"fails after writing", func(d db) error {
			if err := insertUser(ctx, d, dom, "undone"); err != nil {
				return err
			}
			return boom
		}, boom},
		{"ok2", func(d db) error { return insertUser(ctx, d, dom, "ok2") }, nil},
		// a unique violation inside the group, against a row of an
		// earlier function of the same group
		{"duplicate", func(d db) error { return insertUser(ctx, d, dom, "ok1") }, errUnique},
	}
	out := make(chan outcome, len(fns))
	for i, f := range fns {
		go func() { out <- outcome{f.name, st.tx(ctx, f.fn)} }()
		waitQueued(t, st, i+1) // queue them in order
	}
	release()
	if err := <-held; err != nil {
		t.Fatalf("held call: %v", err)
	}
	got := map[string]error{}
	for range fns {
		o := <-out
		got[o.name] = o.err
	}
	for _, f := range fns {
		if err := got[f.name]; (f.want == nil) != (err == nil) || (f.want != nil && !errors.Is(err, f.want)) {
			t.Errorf("%s: error %v, want %v", f.name, err, f.want)
		}
	}
	names := userNames(t, st, dom)
	for _, n := range []string{"held", "ok1", "ok2"} {
		if !names[n] {
			t.Errorf("user %s missing after the group's commit", n)
		}
	}
	if names["undone"] {
		t.Error("the failed function's user was committed")
	}
	checkUserCount(t, st, dom, 3)
}

// A caller whose function failed is answered after its group's commit:
// its error may come from an earlier function's write in the group (here
// a unique email), and what it reads next must show that write. A third
// function holds the group open until the failed caller has read, or
// for a quarter of a second at most: answered at once, the caller would
// read before the commit.
func TestGroupCommitFailedCallerSeesTheCommit(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	release, held := holdWriter(t, st, dom)
	first := make(chan error, 1)
	go func() { first <- st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, "taken") }) }()
	waitQueued(t, st, 1)
	type outcome struct {
		err  error
		seen int64 // the users a read counted once err came
	}
	dup, read := make(chan outcome, 1), make(chan struct{})
	go func() {
		err := st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, "taken") })
		seen, cerr := st.read().count(ctx, "SELECT COUNT(*) FROM users WHERE domain_id = ? AND name IN ('taken', 'last')", dom)
		close(read)
		dup <- outcome{errors.Join(err, cerr), seen}
	}()
	waitQueued(t, st, 2)
	last := make(chan error, 1)
	go func() {
		last <- st.tx(ctx, func(d db) error {
			select {
			case <-read:
			case <-time.After(250 * time.Millisecond):
			}
			return insertUser(ctx, d, dom, "last")
		})
	}()
	waitQueued(t, st, 3)
	release()
	for _, c := range []<-chan error{held, first, last} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	o := <-dup
	if !errors.Is(o.err, errUnique) {
		t.Fatalf("duplicate email: error %v, want a unique violation", o.err)
	}
	if o.seen != 2 {
		t.Errorf("after its error the caller read %d of the group's 2 users: the group was not committed yet", o.seen)
	}
}

// A function sees its own writes, and those of the functions before it
// in its group.
func TestGroupCommitReadsYourWrites(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	release, held := holdWriter(t, st, dom)
	var seen int64
	errc := make(chan error, 1)
	go func() {
		errc <- st.tx(ctx, func(d db) error {
			if err := insertUser(ctx, d, dom, "mine"); err != nil {
				return err
			}
			var err error
			seen, err = d.count(ctx, "SELECT COUNT(*) FROM users WHERE domain_id = ? AND name IN ('held', 'mine')", dom)
			return err
		})
	}()
	waitQueued(t, st, 1)
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if seen != 2 {
		t.Errorf("the function saw %d of its own and the earlier function's users, want 2", seen)
	}
}

// A panic in a function is raised again in its caller, after its writes
// were rolled back; the group's other functions commit.
func TestGroupCommitPanicStaysWithItsCaller(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	release, held := holdWriter(t, st, dom)
	recovered := make(chan any, 1)
	go func() {
		defer func() { recovered <- recover() }()
		st.tx(ctx, func(d db) error {
			if err := insertUser(ctx, d, dom, "panicked"); err != nil {
				return err
			}
			panic("bad function")
		})
	}()
	waitQueued(t, st, 1)
	okc := make(chan error, 1)
	go func() { okc <- st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, "after") }) }()
	waitQueued(t, st, 2)
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if p := <-recovered; p != "bad function" {
		t.Errorf("caller recovered %v, want the function's panic", p)
	}
	if err := <-okc; err != nil {
		t.Fatal(err)
	}
	names := userNames(t, st, dom)
	if names["panicked"] || !names["after"] || !names["held"] {
		t.Errorf("users after the group: %v, want held and after", names)
	}
	checkUserCount(t, st, dom, 2)
}

// A caller whose context ends while its function is queued gets the
// context's error and its function never runs; a function that has
// started runs to the end and commits even if its caller's context ends
// meanwhile (an interrupted statement would roll back the whole group).
func TestGroupCommitCancellation(t *testing.T) {
	st, dom := openGroupStore(t)
	release, held := holdWriter(t, st, dom)
	queuedCtx, cancelQueued := context.WithCancel(context.Background())
	ran := make(chan struct{}, 1)
	queuedErr := make(chan error, 1)
	go func() {
		queuedErr <- st.tx(queuedCtx, func(d db) error {
			ran <- struct{}{}
			return insertUser(queuedCtx, d, dom, "cancelled")
		})
	}()
	waitQueued(t, st, 1)
	cancelQueued()
	if err := <-queuedErr; !errors.Is(err, context.Canceled) {
		t.Errorf("queued call cancelled: error %v, want context.Canceled", err)
	}

	runCtx, cancelRun := context.WithCancel(context.Background())
	inside := make(chan struct{})
	cont := make(chan struct{})
	runErr := make(chan error, 1)
	go func() {
		runErr <- st.tx(runCtx, func(d db) error {
			close(inside)
			<-cont
			// its context is cancelled by now: the statement still runs
			return insertUser(runCtx, d, dom, "started")
		})
	}()
	waitQueued(t, st, 2) // behind the abandoned call, still in the queue
	release()
	<-inside
	cancelRun()
	close(cont)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-runErr; err != nil {
		t.Errorf("started call whose context ended: %v, want its commit", err)
	}
	select {
	case <-ran:
		t.Error("the cancelled queued function ran")
	default:
	}
	names := userNames(t, st, dom)
	if names["cancelled"] || !names["started"] || !names["held"] {
		t.Errorf("users: %v, want held and started", names)
	}
	checkUserCount(t, st, dom, 2)
}

// Many concurrent writers, some failing on a duplicate: every
// acknowledged write is there, no rejected one is, and the counter is
// exact.
func TestGroupCommitConcurrentWriters(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	const writers, each = 16, 40
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// writers w and w^1 use the same names: one of each pair wins
				name := fmt.Sprintf("u%d_%d", w/2, i)
				err := st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, name) })
				if err == nil {
					mu.Lock()
					if acked[name] {
						t.Errorf("%s acknowledged twice", name)
					}
					acked[name] = true
					mu.Unlock()
				} else if !errors.Is(err, errUnique) {
					t.Errorf("%s: %v", name, err)
				}
			}
		}()
	}
	wg.Wait()
	names := userNames(t, st, dom)
	if len(acked) != writers/2*each {
		t.Errorf("%d writes acknowledged, want %d", len(acked), writers/2*each)
	}
	for n := range acked {
		if !names[n] {
			t.Errorf("acknowledged user %s missing", n)
		}
	}
	checkUserCount(t, st, dom, len(acked))
}

// Close answers the calls still queued with an error instead of leaving
// them waiting.
func TestGroupCommitClose(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	release, held := holdWriter(t, st, dom)
	queued := make(chan error, 1)
	go func() { queued <- st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, "late") }) }()
	waitQueued(t, st, 1)
	closed := make(chan struct{})
	go func() { st.writer.close(); close(closed) }()
	release()
	if err := <-held; err != nil {
		t.Errorf("the running group: %v, want its commit", err)
	}
	<-closed
	// The queued call either joined the running group or was refused.
	if err := <-queued; err != nil && !errors.Is(err, errStoreClosed) {
		t.Errorf("queued call at close: %v", err)
	}
	if err := st.tx(ctx, func(d db) error { return nil }); !errors.Is(err, errStoreClosed) {
		t.Errorf("call after close: %v, want errStoreClosed", err)
	}
}

// TestInsertID: an insert returns its row's id on SQLite, where it is
// read from the connection after the statement (the triggers of the
// tables below insert rows of their own meanwhile), also for the second
// of two inserts in one group commit; an insert that writes no row is
// sql.ErrNoRows and one that writes two an error.
func TestInsertID(t *testing.T) {
	st, domainID := openGroupStore(t)
	ctx := context.Background()
	for i, q := range []string{
		"INSERT INTO users (domain_id, name, username, email, email_key, created_at) VALUES (?, 'A', 'a', ?, ?, '2030-01-01T00:00:00Z')",
		"INSERT INTO courses (domain_id, name, subtitle, instructor_description, highlight, description, alias, status, created_at, updated_at) VALUES (?, ?, '', '', '', '', '', 'unpublished', '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z')",
	} {
		var ids [2]int64
		err := st.tx(ctx, func(d db) error {
			for j := range ids {
				args := []any{domainID, fmt.Sprintf("n%d-%d@example.com", i, j)}
				if i == 0 {
					args = append(args, args[1])
				}
				var err error
				if ids[j], err = d.insert(ctx, q, args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		table := strings.Fields(q)[2]
		for j, id := range ids {
			var got int64
			col := map[string]string{"users": "email", "courses": "name"}[table]
			if err := st.read().queryRow(ctx, "SELECT id FROM "+table+" WHERE "+col+" = ?",
				fmt.Sprintf("n%d-%d@example.com", i, j)).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != id || id == 0 {
				t.Errorf("%s insert %d returned id %d, the row has %d", table, j, id, got)
			}
		}
	}
	err := st.tx(ctx, func(d db) error {
		_, err := d.insert(ctx, "INSERT INTO user_groups (domain_id, name) SELECT domain_id, name FROM user_groups WHERE 0")
		return err
	})
	if !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("an insert of no row: %v, want sql.ErrNoRows", err)
	}
	err = st.tx(ctx, func(d db) error {
		_, err := d.insert(ctx, "INSERT INTO courses (domain_id, name, subtitle, instructor_description, highlight, description, alias, status, created_at, updated_at) SELECT domain_id, name || ' copy', '', '', '', '', '', 'unpublished', created_at, updated_at FROM courses WHERE domain_id = ?", domainID)
		return err
	})
	if err == nil || errors.Is(err, sql.ErrNoRows) {
		t.Errorf("an insert of two rows: %v, want an error", err)
	}
}

// Writes whose goroutines are ready to run when the writer would commit
// join its group while writes come together: the writer yields its
// processor before it commits. With one processor, ten callers started
// together are all ready before the first group commits, so one commit
// holds them all; without the yield most runs took ten commits, one a
// caller.
func TestGroupCommitGathersCallersReadyToRun(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	// A group of two: writes come together from now on.
	release, held := holdWriter(t, st, dom)
	queued := make(chan error, 1)
	go func() { queued <- st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, "queued") }) }()
	waitQueued(t, st, 1)
	release()
	if err := errors.Join(<-held, <-queued); err != nil {
		t.Fatal(err)
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const callers = 10
	commits := st.gen.Load()
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			if err := st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, fmt.Sprintf("u%d", i)) }); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := st.gen.Load() - commits; n != 1 {
		t.Errorf("%d callers ready together took %d commits, want 1", callers, n)
	}
	checkUserCount(t, st, dom, callers+2)
}

// The writer yields only within yieldWindow of a group of more than one:
// writes that come one at a time are committed without it.
func TestGroupCommitYieldsWhileWritesComeTogether(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		sharedAt time.Time
		want     int
	}{
		{"never together", time.Time{}, 0},
		{"together just now", now, yieldsBeforeCommit},
		{"together within the window", now.Add(-yieldWindow + time.Millisecond), yieldsBeforeCommit},
		{"together before the window", now.Add(-yieldWindow), 0},
	} {
		g := &groupWriter{sharedAt: tc.sharedAt}
		if got := g.yields(now); got != tc.want {
			t.Errorf("%s: %d yields, want %d", tc.name, got, tc.want)
		}
	}
}

// A function run without a savepoint (txFirstWriteDecides) whose first
// write fails leaves the group alone: SQLite undid the failed statement,
// the others of the group commit, and the caller gets its own error. The
// classes created in the group are counted once, before the commit
// (migration 0046), and a function that failed adds nothing to a counter.
func TestGroupCommitFirstWriteDecides(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	release, held := holdWriter(t, st, dom)
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	class := func(title string, published int) error {
		_, err := st.CreateLiveClass(ctx, dom, lms.LiveClass{Title: title, Date: "2030-01-02", StartMinute: 540,
			EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: published,
			Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		return err
	}
	boom := errors.New("boom")
	countThenFail := func(d db) error {
		d.countInserted(dom, countLiveClasses, 1)
		return boom
	}
	calls := []struct {
		name string
		run  func() error // queues one call
		want error
	}{
		{"user", func() error {
			return st.txFirstWriteDecides(ctx, func(d db) error { return insertUser(ctx, d, dom, "u1") })
		}, nil},
		{"same email", func() error {
			return st.txFirstWriteDecides(ctx, func(d db) error { return insertUser(ctx, d, dom, "u1") })
		}, errUnique},
		{"published class", func() error { return class("A", 1) }, nil},
		{"counted, then failed", func() error { return st.tx(ctx, countThenFail) }, boom},
		{"unpublished class", func() error { return class("B", 0) }, nil},
		{"failed before writing", func() error { return st.txFirstWriteDecides(ctx, countThenFail) }, boom},
		{"user after", func() error {
			return st.txFirstWriteDecides(ctx, func(d db) error { return insertUser(ctx, d, dom, "u2") })
		}, nil},
	}
	out := make(chan error, len(calls))
	for i, c := range calls {
		go func() {
			err := c.run()
			if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
				err = fmt.Errorf("%s: error %v, want %v", c.name, err, c.want)
			} else {
				err = nil
			}
			out <- err
		}()
		waitQueued(t, st, i+1) // one group, in this order
	}
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for range calls {
		if err := <-out; err != nil {
			t.Error(err)
		}
	}
	names := userNames(t, st, dom)
	if len(names) != 3 || !names["held"] || !names["u1"] || !names["u2"] {
		t.Errorf("users after the group: %v, want held, u1 and u2", names)
	}
	checkUserCount(t, st, dom, 3)
	checkCounter(t, st, dom, countLiveClasses, 2)
	checkCounter(t, st, dom, countLiveClassesPublished, 1)
}

// A function run without a savepoint that fails after a write cannot be
// undone alone: its whole group is rolled back, and every caller in it
// gets the error. Nothing of the group is written; a call queued behind
// the group runs in the next one.
func TestGroupCommitFirstWriteDecidesFailingLate(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	release, held := holdWriter(t, st, dom)
	boom := errors.New("boom")
	ok1 := make(chan error, 1)
	go func() { ok1 <- st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, "ok1") }) }()
	waitQueued(t, st, 1)
	late := make(chan error, 1)
	go func() {
		late <- st.txFirstWriteDecides(ctx, func(d db) error {
			if err := insertUser(ctx, d, dom, "late"); err != nil {
				return err
			}
			return boom
		})
	}()
	waitQueued(t, st, 2)
	release()
	for name, c := range map[string]<-chan error{"held": held, "ok1": ok1, "late": late} {
		if err := <-c; !errors.Is(err, boom) {
			t.Errorf("%s: error %v, want the late failure", name, err)
		}
	}
	if names := userNames(t, st, dom); len(names) != 0 {
		t.Errorf("users after the lost group: %v, want none", names)
	}
	checkUserCount(t, st, dom, 0)
	if err := st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, "next") }); err != nil {
		t.Fatalf("a write after the lost group: %v", err)
	}
	checkUserCount(t, st, dom, 1)
}

// A function run without a savepoint may fail with an error that made
// SQLite roll the whole transaction back (a full disk; here the function
// rolls it back itself, behind the store's back). The writer then finds
// no transaction open, and the group is lost: nothing of it is written.
// The call queued after it runs in a group of its own; in the same one,
// its statements would have committed on their own, before a COMMIT that
// failed.
func TestGroupCommitFirstWriteDecidesTransactionGone(t *testing.T) {
	st, dom := openGroupStore(t)
	ctx := context.Background()
	release, held := holdWriter(t, st, dom)
	full := errors.New("database or disk is full")
	gone := make(chan error, 1)
	go func() {
		gone <- st.txFirstWriteDecides(ctx, func(d db) error {
			if _, err := d.r.ExecContext(ctx, "ROLLBACK"); err != nil {
				return err
			}
			return full
		})
	}()
	waitQueued(t, st, 1)
	after := make(chan error, 1)
	go func() { after <- st.tx(ctx, func(d db) error { return insertUser(ctx, d, dom, "after") }) }()
	waitQueued(t, st, 2)
	release()
	if err := <-held; !errors.Is(err, full) {
		t.Errorf("held: error %v, want the failure that ended the transaction", err)
	}
	if err := <-gone; !errors.Is(err, full) {
		t.Errorf("failed call: error %v, want its own", err)
	}
	if err := <-after; err != nil {
		t.Errorf("the call queued after the lost group: %v", err)
	}
	if names := userNames(t, st, dom); len(names) != 1 || !names["after"] {
		t.Errorf("users after the lost group and the next: %v, want after alone", names)
	}
	checkUserCount(t, st, dom, 1)
}
