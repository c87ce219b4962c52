package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestRecordCacheEntries(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	k := recordKey{domainID: 1, id: 7}
	for _, tc := range []struct {
		name string
		key  recordKey
		gen  uint64
		at   time.Time
		want bool
	}{
		{"same generation, fresh", k, 5, t0.Add(time.Second), true},
		{"a write since", k, 6, t0.Add(time.Second), false},
		{"expired", k, 5, t0.Add(2 * time.Second), false},
		{"same id, another domain", recordKey{domainID: 2, id: 7}, 5, t0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c recordCache[recordKey, string]
			c.put(k, "v", 5, t0, 2*time.Second)
			v, ok := c.get(tc.key, tc.gen, tc.at)
			if ok != tc.want || ok && v != "v" {
				t.Fatalf("get = %q, %v; want hit %v", v, ok, tc.want)
			}
		})
	}
}

func TestRecordCacheBounded(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var c recordCache[recordKey, int]
	for i := range 3 * recordCacheSize {
		c.put(recordKey{1, int64(i)}, i, 1, t0, time.Second)
		if len(c.m) > recordCacheSize {
			t.Fatalf("%d entries after %d puts", len(c.m), i+1)
		}
	}
	last := 3*recordCacheSize - 1
	if v, ok := c.get(recordKey{1, int64(last)}, 1, t0); !ok || v != last {
		t.Fatalf("the last put is not kept: %d, %v", v, ok)
	}
	// When full, a quarter goes at once, so the next puts walk nothing.
	c = recordCache[recordKey, int]{}
	for i := range recordCacheSize + 1 {
		c.put(recordKey{1, int64(i)}, i, 1, t0, time.Second)
	}
	if want := recordCacheSize*3/4 + 1; len(c.m) != want {
		t.Fatalf("%d entries after filling the cache and one more put, want %d", len(c.m), want)
	}
	// Stale entries go first: after a write, the next put into a full
	// cache leaves only itself.
	c = recordCache[recordKey, int]{}
	for i := range recordCacheSize {
		c.put(recordKey{1, int64(i)}, i, 1, t0, time.Second)
	}
	c.put(recordKey{1, -1}, -1, 2, t0, time.Second)
	if len(c.m) != 1 {
		t.Fatalf("%d entries after a put at a new generation, want 1", len(c.m))
	}
}

// When full, the cache drops the records kept first: a record read ahead
// of a listing's reader stays until the reader comes to it.
func TestRecordCacheDropsTheOldest(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, size := range []int{0, 64} {
		c := recordCache[recordKey, int]{size: size}
		n := c.capacity()
		for i := range n {
			c.put(recordKey{1, int64(i)}, i, 1, t0.Add(time.Duration(i)*time.Millisecond), time.Second)
		}
		c.put(recordKey{1, -1}, -1, 1, t0.Add(time.Duration(n)*time.Millisecond), time.Second)
		if want := n*3/4 + 1; len(c.m) != want {
			t.Fatalf("size %d: %d entries after one put too many, want %d", n, len(c.m), want)
		}
		for i := range n {
			_, ok := c.m[recordKey{1, int64(i)}]
			if want := i >= n/4; ok != want {
				t.Fatalf("size %d: record %d of %d (the oldest first) kept: %v, want %v", n, i, n, ok, want)
			}
		}
	}
}

// A write committed while a record is being read makes what was read
// stale: the generation is taken before the row. Here the write commits
// inside the read itself, the worst case of that race.
func TestRecordCacheReadRacingAWrite(t *testing.T) {
	ctx := context.Background()
	s := openSQLiteStore(t)
	s.cacheRecords = true
	var c recordCache[recordKey, string]
	loads := 0
	load := func(v string, write bool) func(context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			loads++
			if write {
				if err := s.tx(ctx, func(d db) error { return nil }); err != nil {
					return "", err
				}
			}
			return v, nil
		}
	}
	size := func(string) int { return 1 }
	if v, _ := cachedRecord(ctx, s, &c, recordKey{1, 1}, size, load("old", true)); v != "old" || loads != 1 {
		t.Fatalf("first read: %q after %d loads", v, loads)
	}
	if v, _ := cachedRecord(ctx, s, &c, recordKey{1, 1}, size, load("new", false)); v != "new" || loads != 2 {
		t.Fatalf("read after the racing write: %q after %d loads, want a new load", v, loads)
	}
	if v, _ := cachedRecord(ctx, s, &c, recordKey{1, 1}, size, load("newer", false)); v != "new" || loads != 2 {
		t.Fatalf("read with no write since: %q after %d loads, want the kept record", v, loads)
	}
	big := func(string) int { return recordMaxBytes + 1 }
	s.wrote()
	for range 2 {
		cachedRecord(ctx, s, &c, recordKey{1, 2}, big, load("big", false))
	}
	if loads != 4 {
		t.Fatalf("a record over recordMaxBytes was kept: %d loads, want 4", loads)
	}
}

// A page through the cache: the records the cache holds at the page's
// generation, the others read in one call, in the page's order; rows read
// that are not missing are ignored, ids not read back (deleted) are left
// out, and what was read is kept.
func TestCachedPage(t *testing.T) {
	ctx := context.Background()
	s := openSQLiteStore(t)
	s.cacheRecords = true
	type rec struct {
		id int64
		v  string
	}
	var c recordCache[recordKey, rec]
	gen := s.gen.Load()
	now := s.recordClock()
	c.put(recordKey{1, 2}, rec{2, "cached 2"}, gen, now, time.Minute)
	c.put(recordKey{1, 5}, rec{5, "cached 5"}, gen, now, time.Minute)
	c.put(recordKey{1, 3}, rec{3, "stale 3"}, gen-1, now, time.Minute)
	c.put(recordKey{2, 1}, rec{1, "another domain's 1"}, gen, now, time.Minute)
	var asked []int64
	load := func(_ context.Context, ids []int64) ([]rec, error) {
		asked = slices.Clone(ids)
		// 4 was deleted; 5 is read again, between the missing ones.
		return []rec{{1, "read 1"}, {3, "read 3"}, {5, "read 5"}, {6, "read 6"}}, nil
	}
	size := func(rec) int { return 1 }
	idOf := func(r rec) int64 { return r.id }
	got, held, err := cachedPage(ctx, s, &c, 1, []int64{1, 2, 3, 4, 5, 6}, nil, gen, size, idOf, load)
	if err != nil || held != 2 {
		t.Fatalf("%d held, %v; want the 2 in memory", held, err)
	}
	want := []rec{{1, "read 1"}, {2, "cached 2"}, {3, "read 3"}, {5, "cached 5"}, {6, "read 6"}}
	if !slices.Equal(got, want) {
		t.Fatalf("page %v, want %v", got, want)
	}
	if !slices.Equal(asked, []int64{1, 3, 4, 6}) {
		t.Fatalf("read %v, want the missing 1, 3, 4, 6", asked)
	}
	for _, id := range []int64{1, 3, 6} {
		if r, ok := c.get(recordKey{1, id}, gen, now); !ok || r.v != fmt.Sprintf("read %d", id) {
			t.Errorf("record %d kept as %v, %v", id, r, ok)
		}
	}
	if _, ok := c.get(recordKey{1, 4}, gen, now); ok {
		t.Error("a record not read back was kept")
	}

	// All in memory: nothing is read.
	asked = nil
	if got, held, err := cachedPage(ctx, s, &c, 1, []int64{1, 2, 3}, nil, gen, size, idOf, load); err != nil || len(got) != 3 || held != 3 || asked != nil {
		t.Fatalf("page %v, %d held, %v, read %v; want three records from memory", got, held, err, asked)
	}
	if !c.mayHold(gen) || c.mayHold(gen+1) {
		t.Fatal("mayHold is true only at the generation of the last record kept")
	}
}

// When a page reads records, it reads those ahead of it not in memory too,
// and keeps them without returning them; a page all in memory reads
// nothing, ahead or not.
func TestCachedPageReadsAhead(t *testing.T) {
	ctx := context.Background()
	s := openSQLiteStore(t)
	s.cacheRecords = true
	var c recordCache[recordKey, int64]
	gen, now := s.gen.Load(), s.recordClock()
	c.put(recordKey{1, 5}, 5, gen, now, time.Minute)
	var asked []int64
	load := func(_ context.Context, ids []int64) ([]int64, error) {
		asked = slices.Clone(ids)
		return ids, nil
	}
	size := func(int64) int { return 8 }
	idOf := func(v int64) int64 { return v }
	got, held, err := cachedPage(ctx, s, &c, 1, []int64{1, 2, 3}, []int64{4, 5, 6}, gen, size, idOf, load)
	if err != nil || held != 0 || !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("page %v, %d held, %v; want 1, 2, 3 read", got, held, err)
	}
	if !slices.Equal(asked, []int64{1, 2, 3, 4, 6}) {
		t.Fatalf("read %v, want the page and 4 and 6 ahead of it", asked)
	}
	for _, id := range []int64{4, 6} {
		if _, ok := c.get(recordKey{1, id}, gen, now); !ok {
			t.Errorf("record %d, read ahead, not kept", id)
		}
	}
	asked = nil
	got, held, err = cachedPage(ctx, s, &c, 1, []int64{4, 5, 6}, []int64{7, 8}, gen, size, idOf, load)
	if err != nil || held != 3 || !slices.Equal(got, []int64{4, 5, 6}) || asked != nil {
		t.Fatalf("page %v, %d held, %v, read %v; want 4, 5, 6 from memory and nothing read", got, held, err, asked)
	}
}

// Pages are read by their ids only while the last page read found most of
// its records in memory, at the current generation.
func TestPagesByID(t *testing.T) {
	s := openSQLiteStore(t)
	s.cacheRecords = true
	var c recordCache[recordKey, int64]
	gen := s.gen.Load()
	size := func(int64) int { return 8 }
	idOf := func(v int64) int64 { return v }
	page := []int64{1, 2, 3, 4}
	steps := []struct {
		name string
		read func()
		want bool
	}{
		{"nothing read", func() {}, false},
		{"a page read for the first time", func() { keepPage(s, &c, 1, page, gen, size, idOf) }, false},
		{"the same page read again", func() { keepPage(s, &c, 1, page, gen, size, idOf) }, true},
		{"a page mostly in memory", func() { c.notePage(2, 3) }, true},
		{"a page mostly not", func() { c.notePage(2, 4) }, false},
		{"a page of another domain", func() { keepPage(s, &c, 2, page, gen, size, idOf) }, false},
		{"that page again", func() { keepPage(s, &c, 2, page, gen, size, idOf) }, true},
	}
	for _, step := range steps {
		step.read()
		if got := c.pagesByID(gen); got != step.want {
			t.Fatalf("after %s: pagesByID = %v, want %v", step.name, got, step.want)
		}
	}
	if c.pagesByID(gen + 1) {
		t.Fatal("pagesByID after a write")
	}
}
