package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The ids of unfiltered listings in memory.
//
// A page of an unfiltered listing (users/list, courses/list, listclass
// without a filter) needs the ids of its rows: the offset-th to the
// (offset+limit)-th of the domain's rows in id order. Read from the
// database, that query was a fifth to a third of a page's CPU through the
// server, and on PostgreSQL a round trip. With records cached
// (Options.CacheRecords), the store keeps each listed domain's ids of the
// table in memory, in order, and takes a page's ids from there: a page of
// records already in memory then costs no statement at all.
//
// The ids in memory are checked against the database before they are
// used whenever the store has written since the last check (its
// generation moved) or RecordCacheTTL has passed, so another process's
// writes are seen too. A check is one statement, one more for each
// idChunk rows created since, which gives the ids above the largest one
// held (the rows created since) and, in the last one's snapshot, the
// domain's row counter (row_counts, kept exact by triggers). One check of
// a listing runs at a time; the pages that waited for it use its result
// when it began after their generation. When the ids held plus the new
// ones are as many as the counter says, the new ones are added; otherwise
// rows were deleted, or created below the largest id (PostgreSQL commits
// sequence values out of order), and the ids are read again in full,
// taking at most a twentieth of the time and no more than once per
// idRebuildEvery; the pages read meanwhile ask the
// database, as without the index. At most maxHeldIDs are held in all. (A
// deletion and an out-of-order creation between two checks would leave
// the count unchanged: only another process, or PostgreSQL's out-of-order
// commits together with a deletion, can do that, and the ids are then
// read again in full after idIndexMaxAge at the latest.)
//
// The ids are kept in blocks of up to idBlockLen, each as its first id
// and either the distance of each id from the one before, as a uvarint
// (one byte an id when ids are less than 128 apart, two up to 16,383), or,
// once the block is full and if it takes fewer bytes so, a bitmap of the
// ids from the first (a bit an id for ids in a row, as a domain's rows
// mostly are when it has the server to itself). 1,000,000 classes in a
// row take about 330 KB, and up to 1.2 MB when created among other
// domains' rows; a page decodes at most two blocks.

const (
	// idBlockLen is the most ids a block holds.
	idBlockLen = 256
	// idRebuildEvery spaces two full reads of a domain's ids at least,
	// when checks keep failing.
	idRebuildEvery = time.Second

	// idIndexMaxAge is how long ids read in full are trusted, however
	// well they check.
	idIndexMaxAge = 10 * time.Minute
	// idChunk is the most ids one statement returns, in full reads and
	// in checks.
	idChunk = 2000
)

// maxHeldIDs bounds the ids held for all listings together, about 5 MB:
// past it, the listings read least recently are dropped when another is
// read in full (a listing larger than that is still held, alone). A
// variable for the tests.
var maxHeldIDs = 4_000_000

// idsKey names the ids of one domain's rows of a table.
type idsKey struct {
	table    string
	domainID int64
}

// idIndex holds one domain's ids of a table, in ascending order.
type idIndex struct {
	mu      sync.RWMutex
	blocks  []idBlock
	ends    []int // ends[i]: the ids in blocks[:i+1]
	n       int
	max     int64
	valid   bool      // the ids matched the database at the last check
	gen     uint64    // the store's generation before the last check
	checked time.Time // when the last check began
	built   time.Time // when the ids were last read in full

	check     sync.Mutex   // held by the goroutine checking the ids (checkIDs)
	build     sync.Mutex   // held by the goroutine reading the ids in full
	nextBuild time.Time    // no full read before (guarded by build)
	used      atomic.Int64 // when a page was last read, in Unix nanoseconds
}

// idBlock holds ascending ids: the first, then either each as its
// distance from the one before, as a uvarint, or (bitmap) a bitmap of
// the ids from first, bit k of byte i meaning first+8i+k. A block is
// filled as distances and sealed when full (seal), in whichever of the
// two takes fewer bytes: ids in a row, as a domain's rows mostly are when
// it has the server to itself, take a bit each rather than a byte.
type idBlock struct {
	first, last int64
	n           int32
	bitmap      bool
	data        []byte
}

// add appends id, larger than the block's ids, if the block has room for
// it: sealed blocks have none.
func (b *idBlock) add(id int64) bool {
	if b.n >= idBlockLen || b.bitmap {
		return false
	}
	b.data = binary.AppendUvarint(b.data, uint64(id-b.last))
	b.last = id
	b.n++
	return true
}

// appendFrom appends to ids the block's ids from the j-th, until ids is
// full.
func (b *idBlock) appendFrom(ids []int64, j int) []int64 {
	if b.bitmap {
		for i, c := range b.data {
			if n := bits.OnesCount8(c); j >= n {
				j -= n
				continue
			}
			for ; c != 0 && len(ids) < cap(ids); c &= c - 1 {
				if j > 0 {
					j--
					continue
				}
				ids = append(ids, b.first+int64(8*i+bits.TrailingZeros8(c)))
			}
			if len(ids) == cap(ids) {
				break
			}
		}
		return ids
	}
	id, p := b.first, 0
	for k := 0; k < int(b.n) && len(ids) < cap(ids); k++ {
		if k > 0 {
			d, w := binary.Uvarint(b.data[p:])
			id += int64(d)
			p += w
		}
		if k >= j {
			ids = append(ids, id)
		}
	}
	return ids
}

// seal stores the block's ids as a bitmap when that takes fewer bytes
// than their distances. A block so sealed takes no more ids (add).
func (b *idBlock) seal() {
	bitmapLen := int((b.last-b.first)/8 + 1)
	if b.bitmap || bitmapLen >= len(b.data) {
		return
	}
	bm := make([]byte, bitmapLen)
	for _, id := range b.appendFrom(make([]int64, 0, b.n), 0) {
		k := id - b.first
		bm[k/8] |= 1 << (k % 8)
	}
	b.data, b.bitmap = bm, true
}

// newIDBlock returns a block holding id, with room for a whole block of
// one-byte distances: grown by appends, the blocks of a full read left as
// much garbage as they hold.
func newIDBlock(id int64) idBlock {
	return idBlock{first: id, last: id, n: 1, data: make([]byte, 0, idBlockLen)}
}

// appendIDs adds ids, ascending and all larger than x.max. Each block
// filled is sealed.
func (x *idIndex) appendIDs(ids []int64) {
	for _, id := range ids {
		if len(x.blocks) == 0 || !x.blocks[len(x.blocks)-1].add(id) {
			x.blocks = append(x.blocks, newIDBlock(id))
			x.ends = append(x.ends, x.n)
		}
		x.n++
		x.ends[len(x.ends)-1] = x.n
		x.max = id
		if b := &x.blocks[len(x.blocks)-1]; b.n == idBlockLen {
			b.seal()
		}
	}
}

// page returns the ids from offset, at most limit of them.
func (x *idIndex) page(offset, limit int) []int64 {
	if offset >= x.n || limit <= 0 {
		return nil
	}
	ids := make([]int64, 0, min(limit, x.n-offset))
	i := sort.Search(len(x.ends), func(i int) bool { return x.ends[i] > offset })
	for ; i < len(x.blocks) && len(ids) < cap(ids); i++ {
		start := x.ends[i] - int(x.blocks[i].n)
		ids = x.blocks[i].appendFrom(ids, max(offset-start, 0))
	}
	return ids
}

// trusted reports whether x matched the database at its last check and
// was read in full less than idIndexMaxAge ago. x.mu is held.
func (x *idIndex) trusted(now time.Time) bool {
	return x.valid && now.Sub(x.built) < idIndexMaxAge
}

// fresh reports whether the ids may serve a page whose total was read at
// the store's generation gen, without a check: they are trusted, and the
// last check began after gen and less than ttl ago.
func (x *idIndex) fresh(gen uint64, now time.Time, ttl time.Duration) bool {
	return x.trusted(now) && x.gen >= gen && now.Sub(x.checked) < ttl
}

// remove takes id out of x, if x holds it.
func (x *idIndex) remove(id int64) {
	i := sort.Search(len(x.blocks), func(i int) bool { return x.blocks[i].first > id }) - 1
	if i < 0 || id > x.blocks[i].last {
		return
	}
	b := &x.blocks[i]
	all := b.appendFrom(make([]int64, 0, b.n), 0)
	j, found := slices.BinarySearch(all, id)
	if !found {
		return
	}
	rest := slices.Delete(all, j, j+1)
	if len(rest) == 0 {
		x.blocks = slices.Delete(x.blocks, i, i+1)
		x.ends = slices.Delete(x.ends, i, i+1)
	} else {
		nb := newIDBlock(rest[0])
		for _, id := range rest[1:] {
			nb.add(id)
		}
		if i < len(x.blocks)-1 { // the last block stays open to adds
			nb.seal()
		}
		x.blocks[i] = nb
	}
	for k := i; k < len(x.ends); k++ {
		x.ends[k]--
	}
	x.n--
	if id == x.max {
		x.max = 0
		if n := len(x.blocks); n > 0 {
			x.max = x.blocks[n-1].last
		}
	}
}

// listedRow names a row of an unfiltered listing that a transaction
// deleted.
type listedRow struct {
	table        string
	domainID, id int64
}

// unlist notes, in a write transaction, that it deleted the row id of the
// domain's listing of table: when the transaction commits, the id is
// taken out of the ids held in memory.
func (d db) unlist(table string, domainID, id int64) {
	if d.unlisted != nil {
		*d.unlisted = append(*d.unlisted, listedRow{table, domainID, id})
	}
}

// commitUnlisting commits t and takes the rows it deleted out of the ids
// held, holding s.unlisting meanwhile: no check of the ids against the
// database (checkIDs) sees the deletions without the ids being out too.
// Without that, a deletion and a row created out of id order (PostgreSQL)
// would leave the count as it was, and a check would pass ids that list
// the deleted row and not the new one.
func (s *Store) commitUnlisting(t *sql.Tx, rows []listedRow) error {
	if len(rows) == 0 {
		return t.Commit()
	}
	s.unlisting.Lock()
	defer s.unlisting.Unlock()
	if err := t.Commit(); err != nil {
		return err
	}
	s.unlistings.Add(1)
	for _, r := range rows {
		s.idsMu.RLock()
		x := s.ids[idsKey{r.table, r.domainID}]
		s.idsMu.RUnlock()
		if x != nil {
			x.mu.Lock()
			x.remove(r.id)
			x.mu.Unlock()
		}
	}
	return nil
}

// indexFor returns the index of key, new and empty the first time.
func (s *Store) indexFor(key idsKey, now time.Time) *idIndex {
	s.idsMu.RLock()
	x := s.ids[key]
	s.idsMu.RUnlock()
	if x == nil {
		x = s.newIndex(key)
	}
	if t := now.UnixNano(); t-x.used.Load() > int64(time.Second) { // a store a second at most
		x.used.Store(t)
	}
	return x
}

// newIndex returns the index of key, made if it is not there yet.
func (s *Store) newIndex(key idsKey) *idIndex {
	s.idsMu.Lock()
	defer s.idsMu.Unlock()
	x := s.ids[key]
	if x == nil {
		if s.ids == nil {
			s.ids = make(map[idsKey]*idIndex)
		}
		x = &idIndex{}
		s.ids[key] = x
	}
	return x
}

// dropLeastUsed drops the ids of the listings read least recently, but
// keep's, while more than maxHeldIDs are held.
func (s *Store) dropLeastUsed(keep idsKey) {
	type held struct {
		key  idsKey
		n    int
		used int64
	}
	s.idsMu.Lock()
	defer s.idsMu.Unlock()
	var all []held
	total := 0
	for k, x := range s.ids {
		x.mu.RLock()
		all = append(all, held{k, x.n, x.used.Load()})
		total += x.n
		x.mu.RUnlock()
	}
	if total <= maxHeldIDs {
		return
	}
	slices.SortFunc(all, func(a, b held) int { return cmp.Compare(a.used, b.used) })
	for _, h := range all {
		if total <= maxHeldIDs {
			return
		}
		if h.key == keep {
			continue
		}
		x := s.ids[h.key]
		delete(s.ids, h.key)
		x.mu.Lock()
		x.valid = false // for a reader that holds it still
		x.mu.Unlock()
		total -= h.n
	}
}

// listedIDs returns the ids of page p from memory when p is an unfiltered
// listing of users, courses or classes read outside a transaction, or ok
// false when they are to be read from the database.
func (s *Store) listedIDs(ctx context.Context, d db, p page, gen uint64) (ids []int64, ok bool, err error) {
	if p.filter != "" || d.r != runner(s.rdb) {
		return nil, false, nil
	}
	switch p.table { // tables whose counter kind is their name
	case countUsers, countCourses, countLiveClasses:
		return s.indexedPageIDs(ctx, d, p, p.table, gen)
	}
	return nil, false, nil
}

// indexedPageIDs returns the ids of page p, an unfiltered listing whose
// row counter is kind, from memory (the top of this file), or ok false
// when they are to be read from the database this time. gen is the
// store's generation taken before the page's total.
func (s *Store) indexedPageIDs(ctx context.Context, d db, p page, kind string, gen uint64) (ids []int64, ok bool, err error) {
	now := s.recordClock()
	x := s.indexFor(idsKey{p.table, p.domainID}, now)
	x.mu.RLock()
	fresh := x.fresh(gen, now, s.recordTTL)
	if fresh {
		ids = x.page(p.offset, p.limit)
	}
	x.mu.RUnlock()
	if fresh {
		return ids, true, nil
	}
	if ok, err := s.checkIDs(ctx, d, p, kind, x, gen, now); err != nil || !ok {
		return nil, false, err
	}
	x.mu.RLock()
	ids = x.page(p.offset, p.limit)
	x.mu.RUnlock()
	return ids, true, nil
}

// checkIDs brings x up to date with the database (the top of this file)
// and reports whether it is.
func (s *Store) checkIDs(ctx context.Context, d db, p page, kind string, x *idIndex, gen uint64, now time.Time) (bool, error) {
	x.mu.RLock()
	valid := x.trusted(now)
	x.mu.RUnlock()
	if !valid {
		return s.buildIDs(ctx, d, p, kind, x, gen, now)
	}
	// One check at a time: the pages waiting for it take its result when
	// it began after their generation. Each check holds the ids it reads
	// until they are added, and after a burst of writes the 32 pages read
	// at once each read the same tens of thousands (spikes of 15-25 MB in
	// the RSS, docs/performance.md, thirty-second pass).
	x.check.Lock()
	defer x.check.Unlock()
	x.mu.RLock()
	valid, fresh, n, maxID := x.trusted(now), x.fresh(gen, now, s.recordTTL), x.n, x.max
	x.mu.RUnlock()
	if fresh || !valid {
		// Checked meanwhile, or found out of date by that check: this
		// page reads the database, and a later one reads the ids in full.
		return fresh, nil
	}
	// The snapshot and its use under s.unlisting (commitUnlisting).
	s.unlisting.RLock()
	defer s.unlisting.RUnlock()
	count, added, err := idsAbove(ctx, d, p.table, p.domainID, kind, maxID, idChunk)
	if err != nil {
		return false, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.n != n || x.max != maxID {
		// Another check or a full read changed x meanwhile: it is good
		// for gen if it holds what this check read.
		last := maxID
		if len(added) > 0 {
			last = added[len(added)-1]
		}
		if !x.valid || int64(x.n) != count || x.max != last {
			return false, nil
		}
		x.gen = max(x.gen, gen)
		return true, nil
	}
	if int64(n+len(added)) != count {
		x.valid = false // read again in full
		return false, nil
	}
	x.appendIDs(added)
	x.gen, x.checked = max(x.gen, gen), now
	return true, nil
}

// buildIDs reads the domain's ids in full into x, unless another caller
// is doing so or the last full read was too recent (x.nextBuild), and
// reports whether x is then up to date.
func (s *Store) buildIDs(ctx context.Context, d db, p page, kind string, x *idIndex, gen uint64, now time.Time) (bool, error) {
	if !x.build.TryLock() {
		return false, nil
	}
	defer x.build.Unlock()
	x.mu.RLock()
	done := x.trusted(now) // by the caller before
	x.mu.RUnlock()
	if done {
		return true, nil
	}
	if now.Before(x.nextBuild) {
		return false, nil
	}
	// However often checks fail (rows deleted by another process, or
	// created out of id order on PostgreSQL under concurrent writes),
	// full reads take at most a twentieth of the time.
	started := time.Now()
	defer func() { x.nextBuild = now.Add(max(idRebuildEvery, 20*time.Since(started))) }()
	// The ids in chunks, one statement each, then a check of them all
	// against the counter: rows deleted between two chunks fail it, and
	// so does a deletion by this store meanwhile (which might go with a
	// row created out of id order, leaving the count as it was).
	unlistings := s.unlistings.Load()
	var all idIndex
	var chunk []int64
	for {
		var err error
		chunk, err = idsAfter(ctx, d, p.table, p.domainID, all.max, idChunk, chunk)
		if err != nil {
			return false, err
		}
		all.appendIDs(chunk)
		if len(chunk) < idChunk {
			break
		}
	}
	s.unlisting.RLock()
	defer s.unlisting.RUnlock()
	count, added, err := idsAbove(ctx, d, p.table, p.domainID, kind, all.max, idChunk)
	if err != nil {
		return false, err
	}
	all.appendIDs(added)
	x.mu.Lock()
	if int64(all.n) != count || s.unlistings.Load() != unlistings {
		x.valid = false
		x.mu.Unlock()
		return false, nil
	}
	x.blocks, x.ends, x.n, x.max = all.blocks, all.ends, all.n, all.max
	x.valid, x.gen, x.checked, x.built = true, gen, now, now
	x.mu.Unlock()
	s.dropLeastUsed(idsKey{p.table, p.domainID})
	return true, nil
}

// idsAfter appends to ids (emptied first) up to limit of the domain's ids
// of table above after, ascending.
func idsAfter(ctx context.Context, d db, table string, domainID, after int64, limit int, ids []int64) ([]int64, error) {
	return queryIDs(ctx, d, "SELECT id FROM "+table+" WHERE domain_id = ? AND id > ? ORDER BY id LIMIT +?",
		[]any{domainID, after, limit}, ids[:0])
}

// idsAbove returns the domain's counter of kind and its ids of table above
// after, ascending, chunk ids a statement (idChunk). In one statement, the
// tens of thousands of ids created between two checks under a load of
// writes made strings of 300 KB and more in SQLite's memory, whose
// allocator keeps the emptied regions (about 10 MB of them at 1,000,000
// classes, docs/performance.md, thirty-second pass). The counter is the
// last statement's: a row returned by an earlier statement and deleted
// before it, or created below an id already returned, makes the counter
// disagree with the ids, as when the rows change between two chunks of a
// full read (buildIDs).
func idsAbove(ctx context.Context, d db, table string, domainID int64, kind string, after int64, chunk int) (count int64, ids []int64, err error) {
	agg := "string_agg(id, ',')"
	if d.pg {
		agg = "string_agg(id::text, ',')"
	}
	q := "SELECT (SELECT COALESCE(SUM(n), 0) FROM row_counts WHERE domain_id = ? AND kind = ?), " +
		"(SELECT " + agg + " FROM (SELECT id FROM " + table + " WHERE domain_id = ? AND id > ? ORDER BY id LIMIT +?) AS above)"
	for {
		var s sql.NullString
		if err := d.queryRow(ctx, q, domainID, kind, domainID, after, chunk).Scan(&count, &s); err != nil {
			return 0, nil, err
		}
		from := len(ids)
		if ids, err = appendIDs(ids, s.String); err != nil {
			return 0, nil, err
		}
		if len(ids)-from < chunk {
			return count, ids, nil
		}
		after = ids[len(ids)-1]
	}
}

// appendIDs appends to ids the ids of s, joined by commas in any order,
// and sorts what it appended.
func appendIDs(ids []int64, s string) ([]int64, error) {
	if s == "" {
		return ids, nil
	}
	from := len(ids)
	ids = slices.Grow(ids, strings.Count(s, ",")+1)
	for f := range strings.SplitSeq(s, ",") {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	slices.Sort(ids[from:])
	return ids, nil
}
