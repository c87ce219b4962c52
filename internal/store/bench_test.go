package store_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Benchmarks of the store's hot functions (docs/performance.md): the key
// check, pages of classes and of users with their totals, one class with
// its sittings, and writes.

func BenchmarkAuthClassroom(b *testing.B) {
	benchStores(b, func(b *testing.B, ctx context.Context, st *store.Store, _ store.Domain, keys store.Keys) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := st.AuthClassroom(ctx, keys.Classroom); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkListLiveClasses(b *testing.B) {
	benchStores(b, func(b *testing.B, ctx context.Context, st *store.Store, d store.Domain, _ store.Keys) {
		start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
		const n = 2000
		create := func(from, to int) {
			for i := from; i < to; i++ {
				if _, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: fmt.Sprintf("Class %d", i), Date: "2030-01-02",
					StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1,
					Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}}); err != nil {
					b.Fatal(err)
				}
			}
		}
		// On SQLite the title index is made by hand (titleindex.go), so
		// that every case but the last reads a complete one.
		st.HoldTitleIndex()
		create(0, n)
		if !st.Postgres() {
			if err := st.IndexClassTitles(ctx, 5000); err != nil {
				b.Fatal(err)
			}
		}
		first := store.Page{Limit: 10}
		last := store.Page{Offset: n - 10, Limit: 10}
		// The store caches records, as the server's does, but for the
		// "uncached" cases; in the "after-a-write" ones a write before
		// every page makes every class of the cache stale; "pages-in-turn"
		// reads a different page each time, more of them than the cache
		// holds classes, so most of its classes are not in memory.
		for _, tc := range []struct {
			name                   string
			f                      store.ClassFilter
			p                      store.Page
			uncached, wrote, crawl bool
		}{
			{"first-page", store.ClassFilter{WithOccurrences: true}, first, false, false, false},
			{"first-page-after-a-write", store.ClassFilter{WithOccurrences: true}, first, false, true, false},
			{"first-page-uncached", store.ClassFilter{WithOccurrences: true}, first, true, false, false},
			{"last-page", store.ClassFilter{WithOccurrences: true}, last, false, false, false},
			{"last-page-after-a-write", store.ClassFilter{WithOccurrences: true}, last, false, true, false},
			{"last-page-uncached", store.ClassFilter{WithOccurrences: true}, last, true, false, false},
			{"pages-in-turn", store.ClassFilter{WithOccurrences: true}, first, false, false, true},
			{"pages-in-turn-uncached", store.ClassFilter{WithOccurrences: true}, first, true, false, true},
			{"search", store.ClassFilter{Search: "class 199", WithOccurrences: true}, first, false, false, false},
			// A search most classes match (1,111 of 2,000).
			{"search-broad", store.ClassFilter{Search: "lass 1", WithOccurrences: true}, first, false, false, false},
			// The search again with 64 more classes not yet in the
			// SQLite title index (the indexer's pass starts at 64).
			{"search-64-unindexed", store.ClassFilter{Search: "class 199", WithOccurrences: true}, first, false, false, false},
		} {
			if tc.name == "search-64-unindexed" {
				create(n, n+64)
			}
			b.Run(tc.name, func(b *testing.B) {
				st.SetCacheRecords(!tc.uncached)
				defer st.SetCacheRecords(true)
				b.ReportAllocs()
				p := tc.p
				for b.Loop() {
					if tc.wrote {
						st.Wrote()
					}
					if tc.crawl {
						p.Offset = (p.Offset + p.Limit) % n
					}
					classes, total, err := st.ListLiveClasses(ctx, d.ID, tc.f, p)
					if err != nil || total == 0 {
						b.Fatal(total, err)
					}
					st.ReleaseLiveClasses(classes) // as listclass does
				}
			})
		}
	})
}

// BenchmarkLiveClass reads one class with its sittings (getclass), from
// the database and from the record cache.
func BenchmarkLiveClass(b *testing.B) {
	benchStores(b, func(b *testing.B, ctx context.Context, st *store.Store, d store.Domain, _ store.Keys) {
		start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
		occ := make([]lms.Occurrence, 5)
		for i := range occ {
			s := start.AddDate(0, 0, 7*i)
			occ[i] = lms.Occurrence{Start: s, End: s.Add(time.Hour)}
		}
		c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "Class", Date: "2030-01-02",
			StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1, Occurrences: occ})
		if err != nil {
			b.Fatal(err)
		}
		for _, tc := range []struct {
			name         string
			cache, wrote bool
		}{
			{"read", false, false},
			{"cached", true, false},
			{"cached-after-a-write", true, true}, // every read misses
		} {
			b.Run(tc.name, func(b *testing.B) {
				st.SetCacheRecords(tc.cache)
				b.ReportAllocs()
				for b.Loop() {
					if tc.wrote {
						st.Wrote()
					}
					if got, err := st.LiveClass(ctx, d.ID, c.ID); err != nil || len(got.Occurrences) != len(occ) {
						b.Fatal(len(got.Occurrences), err)
					}
				}
			})
		}
	})
}

// Writes: one caller at a time, and 32 callers at once (SQLite groups
// concurrent callers' transactions into one commit, groupcommit.go).
func BenchmarkCreateUser(b *testing.B) {
	benchWrites(b, func(ctx context.Context, st *store.Store, domainID int64, i int64) error {
		name := fmt.Sprintf("u%d", i)
		_, err := st.CreateUser(ctx, domainID, lms.User{Name: name, Username: name, Email: name + "@example.com"})
		return err
	})
}

func BenchmarkCreateLiveClass(b *testing.B) {
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	benchWrites(b, func(ctx context.Context, st *store.Store, domainID int64, i int64) error {
		_, err := st.CreateLiveClass(ctx, domainID, lms.LiveClass{Title: fmt.Sprintf("Class %d", i), Date: "2030-01-02",
			StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1,
			Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		return err
	})
}

// benchStores runs bench on each database with a fresh store and one
// domain in it.
func benchStores(b *testing.B, bench func(b *testing.B, ctx context.Context, st *store.Store, d store.Domain, keys store.Keys)) {
	for _, be := range apitest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			ctx := context.Background()
			st := apitest.OpenStore(b, be)
			d, keys, err := st.CreateDomain(ctx, "A")
			if err != nil {
				b.Fatal(err)
			}
			bench(b, ctx, st, d, keys)
		})
	}
}

func benchWrites(b *testing.B, write func(ctx context.Context, st *store.Store, domainID int64, i int64) error) {
	benchStores(b, func(b *testing.B, ctx context.Context, st *store.Store, d store.Domain, _ store.Keys) {
		var n atomic.Int64
		b.Run("serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := write(ctx, st, d.ID, n.Add(1)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("concurrent-32", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(32 / runtime.GOMAXPROCS(0))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := write(ctx, st, d.ID, n.Add(1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	})
}

// BenchmarkListUsers reads the first and the last page of 50 of a domain's
// 2,000 users with the total, as users/list does, and a page of those
// whose email contains a text.
func BenchmarkListUsers(b *testing.B) {
	benchStores(b, func(b *testing.B, ctx context.Context, st *store.Store, d store.Domain, _ store.Keys) {
		const n = 2000
		for i := range n {
			name := fmt.Sprintf("u%d", i)
			if _, err := st.CreateUser(ctx, d.ID, lms.User{Name: name, Username: name, Email: name + "@example.com"}); err != nil {
				b.Fatal(err)
			}
		}
		for _, tc := range []struct {
			name  string
			f     store.UserFilter
			p     store.Page
			total int64
		}{
			{"first-page", store.UserFilter{}, store.Page{Limit: 50}, n},
			{"last-page", store.UserFilter{}, store.Page{Offset: n - 50, Limit: 50}, n},
			// u19 is in u19, u190-u199 and u1900-u1999: 111 users.
			{"email-filter", store.UserFilter{Email: "u19"}, store.Page{Limit: 50}, 111},
		} {
			b.Run(tc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					users, total, err := st.ListUsers(ctx, d.ID, tc.f, tc.p)
					if err != nil || total != tc.total || len(users) != 50 {
						b.Fatal(len(users), total, err)
					}
					st.ReleaseUsers(users) // as users/list does
				}
			})
		}
	})
}

// BenchmarkListCourseNames reads the first and the last page of 50 of a
// domain's 2,000 courses, as courses/list does.
func BenchmarkListCourseNames(b *testing.B) {
	benchStores(b, func(b *testing.B, ctx context.Context, st *store.Store, d store.Domain, _ store.Keys) {
		const n = 2000
		for i := range n {
			if _, err := st.CreateCourse(ctx, d.ID, lms.Course{Name: fmt.Sprintf("Course %d", i)}); err != nil {
				b.Fatal(err)
			}
		}
		for _, tc := range []struct {
			name string
			p    store.Page
		}{{"first-page", store.Page{Limit: 50}}, {"last-page", store.Page{Offset: n - 50, Limit: 50}}} {
			b.Run(tc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					names, total, err := st.ListCourseNames(ctx, d.ID, tc.p)
					if err != nil || total != n || len(names) != 50 {
						b.Fatal(len(names), total, err)
					}
					st.ReleaseCourseNames(names) // as courses/list does
				}
			})
		}
	})
}

// BenchmarkOrders reads the first page of 20 of a domain's 20,000 orders,
// newest first with the total, as orders/list does, unfiltered (the total
// a counter) and of one status (the total a count of the matches).
func BenchmarkOrders(b *testing.B) {
	benchStores(b, func(b *testing.B, ctx context.Context, st *store.Store, d store.Domain, _ store.Keys) {
		const n = 20000
		for i := range n {
			o, err := st.CreateOrder(ctx, d.ID, store.Order{Source: store.SourceCheckout, BuyerEmail: fmt.Sprintf("b%d@example.com", i),
				Currency: "usd", Total: 1000})
			if err != nil {
				b.Fatal(err)
			}
			if i%4 == 0 {
				if _, _, err := st.FailOrder(ctx, d.ID, o.ID, "declined"); err != nil {
					b.Fatal(err)
				}
			}
		}
		for _, tc := range []struct {
			name  string
			f     store.OrderFilter
			total int64
		}{
			{"first-page", store.OrderFilter{}, n},
			{"status-filter", store.OrderFilter{Status: store.OrderFailed}, n / 4},
		} {
			b.Run(tc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if os, total, err := st.Orders(ctx, d.ID, tc.f, 0, 20); err != nil || total != tc.total || len(os) != 20 {
						b.Fatal(len(os), total, err)
					}
				}
			})
		}
	})
}
