package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// The ids kept in blocks give back every page as the ids themselves would,
// whatever the gaps between them (one byte to ten as uvarints), appended
// one at a time or many, and after ids are removed from anywhere.
func TestIDIndexPages(t *testing.T) {
	seq := func(n int, gap func(i int) int64) []int64 {
		ids := make([]int64, n)
		id := int64(1)
		for i := range ids {
			id += gap(i)
			ids[i] = id
		}
		return ids
	}
	cases := map[string][]int64{
		"none":   nil,
		"one":    {7},
		"dense":  seq(1000, func(int) int64 { return 1 }),
		"gappy":  seq(1500, func(i int) int64 { return int64(1 + i%4*(i%11)) }),
		"spread": seq(700, func(i int) int64 { return int64(1 + i%3*40000) }),
		"wide":   seq(600, func(i int) int64 { return int64(1 + i%5*(1<<20)) }),
		"huge":   seq(300, func(i int) int64 { return int64(1 + i%7*(1<<33)) }),
		"mixed":  seq(900, func(i int) int64 { return []int64{1, 2, 70000, 1, 1 << 34, 5}[i%6] }),
	}
	for name, ids := range cases {
		for _, chunk := range []int{1, 3, 256, 10000} {
			var x idIndex
			for from := 0; from < len(ids); from += chunk {
				x.appendIDs(ids[from:min(from+chunk, len(ids))])
			}
			checkIndexPages(t, fmt.Sprintf("%s by %d", name, chunk), &x, ids)
			// Removed: the first, the last, every seventh, and ids it
			// does not hold.
			kept := slices.Clone(ids)
			for i := len(ids) - 1; i >= 0; i-- {
				if i == 0 || i == len(ids)-1 || i%7 == 3 {
					x.remove(ids[i])
					kept = slices.Delete(kept, i, i+1)
				}
				x.remove(ids[i] + 1<<40)
			}
			x.remove(-1)
			checkIndexPages(t, fmt.Sprintf("%s by %d, some removed", name, chunk), &x, kept)
		}
	}
}

func checkIndexPages(t *testing.T, name string, x *idIndex, ids []int64) {
	t.Helper()
	if x.n != len(ids) || len(ids) > 0 && x.max != ids[len(ids)-1] {
		t.Fatalf("%s: %d ids up to %d, want %d", name, x.n, x.max, len(ids))
	}
	for _, lim := range []int{1, 10, 50, 257, 2000} {
		for off := 0; off <= len(ids)+1; off += 1 + off/7 {
			var want []int64
			if off < len(ids) {
				want = ids[off:min(off+lim, len(ids))]
			}
			if got := x.page(off, lim); !slices.Equal(got, want) {
				t.Fatalf("%s: offset %d limit %d: got %v, want %v", name, off, lim, short(got), short(want))
			}
		}
	}
}

// A full block takes a byte an id for ids less than 128 apart, and a bit
// an id, or a byte for every eight the ids span, when that is fewer:
// 1,000,000 ids in a row take about 125 KB besides the blocks themselves.
func TestIDIndexSmallWhenClose(t *testing.T) {
	for _, gap := range []int64{1, 3, 7, 8, 100} {
		var x idIndex
		for id := int64(1); id <= 100000*gap; id += gap {
			x.appendIDs([]int64{id})
		}
		// A full block spans 255 gaps: a bitmap of 255*gap/8+1 bytes, or
		// 255 one-byte distances.
		want := min(int(255*gap/8+1), 255)
		for i, b := range x.blocks[:len(x.blocks)-1] {
			if b.n != idBlockLen || len(b.data) != want || cap(b.data) > max(want, idBlockLen) {
				t.Fatalf("gap %d: block %d holds %d ids in %d bytes (capacity %d), want %d in %d",
					gap, i, b.n, len(b.data), cap(b.data), idBlockLen, want)
			}
		}
		if want := (x.n + idBlockLen - 1) / idBlockLen; len(x.blocks) != want {
			t.Fatalf("gap %d: %d blocks, want %d", gap, len(x.blocks), want)
		}
	}
}

// Rows created and deleted again and again at the end of a listing reuse
// its last block rather than leaving a block each behind.
func TestIDIndexChurnKeepsBlocks(t *testing.T) {
	var x idIndex
	id := int64(0)
	for range idBlockLen + 10 {
		id++
		x.appendIDs([]int64{id})
	}
	for range 1000 { // a row created, the one before deleted
		id++
		x.appendIDs([]int64{id})
		x.remove(id - 1)
	}
	if len(x.blocks) != 2 || x.n != idBlockLen+10 {
		t.Fatalf("%d blocks holding %d ids, want 2 holding %d", len(x.blocks), x.n, idBlockLen+10)
	}
}

func short(ids []int64) string {
	if len(ids) > 6 {
		return fmt.Sprintf("%v...%v (%d)", ids[:3], ids[len(ids)-3:], len(ids))
	}
	return fmt.Sprint(ids)
}

// Past maxHeldIDs, the ids of the listing read least recently are dropped
// when another listing is first read, and its pages are still right
// afterwards (read again from the database).
func TestHeldIDsBounded(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteStore(t)
	st.cacheRecords = true
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st.recordClock = func() time.Time { return now }
	defer func(n int) { maxHeldIDs = n }(maxHeldIDs)
	maxHeldIDs = 25
	domains, users := domainsWithUsers(t, st, 3, 10)
	list := func(domainID int64) {
		t.Helper()
		// A page is read through the ids from its third read on
		// (pagesByID).
		for range 3 {
			us, _, err := st.ListUsers(ctx, domainID, UserFilter{}, Page{Offset: 3, Limit: 4})
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, u := range us {
				got = append(got, u.ID)
			}
			if want := users[domainID][3:7]; !slices.Equal(got, want) {
				t.Fatalf("domain %d: page %v, want %v", domainID, got, want)
			}
		}
	}
	held := func() []int64 { return heldDomains(st) }
	list(domains[0])
	now = now.Add(2 * time.Second)
	list(domains[1])
	if got := held(); !slices.Equal(got, domains[:2]) {
		t.Fatalf("held %v, want %v", got, domains[:2])
	}
	now = now.Add(2 * time.Second)
	list(domains[0]) // now the most recent
	now = now.Add(2 * time.Second)
	list(domains[2]) // 30 held: the least recent, domain 1, goes
	if got, want := held(), []int64{domains[0], domains[2]}; !slices.Equal(got, want) {
		t.Fatalf("held %v, want %v", got, want)
	}
	now = now.Add(2 * time.Second)
	list(domains[1])
}

// heldDomains returns the domains whose ids st holds, ascending.
func heldDomains(st *Store) []int64 {
	st.idsMu.RLock()
	defer st.idsMu.RUnlock()
	var ids []int64
	for k, x := range st.ids {
		if x.n > 0 {
			ids = append(ids, k.domainID)
		}
	}
	slices.Sort(ids)
	return ids
}

// A deep page is read through the ids in memory from its first read, its
// records not being in memory; a page near either end of the listing is
// read directly, holding no ids.
func TestDeepPagesThroughTheIDs(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteStore(t)
	st.cacheRecords = true
	defer func(n int64) { directPageOffset = n }(directPageOffset)
	directPageOffset = 4
	domains, users := domainsWithUsers(t, st, 2, 20)
	read := func(domainID int64, offset int) {
		t.Helper()
		us, _, err := st.ListUsers(ctx, domainID, UserFilter{}, Page{Offset: offset, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, u := range us {
			got = append(got, u.ID)
		}
		if want := users[domainID][offset:min(offset+3, 20)]; !slices.Equal(got, want) {
			t.Fatalf("domain %d offset %d: page %v, want %v", domainID, offset, got, want)
		}
	}
	read(domains[0], 0)
	read(domains[0], 17) // 3 from the end
	if got := heldDomains(st); len(got) != 0 {
		t.Fatalf("after pages near the ends: ids held for %v, want none", got)
	}
	read(domains[1], 8)
	if got, want := heldDomains(st), domains[1:]; !slices.Equal(got, want) {
		t.Fatalf("after a deep page: ids held for %v, want %v", got, want)
	}
	read(domains[1], 12)
}

// domainsWithUsers creates n domains of perDomain users each in st, and
// returns the domains' ids and each one's users' ids, ascending.
func domainsWithUsers(t *testing.T, st *Store, n, perDomain int) ([]int64, map[int64][]int64) {
	t.Helper()
	ctx := context.Background()
	users := map[int64][]int64{}
	var domains []int64
	for i := range n {
		d, _, err := st.CreateDomain(ctx, fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		domains = append(domains, d.ID)
		for j := range perDomain {
			u, err := st.CreateUser(ctx, d.ID, lms.User{Name: "U", Username: "u", Email: fmt.Sprintf("u%d-%d@example.com", i, j)})
			if err != nil {
				t.Fatal(err)
			}
			users[d.ID] = append(users[d.ID], u.ID)
		}
	}
	return domains, users
}
