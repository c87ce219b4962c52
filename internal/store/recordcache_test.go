package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// With the record cache on (apitest opens stores as the server does),
// every write through the store is seen by the next point read or
// listing total, whatever it changed, and a record is never served to
// another domain.
func TestRecordCacheSeesEveryWrite(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			other, _, err := st.CreateDomain(ctx, "B")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "Before", Date: "2030-01-02",
				StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd",
				Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}, {Start: start.AddDate(0, 0, 7), End: start.AddDate(0, 0, 7).Add(time.Hour)}}})
			if err != nil {
				t.Fatal(err)
			}
			co, err := st.CreateCourse(ctx, d.ID, lms.Course{Name: "Before", Status: "draft"})
			if err != nil {
				t.Fatal(err)
			}
			u, err := st.CreateUser(ctx, d.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			type records struct {
				class               lms.LiveClass
				course              lms.Course
				classErr, courseErr error
			}
			read := func() (r records) {
				t.Helper()
				for range 2 { // the second read is answered from memory
					r.class, r.classErr = st.LiveClass(ctx, d.ID, c.ID)
					r.course, r.courseErr = st.Course(ctx, d.ID, co.ID)
				}
				// A listing (as listclass reads it) shows the class as it
				// was just read, the page read twice: directly, then
				// through the cache.
				for range 2 {
					page, _, err := st.ListLiveClasses(ctx, d.ID, store.ClassFilter{WithOccurrences: true}, store.Page{Limit: 10})
					if err != nil {
						t.Fatal(err)
					}
					switch {
					case r.classErr != nil && len(page) != 0:
						t.Fatalf("the page lists %+v, the class reads %v", page, r.classErr)
					case r.classErr == nil && (len(page) != 1 || !reflect.DeepEqual(page[0], r.class)):
						t.Fatalf("the page lists %+v, the class reads %+v", page, r.class)
					}
				}
				return r
			}
			if r := read(); r.classErr != nil || r.class.Title != "Before" || len(r.class.Occurrences) != 2 || r.courseErr != nil {
				t.Fatalf("first read: %+v", r)
			}
			for range 2 {
				if _, err := st.User(ctx, d.ID, u.ID); err != nil {
					t.Fatal(err)
				}
			}

			// The caller's copy of the sittings is its own.
			got, _ := st.LiveClass(ctx, d.ID, c.ID)
			got.Occurrences[0].Cancelled = true
			got.Occurrences = append(got.Occurrences[:1], got.Occurrences[0])
			if again, _ := st.LiveClass(ctx, d.ID, c.ID); again.Occurrences[0].Cancelled || again.Occurrences[1].Seq != 2 {
				t.Fatalf("a caller's change reached the cache: %+v", again.Occurrences)
			}

			page, _, err := st.ListLiveClasses(ctx, d.ID, store.ClassFilter{WithOccurrences: true}, store.Page{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			page[0].Occurrences[0].Cancelled = true
			if again, _ := st.LiveClass(ctx, d.ID, c.ID); again.Occurrences[0].Cancelled {
				t.Fatalf("a change to a listed class reached the cache: %+v", again.Occurrences)
			}

			// Another domain is never answered with this domain's records.
			if page, _, err := st.ListLiveClasses(ctx, other.ID, store.ClassFilter{WithOccurrences: true}, store.Page{Limit: 10}); err != nil || len(page) != 0 {
				t.Fatalf("classes of another domain: %+v, %v", page, err)
			}
			if _, err := st.LiveClass(ctx, other.ID, c.ID); lms.ErrorCode(err) != lms.CodeNotFound {
				t.Fatalf("class of another domain: %v", err)
			}
			if _, err := st.Course(ctx, other.ID, co.ID); lms.ErrorCode(err) != lms.CodeNotFound {
				t.Fatalf("course of another domain: %v", err)
			}
			if _, err := st.User(ctx, other.ID, u.ID); lms.ErrorCode(err) != lms.CodeNotFound {
				t.Fatalf("user of another domain: %v", err)
			}

			// An unfiltered listing's total, read twice, then after a write.
			total := func() int64 {
				t.Helper()
				var n int64
				for range 2 {
					if _, n, err = st.ListUsers(ctx, d.ID, store.UserFilter{}, store.Page{Limit: 10}); err != nil {
						t.Fatal(err)
					}
				}
				return n
			}
			if n := total(); n != 1 {
				t.Fatalf("users total %d, want 1", n)
			}
			if _, err := st.CreateUser(ctx, d.ID, lms.User{Name: "Bob", Username: "bob", Email: "bob@example.com"}); err != nil {
				t.Fatal(err)
			}
			if n := total(); n != 2 {
				t.Fatalf("users total after a create: %d, want 2", n)
			}
			if _, err := st.DeleteUserByEmail(ctx, d.ID, "bob@example.com"); err != nil {
				t.Fatal(err)
			}
			if n := total(); n != 1 {
				t.Fatalf("users total after a delete: %d, want 1", n)
			}

			// Writes, each read back at once.
			if _, err := st.EditLiveClass(ctx, d.ID, c.ID, func(c *lms.LiveClass) ([]lms.Occurrence, error) {
				c.Title = "After"
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			if r := read(); r.classErr != nil || r.class.Title != "After" {
				t.Fatalf("after an edit: %q, %v", r.class.Title, r.classErr)
			}
			if err := st.SetSittingsCancelled(ctx, d.ID, c.ID, 2, true); err != nil {
				t.Fatal(err)
			}
			if r := read(); r.classErr != nil || !r.class.Occurrences[1].Cancelled {
				t.Fatalf("after cancelling a sitting: %+v, %v", r.class.Occurrences, r.classErr)
			}
			if _, err := st.UpdateCourse(ctx, d.ID, co.ID, func(c *lms.Course) { c.Name = "After" }); err != nil {
				t.Fatal(err)
			}
			if r := read(); r.courseErr != nil || r.course.Name != "After" {
				t.Fatalf("after a course update: %q, %v", r.course.Name, r.courseErr)
			}
			if err := st.DeleteLiveClass(ctx, d.ID, c.ID); err != nil {
				t.Fatal(err)
			}
			if err := st.DeleteCourse(ctx, d.ID, co.ID); err != nil {
				t.Fatal(err)
			}
			if r := read(); lms.ErrorCode(r.classErr) != lms.CodeNotFound || lms.ErrorCode(r.courseErr) != lms.CodeNotFound {
				t.Fatalf("after deleting: class %v, course %v", r.classErr, r.courseErr)
			}
			if _, err := st.DeleteUserByEmail(ctx, d.ID, "ann@example.com"); err != nil {
				t.Fatal(err)
			}
			if _, err := st.User(ctx, d.ID, u.ID); lms.ErrorCode(err) != lms.CodeNotFound {
				t.Fatalf("after deleting the user: %v", err)
			}
		})
	}
}

// Another process's write is not seen by the generation: the cache keeps
// serving what it read for RecordCacheTTL, and no longer.
// serverAndCommand opens two stores on one SQLite file, as a server
// (records cached) and a `lectern` command beside it would.
func serverAndCommand(t *testing.T) (server, command *store.Store) {
	t.Helper()
	dir := t.TempDir()
	open := func(cache bool) *store.Store {
		st, err := store.Open(context.Background(), store.Options{DatabaseURL: "sqlite:" + filepath.Join(dir, "lectern.db"), CacheRecords: cache})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if _, err := st.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		return st
	}
	return open(true), open(false)
}

func TestRecordCacheTrustsOtherWritersForTTL(t *testing.T) {
	ctx := context.Background()
	server, command := serverAndCommand(t)
	// The title indexer's first pass, run in the background after Open,
	// is a write of the server's own: it would make the record stale at
	// any moment (a few runs in a hundred under load). Stopped here.
	server.HoldTitleIndex()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	server.SetRecordClock(func() time.Time { return now })
	d, _, err := server.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	co, err := server.CreateCourse(ctx, d.ID, lms.Course{Name: "Before", Status: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := server.Course(ctx, d.ID, co.ID); err != nil || got.Name != "Before" {
		t.Fatalf("first read: %q, %v", got.Name, err)
	}
	if _, err := command.UpdateCourse(ctx, d.ID, co.ID, func(c *lms.Course) { c.Name = "After" }); err != nil {
		t.Fatal(err)
	}
	now = now.Add(store.RecordCacheTTL - time.Millisecond)
	if got, err := server.Course(ctx, d.ID, co.ID); err != nil || got.Name != "Before" {
		t.Fatalf("within the TTL, want the record read before (the cache is on): %q, %v", got.Name, err)
	}
	now = now.Add(time.Millisecond)
	if got, err := server.Course(ctx, d.ID, co.ID); err != nil || got.Name != "After" {
		t.Fatalf("after the TTL: %q, %v", got.Name, err)
	}
}

// Readers racing writers never read a record older than the last write
// acknowledged before their read began.
func TestRecordCacheNeverOlderThanAnAcknowledgedWrite(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			co, err := st.CreateCourse(ctx, d.ID, lms.Course{Name: "0", Status: "draft"})
			if err != nil {
				t.Fatal(err)
			}
			var acked atomic.Int64 // the highest name a finished write set
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						want := acked.Load()
						got, err := st.Course(ctx, d.ID, co.ID)
						if err != nil {
							t.Error(err)
							return
						}
						if n, _ := strconv.ParseInt(got.Name, 10, 64); n < want {
							t.Errorf("read %d after the write of %d was acknowledged", n, want)
							return
						}
					}
				}()
			}
			var writers sync.WaitGroup
			for range 4 {
				writers.Add(1)
				go func() {
					defer writers.Done()
					for range 50 {
						var set int64
						if _, err := st.UpdateCourse(ctx, d.ID, co.ID, func(c *lms.Course) {
							n, _ := strconv.ParseInt(c.Name, 10, 64)
							set = n + 1
							c.Name = strconv.FormatInt(set, 10)
						}); err != nil {
							t.Error(err)
							return
						}
						for a := acked.Load(); a < set && !acked.CompareAndSwap(a, set); a = acked.Load() {
						}
					}
				}()
			}
			writers.Wait()
			close(stop)
			wg.Wait()
			if got, err := st.Course(ctx, d.ID, co.ID); err != nil || got.Name != "200" {
				t.Fatalf("after 200 updates: %q, %v", got.Name, err)
			}
		})
	}
}

// A page of classes read through the record cache is the page read from
// the database: the first, middle and last page, published only, a
// search, with some of its classes in memory and some not, and after a
// write that one of them no longer matches.
func TestClassPagesThroughTheCache(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		// With directPageOffset 4 most pages are deep, and read through
		// the ids in memory at their first read (cachedListPage).
		for _, direct := range []int64{256, 4} {
			t.Run(fmt.Sprintf("%s/direct-%d", b.Name, direct), func(t *testing.T) {
				store.SetDirectPageOffset(t, direct)
				ctx := context.Background()
				st := apitest.OpenStore(t, b)
				d, _, err := st.CreateDomain(ctx, "A")
				if err != nil {
					t.Fatal(err)
				}
				start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
				var ids []int64
				for i := range 25 {
					c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "Class " + strconv.Itoa(i), Date: "2030-01-02",
						StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: i % 3 % 2,
						Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}, {Start: start.AddDate(0, 0, i), End: start.AddDate(0, 0, i).Add(time.Hour)}}})
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, c.ID)
				}
				type listing struct {
					f store.ClassFilter
					p store.Page
				}
				var listings []listing
				for _, f := range []store.ClassFilter{{}, {PublishedOnly: true}, {Search: "ss 1"}, {Search: "ss 1", PublishedOnly: true}} {
					f.WithOccurrences = true
					for _, off := range []int{0, 5, 10, 20, 24, 30} {
						listings = append(listings, listing{f, store.Page{Offset: off, Limit: 10}})
					}
				}
				list := func(l listing) ([]lms.LiveClass, int64) {
					t.Helper()
					page, total, err := st.ListLiveClasses(ctx, d.ID, l.f, l.p)
					if err != nil {
						t.Fatal(err)
					}
					return page, total
				}
				// compare reads every listing with the cache off, then three
				// times with it on, and wants the same pages. The last pages
				// come first: after a write, the pages of the classes written
				// are then read when others have been kept at the new
				// generation, the cache holding them as they were before.
				compare := func(when string) {
					t.Helper()
					for _, l := range slices.Backward(listings) {
						st.SetCacheRecords(false)
						want, wantTotal := list(l)
						st.SetCacheRecords(true)
						for i := range 3 { // the third from memory
							if got, total := list(l); total != wantTotal || !reflect.DeepEqual(got, want) {
								t.Fatalf("%s, %+v, read %d: %d classes of %d through the cache, %d of %d from the database:\n%+v\n%+v",
									when, l, i, len(got), total, len(want), wantTotal, got, want)
							}
						}
					}
				}
				// Some classes in memory before any page.
				for _, id := range ids[3:8] {
					if _, err := st.LiveClass(ctx, d.ID, id); err != nil {
						t.Fatal(err)
					}
				}
				compare("at first")

				// A write to a class the cache holds; then a point read keeps
				// another class at the new generation, so the cache may hold
				// some of a page and the edited class must be read again.
				for _, edit := range []struct {
					name string
					f    func(c *lms.LiveClass)
				}{
					{"a new title", func(c *lms.LiveClass) { c.Title = "Renamed" }},
					{"unpublished", func(c *lms.LiveClass) { c.Published = 0 }},
					{"published", func(c *lms.LiveClass) { c.Published = 1 }},
				} {
					if _, err := st.EditLiveClass(ctx, d.ID, ids[4], func(c *lms.LiveClass) ([]lms.Occurrence, error) {
						edit.f(c)
						return nil, nil
					}); err != nil {
						t.Fatal(err)
					}
					if _, err := st.LiveClass(ctx, d.ID, ids[20]); err != nil {
						t.Fatal(err)
					}
					compare("after " + edit.name)
				}
				if err := st.SetSittingsCancelled(ctx, d.ID, ids[6], 2, true); err != nil {
					t.Fatal(err)
				}
				if _, err := st.LiveClass(ctx, d.ID, ids[20]); err != nil {
					t.Fatal(err)
				}
				compare("after a sitting cancelled")
				if err := st.DeleteLiveClass(ctx, d.ID, ids[5]); err != nil {
					t.Fatal(err)
				}
				compare("after a delete")
			})
		}
	}
}

// A page of users read through the record cache is the page read from
// the database, before and after users are added and deleted, in a domain
// beside another.
func TestUserPagesThroughTheCache(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		// With directPageOffset 4 most pages are deep, and read through
		// the ids in memory at their first read (cachedListPage).
		for _, direct := range []int64{256, 4} {
			t.Run(fmt.Sprintf("%s/direct-%d", b.Name, direct), func(t *testing.T) {
				store.SetDirectPageOffset(t, direct)
				ctx := context.Background()
				st := apitest.OpenStore(t, b)
				var domains [2]int64
				for i := range domains {
					d, _, err := st.CreateDomain(ctx, "D"+strconv.Itoa(i))
					if err != nil {
						t.Fatal(err)
					}
					domains[i] = d.ID
				}
				add := func(domainID int64, name string) {
					t.Helper()
					if _, err := st.CreateUser(ctx, domainID, lms.User{Name: name, Username: name, Email: name + "@example.com"}); err != nil {
						t.Fatal(err)
					}
				}
				for i := range 30 {
					for _, d := range domains {
						add(d, "u"+strconv.Itoa(i))
					}
				}
				compare := func(when string) {
					t.Helper()
					for _, d := range domains {
						for _, off := range []int{0, 5, 10, 25, 29, 40} {
							p := store.Page{Offset: off, Limit: 10}
							st.SetCacheRecords(false)
							want, wantTotal, err := st.ListUsers(ctx, d, store.UserFilter{}, p)
							if err != nil {
								t.Fatal(err)
							}
							st.SetCacheRecords(true)
							for i := range 3 { // the third from memory
								got, total, err := st.ListUsers(ctx, d, store.UserFilter{}, p)
								if err != nil || total != wantTotal || !reflect.DeepEqual(got, want) {
									t.Fatalf("%s, domain %d, %+v, read %d: %+v of %d (%v) through the cache, %+v of %d from the database",
										when, d, p, i, got, total, err, want, wantTotal)
								}
							}
						}
					}
				}
				compare("at first")
				add(domains[0], "late")
				compare("after a user added")
				// Every page of the first domain kept, then a delete in the other.
				if _, err := st.DeleteUserByEmail(ctx, domains[1], "u7@example.com"); err != nil {
					t.Fatal(err)
				}
				compare("after a user deleted")
				if _, err := st.DeleteUserByEmail(ctx, domains[0], "u0@example.com"); err != nil {
					t.Fatal(err)
				}
				compare("after the first user deleted")
			})
		}
	}
}

// A class listing read page after page reads the next pages' classes
// with a page's (store.ReadAhead in all), so that they are in memory before
// they are asked for; each page is still the listing's, and its domain's
// alone. A page read alone, or the first after a write, reads no more
// than itself.
func TestClassListingReadInOrderReadsAhead(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			store.SetDirectPageOffset(t, 4)
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			var domains [2]int64
			for i := range domains {
				d, _, err := st.CreateDomain(ctx, strconv.Itoa(i))
				if err != nil {
					t.Fatal(err)
				}
				domains[i] = d.ID
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			create := func(domainID int64, title string) int64 {
				t.Helper()
				c, err := st.CreateLiveClass(ctx, domainID, lms.LiveClass{Title: title, Date: "2030-01-02",
					StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1,
					Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
				if err != nil {
					t.Fatal(err)
				}
				return c.ID
			}
			// The two domains' classes alternate, so that a range of one's
			// ids holds the other's too.
			const n = 100
			var ids []int64
			for i := range n {
				ids = append(ids, create(domains[0], "Class "+strconv.Itoa(i)))
				create(domains[1], "Other "+strconv.Itoa(i))
			}
			read := func(offset int) {
				t.Helper()
				page, total, err := st.ListLiveClasses(ctx, domains[0], store.ClassFilter{WithOccurrences: true}, store.Page{Offset: offset, Limit: 10})
				if err != nil || total != n || len(page) != 10 {
					t.Fatalf("page at %d: %d classes of %d, %v", offset, len(page), total, err)
				}
				for i, c := range page {
					if c.ID != ids[offset+i] || c.Title != "Class "+strconv.Itoa(offset+i) || len(c.Occurrences) != 1 {
						t.Fatalf("page at %d, class %d: %d %q with %d sittings, want %d %q with 1",
							offset, i, c.ID, c.Title, len(c.Occurrences), ids[offset+i], "Class "+strconv.Itoa(offset+i))
					}
				}
			}
			held := func(from, to int) int { return st.ListedClassesInMemory(domains[0], ids[from:to]) }

			read(20) // alone
			if got := held(30, n); got != 0 {
				t.Fatalf("a page read alone: %d classes after it in memory, want 0", got)
			}
			read(30) // after the page before it: reads ahead
			if got, want := held(40, n), store.ReadAhead-10; got != want {
				t.Fatalf("a page read after the one before it: %d classes after it in memory, want %d", got, want)
			}
			// The pages read ahead come from memory: none of them reads, and
			// so none reads further ahead.
			for off := 40; off < 30+store.ReadAhead; off += 10 {
				read(off)
			}
			if got := held(30+store.ReadAhead, n); got != 0 {
				t.Fatalf("after the pages read ahead: %d classes past them in memory, want 0", got)
			}
			read(30 + store.ReadAhead) // the next page not in memory reads ahead again, to the end
			if got, want := held(40+store.ReadAhead, n), min(store.ReadAhead-10, n-40-store.ReadAhead); got != want {
				t.Fatalf("the next page not in memory: %d classes after it in memory, want %d", got, want)
			}
			// After a write nothing read before serves, and the first page
			// read does not read ahead: the page before it is not in memory.
			create(domains[1], "Written")
			read(n - 20)
			if got := held(n-10, n); got != 0 {
				t.Fatalf("the first page after a write: %d classes after it in memory, want 0", got)
			}
		})
	}
}

// A crawl through a long listing of classes on PostgreSQL, each page read
// from the database by its ids, runs statements that PostgreSQL plans once
// for the connection after their fifth run (pg_prepared_statements counts
// them), not at each run: read as a range of ids, a page's classes were
// planned again every time, about two fifths of PostgreSQL's CPU for a
// page. The plan made once is weighed against the table's size, so the
// table holds thousands of classes.
func TestPostgresCrawlPlannedOnce(t *testing.T) {
	store.SetDirectPageOffset(t, 4)
	ctx := context.Background()
	st := apitest.OpenStore(t, apitest.Postgres(t))
	d, _, err := st.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	first, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "Class 0", Date: "2030-01-02",
		StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1,
		Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
	if err != nil {
		t.Fatal(err)
	}
	// Copies of the first class, in SQL (thousands through the store take
	// minutes), every other one published, each with the first's sitting.
	conns := st.ReadConns()
	for _, q := range []string{
		`INSERT INTO live_classes (domain_id, owner_user_id, title, date, start_minute, end_minute, timezone_name,
			currency, published, created_at, updated_at)
		SELECT domain_id, owner_user_id, 'Class ' || g.i, date, start_minute, end_minute, timezone_name,
			currency, g.i % 2, created_at, updated_at
		FROM live_classes, generate_series(1, 3000) AS g(i) WHERE id = $1`,
		`INSERT INTO class_occurrences (domain_id, class_id, seq, starts_at, ends_at)
		SELECT o.domain_id, c.id, o.seq, o.starts_at, o.ends_at FROM live_classes c, class_occurrences o
		WHERE o.class_id = $1 AND c.domain_id = o.domain_id AND c.id > $1`,
	} {
		if _, err := conns.ExecContext(ctx, q, first.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conns.ExecContext(ctx, "ANALYZE live_classes, class_occurrences"); err != nil {
		t.Fatal(err)
	}
	// One connection, so that every statement of the crawl is prepared on
	// the one the check below reads.
	conns.SetMaxOpenConns(1)
	// Each page has classes not in memory yet, read from the database with
	// the same statement every time. The published ones are read a class
	// apart; all classes 30 apart, since a page read after the one before
	// it reads the next ones ahead (store.ReadAhead) and those then come
	// from memory.
	for _, l := range []struct {
		f    store.ClassFilter
		step int
	}{{store.ClassFilter{WithOccurrences: true}, 30}, {store.ClassFilter{WithOccurrences: true, PublishedOnly: true}, 1}} {
		for off := 1000; off < 1000+16*l.step; off += l.step {
			page, total, err := st.ListLiveClasses(ctx, d.ID, l.f, store.Page{Offset: off, Limit: 10})
			if err != nil || len(page) != 10 || total < 1500 {
				t.Fatalf("%+v page at %d: %d classes of %d, %v", l.f, off, len(page), total, err)
			}
		}
	}
	rows, err := conns.QueryContext(ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement LIKE '%live_classes%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ran := 0
	for rows.Next() {
		var q string
		var generic, custom int64
		if err := rows.Scan(&q, &generic, &custom); err != nil {
			t.Fatal(err)
		}
		ran += int(generic + custom)
		if custom > 5 {
			t.Errorf("planned again at each of %d runs (%d from the plan made once): %s", custom, generic, q)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if ran < 32 {
		t.Fatalf("the crawl ran %d prepared statements on the connection checked; it reads 32 pages", ran)
	}
}
