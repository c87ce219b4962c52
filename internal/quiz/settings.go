package quiz

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// on_expiry values.
const (
	ExpirySubmit = "submit" // the default: the server submits what was saved
	ExpiryGrace  = "grace"  // the learner may still submit for grace_s, not change answers
)

// Navigation values.
const (
	NavFree       = "free"
	NavSequential = "sequential"
)

// Review phases: when a learner looks at a closed attempt.
const (
	PhaseDuring     = "during"      // the attempt is open
	PhaseAfter      = "after"       // within 2 minutes of closing
	PhaseLater      = "later"       // after that, while the test is open
	PhaseAfterClose = "after_close" // after the test's close_at
)

// Phases lists the review phases in the matrix's order.
var Phases = []string{PhaseDuring, PhaseAfter, PhaseLater, PhaseAfterClose}

// AfterWindow is how long "immediately after" lasts.
const AfterWindow = 2 * time.Minute

// ReviewItems are what a phase may show.
type ReviewItems struct {
	Correctness bool `json:"correctness"`
	Marks       bool `json:"marks"`
	Feedback    bool `json:"feedback"`
	RightAnswer bool `json:"right_answer"`
}

// Demo are the settings of demo (practice) attempts.
type Demo struct {
	Enabled     bool `json:"enabled"`
	ShowAnswers bool `json:"show_answers"`
}

// Settings are a test's engine settings. The seed's
// tests_alloted_time_demo_mode and _test_mode stay the time limits.
type Settings struct {
	PassPercent      int                    `json:"pass_percent"`
	AttemptsAllowed  int                    `json:"attempts_allowed"` // 0 = unlimited
	Grading          string                 `json:"grading"`
	ShuffleQuestions bool                   `json:"shuffle_questions"`
	ShuffleAnswers   bool                   `json:"shuffle_answers"`
	Navigation       string                 `json:"navigation"`
	PerPage          int                    `json:"per_page"` // 0 = all on one page
	OpenAt           *time.Time             `json:"open_at,omitempty"`
	CloseAt          *time.Time             `json:"close_at,omitempty"`
	OnExpiry         string                 `json:"on_expiry"`
	GraceS           int                    `json:"grace_s"`
	DelayBetweenS    int                    `json:"delay_between_s"`
	Review           map[string]ReviewItems `json:"review"`
	Demo             Demo                   `json:"demo"`
}

// DefaultSettings are a test's settings until set: unlimited attempts,
// highest grade, no pass mark, free navigation, submit on expiry, and a
// review that shows everything once the attempt is closed.
func DefaultSettings() Settings {
	all := ReviewItems{Correctness: true, Marks: true, Feedback: true, RightAnswer: true}
	return Settings{Grading: GradeHighest, Navigation: NavFree, OnExpiry: ExpirySubmit, GraceS: 0,
		Review: map[string]ReviewItems{PhaseDuring: {}, PhaseAfter: all, PhaseLater: all, PhaseAfterClose: all},
		Demo:   Demo{Enabled: true, ShowAnswers: true}}
}

// Limits on settings.
const (
	MaxAttempts = 1000
	MaxGraceS   = 7 * 24 * 3600
	MaxDelayS   = 365 * 24 * 3600
)

// Validate checks s, naming fields as the API receives them.
func (s *Settings) Validate(v *lms.Validator) {
	v.Check(s.PassPercent >= 0 && s.PassPercent <= 100, "pass_percent", "must be 0 to 100")
	v.Check(s.AttemptsAllowed >= 0 && s.AttemptsAllowed <= MaxAttempts, "attempts_allowed", "must be 0 (unlimited) to 1000")
	v.Check(slices.Contains(GradingMethods, s.Grading), "grading", "must be one of "+strings.Join(GradingMethods, ", "))
	v.Check(s.Navigation == NavFree || s.Navigation == NavSequential, "navigation", "must be free or sequential")
	v.Check(s.PerPage >= 0 && s.PerPage <= 1000, "per_page", "must be 0 (all) to 1000")
	v.Check(s.OnExpiry == ExpirySubmit || s.OnExpiry == ExpiryGrace, "on_expiry", "must be submit or grace")
	v.Check(s.GraceS >= 0 && s.GraceS <= MaxGraceS, "grace_s", fmt.Sprintf("must be 0 to %d seconds", MaxGraceS))
	v.Check(s.OnExpiry != ExpiryGrace || s.GraceS > 0, "grace_s", "must be more than 0 when on_expiry is grace")
	v.Check(s.DelayBetweenS >= 0 && s.DelayBetweenS <= MaxDelayS, "delay_between_s", fmt.Sprintf("must be 0 to %d seconds", MaxDelayS))
	if s.OpenAt != nil && s.CloseAt != nil {
		v.Check(s.CloseAt.After(*s.OpenAt), "close_at", "must be after open_at")
	}
	for phase, items := range s.Review {
		v.Check(slices.Contains(Phases, phase), "review."+phase, "is not a review phase (during, after, later, after_close)")
		v.Check(phase != PhaseDuring || items == (ReviewItems{}), "review.during",
			"must show nothing: answers are checked only once the attempt is submitted")
	}
}

// Override is one learner's accommodation on a test.
type Override struct {
	ExtraTime     time.Duration
	Multiplier    Permille // 0 = ×1
	ExtraAttempts int
	CloseAt       *time.Time // replaces the test's close_at for this learner
	// SchemeID is the pricing scheme the learner's access came from (0 =
	// none): its numbertimes caps the learner's test-mode attempts.
	SchemeID int64
}

// Limits on overrides.
const (
	MaxExtraTime  = 7 * 24 * time.Hour
	MaxMultiplier = Permille(10000)
)

// Validate checks o, naming the API's fields.
func (o *Override) Validate(v *lms.Validator) {
	v.Check(o.ExtraTime >= 0 && o.ExtraTime <= MaxExtraTime, "extra_time_s", "must be 0 to 604800 seconds")
	v.Check(o.Multiplier == 0 || (o.Multiplier >= 1000 && o.Multiplier <= MaxMultiplier), "time_multiplier",
		"must be 1 to 10, with at most three decimals, such as 1.5")
	v.Check(o.ExtraAttempts >= 0 && o.ExtraAttempts <= MaxAttempts, "extra_attempts", "must be 0 to 1000")
}

// ParsePermille reads a multiplier such as "1.5" (at most three decimals).
func ParsePermille(s string) (Permille, error) {
	m, err := ParseMilli(s)
	if err != nil {
		return 0, err
	}
	return Permille(m), nil
}

// AttemptLimit is the number of test-mode attempts a learner may make: the
// test's attempts_allowed (0 = unlimited) plus the override's extra
// attempts, capped by the numbertimes of the pricing scheme the learner's
// access came from (0 = no cap). 0 means unlimited.
func AttemptLimit(allowed, extra, numbertimes int) int {
	limit := 0
	if allowed > 0 {
		limit = allowed + extra
	}
	if numbertimes > 0 && (limit == 0 || numbertimes < limit) {
		limit = numbertimes
	}
	return limit
}

// Phase is the review phase of a closed attempt at now. closeAt is the
// learner's effective close time (nil = never).
func Phase(state string, closedAt, now time.Time, closeAt *time.Time) string {
	switch {
	case !Closed(state):
		return PhaseDuring
	case closeAt != nil && !now.Before(*closeAt):
		return PhaseAfterClose
	case now.Before(closedAt.Add(AfterWindow)):
		return PhaseAfter
	}
	return PhaseLater
}

// ReviewFor is what a learner may see of an attempt in mode at phase.
// Demo attempts with show_answers show everything once closed.
func (s *Settings) ReviewFor(mode, phase string) ReviewItems {
	if phase != PhaseDuring && mode == ModeDemo && s.Demo.ShowAnswers {
		return ReviewItems{Correctness: true, Marks: true, Feedback: true, RightAnswer: true}
	}
	if phase == PhaseDuring {
		// Nothing about correctness while the attempt is open: the key
		// would be in the browser.
		return ReviewItems{}
	}
	return s.Review[phase]
}
