package store

import (
	"context"
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
	// Stale entries go first: after a write, the next put leaves only itself.
	c.put(recordKey{1, -1}, -1, 2, t0, time.Second)
	if len(c.m) != 1 {
		t.Fatalf("%d entries after a put at a new generation, want 1", len(c.m))
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
