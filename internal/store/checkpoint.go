package store

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"time"
)

// Checkpoints behind the group writer (SQLite).
//
// SQLite copies the pages its write-ahead log holds into the database file
// at a checkpoint, and writes the log again from its beginning at the
// first write transaction after a checkpoint that copied all of it. By
// itself it checkpoints in the connection that commits once the log holds
// 1,000 pages: the group writer then copied about 4 MB and waited for two
// fsync calls (the log's, then the database file's) before it took the
// next group, while every writing request waited for it. Under concurrent
// writes the writer spent a sixth of its time blocked in those calls, and
// the CPUs were a quarter idle (docs/performance.md, "Twenty-second
// pass").
//
// The checkpointer copies the log from a connection of its own: a PASSIVE
// checkpoint after writes commit, at most every checkpointEvery. PASSIVE
// waits for nobody; it copies what no reader still needs and leaves the
// rest for the next one. The writer checkpoints only once the log holds
// writerCheckpointPages, which bounds the log and lets it start again from
// its beginning; by then little is left for the writer to copy or to sync.
// A checkpoint that finds another one running gives up at once rather
// than wait (SQLITE_BUSY, ignored): the writer tries again at its next
// commit, the checkpointer at its next turn.
//
// Durability is unchanged: a commit is acknowledged once its frames are in
// the log (synchronous=NORMAL), and a checkpoint copies committed frames
// only, syncing the log before it writes them to the database file and
// the database file before the log may be written over.
type checkpointer struct {
	db   *sql.DB
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
	err  error // of closing db
}

// checkpointEvery is the shortest time between two of the checkpointer's
// checkpoints: writes that commit meanwhile are copied together. 50 and
// 150 ms measured alike.
const checkpointEvery = 100 * time.Millisecond

// writerCheckpointPages is the size of the log, in pages, at which the
// writer checkpoints it itself (SQLite's wal_autocheckpoint; 1,000 by
// default): 16 MB with 4 KiB pages. With the checkpointer, 4,000 measured
// better than 1,000: the writer's checkpoints, each of them a few fsync
// calls however little is left to copy, come four times less often.
const writerCheckpointPages = 4000

func newCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// wrote tells the checkpointer that a write transaction committed. It
// never waits.
func (c *checkpointer) wrote() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	wait := time.NewTimer(checkpointEvery)
	var failing string // the last error logged, until a checkpoint succeeds
	for {
		select {
		case <-c.kick:
		case <-c.stop:
			return
		}
		var busy, logged, copied int64
		err := c.db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &copied)
		switch {
		case err != nil && err.Error() != failing:
			// Logged once until it changes: a full disk fails every turn.
			failing = err.Error()
			slog.Error("store: checkpoint the SQLite log", "err", err)
		case err == nil && failing != "":
			failing = ""
			slog.Info("store: the SQLite log checkpoints again")
		}
		wait.Reset(checkpointEvery)
		select {
		case <-wait.C:
		case <-c.stop:
			return
		}
	}
}

// close stops the checkpointer and closes its connection; a second close
// returns what the first did.
func (c *checkpointer) close() error {
	c.once.Do(func() {
		close(c.stop)
		<-c.done
		c.err = c.db.Close()
	})
	return c.err
}
