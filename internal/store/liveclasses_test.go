package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// TestClassSittingsEveryPath: a class reads with its sittings in seq order,
// cancelled flags and all, none for a class without sittings, and every
// listing path with WithOccurrences gives the classes as LiveClass does.
func TestClassSittingsEveryPath(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			const n = 12
			want := map[int64][]lms.Occurrence{}
			for i := range n {
				occ := make([]lms.Occurrence, 1+i%4)
				for j := range occ {
					s := start.AddDate(0, 0, 7*j+i)
					occ[j] = lms.Occurrence{Seq: j + 1, Start: s, End: s.Add(time.Hour)}
				}
				c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: fmt.Sprintf("Class %d", i), Date: "2030-01-02",
					StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: i % 2, Occurrences: occ})
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case i%5 == 0:
					if _, err := st.EditLiveClass(ctx, d.ID, c.ID, func(*lms.LiveClass) ([]lms.Occurrence, error) {
						return []lms.Occurrence{}, nil
					}); err != nil {
						t.Fatal(err)
					}
					occ = nil
				case len(occ) > 1:
					if err := st.SetSittingsCancelled(ctx, d.ID, c.ID, 2, true); err != nil {
						t.Fatal(err)
					}
					occ[1].Cancelled = true
				}
				want[c.ID] = occ
			}

			byID := map[int64]lms.LiveClass{}
			for id, occ := range want {
				c, err := st.LiveClass(ctx, d.ID, id)
				if err != nil {
					t.Fatal(err)
				}
				got := c.Occurrences
				if occ == nil {
					if got != nil {
						t.Errorf("class %d without sittings read %#v, want nil", id, got)
					}
				} else if !reflect.DeepEqual(got, occ) {
					t.Errorf("class %d sittings %+v, want %+v", id, got, occ)
				}
				byID[id] = c
			}

			for _, tc := range []struct {
				name string
				f    store.ClassFilter
				p    store.Page
			}{
				{"first page", store.ClassFilter{}, store.Page{Limit: 5}},
				{"last page", store.ClassFilter{}, store.Page{Offset: n - 5, Limit: 5}},
				{"published page", store.ClassFilter{PublishedOnly: true}, store.Page{Offset: 1, Limit: 3}},
				{"search", store.ClassFilter{Search: "class 1"}, store.Page{Limit: 5}},
				{"all", store.ClassFilter{}, store.Page{}},
				{"all searched", store.ClassFilter{Search: "ass"}, store.Page{}},
			} {
				tc.f.WithOccurrences = true
				got, _, err := st.ListLiveClasses(ctx, d.ID, tc.f, tc.p)
				if err != nil {
					t.Fatal(tc.name, err)
				}
				if len(got) == 0 {
					t.Errorf("%s: no classes", tc.name)
				}
				for _, c := range got {
					if !reflect.DeepEqual(c, byID[c.ID]) {
						t.Errorf("%s: class %d listed as\n%+v\nread as\n%+v", tc.name, c.ID, c, byID[c.ID])
					}
				}
				tc.f.WithOccurrences = false
				bare, _, err := st.ListLiveClasses(ctx, d.ID, tc.f, tc.p)
				if err != nil {
					t.Fatal(tc.name, err)
				}
				for i, c := range bare {
					if c.Occurrences != nil || c.ID != got[i].ID {
						t.Errorf("%s without sittings: class %d has %+v", tc.name, c.ID, c.Occurrences)
					}
				}
			}
		})
	}
}

// TestClassEveryField: every field of a class, each a value no other field
// has, reads back as written from a class read, a page, a search and a
// learner's enrolled classes, on both databases, with and without the
// record cache.
func TestClassEveryField(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			st.SetCacheRecords(false)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			in := lms.LiveClass{OwnerUserID: 1 << 40, Title: "Every field", Description: "About it", Date: "2030-01-02",
				StartMinute: 541, EndMinute: 602, TimezoneID: 3, TimezoneName: "Europe/Paris", IsRecurring: true, Repeat: 4,
				Weekdays: "1,3", EndClassesCount: 5, EndDate: "2030-03-01", Currency: "eur", IsPaid: 6, SeatAttendees: 70_000,
				Record: 8, IsRecordingLayout: 9, IsVideo: 10, IsBoard: 11, IsLang: 12, IsRegion: 13, IsCorporate: 14,
				IsScreenshare: 15, IsPrivateChat: 16, Keyword: "kw", Privacy: 17, Published: 1,
				Occurrences: []lms.Occurrence{{Seq: 1, Start: start, End: start.Add(time.Hour)}}}
			made, err := st.CreateLiveClass(ctx, d.ID, in)
			if err != nil {
				t.Fatal(err)
			}
			u, err := st.CreateUser(ctx, d.ID, lms.User{Name: "L", Username: "l", Email: "l@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Enroll(ctx, d.ID, lms.KindClass, made.ID, u.Email); err != nil {
				t.Fatal(err)
			}
			same := func(how string, c lms.LiveClass) {
				t.Helper()
				if c.ID != made.ID || c.CreatedAt.IsZero() || !c.UpdatedAt.Equal(made.UpdatedAt) {
					t.Errorf("%s: id %d, created %v, updated %v; want id %d, updated %v", how, c.ID, c.CreatedAt, c.UpdatedAt, made.ID, made.UpdatedAt)
				}
				want := in
				want.ID, want.CreatedAt, want.UpdatedAt = c.ID, c.CreatedAt, c.UpdatedAt
				if !reflect.DeepEqual(c, want) {
					t.Errorf("%s:\n got %+v\nwant %+v", how, c, want)
				}
			}
			for _, cache := range []bool{false, true, true} { // the second read with the cache is from memory
				st.SetCacheRecords(cache)
				c, err := st.LiveClass(ctx, d.ID, made.ID)
				if err != nil {
					t.Fatal(err)
				}
				same(fmt.Sprintf("read, cache %v", cache), c)
			}
			for _, f := range []store.ClassFilter{{WithOccurrences: true}, {WithOccurrences: true, Search: "very fie"}} {
				list, total, err := st.ListLiveClasses(ctx, d.ID, f, store.Page{Limit: 10})
				if err != nil || len(list) != 1 || total != 1 {
					t.Fatalf("list %+v: %d classes, total %d, %v", f, len(list), total, err)
				}
				same(fmt.Sprintf("list %+v", f), list[0])
			}
			enrolled, err := st.EnrolledClasses(ctx, d.ID, u.ID, start.Add(-time.Hour))
			if err != nil || len(enrolled) != 1 {
				t.Fatalf("enrolled: %d classes, %v", len(enrolled), err)
			}
			same("enrolled", enrolled[0])
		})
	}
}
