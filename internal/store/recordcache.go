package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// Point reads of a user, a course and a live class, and the domain-wide
// totals of unfiltered listings, are answered from memory when
// Options.CacheRecords is set (issue 13: in profiles, reading the row
// from SQLite was a quarter to a third of the server's CPU for such a
// request, and skipping it halved the CPU of a class read; see
// docs/performance.md, "Ninth pass").
//
// Exactness on this process: every write transaction of this Store, once
// committed, moves the store's write generation on (wrote), and an entry
// serves only while the generation is the one read before its row was
// read. So a write acknowledged to anyone is never followed by an older
// answer from this process, whatever it changed: the rule does not depend
// on knowing which records a write touches. The cost is that any write
// makes every entry stale; a cached record is worth keeping only under
// reads.
//
// Another process's writes (a `lectern` command, a hand-run statement)
// are not seen by the generation: an entry is trusted for RecordCacheTTL
// at most. Options.CacheRecords says when that is acceptable.
const (
	// RecordCacheTTL is how long a record is served from memory at most.
	RecordCacheTTL = 2 * time.Second
	// recordCacheSize bounds each kind's entries (recordCache.size
	// unless set); when full, stale ones are dropped, then the oldest
	// down to three quarters of it (makeRoom).
	recordCacheSize = 512
	// listedRecordsSize bounds the records that listings keep (users,
	// classes, course names): a page's, and the next pages' of a listing
	// read in order (readAhead), for each of the readers crawling
	// through it (docs/performance.md, "Forty-fourth pass").
	listedRecordsSize = 2048
	// recordMaxBytes is the largest record kept (strings and sittings,
	// roughly counted), so the caches hold a few megabytes at most.
	recordMaxBytes = 4 << 10
)

type recordKey struct{ domainID, id int64 }

// countKey names one of a domain's row counters (row_counts).
type countKey struct {
	domainID int64
	kind     string
}

type recordEntry[V any] struct {
	v       V
	gen     uint64
	expires time.Time
}

// recordCache keeps records of one kind by a key that holds their domain.
type recordCache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]recordEntry[V]
	// size bounds the entries; 0 means recordCacheSize.
	size int
	// lastGen is the generation of the last entry kept: when it is not
	// the current one, no entry is current (mayHold).
	lastGen atomic.Uint64
	// pagesHit is whether the last page a listing read had most of its
	// records in memory already (notePage, pagesByID).
	pagesHit atomic.Bool
	// pages holds slices that pages of these records were put together
	// in, handed back by their callers (pageSlice, releasePage).
	pages sync.Pool
}

// maxPooledPage bounds the slices releasePage keeps: the largest page a
// listing is asked for (the LMS API's limit is at most 500, listclass's
// 100).
const maxPooledPage = 500

// pageSlice returns an empty slice with room for n records: one a caller
// handed back (releasePage) when there is one large enough. A page of 50
// users is 4 KB and one of 10 classes 3.7 KB, a third to almost half of
// what a users/list or listclass allocated (docs/performance.md,
// "Sixteenth pass").
func (c *recordCache[K, V]) pageSlice(n int) []V {
	if p, ok := c.pages.Get().(*[]V); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]V, 0, n)
}

// appendRecord appends a zero record to *page, a page being scanned, and
// returns it. At the first record it makes room for room records (at
// most maxPooledPage) with pageSlice: room when the first row is read,
// not before, as a page from the record cache is put together in a slice
// of its own (cachedPage).
func (c *recordCache[K, V]) appendRecord(page *[]V, room int) *V {
	if *page == nil {
		*page = c.pageSlice(min(max(room, 0), maxPooledPage))
	}
	var zero V
	*page = append(*page, zero)
	return &(*page)[len(*page)-1]
}

// releasePage takes back a page that pageSlice made room for, once its
// caller is done with it and with everything that points into it. Its
// records are zeroed first, so that a slice kept for later holds no
// strings or sittings alive. (Pages are put together by appending or
// assigning whole records, so nothing of an earlier page shows in a
// later one either way.)
func (c *recordCache[K, V]) releasePage(vs []V) {
	if cap(vs) == 0 || cap(vs) > maxPooledPage {
		return
	}
	vs = vs[:cap(vs)]
	clear(vs)
	c.pages.Put(&vs)
}

// mayHold reports whether an entry read at generation gen may be kept:
// false when every entry is older, as after any write.
func (c *recordCache[K, V]) mayHold(gen uint64) bool { return c.lastGen.Load() == gen }

// notePage notes whether a page of n records read by a listing had most of
// them, held, in memory already (pagesByID).
func (c *recordCache[K, V]) notePage(held, n int) { c.pagesHit.Store(held*2 > n) }

// pagesByID reports whether the next page is best read as its ids and the
// records in memory (cachedPage) rather than directly (keepPage): when an
// entry read at gen may be held, and the last page read had most of its
// records in memory. A page read again and again is so read from memory
// from its third read; pages read once each (a crawl through a listing)
// are read directly, as without the cache, rather than paying for a
// query of ids that finds nothing in memory.
func (c *recordCache[K, V]) pagesByID(gen uint64) bool { return c.mayHold(gen) && c.pagesHit.Load() }

// get returns the entry for k if it was read at generation gen and has
// not expired.
func (c *recordCache[K, V]) get(k K, gen uint64, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || !e.current(gen, now) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// current reports whether e was read at generation gen and has not
// expired.
func (e recordEntry[V]) current(gen uint64, now time.Time) bool {
	return e.gen == gen && now.Before(e.expires)
}

// put keeps v, read at generation gen, for ttl.
func (c *recordCache[K, V]) put(k K, v V, gen uint64, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[K]recordEntry[V])
	}
	if _, ok := c.m[k]; !ok && len(c.m) >= c.capacity() {
		c.makeRoom(gen, now)
	}
	c.m[k] = recordEntry[V]{v: v, gen: gen, expires: now.Add(ttl)}
	c.lastGen.Store(gen)
}

// capacity is the most entries c holds.
func (c *recordCache[K, V]) capacity() int {
	if c.size > 0 {
		return c.size
	}
	return recordCacheSize
}

// makeRoom empties a quarter of a full cache at least, so that the walk
// over its entries is made once every so many records kept, not for each
// (a crawl through pages keeps ten records a page or more). Stale entries
// go first, then the oldest: entries are kept for the same time, so those
// that expire first were kept first, and records read ahead of a listing's
// reader (readAhead) stay until the reader comes to them. The oldest are
// found by cuts between the first and the last expiry, a quarter of the
// way at a time; the last cut drops any entry. c.mu is held.
func (c *recordCache[K, V]) makeRoom(gen uint64, now time.Time) {
	keep := c.capacity() * 3 / 4
	var first, last time.Time
	for k, e := range c.m {
		if !e.current(gen, now) {
			delete(c.m, k)
			continue
		}
		if first.IsZero() || e.expires.Before(first) {
			first = e.expires
		}
		if e.expires.After(last) {
			last = e.expires
		}
	}
	for step := time.Duration(1); len(c.m) > keep && step <= 4; step++ {
		cut := first.Add(last.Sub(first) * step / 4)
		for k, e := range c.m {
			if len(c.m) <= keep {
				break
			}
			if step == 4 || e.expires.Before(cut) {
				delete(c.m, k)
			}
		}
	}
}

// wrote marks a write transaction committed (or given up): every record
// read before it is stale from now on. Called after the commit returns,
// never before, so that a read which sees the new generation also sees
// the write.
func (s *Store) wrote() { s.gen.Add(1) }

// cachedRecord answers the read of k from c, or runs load and keeps what
// it read when the record is no larger than recordMaxBytes by size.
// Errors (a record not found) are not kept.
func cachedRecord[K comparable, V any](ctx context.Context, s *Store, c *recordCache[K, V], k K, size func(V) int, load func(context.Context) (V, error)) (V, error) {
	if !s.cacheRecords {
		return load(ctx)
	}
	if err := ctx.Err(); err != nil { // as a read from the database would
		var zero V
		return zero, err
	}
	// The generation is read before the row, so a write committed in
	// between makes what is read stale at once.
	gen := s.gen.Load()
	now := s.recordClock()
	if v, ok := c.get(k, gen, now); ok {
		return v, nil
	}
	v, err := load(ctx)
	if err == nil && size(v) <= recordMaxBytes {
		c.put(k, v, gen, now, s.recordTTL)
	}
	return v, err
}

// cachedPage returns the records of ids, the ids of a page in ascending
// order, from c where it holds them as read at gen (the generation taken
// before the ids were read), and how many it held; it reads the others
// with one call of load. When it reads any, that call also reads those of
// ahead (ids after the page's, in ascending order, the next pages of a
// listing read in order: readAhead) not in memory, and keeps them; they
// are not returned.
// load returns records by ascending id, those of the ids it is given and
// possibly others between them, which are ignored; what it reads is kept
// as cachedRecord keeps it, and the slice it returns is handed back to
// c's pages (releasePage) once its records are copied out: load's caller
// keeps no hold on it. An id load does not find (a record deleted since
// its id was read) is left out of the page.
//
// A page read this way costs a query of ids, which reads the index alone,
// and then only the records not in memory. Its callers read a page
// directly instead, and keep what they read (keepPage), unless the cache
// is likely to hold most of it (pagesByID); see docs/performance.md,
// "Eleventh pass".
func cachedPage[V any](ctx context.Context, s *Store, c *recordCache[recordKey, V], domainID int64, ids, ahead []int64, gen uint64,
	size func(V) int, idOf func(V) int64, load func(ctx context.Context, ids []int64) ([]V, error)) (_ []V, held int, err error) {
	now := s.recordClock()
	out := c.pageSlice(len(ids))[:len(ids)]
	var haveBuf [maxPooledPage]bool // on the stack for any page asked for
	var have []bool
	if len(ids) <= len(haveBuf) {
		have = haveBuf[:len(ids)]
	} else {
		have = make([]bool, len(ids))
	}
	var missing []int64
	// One read lock for the page, where get takes one a record: the
	// lock's counter bounces between the cores, and the locks of a page
	// of 50 were about 2 % of a users/list's CPU in a profile.
	c.mu.RLock()
	for i, id := range ids {
		if e, ok := c.m[recordKey{domainID, id}]; ok && e.current(gen, now) {
			out[i], have[i] = e.v, true
		} else {
			missing = append(missing, id)
		}
	}
	pageMissing := len(missing)
	if pageMissing > 0 {
		for _, id := range ahead {
			if e, ok := c.m[recordKey{domainID, id}]; !ok || !e.current(gen, now) {
				missing = append(missing, id)
			}
		}
	}
	c.mu.RUnlock()
	if len(missing) > 0 {
		read, err := load(ctx, missing)
		if err != nil {
			return nil, 0, err
		}
		i, j := 0, 0
		for _, v := range read {
			id := idOf(v)
			for i < len(ids) && ids[i] < id {
				i++
			}
			if i == len(ids) { // past the page: one read ahead?
				for j < len(ahead) && ahead[j] < id {
					j++
				}
				if j < len(ahead) && ahead[j] == id && size(v) <= recordMaxBytes {
					c.put(recordKey{domainID, id}, v, gen, now, s.recordTTL)
				}
				continue
			}
			if ids[i] != id || have[i] {
				continue
			}
			out[i], have[i] = v, true
			if size(v) <= recordMaxBytes {
				c.put(recordKey{domainID, id}, v, gen, now, s.recordTTL)
			}
		}
		c.releasePage(read)
	}
	n := 0
	for i := range out {
		if have[i] {
			out[n] = out[i]
			n++
		}
	}
	return out[:n], len(ids) - pageMissing, nil
}

// keepPage keeps the records of a page read directly at generation gen,
// as cachedRecord keeps one record, and notes whether most of them were
// in memory already (pagesByID).
func keepPage[V any](s *Store, c *recordCache[recordKey, V], domainID int64, vs []V, gen uint64, size func(V) int, idOf func(V) int64) {
	now := s.recordClock()
	held := 0
	for _, v := range vs {
		k := recordKey{domainID, idOf(v)}
		if _, ok := c.get(k, gen, now); ok {
			held++
		} else if size(v) <= recordMaxBytes {
			c.put(k, v, gen, now, s.recordTTL)
		}
	}
	c.notePage(held, len(vs))
}

// cachedListPage reads page p through c, the cache of a listing's records:
// as its ids and the records in memory (cachedPage) when c likely holds
// most of them (pagesByID), or when the page is deep and its ids come
// from memory (listedIDs); else directly, keeping what it read
// (keepPage). scan appends a row of p.cols to the caller's slice, which
// rows returns; records not in memory are read as the rows of p's filter
// between the first and last missing id, a range of the index (an IN list
// of ids costs SQLite a temporary table), with those of the next pages
// when the listing is read in order and its ids come from memory
// (splitWindow). gen is the generation taken before the page's total.
func cachedListPage[V any](ctx context.Context, s *Store, d db, c *recordCache[recordKey, V], p page, gen uint64,
	size func(V) int, idOf func(V) int64, scan func(*sql.Rows) error, rows func() []V) ([]V, error) {
	direct := func() ([]V, error) {
		err := listPage(ctx, d, p, scan)
		if err == nil {
			keepPage(s, c, p.domainID, rows(), gen, size, idOf)
		}
		return rows(), err
	}
	byID := c.pagesByID(gen)
	if !byID && !p.deep() {
		return direct()
	}
	// A deep page goes through the ids in memory even when its records
	// are not (a crawl through a long listing): its rows are then read as
	// a range of ids rather than by stepping over every row before it.
	ids, indexed, err := s.listedIDs(ctx, d, p.window(), gen)
	var ahead []int64
	if err == nil && indexed {
		ids, ahead = splitWindow(s, c, p, ids, gen)
	} else if err == nil {
		if !byID {
			return direct()
		}
		ids, err = pageIDs(ctx, d, p)
	}
	if err != nil || len(ids) == 0 {
		return rows(), err
	}
	vs, held, err := cachedPage(ctx, s, c, p.domainID, ids, ahead, gen, size, idOf, func(ctx context.Context, ids []int64) ([]V, error) {
		cond, idArgs := idsCond(d, ids)
		args := append(append([]any{p.domainID}, p.args...), idArgs...)
		err := scanRows(ctx, d, "SELECT "+p.cols+" FROM "+p.table+" WHERE domain_id = ?"+p.filter+
			" AND id "+cond+" ORDER BY id", args, scan)
		return rows(), err
	})
	if err == nil {
		c.notePage(held, len(ids))
	}
	return vs, err
}

// readAhead is how many records a page of a listing read in order reads
// when it reads any: its own and those of the pages after it, which the
// next requests then find in memory. A crawl through a long listing reads
// pages of ten (listclass's default), and each read costs the database
// far more to set up than a row: on PostgreSQL 120-145 µs of its CPU a
// page of ten classes, a few µs of it a row. Reading 40 took it to about
// 73 µs a page (docs/performance.md, "Forty-fourth pass").
const readAhead = 40

// window is p with the id before it and those of the pages after it,
// readAhead ids with p's own, for splitWindow; a listing's first page
// (which has no page before it) is p alone.
func (p page) window() page {
	if p.offset == 0 {
		return p
	}
	w := p
	w.offset--
	w.limit += 1 + max(readAhead-p.limit, 0)
	return w
}

// splitWindow splits ids, those of p.window(), into p's and the ones after
// them that cachedPage is to read ahead. It reads ahead only when the
// record before the page is in memory as read at gen: the page before was
// read a moment ago, so the listing is likely read in order. A page read
// alone, or again and again (a listing's first page), reads no more than
// itself.
func splitWindow[V any](s *Store, c *recordCache[recordKey, V], p page, ids []int64, gen uint64) (own, ahead []int64) {
	if p.offset == 0 {
		return ids, nil
	}
	if len(ids) == 0 {
		return nil, nil
	}
	own = ids[1:min(1+p.limit, len(ids))]
	if _, ok := c.get(recordKey{p.domainID, ids[0]}, gen, s.recordClock()); !ok {
		return own, nil
	}
	return own, ids[1+len(own):]
}
