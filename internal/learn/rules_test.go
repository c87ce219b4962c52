package learn

import (
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestMergeRangesAndCoverage(t *testing.T) {
	tests := []struct {
		name     string
		duration int
		in       [][2]int
		want     [][2]int
		covered  int
		enough   bool
	}{
		{"empty", 100, nil, [][2]int{}, 0, false},
		{"overlapping and touching join", 100, [][2]int{{10, 20}, {15, 30}, {30, 40}}, [][2]int{{10, 40}}, 30, false},
		{"unsorted", 100, [][2]int{{50, 60}, {0, 10}}, [][2]int{{0, 10}, {50, 60}}, 20, false},
		{"clamped to the duration", 100, [][2]int{{-5, 10}, {95, 400}}, [][2]int{{0, 10}, {95, 100}}, 15, false},
		{"reversed and empty dropped", 100, [][2]int{{20, 10}, {30, 30}}, [][2]int{}, 0, false},
		{"watched twice counts once", 100, [][2]int{{0, 60}, {0, 60}, {30, 60}}, [][2]int{{0, 60}}, 60, false},
		{"exactly 90%", 100, [][2]int{{0, 90}}, [][2]int{{0, 90}}, 90, true},
		{"89 of 100 is not enough", 100, [][2]int{{0, 89}}, [][2]int{{0, 89}}, 89, false},
		{"seek to the end is a few seconds only", 600, [][2]int{{0, 5}, {590, 600}}, [][2]int{{0, 5}, {590, 600}}, 15, false},
		{"whole in pieces", 10, [][2]int{{0, 3}, {3, 6}, {6, 10}}, [][2]int{{0, 10}}, 10, true},
		{"no duration never enough", 0, [][2]int{{0, 100}}, [][2]int{{0, 100}}, 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MergeRanges(tt.duration, tt.in)
			if len(got) != len(tt.want) {
				t.Fatalf("MergeRanges = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("MergeRanges = %v, want %v", got, tt.want)
				}
			}
			if c := Covered(tt.in, tt.duration); c != tt.covered {
				t.Errorf("Covered = %d, want %d", c, tt.covered)
			}
			if e := WatchedEnough(tt.in, tt.duration); e != tt.enough {
				t.Errorf("WatchedEnough = %v, want %v", e, tt.enough)
			}
		})
	}
}

func TestAddDaysAcrossDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	tests := []struct {
		name string
		from time.Time
		days int
		loc  *time.Location
		want time.Time
	}{
		// 2026-03-08 02:00 local: New York springs forward; a "day" that
		// crosses it is 23 hours.
		{"spring forward keeps the wall clock", utc("2026-03-07T20:00:00Z"), 1, ny, utc("2026-03-08T19:00:00Z")},
		{"three days over spring forward", utc("2026-03-06T15:30:00Z"), 3, ny, utc("2026-03-09T14:30:00Z")},
		// 2026-11-01 02:00 local: back to standard time, a 25-hour day.
		{"fall back keeps the wall clock", utc("2026-10-31T13:00:00Z"), 1, ny, utc("2026-11-01T14:00:00Z")},
		{"Berlin spring forward", utc("2026-03-28T08:00:00Z"), 1, berlin, utc("2026-03-29T07:00:00Z")},
		{"UTC is plain days", utc("2026-03-07T20:00:00Z"), 2, time.UTC, utc("2026-03-09T20:00:00Z")},
		{"zero days is the instant itself", utc("2026-03-07T20:00:00Z"), 0, ny, utc("2026-03-07T20:00:00Z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AddDays(tt.from, tt.days, tt.loc); !got.Equal(tt.want) {
				t.Errorf("AddDays = %s, want %s", got.UTC(), tt.want)
			}
		})
	}
}

func TestParseUnlockAt(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-03-08T09:00:00Z", utc("2026-03-08T09:00:00Z"), true},
		{"2026-03-08T09:00:00+02:00", utc("2026-03-08T07:00:00Z"), true},
		// Local wall times follow the zone's offset of that day.
		{"2026-03-07T09:00", utc("2026-03-07T14:00:00Z"), true}, // EST
		{"2026-03-09T09:00", utc("2026-03-09T13:00:00Z"), true}, // EDT
		{"2026-03-09", utc("2026-03-09T04:00:00Z"), true},
		{"next tuesday", time.Time{}, false},
		{"2026-13-01T00:00", time.Time{}, false},
	}
	for _, tt := range tests {
		got, err := ParseUnlockAt(tt.in, ny)
		if (err == nil) != tt.ok || (tt.ok && !got.Equal(tt.want)) {
			t.Errorf("ParseUnlockAt(%q) = %s, %v; want %s, ok %v", tt.in, got.UTC(), err, tt.want, tt.ok)
		}
	}
}

// course builds a course of lessons in one section, in the given order.
func course(nav string, lessons ...lms.Lesson) Course {
	c := Course{Settings: lms.CourseSettings{Navigation: nav, Timezone: "America/New_York", AttendancePercent: 50},
		Sections: []lms.Section{{ID: 1, Position: 1}}}
	for i, l := range lessons {
		l.SectionID, l.Position = 1, i+1
		if l.Type == "" {
			l.Type = lms.LessonText
		}
		if l.Unlock.Days == 0 && l.Unlock.At == "" && l.Unlock.AfterClassID == 0 && len(l.Unlock.AfterLessons) == 0 {
			l.Unlock.Days = -1
		}
		c.Lessons = append(c.Lessons, l)
	}
	return c
}

func learner(enrolledAt time.Time) Learner {
	return Learner{Enrolled: true, EnrolledAt: enrolledAt, Progress: map[int64]lms.LessonProgress{},
		Overrides: map[int64]bool{}, TestPassed: map[int64]bool{}, Attendance: map[int64][]lms.AttendanceEvent{},
		Sittings: map[int64][]lms.Occurrence{}, RecordingS: map[int64]int{}}
}

func done(in Learner, ids ...int64) Learner {
	for _, id := range ids {
		in.Progress[id] = lms.LessonProgress{LessonID: id, MarkedAt: utc("2026-01-01T00:00:00Z"), CompletedAt: utc("2026-01-01T00:00:00Z")}
	}
	return in
}

func TestUnlock(t *testing.T) {
	enrolled := utc("2026-03-07T20:00:00Z") // 15:00 in New York, the day before DST starts
	class := []lms.Occurrence{{Seq: 1, Start: utc("2026-03-10T14:00:00Z"), End: utc("2026-03-10T15:00:00Z")},
		{Seq: 2, Start: utc("2026-03-17T14:00:00Z"), End: utc("2026-03-17T15:00:00Z")}}
	required := func(id int64, u lms.Unlock) lms.Lesson {
		return lms.Lesson{ID: id, IsRequired: true, Unlock: u}
	}
	none := lms.Unlock{Days: -1}
	tests := []struct {
		name    string
		c       Course
		in      Learner
		now     time.Time
		lesson  int64
		state   State
		reason  string
		at      time.Time
		after   []int64
		prepare func(*Learner)
	}{
		{name: "no condition is open", c: course("free", required(1, none)), in: learner(enrolled),
			now: enrolled, lesson: 1, state: Available},
		{name: "before the date", c: course("free", required(1, lms.Unlock{Days: -1, At: "2026-03-09T09:00"})), in: learner(enrolled),
			now: utc("2026-03-09T12:59:59Z"), lesson: 1, state: Locked, reason: ReasonDate, at: utc("2026-03-09T13:00:00Z")},
		{name: "at the local date (EDT)", c: course("free", required(1, lms.Unlock{Days: -1, At: "2026-03-09T09:00"})), in: learner(enrolled),
			now: utc("2026-03-09T13:00:00Z"), lesson: 1, state: Available},
		{name: "instant date", c: course("free", required(1, lms.Unlock{Days: -1, At: "2026-03-09T09:00:00Z"})), in: learner(enrolled),
			now: utc("2026-03-09T08:00:00Z"), lesson: 1, state: Locked, reason: ReasonDate, at: utc("2026-03-09T09:00:00Z")},
		{name: "one day after enrolment over DST is 23 hours", c: course("free", required(1, lms.Unlock{Days: 1})), in: learner(enrolled),
			now: utc("2026-03-08T18:59:59Z"), lesson: 1, state: Locked, reason: ReasonEnrolmentDays, at: utc("2026-03-08T19:00:00Z")},
		{name: "one day after enrolment reached", c: course("free", required(1, lms.Unlock{Days: 1})), in: learner(enrolled),
			now: utc("2026-03-08T19:00:00Z"), lesson: 1, state: Available},
		{name: "zero days is open at once", c: course("free", required(1, lms.Unlock{Days: 0})), in: learner(enrolled),
			now: enrolled, lesson: 1, state: Available},
		{name: "after a lesson not done", c: course("free", required(1, none), required(2, lms.Unlock{Days: -1, AfterLessons: []int64{1}})),
			in: learner(enrolled), now: enrolled, lesson: 2, state: Locked, reason: ReasonPrerequisites, after: []int64{1}},
		{name: "after a lesson done", c: course("free", required(1, none), required(2, lms.Unlock{Days: -1, AfterLessons: []int64{1}})),
			in: done(learner(enrolled), 1), now: enrolled, lesson: 2, state: Available},
		{name: "after a sitting that has not ended", c: course("free", required(1, lms.Unlock{Days: -1, AfterClassID: 9, AfterClassSeq: 1})),
			in: learner(enrolled), prepare: func(in *Learner) { in.Sittings[9] = class },
			now: utc("2026-03-10T14:30:00Z"), lesson: 1, state: Locked, reason: ReasonLiveClass, at: utc("2026-03-10T15:00:00Z")},
		{name: "after the sitting ended", c: course("free", required(1, lms.Unlock{Days: -1, AfterClassID: 9, AfterClassSeq: 1})),
			in: learner(enrolled), prepare: func(in *Learner) { in.Sittings[9] = class },
			now: utc("2026-03-10T15:00:00Z"), lesson: 1, state: Available},
		{name: "sitting 0 means the last sitting", c: course("free", required(1, lms.Unlock{Days: -1, AfterClassID: 9})),
			in: learner(enrolled), prepare: func(in *Learner) { in.Sittings[9] = class },
			now: utc("2026-03-12T00:00:00Z"), lesson: 1, state: Locked, reason: ReasonLiveClass, at: utc("2026-03-17T15:00:00Z")},
		{name: "a sitting that does not exist stays locked", c: course("free", required(1, lms.Unlock{Days: -1, AfterClassID: 9, AfterClassSeq: 7})),
			in: learner(enrolled), prepare: func(in *Learner) { in.Sittings[9] = class },
			now: utc("2027-01-01T00:00:00Z"), lesson: 1, state: Locked, reason: ReasonNoSitting},
		{name: "two dates: the later one is when it opens", c: course("free", required(1, lms.Unlock{Days: 3, At: "2026-03-08T00:00:00Z"})),
			in: learner(enrolled), now: enrolled, lesson: 1, state: Locked, reason: ReasonDate, at: utc("2026-03-10T19:00:00Z")},
		{name: "sequential: previous required not done", c: course("sequential", required(1, none), required(2, none)),
			in: learner(enrolled), now: enrolled, lesson: 2, state: Locked, reason: ReasonSequential, after: []int64{1}},
		{name: "sequential: first lesson open", c: course("sequential", required(1, none), required(2, none)),
			in: learner(enrolled), now: enrolled, lesson: 1, state: Available},
		{name: "sequential: optional lessons do not block", c: course("sequential", required(1, none), lms.Lesson{ID: 2, Unlock: none}, required(3, none)),
			in: done(learner(enrolled), 1), now: enrolled, lesson: 3, state: Available},
		{name: "free navigation ignores order", c: course("free", required(1, none), required(2, none)),
			in: learner(enrolled), now: enrolled, lesson: 2, state: Available},
		{name: "override of the lesson opens it", c: course("sequential", required(1, none), required(2, lms.Unlock{Days: 30})),
			in: learner(enrolled), prepare: func(in *Learner) { in.Overrides[2] = true }, now: enrolled, lesson: 2, state: Available},
		{name: "override of another lesson does not", c: course("sequential", required(1, none), required(2, lms.Unlock{Days: 30}), required(3, none)),
			in: learner(enrolled), prepare: func(in *Learner) { in.Overrides[3] = true }, now: enrolled, lesson: 2, state: Locked, reason: ReasonEnrolmentDays,
			at: utc("2026-04-06T19:00:00Z"), after: []int64{1}},
		{name: "override of all opens everything", c: course("sequential", required(1, none), required(2, lms.Unlock{Days: 30})),
			in: learner(enrolled), prepare: func(in *Learner) { in.Overrides[0] = true }, now: enrolled, lesson: 2, state: Available},
		{name: "a completed lesson never locks again", c: course("sequential", required(1, none), required(2, lms.Unlock{Days: -1, At: "2030-01-01T00:00:00Z"})),
			in: done(learner(enrolled), 2), now: enrolled, lesson: 2, state: Done},
		{name: "not enrolled", c: course("free", required(1, none)), in: Learner{}, now: enrolled, lesson: 1, state: Locked, reason: ReasonNotEnrolled},
		{name: "a free preview opens for a visitor", c: course("free", lms.Lesson{ID: 1, IsPreview: true, Unlock: none}), in: Learner{},
			now: enrolled, lesson: 1, state: Available},
		{name: "access expired", c: course("free", required(1, none)), in: learner(enrolled),
			prepare: func(in *Learner) { in.AccessUntil = utc("2026-04-01T00:00:00Z") }, now: utc("2026-04-01T00:00:00Z"),
			lesson: 1, state: Locked, reason: ReasonAccessExpired},
		{name: "access not yet expired", c: course("free", required(1, none)), in: learner(enrolled),
			prepare: func(in *Learner) { in.AccessUntil = utc("2026-04-01T00:00:00Z") }, now: utc("2026-03-31T23:59:59Z"),
			lesson: 1, state: Available},
		{name: "done stays done after access expired", c: course("free", required(1, none)), in: done(learner(enrolled), 1),
			prepare: func(in *Learner) { in.AccessUntil = utc("2026-04-01T00:00:00Z") }, now: utc("2026-05-01T00:00:00Z"),
			lesson: 1, state: Done},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if tt.prepare != nil {
				tt.prepare(&in)
			}
			st := Evaluate(tt.c, in, tt.now).Status[tt.lesson]
			if st.State != tt.state || st.Reason != tt.reason || !st.UnlockAt.Equal(tt.at) {
				t.Errorf("got %s/%q at %s, want %s/%q at %s", st.State, st.Reason, st.UnlockAt.UTC(), tt.state, tt.reason, tt.at)
			}
			if len(st.After) != len(tt.after) {
				t.Fatalf("After = %v, want %v", st.After, tt.after)
			}
			for i := range st.After {
				if st.After[i] != tt.after[i] {
					t.Errorf("After = %v, want %v", st.After, tt.after)
				}
			}
		})
	}
}

func TestLessonComplete(t *testing.T) {
	now := utc("2026-03-10T16:00:00Z")
	settings := lms.CourseSettings{AttendancePercent: 50}
	sitting := lms.Occurrence{Seq: 1, Start: utc("2026-03-10T14:00:00Z"), End: utc("2026-03-10T15:00:00Z")}
	att := func(join, leave string) []lms.AttendanceEvent {
		return []lms.AttendanceEvent{{ClassID: 9, OccurrenceSeq: 1, UserRef: "5", Kind: lms.AttendanceJoin, At: utc(join)},
			{ClassID: 9, OccurrenceSeq: 1, UserRef: "5", Kind: lms.AttendanceLeave, At: utc(leave)}}
	}
	live := lms.Lesson{ID: 1, Type: lms.LessonLiveClass, ClassID: 9}
	tests := []struct {
		name string
		l    lms.Lesson
		p    lms.LessonProgress
		prep func(*Learner)
		want bool
	}{
		{"text unmarked", lms.Lesson{ID: 1, Type: lms.LessonText}, lms.LessonProgress{OpenedAt: now}, nil, false},
		{"text marked", lms.Lesson{ID: 1, Type: lms.LessonText}, lms.LessonProgress{MarkedAt: now}, nil, true},
		{"file marked", lms.Lesson{ID: 1, Type: lms.LessonFile}, lms.LessonProgress{MarkedAt: now}, nil, true},
		{"embed marked", lms.Lesson{ID: 1, Type: lms.LessonEmbed}, lms.LessonProgress{MarkedAt: now}, nil, true},
		{"video 90%", lms.Lesson{ID: 1, Type: lms.LessonVideo, DurationS: 200}, lms.LessonProgress{Watched: [][2]int{{0, 180}}}, nil, true},
		{"video seek to the end", lms.Lesson{ID: 1, Type: lms.LessonVideo, DurationS: 200}, lms.LessonProgress{Watched: [][2]int{{0, 3}, {190, 200}}, Position: 200}, nil, false},
		{"video marked does not count", lms.Lesson{ID: 1, Type: lms.LessonVideo, DurationS: 200}, lms.LessonProgress{MarkedAt: now}, nil, false},
		{"audio 95%", lms.Lesson{ID: 1, Type: lms.LessonAudio, DurationS: 100}, lms.LessonProgress{Watched: [][2]int{{5, 100}}}, nil, true},
		{"live attended 40 of 60 minutes", live, lms.LessonProgress{},
			func(in *Learner) {
				in.Sittings[9] = []lms.Occurrence{sitting}
				in.Attendance[9] = att("2026-03-10T14:10:00Z", "2026-03-10T14:50:00Z")
			}, true},
		{"live attended exactly the threshold", live, lms.LessonProgress{},
			func(in *Learner) {
				in.Sittings[9] = []lms.Occurrence{sitting}
				in.Attendance[9] = att("2026-03-10T14:00:00Z", "2026-03-10T14:30:00Z")
			}, true},
		{"live attended 20 of 60 minutes", live, lms.LessonProgress{},
			func(in *Learner) {
				in.Sittings[9] = []lms.Occurrence{sitting}
				in.Attendance[9] = att("2026-03-10T14:40:00Z", "2026-03-10T15:40:00Z")
			}, false},
		{"live: time outside the sitting does not count", live, lms.LessonProgress{},
			func(in *Learner) {
				in.Sittings[9] = []lms.Occurrence{sitting}
				in.Attendance[9] = att("2026-03-10T13:00:00Z", "2026-03-10T14:20:00Z")
			}, false},
		{"live: recording watched", live, lms.LessonProgress{Watched: [][2]int{{0, 3300}}},
			func(in *Learner) { in.Sittings[9] = []lms.Occurrence{sitting}; in.RecordingS[1] = 3600 }, true},
		{"live: recording a third watched", live, lms.LessonProgress{Watched: [][2]int{{0, 1200}}},
			func(in *Learner) { in.Sittings[9] = []lms.Occurrence{sitting}; in.RecordingS[1] = 3600 }, false},
		{"test passed", lms.Lesson{ID: 1, Type: lms.LessonTest, TestID: 4}, lms.LessonProgress{}, func(in *Learner) { in.TestPassed[4] = true }, true},
		{"test failed", lms.Lesson{ID: 1, Type: lms.LessonTest, TestID: 4}, lms.LessonProgress{}, func(in *Learner) { in.TestPassed[4] = false }, false},
		{"test marked does not count", lms.Lesson{ID: 1, Type: lms.LessonTest, TestID: 4}, lms.LessonProgress{MarkedAt: now}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := learner(now)
			in.Progress[tt.l.ID] = tt.p
			if tt.prep != nil {
				tt.prep(&in)
			}
			if got := LessonComplete(tt.l, settings, in, now); got != tt.want {
				t.Errorf("LessonComplete = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCourseCompletion(t *testing.T) {
	now := utc("2026-03-10T16:00:00Z")
	none := lms.Unlock{Days: -1}
	c := course("free",
		lms.Lesson{ID: 1, IsRequired: true, Unlock: none},
		lms.Lesson{ID: 2, IsRequired: true, Unlock: none},
		lms.Lesson{ID: 3, IsRequired: false, Unlock: none},
		lms.Lesson{ID: 4, IsRequired: true, Type: lms.LessonTest, TestID: 8, Unlock: none})
	tests := []struct {
		name     string
		in       Learner
		percent  int
		complete bool
		next     int64
		newly    []int64
	}{
		{"nothing done", learner(now), 0, false, 1, nil},
		{"optional only", done(learner(now), 3), 0, false, 1, nil},
		{"one of three required", done(learner(now), 1), 33, false, 2, nil},
		{"two of three", done(learner(now), 1, 2), 66, false, 3, nil},
		{"a pass completes the test lesson and the course", func() Learner {
			in := done(learner(now), 1, 2)
			in.TestPassed[8] = true
			return in
		}(), 100, true, 3, []int64{4}},
		{"a mark not yet stored as completion counts", func() Learner {
			in := learner(now)
			for _, id := range []int64{1, 2} {
				in.Progress[id] = lms.LessonProgress{MarkedAt: now}
			}
			in.TestPassed[8] = true
			return in
		}(), 100, true, 3, []int64{1, 2, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Evaluate(c, tt.in, now)
			if r.Percent != tt.percent || r.CourseComplete != tt.complete || r.Next != tt.next {
				t.Errorf("percent %d complete %v next %d; want %d %v %d", r.Percent, r.CourseComplete, r.Next, tt.percent, tt.complete, tt.next)
			}
			if len(r.Complete) != len(tt.newly) {
				t.Fatalf("Complete = %v, want %v", r.Complete, tt.newly)
			}
			for i := range r.Complete {
				if r.Complete[i] != tt.newly[i] {
					t.Errorf("Complete = %v, want %v", r.Complete, tt.newly)
				}
			}
		})
	}
	t.Run("no required lesson is never complete", func(t *testing.T) {
		r := Evaluate(course("free", lms.Lesson{ID: 1, Unlock: none}), done(learner(now), 1), now)
		if r.CourseComplete || r.Percent != 0 {
			t.Errorf("got complete %v percent %d", r.CourseComplete, r.Percent)
		}
	})
	t.Run("a visitor's stored progress counts for nothing", func(t *testing.T) {
		in := done(learner(now), 1, 2)
		in.Enrolled = false
		r := Evaluate(c, in, now)
		if r.Percent != 0 || r.CourseComplete || r.Next != 0 {
			t.Errorf("got percent %d complete %v next %d", r.Percent, r.CourseComplete, r.Next)
		}
	})
}
