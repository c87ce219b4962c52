package learn_test

import (
	"context"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
)

// BenchmarkOutline measures one learner's outline of a 200-lesson course
// (10 sections of 20 text lessons, half of them done) on SQLite: every
// read recomputes from the stored rows.
func BenchmarkOutline(b *testing.B) {
	ctx := context.Background()
	st := apitest.OpenStore(b, apitest.Backend{Name: "sqlite"})
	svc := &learn.Service{Store: st, Blobs: blob.Dir{Root: b.TempDir()}, Secret: []byte("s"),
		Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }}
	d, _, err := st.CreateDomain(ctx, "A")
	if err != nil {
		b.Fatal(err)
	}
	co, _ := st.CreateCourse(ctx, d.ID, lms.Course{Name: "Big"})
	u, _ := st.CreateUser(ctx, d.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
	if _, err := st.Enroll(ctx, d.ID, lms.KindCourse, co.ID, "ann@example.com"); err != nil {
		b.Fatal(err)
	}
	for s := range 10 {
		sc, err := st.CreateSection(ctx, d.ID, lms.Section{CourseID: co.ID, Title: "S"})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 20 {
			l, err := st.CreateLesson(ctx, d.ID, lms.Lesson{SectionID: sc.ID, Title: "L", Type: lms.LessonText, IsRequired: true})
			if err != nil {
				b.Fatal(err)
			}
			if (s*20+i)%2 == 0 {
				if _, err := svc.MarkComplete(ctx, d.ID, u.ID, l.ID); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		v, err := svc.Outline(ctx, d.ID, co.ID, u.ID)
		if err != nil || v.Percent != 50 {
			b.Fatalf("%d%% %v", v.Percent, err)
		}
	}
}
