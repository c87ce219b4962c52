package quiz

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

func TestNext(t *testing.T) {
	tests := []struct {
		state, event, expiry string
		pending              bool
		want                 string
		err                  bool
	}{
		{InProgress, EvSubmit, ExpirySubmit, false, Finished, false},
		{InProgress, EvSubmit, ExpirySubmit, true, NeedsGrading, false},
		{InProgress, EvExpire, ExpirySubmit, false, Finished, false},
		{InProgress, EvExpire, ExpiryGrace, false, Overdue, false},
		{Overdue, EvSubmit, ExpiryGrace, true, NeedsGrading, false},
		{Overdue, EvGrace, ExpiryGrace, false, Finished, false},
		{NeedsGrading, EvGrade, ExpirySubmit, true, NeedsGrading, false},
		{NeedsGrading, EvGrade, ExpirySubmit, false, Graded, false},
		{Graded, EvRegrade, ExpirySubmit, false, Graded, false},
		{Finished, EvRegrade, ExpirySubmit, false, Finished, false},
		{Finished, EvSubmit, ExpirySubmit, false, Finished, true},
		{Finished, EvExpire, ExpirySubmit, false, Finished, true},
		{InProgress, EvGrade, ExpirySubmit, false, InProgress, true},
		{InProgress, EvRegrade, ExpirySubmit, false, InProgress, true},
		{Graded, EvSubmit, ExpirySubmit, false, Graded, true},
	}
	for _, tc := range tests {
		got, err := Next(tc.state, tc.event, tc.expiry, tc.pending)
		if got != tc.want || (err != nil) != tc.err || (err != nil && !errors.Is(err, ErrTransition)) {
			t.Errorf("Next(%s, %s, %s, %v) = %s, %v; want %s, err %v", tc.state, tc.event, tc.expiry, tc.pending, got, err, tc.want, tc.err)
		}
	}
}

func TestDeadline(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	close := start.Add(45 * time.Minute)
	tests := []struct {
		name   string
		in     DeadlineInput
		want   time.Time
		capped bool
		ok     bool
	}{
		{"untimed never closes", DeadlineInput{Start: start}, time.Time{}, false, false},
		{"one hour", DeadlineInput{Start: start, Allotted: time.Hour}, start.Add(time.Hour), false, true},
		{"x1.5 plus 5 min", DeadlineInput{Start: start, Allotted: time.Hour, Multiplier: 1500, Extra: 5 * time.Minute}, start.Add(95 * time.Minute), false, true},
		{"capped by close", DeadlineInput{Start: start, Allotted: time.Hour, CloseAt: close}, close, true, true},
		{"close after the time", DeadlineInput{Start: start, Allotted: 30 * time.Minute, CloseAt: close}, start.Add(30 * time.Minute), false, true},
		{"untimed but closes", DeadlineInput{Start: start, CloseAt: close}, close, false, true},
	}
	for _, tc := range tests {
		d, capped, ok := Deadline(tc.in)
		if !d.Equal(tc.want) || capped != tc.capped || ok != tc.ok {
			t.Errorf("%s: Deadline = %v, %v, %v; want %v, %v, %v", tc.name, d, capped, ok, tc.want, tc.capped, tc.ok)
		}
	}
}

func TestFinalGrade(t *testing.T) {
	as := []Scored{{4000, 10000}, {9000, 10000}, {6000, 10000}}
	tests := map[string]Scored{GradeHighest: {9000, 10000}, GradeLatest: {6000, 10000}, GradeFirst: {4000, 10000},
		GradeAverage: {6333, 10000}}
	for m, want := range tests {
		if got, ok := FinalGrade(m, as); !ok || got != want {
			t.Errorf("%s = %v, want %v", m, got, want)
		}
	}
	if _, ok := FinalGrade(GradeHighest, nil); ok {
		t.Error("no attempts gave a grade")
	}
	// highest compares percentages when maxima differ (random draws).
	if got, _ := FinalGrade(GradeHighest, []Scored{{5000, 5000}, {6000, 10000}}); got != (Scored{5000, 5000}) {
		t.Errorf("highest by percent = %v", got)
	}
}

func TestPassed(t *testing.T) {
	tests := []struct {
		g    Scored
		pass int
		want bool
	}{
		{Scored{5000, 10000}, 50, true}, {Scored{4999, 10000}, 50, false}, {Scored{0, 10000}, 0, true},
		{Scored{0, 0}, 80, true}, {Scored{10000, 10000}, 100, true},
	}
	for _, tc := range tests {
		if got := Passed(tc.g, tc.pass); got != tc.want {
			t.Errorf("Passed(%v, %d) = %v", tc.g, tc.pass, got)
		}
	}
}

func TestAttemptLimit(t *testing.T) {
	tests := []struct{ allowed, extra, numbertimes, want int }{
		{0, 0, 0, 0}, {3, 0, 0, 3}, {3, 2, 0, 5}, {0, 2, 0, 0}, {3, 2, 4, 4}, {0, 0, 2, 2}, {1, 0, 5, 1},
	}
	for _, tc := range tests {
		if got := AttemptLimit(tc.allowed, tc.extra, tc.numbertimes); got != tc.want {
			t.Errorf("AttemptLimit(%d, %d, %d) = %d, want %d", tc.allowed, tc.extra, tc.numbertimes, got, tc.want)
		}
	}
}

func TestReviewMatrix(t *testing.T) {
	s := DefaultSettings()
	s.Review[PhaseAfter] = ReviewItems{Marks: true}
	s.Review[PhaseLater] = ReviewItems{Marks: true, Correctness: true}
	s.Demo.ShowAnswers = false
	closed := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	closeAt := closed.Add(time.Hour)
	tests := []struct {
		state string
		now   time.Time
		mode  string
		phase string
		want  ReviewItems
	}{
		{InProgress, closed, ModeTest, PhaseDuring, ReviewItems{}},
		{Finished, closed.Add(time.Minute), ModeTest, PhaseAfter, ReviewItems{Marks: true}},
		{Finished, closed.Add(5 * time.Minute), ModeTest, PhaseLater, ReviewItems{Marks: true, Correctness: true}},
		{Graded, closeAt, ModeTest, PhaseAfterClose, ReviewItems{true, true, true, true}},
	}
	for _, tc := range tests {
		ph := Phase(tc.state, closed, tc.now, &closeAt)
		if ph != tc.phase {
			t.Errorf("Phase(%s, %v) = %s, want %s", tc.state, tc.now, ph, tc.phase)
		}
		if got := s.ReviewFor(tc.mode, ph); got != tc.want {
			t.Errorf("ReviewFor(%s, %s) = %+v, want %+v", tc.mode, ph, got, tc.want)
		}
	}
	s.Demo.ShowAnswers = true
	if got := s.ReviewFor(ModeDemo, PhaseAfter); !got.RightAnswer {
		t.Error("demo with show_answers hides the right answer")
	}
	if got := s.ReviewFor(ModeDemo, PhaseDuring); got.RightAnswer {
		t.Error("demo shows the right answer during the attempt")
	}
}

func TestSettingsValidate(t *testing.T) {
	s := DefaultSettings()
	s.PassPercent, s.Grading, s.OnExpiry, s.Navigation = 101, "best", ExpiryGrace, "random"
	s.Review["during"] = ReviewItems{Marks: true}
	s.Review["someday"] = ReviewItems{}
	var v = newValidator()
	s.Validate(v)
	for _, f := range []string{"pass_percent", "grading", "grace_s", "navigation", "review.during", "review.someday"} {
		if !v.Has(f) {
			t.Errorf("%s not named: %v", f, v.Err())
		}
	}
}

func TestBuildLayout(t *testing.T) {
	var pool []Candidate
	for i := int64(1); i <= 6; i++ {
		q := genQuestion(rand.New(rand.NewPCG(uint64(i), 1)), Ordering)
		pool = append(pool, Candidate{QuestionID: i, VersionID: 100 + i, Q: q})
	}
	fixed := pool[0]
	specs := []SlotSpec{{Fixed: &fixed, Points: 2000}, {Pool: pool, Count: 3, Name: "category x"}, {Pool: pool, Count: 2}}
	for seed := uint64(0); seed < 50; seed++ {
		qs := map[int64]*Question{}
		l, err := BuildLayout(specs, qs, true, true, rand.New(rand.NewPCG(seed, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != 6 {
			t.Fatalf("len = %d", len(l))
		}
		seen := map[int64]bool{}
		for i, s := range l {
			if seen[s.QuestionID] {
				t.Fatalf("question %d drawn twice: %+v", s.QuestionID, l)
			}
			seen[s.QuestionID] = true
			if s.Slot != i+1 {
				t.Fatalf("slot numbers %+v", l)
			}
			if s.QuestionID == 1 && s.Points != 2000 {
				t.Fatalf("fixed slot points %d", s.Points)
			}
			if equalIDs(s.Items, qs[s.VersionID].Data.Items) {
				t.Fatalf("ordering shown in its right order: %v", s.Items)
			}
		}
	}
	_, err := BuildLayout([]SlotSpec{{Fixed: &fixed}, {Pool: pool, Count: 6, Name: "tag y"}}, map[int64]*Question{}, false, false, rand.New(rand.NewPCG(1, 1)))
	var small *ErrPoolTooSmall
	if !errors.As(err, &small) || small.Got != 5 || !strings.Contains(err.Error(), "tag y") {
		t.Fatalf("err = %v", err)
	}
}

// TestViewHasNoKey: the learner's view of any question, marshalled to
// JSON, names neither correctness nor the canonical ids, and display ids
// round-trip through ToCanonical/ToDisplay.
func TestViewHasNoKey(t *testing.T) {
	for _, typ := range Types {
		for seed := uint64(0); seed < 30; seed++ {
			r := rand.New(rand.NewPCG(seed, 7))
			q := genQuestion(r, typ)
			qs := map[int64]*Question{}
			l, err := BuildLayout([]SlotSpec{{Fixed: &Candidate{QuestionID: 1, VersionID: 1, Q: q}}}, qs, false, true, r)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(ViewOf(l[0], &q))
			for _, bad := range []string{`"correct"`, `"answers"`, `"value"`, `"tolerance"`, `"feedback"`, `"scoring"`, `"right"`} {
				if strings.Contains(string(b), bad) {
					t.Fatalf("%s view has %s: %s", typ, bad, b)
				}
			}
			if typ == Description || typ == Essay || typ == TrueFalse {
				continue
			}
			key, _ := Key(&q)
			disp := l[0].ToDisplay(key)
			back, err := l[0].ToCanonical("response", disp)
			if err != nil {
				t.Fatal(err)
			}
			if Score(&q, 1000, back).Points != 1000 {
				t.Fatalf("%s: key through display ids scores %v", typ, Score(&q, 1000, back))
			}
		}
	}
	l := SlotLayout{Choices: []string{"1", "2"}}
	if _, err := l.ToCanonical("response", Response{Choice: "1"}); err == nil {
		t.Fatal("a canonical id was accepted as a display id")
	}
}

func newValidator() *lms.Validator { return &lms.Validator{} }
