package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestPageCacheLinesHoldPages checks that SQLite took the page cache block
// when the first store opened and serves cached pages from its lines: no
// page it asks for is larger than a line, and lines are in use after reads
// and writes. A new SQLite that asks more for a page fails here, where it
// would otherwise leave the block unused and take every page from the
// allocator.
func TestPageCacheLinesHoldPages(t *testing.T) {
	st := openSQLiteStore(t)
	ctx := context.Background()
	d, _, err := st.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := st.tx(ctx, func(x db) error { return insertUser(ctx, x, d.ID, fmt.Sprintf("u%d", i)) }); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(userNames(t, st, d.ID)); got != 200 {
		t.Fatalf("%d users read, want 200", got)
	}
	if want := pageCacheLines(readsAtOnce()); pageCacheBlockLines != want {
		t.Fatalf("block of %d lines taken, want %d", pageCacheBlockLines, want)
	}
	used, _ := pageCacheStatus(sqlite3.SQLITE_STATUS_PAGECACHE_USED)
	_, largest := pageCacheStatus(sqlite3.SQLITE_STATUS_PAGECACHE_SIZE)
	if largest > pageCacheSlot {
		t.Errorf("SQLite asked %d bytes for a page, more than a line's %d: raise pageCacheSlot", largest, pageCacheSlot)
	}
	if used == 0 {
		t.Errorf("no line of the block in use after reads and writes (largest page asked: %d bytes)", largest)
	}
}

// pageCacheStatus reads one of SQLite's page cache counters for the
// process (sqlite3_status64): SQLITE_STATUS_PAGECACHE_USED (lines in
// use), _OVERFLOW (bytes from the allocator) or _SIZE (the largest page
// asked for), now and at its highest.
func pageCacheStatus(op int32) (now, highest int64) {
	tls := libc.NewTLS()
	defer tls.Close()
	p := libc.Xmalloc(tls, 16)
	defer libc.Xfree(tls, p)
	sqlite3.Xsqlite3_status64(tls, op, p, p+8, 0)
	b := libc.GoBytes(p, 16)
	return int64(binary.NativeEndian.Uint64(b)), int64(binary.NativeEndian.Uint64(b[8:]))
}
