package store

import (
	"log/slog"
	"sync"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The page caches of the SQLite connections, in KiB each (PRAGMA
// cache_size, negative): the writer keeps SQLite's default, a reader 512
// KiB (the OS caches the file too; docs/performance.md, "Memory"), the
// checkpointer, which only copies the log, 64 KiB.
const (
	writerCacheKiB       = 2000
	readerCacheKiB       = 512
	checkpointerCacheKiB = 64
)

// pageCacheSlot is the size of a line of the page caches' block: what
// SQLite asks for a cached page of 4,096 bytes with its headers, 4,368
// bytes in this build (TestPageCacheLinesHoldPages fails if a new SQLite
// asks more).
const pageCacheSlot = 4368

// pageCacheLines is how many pages the block holds: the caches' settings
// together, for readers read connections.
func pageCacheLines(readers int) int {
	return (writerCacheKiB + readers*readerCacheKiB + checkpointerCacheKiB) * 1024 / pageCacheSlot
}

var (
	pageCacheOnce       sync.Once
	pageCacheBlockLines int // the block's lines once SQLite took it
)

// usePageCacheBlock gives SQLite one block of pageCacheLines(readers)
// lines for the page caches of every connection of this process
// (SQLITE_CONFIG_PAGECACHE), before the first connection opens.
//
// Why: the C library's allocator serves a page's 4,368 bytes from a slot
// of 8 KiB, so a cached page cost nearly two, and every page a cache took
// or let go went through the allocator's one lock. With the block, the
// peak memory at 1,000,000 classes fell by about 5 MB and a page read
// once (a crawl of the class list) took a quarter less CPU
// (docs/performance.md, "Thirty-third pass").
//
// The block is resident from the start (SQLite links its lines when it
// takes it: 4.2 MB with 4 readers) and never freed. When it is nearly
// used up, the caches take each other's least recently used pages rather
// than grow; a page they cannot get from it (a temporary database's, a
// cache past its share while every line is in use) comes from the
// allocator as before.
//
// The setting is the process's: a second store opened in the same process
// shares the block, and a process that opened an SQLite connection before
// keeps SQLite's default (logged).
func usePageCacheBlock(readers int) {
	pageCacheOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		lines := pageCacheLines(readers)
		block := libc.Xmalloc(tls, libc.Tsize_t(lines*pageCacheSlot))
		if block == 0 {
			slog.Warn("sqlite page cache block not allocated; the caches use the allocator", "bytes", lines*pageCacheSlot)
			return
		}
		args := libc.NewVaList(block, int32(pageCacheSlot), int32(lines))
		defer libc.Xfree(tls, args)
		if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PAGECACHE, args); rc != sqlite3.SQLITE_OK {
			libc.Xfree(tls, block)
			slog.Debug("sqlite page cache block not used (a connection opened before); the caches use the allocator", "code", rc)
			return
		}
		pageCacheBlockLines = lines
	})
}
