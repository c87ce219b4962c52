package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit on SQLite.
//
// SQLite has one writer, so write transactions queue for the single
// writer connection, and each pays a commit: the WAL frames of every page
// it changed are written (one pwrite each), and now and then the writer
// checkpoints the log (checkpoint.go). Under concurrent writes most of a
// transaction's time is that commit.
//
// The group writer runs the queued transaction functions back to back
// inside one SQLite transaction and commits once. Each function runs
// inside its own savepoint: a function that fails (an error, or a panic)
// rolls back to it, so only its own work is undone; the others go on.
// (An FTS5 table writes its pending terms at every savepoint release: the
// title index is therefore kept behind the table, titleindex.go.)
//
// Every caller is answered after the shared COMMIT returned, so an
// acknowledged write is as durable as before (WAL, synchronous=NORMAL:
// it survives the process being killed). A failed function's caller waits
// for the COMMIT too: its error may come from what the functions before
// it in the group wrote (an email taken, an attempt already finished),
// and a caller answered at once could read the database without those
// writes (a conflict, then "not found" for the row it conflicted with).
// If the shared transaction itself fails (the COMMIT, or an error that
// made SQLite roll the whole transaction back, such as a full disk), every
// caller of the group gets that error, those whose functions had failed
// too: nothing of the group was written, so neither was what their errors
// may have been about.
//
// A function sees its own writes and those of the functions before it in
// the group (one connection, one transaction); a function that failed left
// nothing behind. The webhook outbox rows, and the row counters that
// triggers keep, are written by the function's own statements, so they
// are kept or undone with its savepoint. The users and classes a function
// created are counted once for the whole group, before its commit, from
// the functions that succeeded (db.countInserted).
//
// A function whose first write is the only statement its input can make
// fail (Store.txFirstWriteDecides: a user's or a class's creation) runs
// without a savepoint: when that write fails, SQLite has undone it, and
// nothing else is left to undo (callUnguarded).
//
// Cancellation: a caller whose context ends while its function is still
// queued leaves, and the function is not run. Once a function has
// started it runs to the end with its context's values but without its
// cancellation (db.detached): the SQLite driver interrupts the
// connection when a statement's context ends, and an interrupted write
// rolls back the whole transaction, which is shared. Its caller then waits
// for the commit and gets the true result.
//
// No waiting is added: the writer takes what is queued when it starts a
// transaction and whatever arrives while it runs, up to maxGroup
// functions, then commits. A lone request is a group of one.
//
// While writes come together (a group of more than one committed within
// the last yieldWindow), the writer yields its processor a few times
// before it commits (yieldsBeforeCommit), so that goroutines ready to
// run, such as handlers about to queue a write, can queue it first.
// Without it the writer, as fast as the handlers that feed it, committed
// most of its groups under load with one function each (2,613 groups of
// 3,000, in bursts between groups of 32), and paid every commit's WAL
// writes each time (docs/performance.md, "Twenty-first pass"). Writes that
// come one at a time, such as a room's in turn at its end, do not yield:
// a yield sends the writer behind every goroutine ready to run, which on
// a busy machine (a recording's media) delays each commit.

// maxGroup bounds the functions of one commit, so that a steady stream of
// writes still commits (and answers) regularly.
const maxGroup = 64

// yieldsBeforeCommit is how many times the writer yields its processor,
// when nothing is queued, before it commits a group while writes come
// together. 4, 8 and 16 measured alike; 0 is the one that commits most
// groups of one.
const yieldsBeforeCommit = 8

// yieldWindow is how long after a group of more than one function the
// writer still yields before its commits.
const yieldWindow = time.Second

var errStoreClosed = errors.New("store: closed")

// writeCall is one queued transaction function.
type writeCall struct {
	ctx   context.Context
	fn    func(d db) error
	state atomic.Int32 // callQueued, callRunning, callAbandoned
	err   error
	panic any // a panic of fn, raised again in the caller
	// unlisted holds the listed rows fn deleted (db.unlist).
	unlisted []listedRow
	// counted holds what fn's inserts add to counters (db.countInserted).
	counted []countDelta
	// firstWriteDecides: fn runs without a savepoint of its own
	// (Store.txFirstWriteDecides).
	firstWriteDecides bool
	done              chan struct{}
}

const (
	callQueued int32 = iota
	callRunning
	callAbandoned
)

// groupWriter owns the SQLite writer pool's transactions.
type groupWriter struct {
	s     *Store
	queue chan *writeCall
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the writer goroutine has returned
	once  sync.Once
	// sharedAt is when a group of more than one function last committed;
	// only the writer goroutine uses it.
	sharedAt time.Time
}

// yields returns how many times the writer yields before it commits a
// group that starts at now.
func (g *groupWriter) yields(now time.Time) int {
	if now.Sub(g.sharedAt) < yieldWindow {
		return yieldsBeforeCommit
	}
	return 0
}

func newGroupWriter(s *Store) *groupWriter {
	g := &groupWriter{s: s, queue: make(chan *writeCall, maxGroup), stop: make(chan struct{}), done: make(chan struct{})}
	go g.loop()
	return g
}

// close stops the writer after the group it is running; functions still
// queued get errStoreClosed.
func (g *groupWriter) close() {
	g.once.Do(func() { close(g.stop) })
	<-g.done
}

// run queues fn and waits for its outcome: its own error, the commit's, or
// nil once the transaction that holds its work has committed.
func (g *groupWriter) run(ctx context.Context, fn func(d db) error, firstWriteDecides bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &writeCall{ctx: ctx, fn: fn, firstWriteDecides: firstWriteDecides, done: make(chan struct{})}
	select {
	case g.queue <- c:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.stop:
		return errStoreClosed
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		if c.state.CompareAndSwap(callQueued, callAbandoned) {
			return ctx.Err()
		}
		<-c.done // it has started: wait for the true result
	case <-g.done:
		// The writer stopped; it answers every call it took.
		if c.state.CompareAndSwap(callQueued, callAbandoned) {
			return errStoreClosed
		}
		<-c.done
	}
	if c.panic != nil {
		panic(c.panic)
	}
	return c.err
}

func (g *groupWriter) loop() {
	defer close(g.done)
	for {
		select {
		case c := <-g.queue:
			g.group(c)
		case <-g.stop:
			for {
				select {
				case c := <-g.queue:
					if c.state.CompareAndSwap(callQueued, callRunning) {
						c.err = errStoreClosed
						close(c.done)
					}
				default:
					return
				}
			}
		}
	}
}

// group runs first and whatever else is queued in one transaction.
func (g *groupWriter) group(first *writeCall) {
	if !first.state.CompareAndSwap(callQueued, callRunning) {
		return // its caller left
	}
	bg := context.Background()
	t, err := g.s.wdb.BeginTx(bg, nil)
	if err != nil {
		first.err = fmt.Errorf("begin: %w", err)
		close(first.done)
		return
	}
	d := g.s.on(t)
	d.detached = true
	g.s.hooks.groupStarted()
	var ran []*writeCall // answered after the commit, failed ones too
	var lost error       // set when the shared transaction is gone
	yields := g.yields(time.Now())
	c := first
	for n := 0; ; n++ {
		ran = append(ran, c)
		if err := g.call(bg, t, d, c); err != nil {
			lost = err
			break
		}
		if n+1 >= maxGroup {
			break
		}
		c = g.next()
		for i := 0; c == nil && i < yields; i++ {
			runtime.Gosched()
			c = g.next()
		}
		if c == nil {
			break
		}
	}
	if lost == nil {
		var counted []countDelta
		var unlisted []listedRow
		for _, c := range ran {
			counted = append(counted, c.counted...)
			unlisted = append(unlisted, c.unlisted...)
		}
		if err := writeCounted(bg, d, counted); err != nil {
			lost = fmt.Errorf("counters: %w", err)
			t.Rollback()
		} else if err := g.s.commitUnlisting(t, unlisted); err != nil {
			lost = mapErr(fmt.Errorf("commit: %w", err))
		}
	} else {
		t.Rollback()
	}
	if lost != nil {
		g.s.hooks.clear() // it may hold what the group read of its own writes
	}
	g.s.wrote()
	if lost == nil {
		g.s.checkpoints.wrote()
	}
	for _, c := range ran {
		if lost != nil && c.panic == nil {
			c.err = lost
		}
		close(c.done)
	}
	// The callers just answered are ready to run on this processor. After
	// a group of more than one, the writer lets them go first (they write
	// their answers, and their clients send the next requests) rather than
	// take the next group ahead of them: under users/create at 32
	// connections the cores were then 14 % idle instead of 20 %, and the
	// writes' rate rose by 2-6 % (docs/performance.md, "Thirty-fifth
	// pass").
	if len(ran) > 1 {
		g.sharedAt = time.Now()
		runtime.Gosched()
	}
}

// next returns a queued call that is still wanted, or nil when none is
// queued.
func (g *groupWriter) next() *writeCall {
	for {
		select {
		case c := <-g.queue:
			if c.state.CompareAndSwap(callQueued, callRunning) {
				return c
			}
		default:
			return nil
		}
	}
}

// The savepoint around each function of a group.
const (
	sqlSavepoint  = "SAVEPOINT w"
	sqlRelease    = "RELEASE w"
	sqlRollbackTo = "ROLLBACK TO w"
)

// call runs c.fn inside a savepoint, leaving its outcome in c. It returns
// an error only when the shared transaction can no longer be used.
func (g *groupWriter) call(ctx context.Context, t *sql.Tx, d db, c *writeCall) error {
	if c.firstWriteDecides {
		return g.callUnguarded(ctx, t, d, c)
	}
	if _, err := t.ExecContext(ctx, sqlSavepoint); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	d.unlisted, d.counted = &c.unlisted, &c.counted
	c.err, c.panic = runCall(d, c.fn)
	if c.err == nil && c.panic == nil {
		if _, err := t.ExecContext(ctx, sqlRelease); err != nil {
			return fmt.Errorf("release savepoint: %w", err)
		}
		return nil
	}
	// What the function recorded, and what it read of its own writes, go
	// with them (rolled back below).
	c.unlisted, c.counted = nil, nil
	g.s.hooks.clear()
	// ROLLBACK TO fails when SQLite already rolled the whole transaction
	// back (an I/O error, a full disk): the group is lost.
	if _, err := t.ExecContext(ctx, sqlRollbackTo); err != nil {
		return fmt.Errorf("rollback to savepoint after %v: %w", c.err, err)
	}
	if _, err := t.ExecContext(ctx, sqlRelease); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// callUnguarded runs c.fn without a savepoint (Store.txFirstWriteDecides),
// leaving its outcome in c. A function that failed before any of its
// statements changed anything left nothing to undo: SQLite undoes a
// statement that fails (a constraint) by itself. One that failed after a
// change cannot be undone alone, and the group is lost: its callers get
// the error, as for a failed commit, and nothing of it is written.
//
// An error can also have made SQLite roll the whole transaction back (a
// full disk): the statements after it would then each commit on their
// own. So after a failure the writer checks that the transaction is still
// open: BEGIN fails inside a transaction and starts one outside of it.
func (g *groupWriter) callUnguarded(ctx context.Context, t *sql.Tx, d db, c *writeCall) error {
	wrote := 0
	d.unlisted, d.counted, d.wrote = &c.unlisted, &c.counted, &wrote
	c.err, c.panic = runCall(d, c.fn)
	if c.err == nil && c.panic == nil {
		return nil
	}
	c.unlisted, c.counted = nil, nil
	g.s.hooks.clear() // what it read of its own writes
	failure := c.err
	if c.panic != nil {
		failure = fmt.Errorf("panic: %v", c.panic)
	}
	if wrote > 0 {
		return fmt.Errorf("a write without a savepoint failed after %d statements: %w", wrote, failure)
	}
	if _, err := t.ExecContext(ctx, "BEGIN"); err == nil {
		return fmt.Errorf("the transaction was rolled back by %w", failure)
	}
	return nil
}

// runCall runs fn, turning a panic into a value to raise in the caller.
func runCall(d db, fn func(d db) error) (err error, p any) {
	defer func() {
		if r := recover(); r != nil {
			p = r
		}
	}()
	return fn(d), nil
}
