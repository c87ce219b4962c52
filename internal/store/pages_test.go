package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Totals come from counters kept by triggers; pages in the second half are
// read from the end. Every page, offset and filter must give what a plain
// scan in id order gives, and the totals must follow inserts, deletes and
// publishing, per domain.
func TestListingTotalsAndPagesMatchAScan(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, other := twoDomains(t, st)
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			var classes, users, courses, otherUsers []int64
			published := map[int64]bool{}
			for i := range 23 {
				pub := 0
				if i%3 != 0 {
					pub = 1
				}
				c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: fmt.Sprintf("Class %d", i), Date: "2030-01-02",
					StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: pub,
					Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
				if err != nil {
					t.Fatal(err)
				}
				classes = append(classes, c.ID)
				published[c.ID] = pub == 1
				u, err := st.CreateUser(ctx, d.ID, lms.User{Name: "U", Username: "u", Email: fmt.Sprintf("u%d@example.com", i)})
				if err != nil {
					t.Fatal(err)
				}
				users = append(users, u.ID)
				co, err := st.CreateCourse(ctx, d.ID, lms.Course{Name: fmt.Sprintf("Course %d", i)})
				if err != nil {
					t.Fatal(err)
				}
				courses = append(courses, co.ID)
				// The other domain's rows must not count.
				o, err := st.CreateUser(ctx, other.ID, lms.User{Name: "O", Username: "o", Email: fmt.Sprintf("o%d@example.com", i)})
				if err != nil {
					t.Fatal(err)
				}
				otherUsers = append(otherUsers, o.ID)
			}
			// Delete some, unpublish one, publish another.
			if err := st.DeleteLiveClass(ctx, d.ID, classes[4]); err != nil {
				t.Fatal(err)
			}
			delete(published, classes[4])
			classes = append(classes[:4], classes[5:]...)
			if _, err := st.DeleteUserByEmail(ctx, d.ID, "u7@example.com"); err != nil {
				t.Fatal(err)
			}
			users = append(users[:7], users[8:]...)
			if err := st.DeleteCourse(ctx, d.ID, courses[0]); err != nil {
				t.Fatal(err)
			}
			courses = courses[1:]
			for _, id := range []int64{classes[1], classes[2]} { // published -> not, and back
				c, err := st.EditLiveClass(ctx, d.ID, id, func(c *lms.LiveClass) ([]lms.Occurrence, error) {
					c.Published = 1 - c.Published
					return nil, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				published[id] = c.Published == 1
			}
			var pubIDs []int64
			for _, id := range classes {
				if published[id] {
					pubIDs = append(pubIDs, id)
				}
			}

			// The first pages are read directly, the next ones of the
			// first half by a deferred join, the second half backwards
			// (page.query). Then every page is read directly, those past
			// the end too.
			for _, direct := range []int64{3, 1000} {
				store.SetDirectPageOffset(t, direct)
				checkListings(t, st, d.ID, classes, pubIDs, users, courses)
			}
			// The other domain: users only; no page of classes or courses
			// holds a total.
			for _, direct := range []int64{3, 1000} {
				store.SetDirectPageOffset(t, direct)
				checkListings(t, st, other.ID, nil, nil, otherUsers, nil)
			}
		})
	}
}

// A page past a listing's end, or of an empty listing, is an empty list,
// never nil: a page's slice is allocated at its first row (orEmpty).
func TestEmptyPagesAreLists(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, empty := twoDomains(t, st)
			if _, err := st.CreateUser(ctx, d.ID, lms.User{Name: "U", Username: "u", Email: "u@example.com"}); err != nil {
				t.Fatal(err)
			}
			for _, domainID := range []int64{d.ID, empty.ID} {
				for _, p := range []store.Page{{Limit: 10}, {Offset: 5, Limit: 10}} {
					for _, f := range []store.ClassFilter{{}, {WithOccurrences: true}, {Search: "nothing", WithOccurrences: true}} {
						cs, _, err := st.ListLiveClasses(ctx, domainID, f, p)
						if err != nil || cs == nil || len(cs) != 0 {
							t.Errorf("classes of domain %d, %+v, %+v: %v (nil %t), %v", domainID, f, p, cs, cs == nil, err)
						}
					}
					us, _, err := st.ListUsers(ctx, domainID, store.UserFilter{}, store.Page{Offset: p.Offset + 1, Limit: p.Limit})
					if err != nil || us == nil || len(us) != 0 {
						t.Errorf("users of domain %d, %+v: %v (nil %t), %v", domainID, p, us, us == nil, err)
					}
					us, _, err = st.ListUsers(ctx, domainID, store.UserFilter{Email: "nobody"}, p)
					if err != nil || us == nil || len(us) != 0 {
						t.Errorf("users of domain %d by email, %+v: %v (nil %t), %v", domainID, p, us, us == nil, err)
					}
				}
			}
		})
	}
}

// checkListings checks every page of the domain's classes, published
// classes, users and courses against the ids given, in id order.
func checkListings(t *testing.T, st *store.Store, domainID int64, classes, published, users, courses []int64) {
	t.Helper()
	ctx := context.Background()
	checkPages(t, "classes", classes, func(off, lim int) ([]int64, int64, error) {
		cs, total, err := st.ListLiveClasses(ctx, domainID, store.ClassFilter{}, store.Page{Offset: off, Limit: lim})
		return idsOf(cs, func(c lms.LiveClass) int64 { return c.ID }), total, err
	})
	checkPages(t, "published classes", published, func(off, lim int) ([]int64, int64, error) {
		cs, total, err := st.ListLiveClasses(ctx, domainID, store.ClassFilter{PublishedOnly: true}, store.Page{Offset: off, Limit: lim})
		return idsOf(cs, func(c lms.LiveClass) int64 { return c.ID }), total, err
	})
	checkPages(t, "users", users, func(off, lim int) ([]int64, int64, error) {
		us, total, err := st.ListUsers(ctx, domainID, store.UserFilter{}, store.Page{Offset: off, Limit: lim})
		return idsOf(us, func(u lms.User) int64 { return u.ID }), total, err
	})
	checkPages(t, "courses", courses, func(off, lim int) ([]int64, int64, error) {
		cs, total, err := st.ListCourseNames(ctx, domainID, store.Page{Offset: off, Limit: lim})
		return idsOf(cs, func(c store.CourseName) int64 { return c.ID }), total, err
	})
}

// twoDomains creates the domains "A" and "B" of a listing test: the
// rows of the second must never count in the first.
func twoDomains(t *testing.T, st *store.Store) (store.Domain, store.Domain) {
	t.Helper()
	d, _, err := st.CreateDomain(context.Background(), "A")
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := st.CreateDomain(context.Background(), "B")
	if err != nil {
		t.Fatal(err)
	}
	return d, other
}

// checkPages reads every page of a listing, at several limits and at
// offsets up to past its end, and compares each page and its total with
// want, the listing's ids in order.
func checkPages(t *testing.T, name string, want []int64, list func(off, lim int) ([]int64, int64, error)) {
	t.Helper()
	for _, lim := range []int{1, 4, 5, 10, 50} {
		for off := 0; off <= len(want)+2; off++ {
			got, total, err := list(off, lim)
			if err != nil {
				t.Fatalf("%s offset %d limit %d: %v", name, off, lim, err)
			}
			if total != int64(len(want)) {
				t.Fatalf("%s: total %d, want %d", name, total, len(want))
			}
			exp := []int64{}
			if off < len(want) {
				exp = want[off:min(off+lim, len(want))]
			}
			if fmt.Sprint(got) != fmt.Sprint(exp) {
				t.Fatalf("%s offset %d limit %d: got %v, want %v", name, off, lim, got, exp)
			}
		}
	}
}

// idsOf returns the ids of xs, in order.
func idsOf[T any](xs []T, id func(T) int64) []int64 {
	ids := []int64{}
	for _, x := range xs {
		ids = append(ids, id(x))
	}
	return ids
}

// The listings of orders, certificates and quiz attempts take their
// unfiltered totals from counters too (migration 0040). They must follow
// inserts, deletes and deletes by cascade, count no other domain's rows,
// and page newest first as a scan does; a filtered listing still counts.
func TestOrderCertificateAttemptTotalsFollowWrites(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, other := twoDomains(t, st)
			orders, certs, attempts := map[int64][]int64{}, map[int64][]int64{}, map[int64][]int64{}
			var users, tests []int64
			for _, dom := range []int64{other.ID, d.ID} {
				w := newListWriter(t, st, dom)
				for i := range 7 {
					u := w.user(fmt.Sprintf("u%d@example.com", i))
					orders[dom] = append(orders[dom], w.order(u))
					certs[dom] = append(certs[dom], w.certificate(u))
					for range 2 {
						attempts[dom] = append(attempts[dom], w.attempt(u))
					}
					if dom == d.ID {
						users = append(users, u)
					}
				}
				if dom == d.ID {
					tests = append(tests, w.test)
				}
			}
			// A user's delete takes their certificates and attempts along
			// (foreign keys); a test's delete takes its attempts.
			if _, err := st.DeleteUserByEmail(ctx, d.ID, "u2@example.com"); err != nil {
				t.Fatal(err)
			}
			certs[d.ID] = append(certs[d.ID][:2], certs[d.ID][3:]...)
			attempts[d.ID] = append(attempts[d.ID][:4], attempts[d.ID][6:]...)
			if _, err := st.DeleteAttempt(ctx, d.ID, attempts[d.ID][0]); err != nil {
				t.Fatal(err)
			}
			attempts[d.ID] = attempts[d.ID][1:]

			newestFirst := func(ids []int64) []int64 {
				out := append([]int64(nil), ids...)
				slices.Reverse(out)
				return out
			}
			checkPages(t, "orders", newestFirst(orders[d.ID]), func(off, lim int) ([]int64, int64, error) {
				os, total, err := st.Orders(ctx, d.ID, store.OrderFilter{}, off, lim)
				return idsOf(os, func(o store.Order) int64 { return o.ID }), total, err
			})
			checkPages(t, "certificates", newestFirst(certs[d.ID]), func(off, lim int) ([]int64, int64, error) {
				cs, total, err := st.ListCertificates(ctx, d.ID, store.CertificateFilter{}, store.Page{Offset: off, Limit: lim})
				return idsOf(cs, func(c store.Certificate) int64 { return c.ID }), total, err
			})
			checkPages(t, "attempts", newestFirst(attempts[d.ID]), func(off, lim int) ([]int64, int64, error) {
				as, total, err := st.ListAttempts(ctx, d.ID, store.AttemptFilter{}, store.Page{Offset: off, Limit: lim})
				return idsOf(as, func(a store.Attempt) int64 { return a.ID }), total, err
			})
			checkPages(t, "one user's certificates", newestFirst(certs[d.ID][3:4]), func(off, lim int) ([]int64, int64, error) {
				cs, total, err := st.ListCertificates(ctx, d.ID, store.CertificateFilter{UserID: users[4]}, store.Page{Offset: off, Limit: lim})
				return idsOf(cs, func(c store.Certificate) int64 { return c.ID }), total, err
			})

			if err := st.DeleteTest(ctx, d.ID, tests[0]); err != nil {
				t.Fatal(err)
			}
			checkPages(t, "attempts after the test's delete", []int64{}, func(off, lim int) ([]int64, int64, error) {
				as, total, err := st.ListAttempts(ctx, d.ID, store.AttemptFilter{}, store.Page{Offset: off, Limit: lim})
				return idsOf(as, func(a store.Attempt) int64 { return a.ID }), total, err
			})
			if _, total, err := st.ListAttempts(ctx, other.ID, store.AttemptFilter{}, store.Page{Limit: 1}); err != nil || total != 14 {
				t.Fatalf("the other domain's attempts: total %d (%v), want 14", total, err)
			}
		})
	}
}

// listWriter makes a domain's users, orders, certificates (of one course
// and template) and attempts (at one test), for listing tests.
type listWriter struct {
	t            *testing.T
	st           *store.Store
	domain       int64
	course, test int64
	started      time.Time
}

func newListWriter(t *testing.T, st *store.Store, domain int64) *listWriter {
	t.Helper()
	ctx := context.Background()
	course, err := st.CreateCourse(ctx, domain, lms.Course{Name: "Course"})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := st.CreateCertificateTemplate(ctx, domain, store.CertificateTemplate{Name: "T", Title: "Certificate"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetCourseCertificateTemplate(ctx, domain, course.ID, tpl.ID); err != nil {
		t.Fatal(err)
	}
	test, err := st.CreateTest(ctx, domain, lms.Test{Name: "Test"})
	if err != nil {
		t.Fatal(err)
	}
	return &listWriter{t: t, st: st, domain: domain, course: course.ID, test: test.ID,
		started: time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)}
}

func (w *listWriter) user(email string) int64 {
	w.t.Helper()
	u, err := w.st.CreateUser(context.Background(), w.domain, lms.User{Name: "U", Username: "u", Email: email})
	if err != nil {
		w.t.Fatal(err)
	}
	return u.ID
}

func (w *listWriter) order(user int64) int64 {
	w.t.Helper()
	o, err := w.st.CreateOrder(context.Background(), w.domain, store.Order{Source: store.SourceCheckout,
		BuyerEmail: fmt.Sprintf("buyer%d@example.com", user), UserID: user, Currency: "usd"})
	if err != nil {
		w.t.Fatal(err)
	}
	return o.ID
}

func (w *listWriter) certificate(user int64) int64 {
	w.t.Helper()
	c, _, err := w.st.IssueCertificate(context.Background(), w.domain, store.CertificateIssue{UserID: user, CourseID: w.course,
		Source: store.CertSourceManual, NewCode: func() string { return fmt.Sprintf("code-%d-%d", w.domain, user) }})
	if err != nil {
		w.t.Fatal(err)
	}
	return c.ID
}

// attempt starts a new attempt, a minute after the last one.
func (w *listWriter) attempt(user int64) int64 {
	w.t.Helper()
	w.started = w.started.Add(time.Minute)
	a, _, err := w.st.StartAttempt(context.Background(), w.domain, w.test, user, func([]store.Attempt) (*store.Attempt, *store.Attempt, error) {
		return nil, &store.Attempt{Mode: "test", State: "in_progress", StartedAt: w.started}, nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return a.ID
}

// A page handed back (ReleaseUsers, ReleaseLiveClasses,
// ReleaseCourseNames) is put together again in the same memory. Every
// page read after that, from the database or the record cache, with
// sittings or without, must be what it was the first time.
func TestPagesHandedBackAreListedAlike(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _ := twoDomains(t, st)
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			for i := range 25 {
				sittings := []lms.Occurrence{{Start: start.AddDate(0, 0, i), End: start.AddDate(0, 0, i).Add(time.Hour)}}
				if i%2 == 0 { // some classes have two sittings
					sittings = append(sittings, lms.Occurrence{Start: start.AddDate(0, 1, i), End: start.AddDate(0, 1, i).Add(time.Hour)})
				}
				if _, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: fmt.Sprintf("Class %d", i), Date: "2030-01-02",
					StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1, Occurrences: sittings}); err != nil {
					t.Fatal(err)
				}
				if _, err := st.CreateUser(ctx, d.ID, lms.User{Name: fmt.Sprintf("U%d", i), Username: fmt.Sprintf("u%d", i),
					Email: fmt.Sprintf("u%d@example.com", i)}); err != nil {
					t.Fatal(err)
				}
				if _, err := st.CreateCourse(ctx, d.ID, lms.Course{Name: fmt.Sprintf("Course %d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			filters := []store.ClassFilter{{WithOccurrences: true}, {}, {Search: "class 1", WithOccurrences: true}}
			classes := map[string][]lms.LiveClass{}
			users := map[string][]lms.User{}
			courses := map[string][]store.CourseName{}
			// Three rounds: the first reads the database, the later ones
			// the record cache, each into pages handed back before.
			for round := range 3 {
				for _, off := range []int{0, 10, 20} {
					p := store.Page{Offset: off, Limit: 10}
					for _, f := range filters {
						got, _, err := st.ListLiveClasses(ctx, d.ID, f, p)
						if err != nil {
							t.Fatal(err)
						}
						sameAsFirstRead(t, round, classes, fmt.Sprintf("classes %+v at %d", f, off), got, cloneClasses, sameClass)
						st.ReleaseLiveClasses(got)
					}
					us, _, err := st.ListUsers(ctx, d.ID, store.UserFilter{}, p)
					if err != nil {
						t.Fatal(err)
					}
					sameAsFirstRead(t, round, users, fmt.Sprintf("users at %d", off), us, slices.Clone, func(a, b lms.User) bool { return a == b })
					st.ReleaseUsers(us)
					names, _, err := st.ListCourseNames(ctx, d.ID, p)
					if err != nil {
						t.Fatal(err)
					}
					sameAsFirstRead(t, round, courses, fmt.Sprintf("courses at %d", off), names, slices.Clone,
						func(a, b store.CourseName) bool { return a == b })
					st.ReleaseCourseNames(names)
				}
			}
			if n, m, u, c := len(classes[fmt.Sprintf("classes %+v at 20", filters[0])]), len(classes[fmt.Sprintf("classes %+v at 0", filters[2])]),
				len(users["users at 10"]), len(courses["courses at 20"]); n != 5 || m != 10 || u != 10 || c != 5 {
				t.Errorf("pages of %d, %d, %d and %d, want 5, 10, 10 and 5", n, m, u, c)
			}
		})
	}
}

// sameAsFirstRead checks page got, named k, against its first read,
// keeping a copy of it when this is the first.
func sameAsFirstRead[V any](t *testing.T, round int, first map[string][]V, k string, got []V, clone func([]V) []V, eq func(a, b V) bool) {
	t.Helper()
	want, ok := first[k]
	if !ok {
		first[k] = clone(got)
	} else if !slices.EqualFunc(got, want, eq) {
		t.Errorf("round %d, %s: %+v, want %+v", round, k, got, want)
	}
}

// cloneClasses copies classes with their own sittings.
func cloneClasses(cs []lms.LiveClass) []lms.LiveClass {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Occurrences = slices.Clone(out[i].Occurrences)
	}
	return out
}

// sameClass compares two classes field by field, sittings included, times
// as instants.
func sameClass(a, b lms.LiveClass) bool {
	return reflect.DeepEqual(utcClass(a), utcClass(b))
}

func utcClass(c lms.LiveClass) lms.LiveClass {
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	c.Occurrences = slices.Clone(c.Occurrences)
	for i := range c.Occurrences {
		c.Occurrences[i].Start, c.Occurrences[i].End = c.Occurrences[i].Start.UTC(), c.Occurrences[i].End.UTC()
	}
	return c
}
