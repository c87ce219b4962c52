package store

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fileOnly opens the store's database file as it is on disk, without its
// write-ahead log (SQLite's immutable=1): what checkpoints have copied.
func fileOnly(t *testing.T, dir string) *sql.DB {
	t.Helper()
	path := filepath.Join(dir, "lectern.db")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A commit reaches the database file without the writer checkpointing:
// one write leaves the log far below writerCheckpointPages, where SQLite
// would leave it in the log alone.
func TestCheckpointerCopiesTheLogBehindTheWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openSQLiteStoreIn(t, dir)
	d, _, err := st.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.tx(ctx, func(tx db) error { return insertUser(ctx, tx, d.ID, "copied") }); err != nil {
		t.Fatal(err)
	}
	if n := walPages(t, dir); n >= writerCheckpointPages {
		t.Fatalf("the log holds %d pages, the writer's own checkpoint may have run", n)
	}

	file := fileOnly(t, dir)
	var n int
	var lastErr error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		// A read may meet a page being copied (immutable: no locks): try again.
		lastErr = file.QueryRow("SELECT COUNT(*) FROM users WHERE domain_id = ? AND username = 'copied'", d.ID).Scan(&n)
		if lastErr == nil && n == 1 {
			return
		}
		file.Close()
		file = fileOnly(t, dir) // a new connection reads the file again
	}
	t.Fatalf("the database file never held the committed user (count %d, last error %v)", n, lastErr)
}

// walPages is the size of the store's log in pages of 4 KiB (and their
// frame headers).
func walPages(t *testing.T, dir string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, "lectern.db-wal"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size() / (4096 + 24)
}

// Under writes one after the other the log starts again from its
// beginning rather than grow with every commit. The checkpointer's
// checkpoints alone cannot be relied on for that: the log starts again
// only at a write transaction that begins with all of it copied, and
// under steady writes new frames are always there by then. The writer's
// own checkpoint, between two of its transactions, is what starts it.
func TestLogStaysBoundedUnderWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openSQLiteStoreIn(t, dir)
	if err := st.tx(ctx, func(d db) error {
		_, err := d.exec(ctx, "CREATE TABLE scratch (b BLOB)")
		if err == nil {
			_, err = d.exec(ctx, "INSERT INTO scratch (b) VALUES (zeroblob(1))")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Each commit rewrites a row of 12 KiB: three or more pages of the
	// log. 5,000 of them write over 15,000 pages, nearly four times the
	// writer's checkpoint size.
	const commits = 5000
	for i := range commits {
		if err := st.tx(ctx, func(d db) error {
			_, err := d.exec(ctx, "UPDATE scratch SET b = randomblob(12288)")
			return err
		}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if n := walPages(t, dir); n > 2*writerCheckpointPages {
		t.Fatalf("the log grew to %d pages after %d commits of 3 or more pages each; want at most %d", n, commits, 2*writerCheckpointPages)
	}
}
