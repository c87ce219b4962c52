package store_test

import (
	"context"
	"fmt"
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
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			other, _, err := st.CreateDomain(ctx, "B")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			var classes, users, courses []int64
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
				if _, err := st.CreateUser(ctx, other.ID, lms.User{Name: "O", Username: "o", Email: fmt.Sprintf("o%d@example.com", i)}); err != nil {
					t.Fatal(err)
				}
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
			// (page.query).
			store.SetDirectPageOffset(t, 3)
			check := func(name string, want []int64, list func(off, lim int) ([]int64, int64, error)) {
				t.Helper()
				for _, lim := range []int{1, 5, 10, 50} {
					for off := 0; off <= len(want)+2; off++ {
						got, total, err := list(off, lim)
						if err != nil {
							t.Fatalf("%s offset %d limit %d: %v", name, off, lim, err)
						}
						if total != int64(len(want)) {
							t.Fatalf("%s: total %d, want %d", name, total, len(want))
						}
						end := min(off+lim, len(want))
						exp := []int64{}
						if off < len(want) {
							exp = want[off:end]
						}
						if fmt.Sprint(got) != fmt.Sprint(exp) {
							t.Fatalf("%s offset %d limit %d: got %v, want %v", name, off, lim, got, exp)
						}
					}
				}
			}
			check("classes", classes, func(off, lim int) ([]int64, int64, error) {
				cs, total, err := st.ListLiveClasses(ctx, d.ID, store.ClassFilter{}, store.Page{Offset: off, Limit: lim})
				return idsOf(cs, func(c lms.LiveClass) int64 { return c.ID }), total, err
			})
			check("published classes", pubIDs, func(off, lim int) ([]int64, int64, error) {
				cs, total, err := st.ListLiveClasses(ctx, d.ID, store.ClassFilter{PublishedOnly: true}, store.Page{Offset: off, Limit: lim})
				return idsOf(cs, func(c lms.LiveClass) int64 { return c.ID }), total, err
			})
			check("users", users, func(off, lim int) ([]int64, int64, error) {
				us, total, err := st.ListUsers(ctx, d.ID, store.UserFilter{}, store.Page{Offset: off, Limit: lim})
				return idsOf(us, func(u lms.User) int64 { return u.ID }), total, err
			})
			check("courses", courses, func(off, lim int) ([]int64, int64, error) {
				cs, total, err := st.ListCourseNames(ctx, d.ID, store.Page{Offset: off, Limit: lim})
				return idsOf(cs, func(c store.CourseName) int64 { return c.ID }), total, err
			})
		})
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
