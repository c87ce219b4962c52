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

// Benchmarks of the store's hot functions (docs/performance.md): the key
// check, and the first and last page of a domain's classes with the total.

func BenchmarkAuthClassroom(b *testing.B) {
	for _, be := range apitest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			ctx := context.Background()
			st := apitest.OpenStore(b, be)
			_, keys, err := st.CreateDomain(ctx, "A")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.AuthClassroom(ctx, keys.Classroom); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkListLiveClasses(b *testing.B) {
	for _, be := range apitest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			ctx := context.Background()
			st := apitest.OpenStore(b, be)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				b.Fatal(err)
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			const n = 2000
			for i := range n {
				if _, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: fmt.Sprintf("Class %d", i), Date: "2030-01-02",
					StartMinute: 540, EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1,
					Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}}); err != nil {
					b.Fatal(err)
				}
			}
			for _, tc := range []struct {
				name string
				f    store.ClassFilter
				p    store.Page
			}{
				{"first-page", store.ClassFilter{WithOccurrences: true}, store.Page{Limit: 10}},
				{"last-page", store.ClassFilter{WithOccurrences: true}, store.Page{Offset: n - 10, Limit: 10}},
				{"search", store.ClassFilter{Search: "class 199", WithOccurrences: true}, store.Page{Limit: 10}},
			} {
				b.Run(tc.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if _, total, err := st.ListLiveClasses(ctx, d.ID, tc.f, tc.p); err != nil || total == 0 {
							b.Fatal(total, err)
						}
					}
				})
			}
		})
	}
}
