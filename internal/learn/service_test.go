package learn_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// env is a service on a real store (per backend) with a settable clock.
type env struct {
	t      *testing.T
	st     *store.Store
	svc    *learn.Service
	now    time.Time
	domain int64
}

func newEnv(t *testing.T, b apitest.Backend) *env {
	st := apitest.OpenStore(t, b)
	e := &env{t: t, st: st, now: time.Date(2030, 3, 10, 12, 0, 0, 0, time.UTC)}
	e.svc = &learn.Service{Store: st, Blobs: blob.Dir{Root: t.TempDir()}, Now: func() time.Time { return e.now },
		Secret: []byte("0123456789abcdef0123456789abcdef")}
	d, _, err := st.CreateDomain(context.Background(), "A")
	if err != nil {
		t.Fatal(err)
	}
	e.domain = d.ID
	return e
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// liveCourse makes a course with one required live-class lesson on a class
// with one sitting 14:00-15:00 UTC on 2030-03-10, and an enrolled user.
func (e *env) liveCourse() (courseID, classID, lessonID, userID int64) {
	ctx := context.Background()
	co, err := e.st.CreateCourse(ctx, e.domain, lms.Course{Name: "Live"})
	e.must(err)
	cl, err := e.st.CreateLiveClass(ctx, e.domain, lms.LiveClass{Title: "Class", Date: "2030-03-10", StartMinute: 14 * 60,
		EndMinute: 15 * 60, TimezoneName: "UTC", Published: 1, Occurrences: []lms.Occurrence{{Seq: 1,
			Start: time.Date(2030, 3, 10, 14, 0, 0, 0, time.UTC), End: time.Date(2030, 3, 10, 15, 0, 0, 0, time.UTC)}}})
	e.must(err)
	sc, err := e.st.CreateSection(ctx, e.domain, lms.Section{CourseID: co.ID, Title: "S"})
	e.must(err)
	l, err := e.st.CreateLesson(ctx, e.domain, lms.Lesson{SectionID: sc.ID, Title: "Live", Type: lms.LessonLiveClass,
		ClassID: cl.ID, IsRequired: true})
	e.must(err)
	u, err := e.st.CreateUser(ctx, e.domain, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
	e.must(err)
	_, err = e.st.Enroll(ctx, e.domain, lms.KindCourse, co.ID, "ann@example.com")
	e.must(err)
	return co.ID, cl.ID, l.ID, u.ID
}

func (e *env) attend(classID, userID int64, join, leave string) {
	at := func(hm string) time.Time {
		t, err := time.Parse("2006-01-02T15:04", "2030-03-10T"+hm)
		e.must(err)
		return t
	}
	ref := strconv.FormatInt(userID, 10)
	e.must(e.st.AddAttendance(context.Background(), e.domain,
		lms.AttendanceEvent{ClassID: classID, OccurrenceSeq: 1, UserRef: ref, Kind: lms.AttendanceJoin, At: at(join)},
		lms.AttendanceEvent{ClassID: classID, OccurrenceSeq: 1, UserRef: ref, Kind: lms.AttendanceLeave, At: at(leave)}))
}

func TestLiveClassCompletion(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			tests := []struct {
				name        string
				threshold   int
				join, leave string
				want        learn.State
			}{
				{"attended 40 of 60 minutes", 50, "14:10", "14:50", learn.Done},
				{"attended 20 of 60 minutes", 50, "14:40", "15:30", learn.Available},
				{"attended 40 minutes with a threshold of 75", 75, "14:10", "14:50", learn.Available},
				{"time before the sitting does not count", 50, "13:00", "14:20", learn.Available},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					e := newEnv(t, b)
					ctx := context.Background()
					course, class, lesson, user := e.liveCourse()
					_, err := e.st.UpdateCourseSettings(ctx, e.domain, course, func(cs *lms.CourseSettings) { cs.AttendancePercent = tt.threshold })
					e.must(err)
					e.attend(class, user, tt.join, tt.leave)
					e.now = time.Date(2030, 3, 10, 16, 0, 0, 0, time.UTC)
					v, err := e.svc.Outline(ctx, e.domain, course, user)
					e.must(err)
					if got := v.Sections[0].Lessons[0].State; got != tt.want {
						t.Fatalf("state %s, want %s", got, tt.want)
					}
					if (tt.want == learn.Done) != !v.CompletedAt.IsZero() {
						t.Errorf("course completed_at %v with lesson %s", v.CompletedAt, tt.want)
					}
					// The completion is stored: it survives the attendance
					// rows' deletion with the class.
					if tt.want == learn.Done {
						e.must(e.st.DeleteLiveClass(ctx, e.domain, class))
						v, err := e.svc.Outline(ctx, e.domain, course, user)
						e.must(err)
						if v.Sections[0].Lessons[0].State != learn.Done || v.Percent != 100 {
							t.Errorf("after the class is deleted: %s %d%%", v.Sections[0].Lessons[0].State, v.Percent)
						}
					}
					_ = lesson
				})
			}
		})
	}
}

func TestLiveClassRecording(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			ctx := context.Background()
			course, class, lesson, user := e.liveCourse()
			e.now = time.Date(2030, 3, 10, 16, 0, 0, 0, time.UTC)
			// No recording yet: nothing to watch.
			if _, err := e.svc.Watched(ctx, e.domain, user, lesson, [][2]int{{0, 10}}, 10); lms.ErrorCode(err) != lms.CodeConflict {
				t.Fatalf("watch without a recording: %v", err)
			}
			key, size, err := e.svc.Blobs.Put("recordings", strings.NewReader(strings.Repeat("r", 1000)))
			e.must(err)
			_, err = e.st.AddRecording(ctx, e.domain, lms.Recording{ClassID: class, Name: "class.webm", BlobKey: key,
				ContentType: "video/webm", Size: size, Status: 1, State: lms.RecordingReady, DurationMS: 600_000, OccurrenceSeq: 1})
			e.must(err)
			v, err := e.svc.Lesson(ctx, e.domain, user, lesson)
			e.must(err)
			if v.RecordingS != 600 || v.MediaURL == "" || v.Sitting.Seq != 1 {
				t.Fatalf("lesson view: %+v", v)
			}
			p, err := e.svc.Watched(ctx, e.domain, user, lesson, [][2]int{{0, 500}}, 500)
			e.must(err)
			if p.State == learn.Done || p.WatchedPercent != 83 {
				t.Fatalf("83%% of the recording: %+v", p)
			}
			p, err = e.svc.Watched(ctx, e.domain, user, lesson, [][2]int{{500, 540}}, 540)
			e.must(err)
			if p.State != learn.Done || p.CourseCompletedAt.IsZero() {
				t.Fatalf("90%% of the recording: %+v", p)
			}
			// The recording is served behind the lesson's media link.
			srv := httptest.NewServer(mux(e.svc))
			defer srv.Close()
			resp, err := http.Get(srv.URL + v.MediaURL)
			e.must(err)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "video/webm" || resp.ContentLength != 1000 {
				t.Errorf("recording media: %d %s %d", resp.StatusCode, resp.Header.Get("Content-Type"), resp.ContentLength)
			}
			_ = course
		})
	}
}

func mux(s *learn.Service) *http.ServeMux {
	m := http.NewServeMux()
	s.Register(m)
	return m
}

func TestCourseCompletedOnceUnderConcurrency(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			ctx := context.Background()
			course, _, lesson, user := e.liveCourse()
			_, err := e.st.SetPointRule(ctx, e.domain, store.EventCourseCompleted, 50)
			e.must(err)
			_, err = e.st.SetPointRule(ctx, e.domain, store.EventLessonCompleted, 5)
			e.must(err)
			var mu sync.Mutex
			var hookAt []time.Time
			e.svc.OnCourseCompleted = func(ctx context.Context, domainID, courseID, userID int64, at time.Time) error {
				mu.Lock()
				defer mu.Unlock()
				hookAt = append(hookAt, at)
				if len(hookAt) == 1 {
					return errors.New("issuer down") // the first call fails: it must be retried later
				}
				return nil
			}
			if _, err := e.svc.AdminComplete(ctx, e.domain, user, lesson); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := e.svc.Outline(ctx, e.domain, course, user); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			total, err := e.st.UserPoints(ctx, e.domain, user)
			e.must(err)
			if total != 55 {
				t.Errorf("points %d, want 55 (one lesson, one course)", total)
			}
			if len(hookAt) < 2 || !hookAt[0].Equal(hookAt[1]) {
				t.Fatalf("hook calls %v: want the failed one retried with the same completion time", hookAt)
			}
			n := len(hookAt)
			if _, err := e.svc.Outline(ctx, e.domain, course, user); err != nil {
				t.Fatal(err)
			}
			if len(hookAt) != n {
				t.Errorf("hook ran again after it had succeeded")
			}
		})
	}
}

func TestMediaTokenCannotBeForged(t *testing.T) {
	a := &learn.Service{Secret: []byte("secret-a"), Now: func() time.Time { return time.Unix(2_000_000_000, 0) }}
	b := &learn.Service{Secret: []byte("secret-b"), Now: a.Now}
	srv := httptest.NewServer(mux(b))
	defer srv.Close()
	for _, path := range []string{a.MediaURL(1, 2, 3, time.Hour), "/media/x.y", "/media/", "/media/..%2f..%2fetc"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 && resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 403 or 404", path, resp.StatusCode)
		}
	}
}

func TestWatchedConcurrentReportsMerge(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			ctx := context.Background()
			co, err := e.st.CreateCourse(ctx, e.domain, lms.Course{Name: "Video"})
			e.must(err)
			sc, err := e.st.CreateSection(ctx, e.domain, lms.Section{CourseID: co.ID, Title: "S"})
			e.must(err)
			f, err := e.st.CreateFile(ctx, e.domain, lms.LearnFile{BlobKey: "learn/x", Name: "v.mp4", ContentType: "video/mp4", Size: 1})
			e.must(err)
			l, err := e.st.CreateLesson(ctx, e.domain, lms.Lesson{SectionID: sc.ID, Title: "V", Type: lms.LessonVideo, FileID: f.ID,
				DurationS: 100, IsRequired: true})
			e.must(err)
			u, err := e.st.CreateUser(ctx, e.domain, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
			e.must(err)
			_, err = e.st.Enroll(ctx, e.domain, lms.KindCourse, co.ID, "ann@example.com")
			e.must(err)
			// Ten tabs report ten disjoint tenths at once: every second
			// counts, none is lost to a concurrent write.
			var wg sync.WaitGroup
			for i := range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := e.svc.Watched(ctx, e.domain, u.ID, l.ID, [][2]int{{i * 10, i*10 + 10}}, i*10+10); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			v, err := e.svc.Outline(ctx, e.domain, co.ID, u.ID)
			e.must(err)
			if it := v.Sections[0].Lessons[0]; it.WatchedPercent != 100 || it.State != learn.Done {
				t.Errorf("after concurrent reports: %d%% %s", it.WatchedPercent, it.State)
			}
		})
	}
}

func TestConcurrentCreatesKeepPositionsContiguous(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			ctx := context.Background()
			co, err := e.st.CreateCourse(ctx, e.domain, lms.Course{Name: "C"})
			e.must(err)
			first, err := e.st.CreateSection(ctx, e.domain, lms.Section{CourseID: co.ID, Title: "first"})
			e.must(err)
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(2)
				go func() {
					defer wg.Done()
					if _, err := e.st.CreateSection(ctx, e.domain, lms.Section{CourseID: co.ID, Title: "s", Position: 1}); err != nil {
						t.Error(err)
					}
				}()
				go func() {
					defer wg.Done()
					if _, err := e.st.CreateLesson(ctx, e.domain, lms.Lesson{SectionID: first.ID, Title: "l", Type: lms.LessonText}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			ss, err := e.st.Sections(ctx, e.domain, co.ID)
			e.must(err)
			for i, s := range ss {
				if s.Position != i+1 {
					t.Fatalf("section positions not 1..n: %d at index %d", s.Position, i)
				}
			}
			ls, err := e.st.Lessons(ctx, e.domain, store.LessonFilter{SectionID: first.ID})
			e.must(err)
			for i, l := range ls {
				if l.Position != i+1 {
					t.Fatalf("lesson positions not 1..n: %d at index %d", l.Position, i)
				}
			}
			if len(ss) != 9 || len(ls) != 8 {
				t.Errorf("%d sections, %d lessons", len(ss), len(ls))
			}
		})
	}
}
