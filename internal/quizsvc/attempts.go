package quizsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/store"
)

// Access is what a learner may do with a test now: the start page's facts.
type Access struct {
	Test     lms.Test
	Settings quiz.Settings
	Override store.QuizOverride
	Enrolled bool
	// Limit is the test-mode attempt limit (0 = unlimited); Used counts
	// test-mode attempts made (demo attempts never count).
	Limit, Used int
	// NumberTimes is the cap from the learner's pricing scheme (0 = none).
	NumberTimes int
	CloseAt     *time.Time // the learner's effective close time
	// InProgress is the attempt to resume per mode (0 = none).
	InProgress map[string]int64
	// NextStart is when the delay between attempts ends (zero = now).
	NextStart time.Time
}

// Left is the number of test-mode attempts left (-1 = unlimited).
func (a Access) Left() int {
	if a.Limit == 0 {
		return -1
	}
	if a.Used >= a.Limit {
		return 0
	}
	return a.Limit - a.Used
}

// TimeLimit is the learner's time in mode: the allotted time with the
// override's multiplier and extra time (0 = untimed).
func (a Access) TimeLimit(mode string) time.Duration {
	in := a.deadlineInput(mode, time.Time{})
	if in.Allotted <= 0 {
		return 0
	}
	d, _, _ := quiz.Deadline(quiz.DeadlineInput{Start: in.Start, Allotted: in.Allotted, Multiplier: in.Multiplier, Extra: in.Extra})
	return d.Sub(in.Start)
}

// DeadlineIf is the deadline an attempt in mode started at would get.
func (a Access) DeadlineIf(mode string, at time.Time) (deadline time.Time, capped, ok bool) {
	return quiz.Deadline(a.deadlineInput(mode, at))
}

func (a Access) deadlineInput(mode string, at time.Time) quiz.DeadlineInput {
	in := quiz.DeadlineInput{Start: at, Allotted: Allotted(a.Test, mode), Multiplier: quiz.Permille(a.Override.MultiplierPermille),
		Extra: time.Duration(a.Override.ExtraTimeS) * time.Second}
	if a.CloseAt != nil {
		in.CloseAt = *a.CloseAt
	}
	return in
}

// Access reads a learner's access to a test.
func (s *Service) Access(ctx context.Context, domainID, testID, userID int64) (Access, error) {
	var a Access
	var err error
	if a.Test, a.Settings, err = s.Settings(ctx, domainID, testID); err != nil {
		return a, err
	}
	if a.Enrolled, err = s.Store.IsEnrolled(ctx, domainID, userID, lms.KindTest, testID); err != nil {
		return a, err
	}
	if a.Override, _, err = s.Store.QuizOverrideFor(ctx, domainID, testID, userID); err != nil {
		return a, err
	}
	if a.Override.SchemeID != 0 {
		p, err := s.Store.PricingScheme(ctx, domainID, a.Override.SchemeID)
		if err != nil && !lms.IsNotFound(err) {
			return a, err
		}
		a.NumberTimes = p.NumberTimes
	}
	a.Limit = quiz.AttemptLimit(a.Settings.AttemptsAllowed, a.Override.ExtraAttempts, a.NumberTimes)
	a.CloseAt = a.Settings.CloseAt
	if !a.Override.CloseAt.IsZero() {
		c := a.Override.CloseAt
		a.CloseAt = &c
	}
	prior, err := s.Store.UserAttempts(ctx, domainID, testID, userID)
	if err != nil {
		return a, err
	}
	a.fill(prior)
	return a, nil
}

// fill counts prior attempts (all of one user at one test).
func (a *Access) fill(prior []store.Attempt) {
	a.Used, a.InProgress, a.NextStart = 0, map[string]int64{}, time.Time{}
	for _, p := range prior {
		if p.Source == "live" {
			continue
		}
		if p.State == quiz.InProgress || p.State == quiz.Overdue {
			a.InProgress[p.Mode] = p.ID
		}
		if p.Mode != quiz.ModeTest {
			continue
		}
		a.Used++
		end := p.FinishedAt
		if end.IsZero() {
			end = p.StartedAt
		}
		if next := end.Add(time.Duration(a.Settings.DelayBetweenS) * time.Second); a.Settings.DelayBetweenS > 0 && next.After(a.NextStart) {
			a.NextStart = next
		}
	}
}

// Reasons a new attempt cannot start (Refusal.Reason).
const (
	RefuseBadMode     = "bad_mode"
	RefuseNoDemo      = "no_demo"
	RefuseNotEnrolled = "not_enrolled"
	RefuseNotOpen     = "not_open"    // At: when it opens
	RefuseClosed      = "closed"      // At: when it closed
	RefuseNoAttempts  = "no_attempts" // Used of Limit
	RefuseWait        = "wait"        // At: when the next may start
)

// Refusal is why a new attempt cannot start, as data, so each side words
// it in its own language: String is the API's English, the portal uses
// its catalogues. The zero Refusal means it can start.
type Refusal struct {
	Reason      string
	At          time.Time
	Used, Limit int
}

// String is the refusal in English ("" when there is none).
func (r Refusal) String() string {
	at := r.At.UTC().Format(time.RFC3339)
	switch r.Reason {
	case RefuseBadMode:
		return "mode must be demo or test"
	case RefuseNoDemo:
		return "this test has no demo mode"
	case RefuseNotEnrolled:
		return "you are not enrolled in this test"
	case RefuseNotOpen:
		return "the test opens at " + at
	case RefuseClosed:
		return "the test closed at " + at
	case RefuseNoAttempts:
		return "no attempts left: " + strconv.Itoa(r.Used) + " of " + strconv.Itoa(r.Limit) + " used"
	case RefuseWait:
		return "the next attempt may start at " + at
	}
	return ""
}

// CanStart says in English why a new attempt in mode cannot start at now
// ("" = it can). It does not look at an attempt in progress (that is
// resumed).
func (a Access) CanStart(mode string, now time.Time) string {
	return a.Refusal(mode, now).String()
}

// Refusal says why a new attempt in mode cannot start at now.
func (a Access) Refusal(mode string, now time.Time) Refusal {
	st := a.Settings
	switch mode {
	case quiz.ModeDemo:
		// A demo shows the test's own questions, so it needs the same
		// entitlement as the test.
		if !st.Demo.Enabled {
			return Refusal{Reason: RefuseNoDemo}
		}
		if !a.Enrolled {
			return Refusal{Reason: RefuseNotEnrolled}
		}
		return Refusal{}
	case quiz.ModeTest:
	default:
		return Refusal{Reason: RefuseBadMode}
	}
	switch {
	case !a.Enrolled:
		return Refusal{Reason: RefuseNotEnrolled}
	case st.OpenAt != nil && now.Before(*st.OpenAt):
		return Refusal{Reason: RefuseNotOpen, At: *st.OpenAt}
	case a.CloseAt != nil && !now.Before(*a.CloseAt):
		return Refusal{Reason: RefuseClosed, At: *a.CloseAt}
	case a.Limit > 0 && a.Used >= a.Limit:
		return Refusal{Reason: RefuseNoAttempts, Used: a.Used, Limit: a.Limit}
	case now.Before(a.NextStart):
		return Refusal{Reason: RefuseWait, At: a.NextStart}
	}
	return Refusal{}
}

// Start starts an attempt in mode, or returns the attempt in progress in
// that mode. It is race-safe: two starts at once make one attempt.
func (s *Service) Start(ctx context.Context, domainID, testID, userID int64, mode string) (store.Attempt, bool, error) {
	acc, err := s.Access(ctx, domainID, testID, userID)
	if err != nil {
		return store.Attempt{}, false, err
	}
	if mode != quiz.ModeDemo && mode != quiz.ModeTest {
		return store.Attempt{}, false, lms.Invalidf("mode", "must be demo or test")
	}
	layout, max, err := s.buildLayout(ctx, domainID, testID, acc.Settings)
	if err != nil {
		return store.Attempt{}, false, err
	}
	lj, err := json.Marshal(layout)
	if err != nil {
		return store.Attempt{}, false, err
	}
	now := s.now()
	a, created, err := s.Store.StartAttempt(ctx, domainID, testID, userID, func(prior []store.Attempt) (*store.Attempt, *store.Attempt, error) {
		acc.fill(prior)
		for i := range prior {
			if prior[i].Mode == mode && prior[i].Source != "live" && (prior[i].State == quiz.InProgress || prior[i].State == quiz.Overdue) {
				return &prior[i], nil, nil
			}
		}
		if why := acc.CanStart(mode, now); why != "" {
			return nil, nil, forbidden("cannot start: %s", why)
		}
		fresh := &store.Attempt{Mode: mode, State: quiz.InProgress, Layout: string(lj), StartedAt: now, MaxMilli: max}
		if d, capped, ok := acc.DeadlineIf(mode, now); ok {
			fresh.Deadline, fresh.Capped, fresh.NextCheck = d, capped, d.Add(quiz.NetworkGrace)
		}
		return nil, fresh, nil
	})
	return a, created, err
}

// ownAttempt loads an attempt of the learner (another learner's is not
// found).
func (s *Service) ownAttempt(ctx context.Context, domainID, attemptID, userID int64) (store.Attempt, error) {
	a, err := s.Store.Attempt(ctx, domainID, attemptID)
	if err != nil {
		return a, err
	}
	if a.UserID != userID {
		return store.Attempt{}, lms.NotFoundf("attempt %d not found", attemptID)
	}
	return a, nil
}

// SaveResult is the outcome of a save.
type SaveResult struct {
	Saved bool  // false: a later seq was already stored
	Seq   int64 // the stored seq
}

// Save stores a response (in display ids) for a slot of the learner's
// attempt if seq is newer. After deadline + NetworkGrace it fails with
// code time_up.
func (s *Service) Save(ctx context.Context, domainID, attemptID, userID int64, slot int, resp quiz.Response, seq int64) (SaveResult, error) {
	a, err := s.ownAttempt(ctx, domainID, attemptID, userID)
	if err != nil {
		return SaveResult{}, err
	}
	layout, err := decodeLayout(a)
	if err != nil {
		return SaveResult{}, err
	}
	if slot < 1 || slot > len(layout) {
		return SaveResult{}, lms.Invalidf("slot", "must be 1 to %d", len(layout))
	}
	if seq < 1 {
		return SaveResult{}, lms.Invalidf("seq", "must be a positive counter")
	}
	_, st, err := s.Settings(ctx, domainID, a.TestID)
	if err != nil {
		return SaveResult{}, err
	}
	sl := layout[slot-1]
	qs, err := s.versions(ctx, domainID, []quiz.SlotLayout{sl})
	if err != nil {
		return SaveResult{}, err
	}
	canon, err := sl.ToCanonical("response", resp)
	if err != nil {
		return SaveResult{}, err
	}
	var v lms.Validator
	quiz.ValidateResponse(&v, "response", qs[sl.VersionID], canon)
	if err := v.Err(); err != nil {
		return SaveResult{}, err
	}
	b, err := json.Marshal(canon)
	if err != nil {
		return SaveResult{}, err
	}
	now := s.now()
	saved, cur, err := s.Store.SaveAnswer(ctx, domainID, attemptID, slot, string(b), seq, now, func(a store.Attempt) error {
		if a.State == quiz.Overdue || (!a.Deadline.IsZero() && now.After(a.Deadline.Add(quiz.NetworkGrace))) {
			return timeUp(a.Deadline)
		}
		if a.State != quiz.InProgress {
			return lms.Conflictf("attempt %d is %s: answers can no longer change", a.ID, a.State)
		}
		if sequential(a, st, len(layout)) && !st.SlotOnPage(slot, len(layout), a.Page) {
			return notOnPage(slot, a.Page, st.PerPage)
		}
		return nil
	})
	return SaveResult{Saved: saved, Seq: cur}, err
}

// sequential reports whether an attempt goes through its pages in order
// with no way back (portal attempts of a test with sequential navigation
// over more than one page; an in-class quiz shows every question at once).
func sequential(a store.Attempt, st quiz.Settings, slots int) bool {
	return a.Source != "live" && st.Sequential(slots)
}

func notOnPage(slot, page, perPage int) error {
	if quiz.PageOf(slot, perPage) < page {
		return &lms.Error{Code: lms.CodeConflict, Fields: []lms.FieldError{{Field: "slot", Message: "is not on your page"}}, Message: fmt.Sprintf(
			"slot %d is on a page you have left: this test's navigation is sequential and you are on page %d", slot, page+1)}
	}
	return &lms.Error{Code: lms.CodeConflict, Fields: []lms.FieldError{{Field: "slot", Message: "is not on your page"}}, Message: fmt.Sprintf(
		"slot %d is on a page you have not reached: this test's navigation is sequential and you are on page %d", slot, page+1)}
}

// MovePage moves the learner's attempt at a test with sequential
// navigation to page (0-based): only to the next page, never back. Moving
// to the page the attempt is on already changes nothing (another tab moved
// first).
func (s *Service) MovePage(ctx context.Context, domainID, attemptID, userID int64, page int) (store.Attempt, error) {
	a, err := s.ownAttempt(ctx, domainID, attemptID, userID)
	if err != nil {
		return a, err
	}
	layout, err := decodeLayout(a)
	if err != nil {
		return a, err
	}
	_, st, err := s.Settings(ctx, domainID, a.TestID)
	if err != nil {
		return a, err
	}
	if !sequential(a, st, len(layout)) {
		return a, lms.Invalidf("page", "this test's navigation is free: every page is open")
	}
	if n := quiz.PageCount(len(layout), st.PerPage); page < 0 || page >= n {
		return a, lms.Invalidf("page", "must be 0 to %d", n-1)
	}
	now := s.now()
	return s.Store.MoveAttemptPage(ctx, domainID, attemptID, page, func(a store.Attempt) error {
		if a.State == quiz.Overdue || (!a.Deadline.IsZero() && now.After(a.Deadline.Add(quiz.NetworkGrace))) {
			return timeUp(a.Deadline)
		}
		if a.State != quiz.InProgress {
			return lms.Conflictf("attempt %d is %s: its pages can no longer change", a.ID, a.State)
		}
		if page != a.Page && page != a.Page+1 {
			return &lms.Error{Code: lms.CodeConflict, Fields: []lms.FieldError{{Field: "page", Message: "must be the next page"}}, Message: fmt.Sprintf(
				"you are on page %d: this test's navigation is sequential, so the only page to move to is the next one", a.Page+1)}
		}
		return nil
	})
}

// Submit finishes the learner's attempt with the answers saved.
func (s *Service) Submit(ctx context.Context, domainID, attemptID, userID int64) (store.Attempt, error) {
	if _, err := s.ownAttempt(ctx, domainID, attemptID, userID); err != nil {
		return store.Attempt{}, err
	}
	return s.finish(ctx, domainID, attemptID, quiz.EvSubmit)
}

// score marks every slot of an attempt. Manual marks already given are
// kept. It returns the answers to write, the total and whether any slot
// waits for a person.
func score(layout []quiz.SlotLayout, qs map[int64]*quiz.Question, ans []store.Answer) ([]store.Answer, int64, int64, bool) {
	bySlot := map[int]store.Answer{}
	for _, x := range ans {
		bySlot[x.Slot] = x
	}
	var out []store.Answer
	var total, max int64
	pending := false
	for _, sl := range layout {
		q := qs[sl.VersionID]
		x := bySlot[sl.Slot]
		x.Slot = sl.Slot
		max += sl.Points
		var r quiz.Response
		if x.Response != "" {
			json.Unmarshal([]byte(x.Response), &r)
		}
		if x.Manual {
			total += x.MarkMilli
			out = append(out, x)
			continue
		}
		m := quiz.Score(q, quiz.Milli(sl.Points), r)
		x.MarkMilli, x.Correct, x.Pending = int64(m.Points), m.Correct, m.Pending
		if m.Pending && r.Empty() {
			// An essay left blank needs no person: it scores 0.
			x.Pending, x.Correct = false, "wrong"
		}
		pending = pending || x.Pending
		total += x.MarkMilli
		out = append(out, x)
	}
	return out, total, max, pending
}

// finish moves an attempt by event (submit or expire) and scores it.
func (s *Service) finish(ctx context.Context, domainID, attemptID int64, event string) (store.Attempt, error) {
	var st quiz.Settings
	var qs map[int64]*quiz.Question
	now := s.now()
	a, err := s.Store.UpdateAttempt(ctx, domainID, attemptID, func(a *store.Attempt, ans []store.Answer) ([]store.Answer, error) {
		var err error
		if _, st, err = s.Settings(ctx, domainID, a.TestID); err != nil {
			return nil, err
		}
		layout, err := decodeLayout(*a)
		if err != nil {
			return nil, err
		}
		if qs, err = s.versions(ctx, domainID, layout); err != nil {
			return nil, err
		}
		marked, total, max, pending := score(layout, qs, ans)
		next, err := quiz.Next(a.State, event, st.OnExpiry, pending)
		if err != nil {
			return nil, lms.Conflictf("attempt %d is %s: it cannot be %s", a.ID, a.State, eventWord[event])
		}
		a.State = next
		if next == quiz.Overdue {
			a.NextCheck = a.Deadline.Add(time.Duration(st.GraceS) * time.Second)
			return nil, nil
		}
		a.NextCheck, a.FinishedAt, a.ScoreMilli, a.MaxMilli = time.Time{}, now, total, max
		return marked, nil
	})
	if err != nil {
		return a, err
	}
	if quiz.Closed(a.State) {
		s.afterChange(ctx, domainID, a)
	}
	return a, nil
}

var eventWord = map[string]string{quiz.EvSubmit: "submitted", quiz.EvExpire: "expired", quiz.EvGrace: "closed"}

// afterChange runs after an attempt's grade may have changed: the
// learner's pass/fail on the test goes to TestResult, test_passed points
// are given once, and a live attempt gives live_quiz_correct per right
// question once per sitting. Demo attempts change nothing. Errors are logged: the
// attempt itself is stored.
func (s *Service) afterChange(ctx context.Context, domainID int64, a store.Attempt) {
	log := s.logger().With("domain_id", domainID, "attempt_id", a.ID)
	switch {
	case a.Source == "live":
		ans, err := s.Store.Answers(ctx, domainID, a.ID)
		if err != nil {
			log.Error("live quiz points", "err", err)
			return
		}
		layout, err := decodeLayout(a)
		if err != nil {
			log.Error("live quiz points", "err", err)
			return
		}
		for _, x := range ans {
			if x.Correct == "right" && x.Slot >= 1 && x.Slot <= len(layout) {
				// By question, not slot: a question launched alone is slot 1.
				reason := fmt.Sprintf("live quiz: class %d, sitting %d, test %d, question id %d", a.ClassID, a.Sitting, a.TestID, layout[x.Slot-1].QuestionID)
				if _, err := s.Store.AwardOnce(ctx, domainID, a.UserID, store.EventLiveQuizCorrect, reason); err != nil {
					log.Error("live quiz points", "err", err)
				}
			}
		}
		return
	case a.Mode != quiz.ModeTest:
		return
	}
	res, err := s.LearnerResult(ctx, domainID, a.TestID, a.UserID)
	if err != nil {
		log.Error("test result", "err", err)
		return
	}
	if !res.Graded {
		return
	}
	if s.TestResult != nil {
		if err := s.TestResult(ctx, domainID, a.UserID, a.TestID, res.Passed, s.now()); err != nil {
			log.Error("test result: completion", "err", err)
		}
	}
	if res.Passed {
		if _, err := s.Store.AwardOnce(ctx, domainID, a.UserID, store.EventTestPassed, fmt.Sprintf("passed test %d", a.TestID)); err != nil {
			log.Error("test passed points", "err", err)
		}
	}
}

// Result is a learner's standing on a test.
type Result struct {
	UserID       int64
	Email        string
	AttemptsUsed int         // test-mode attempts
	Graded       bool        // at least one test-mode attempt is finished or graded
	Grade        quiz.Scored // by the grading method
	Percent      int64       // hundredths of a percent
	Passed       bool
	Pending      int // attempts waiting for manual grading
}

// LearnerResult computes a learner's result on a test from their
// test-mode attempts (demo and live attempts never count).
func (s *Service) LearnerResult(ctx context.Context, domainID, testID, userID int64) (Result, error) {
	_, st, err := s.Settings(ctx, domainID, testID)
	if err != nil {
		return Result{}, err
	}
	as, err := s.Store.UserAttempts(ctx, domainID, testID, userID)
	if err != nil {
		return Result{}, err
	}
	return resultOf(st, userID, as), nil
}

func resultOf(st quiz.Settings, userID int64, as []store.Attempt) Result {
	r := Result{UserID: userID}
	var scored []quiz.Scored
	for _, a := range as {
		if a.Mode != quiz.ModeTest || a.Source == "live" {
			continue
		}
		r.AttemptsUsed++
		switch a.State {
		case quiz.Finished, quiz.Graded:
			scored = append(scored, quiz.Scored{Score: quiz.Milli(a.ScoreMilli), Max: quiz.Milli(a.MaxMilli)})
		case quiz.NeedsGrading:
			r.Pending++
		}
	}
	if g, ok := quiz.FinalGrade(st.Grading, scored); ok {
		r.Graded, r.Grade, r.Percent, r.Passed = true, g, quiz.Percent(g), quiz.Passed(g, st.PassPercent)
	}
	return r
}

// Results lists every learner with attempts at a test.
func (s *Service) Results(ctx context.Context, domainID, testID int64) ([]Result, error) {
	_, st, err := s.Settings(ctx, domainID, testID)
	if err != nil {
		return nil, err
	}
	users, err := s.Store.TestAttemptUsers(ctx, domainID, testID)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(users))
	for _, uid := range users {
		as, err := s.Store.UserAttempts(ctx, domainID, testID, uid)
		if err != nil {
			return nil, err
		}
		r := resultOf(st, uid, as)
		if u, err := s.Store.User(ctx, domainID, uid); err == nil {
			r.Email = u.Email
		}
		out = append(out, r)
	}
	return out, nil
}

// Grade sets a person's mark on one slot of a closed attempt. points must
// be within the slot's maximum.
func (s *Service) Grade(ctx context.Context, domainID, attemptID int64, slot int, points quiz.Milli, comment string) (store.Attempt, error) {
	a, err := s.Store.UpdateAttempt(ctx, domainID, attemptID, func(a *store.Attempt, ans []store.Answer) ([]store.Answer, error) {
		if !quiz.Closed(a.State) {
			return nil, lms.Conflictf("attempt %d is %s: grade it once it is submitted", a.ID, a.State)
		}
		layout, err := decodeLayout(*a)
		if err != nil {
			return nil, err
		}
		if slot < 1 || slot > len(layout) {
			return nil, lms.Invalidf("slot", "must be 1 to %d", len(layout))
		}
		if max := quiz.Milli(layout[slot-1].Points); points > max {
			return nil, lms.Invalidf("points", "must be at most %s (the slot's marks)", max)
		}
		var total int64
		pending := false
		var changed []store.Answer
		found := false
		for i := range ans {
			if ans[i].Slot == slot {
				ans[i].MarkMilli, ans[i].Pending, ans[i].Manual, ans[i].Comment = int64(points), false, true, comment
				ans[i].Correct = correctWord(points, quiz.Milli(layout[slot-1].Points))
				changed = append(changed, ans[i])
				found = true
			}
			total += ans[i].MarkMilli
			pending = pending || ans[i].Pending
		}
		if !found {
			x := store.Answer{Slot: slot, MarkMilli: int64(points), Manual: true, Comment: comment,
				Correct: correctWord(points, quiz.Milli(layout[slot-1].Points))}
			changed = append(changed, x)
			total += x.MarkMilli
		}
		next, err := quiz.Next(a.State, quiz.EvGrade, "", pending)
		if err != nil && a.State == quiz.Finished {
			next, err = a.State, nil
		}
		if err != nil {
			return nil, lms.Conflictf("attempt %d is %s: it cannot be graded", a.ID, a.State)
		}
		a.State, a.ScoreMilli = next, total
		return changed, nil
	})
	if err != nil {
		return a, err
	}
	s.afterChange(ctx, domainID, a)
	return a, nil
}

func correctWord(got, max quiz.Milli) string {
	switch {
	case max == 0:
		return ""
	case got >= max:
		return "right"
	case got > 0:
		return "partial"
	}
	return "wrong"
}

// ResultChange is a learner whose pass/fail on a test changed in a
// regrade: the administrator is told (a certificate already issued is not
// revoked automatically).
type ResultChange struct {
	UserID, TestID int64
	Before, After  bool
}

// RegradeReport is Regrade that also reports every learner whose pass/fail
// changed.
func (s *Service) RegradeReport(ctx context.Context, domainID int64, ids []int64) ([]store.Attempt, []ResultChange, error) {
	type key struct{ user, test int64 }
	before := map[key]bool{}
	var order []key
	for _, id := range ids {
		a, err := s.Store.Attempt(ctx, domainID, id)
		if err != nil {
			return nil, nil, err
		}
		k := key{a.UserID, a.TestID}
		if _, seen := before[k]; seen || a.Mode != quiz.ModeTest || a.Source == "live" {
			continue
		}
		r, err := s.LearnerResult(ctx, domainID, a.TestID, a.UserID)
		if err != nil {
			return nil, nil, err
		}
		before[k] = r.Graded && r.Passed
		order = append(order, k)
	}
	as, err := s.Regrade(ctx, domainID, ids)
	if err != nil {
		return as, nil, err
	}
	var changes []ResultChange
	for _, k := range order {
		r, err := s.LearnerResult(ctx, domainID, k.test, k.user)
		if err != nil {
			return as, changes, err
		}
		if after := r.Graded && r.Passed; after != before[k] {
			changes = append(changes, ResultChange{UserID: k.user, TestID: k.test, Before: before[k], After: after})
		}
	}
	return as, changes, nil
}

// Regrade rescores closed attempts against the current version of each
// question (a fixed key applies to past attempts); the layout then names
// the current versions. Manual marks stay. Pass/fail and completion are
// recomputed; points given are not taken back, and an issued certificate
// is not revoked. It returns the attempts rescored.
func (s *Service) Regrade(ctx context.Context, domainID int64, ids []int64) ([]store.Attempt, error) {
	var out []store.Attempt
	for _, id := range ids {
		a, err := s.Store.UpdateAttempt(ctx, domainID, id, func(a *store.Attempt, ans []store.Answer) ([]store.Answer, error) {
			if !quiz.Closed(a.State) {
				return nil, nil
			}
			layout, err := decodeLayout(*a)
			if err != nil {
				return nil, err
			}
			for i, sl := range layout {
				q, err := s.Store.Question(ctx, domainID, sl.QuestionID)
				if err != nil {
					if lms.IsNotFound(err) {
						continue // deleted: keep the version the attempt had
					}
					return nil, err
				}
				old, err := s.Store.QuestionVersions(ctx, domainID, []int64{sl.VersionID})
				if err != nil {
					return nil, err
				}
				if o, ok := old[sl.VersionID]; ok && o.Type == q.Type {
					layout[i].VersionID = q.VersionID
				}
			}
			qs, err := s.versions(ctx, domainID, layout)
			if err != nil {
				return nil, err
			}
			marked, total, max, pending := score(layout, qs, ans)
			next, err := quiz.Next(a.State, quiz.EvRegrade, "", pending)
			if err != nil {
				return nil, err
			}
			lj, _ := json.Marshal(layout)
			a.Layout, a.State, a.ScoreMilli, a.MaxMilli = string(lj), next, total, max
			return marked, nil
		})
		if err != nil {
			return out, err
		}
		s.afterChange(ctx, domainID, a)
		out = append(out, a)
	}
	return out, nil
}

// Sweep finishes every attempt whose deadline (plus the network grace) or
// grace period has passed, with the answers saved so far. It returns how
// many it moved. An attempt that cannot be finished is logged and left for
// the next sweep; the others still are.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	n := 0
	failed := map[store.AttemptRef]bool{}
	for {
		due, err := s.Store.DueAttempts(ctx, s.now(), 100+len(failed))
		if err != nil {
			return n, err
		}
		moved := 0
		for _, r := range due {
			if failed[r] {
				continue
			}
			if err := s.expire(ctx, r); err != nil {
				if ctx.Err() != nil {
					return n, ctx.Err()
				}
				s.logger().Error("quiz expiry: attempt not finished", "domain_id", r.DomainID, "attempt_id", r.ID, "err", err)
				failed[r] = true
				continue
			}
			moved++
		}
		n += moved
		if moved == 0 {
			return n, nil
		}
	}
}

// expire finishes an attempt Sweep found due. One closed since, by its
// learner's submit or by its room's close of a live quiz, needs nothing
// more: the finish's conflict with the closed attempt is no failure.
func (s *Service) expire(ctx context.Context, r store.AttemptRef) error {
	a, err := s.Store.Attempt(ctx, r.DomainID, r.ID)
	if err != nil {
		return err
	}
	ev := quiz.EvExpire
	if a.State == quiz.Overdue {
		ev = quiz.EvGrace
	}
	_, err = s.finish(ctx, r.DomainID, r.ID, ev)
	if lms.ErrorCode(err) == lms.CodeConflict {
		if a, rerr := s.Store.Attempt(ctx, r.DomainID, r.ID); rerr == nil && quiz.Closed(a.State) {
			return nil
		}
	}
	return err
}

// AttemptDeleted recomputes the learner's result after a test-mode
// attempt was deleted and tells TestResult (failed when no finished
// attempt is left).
func (s *Service) AttemptDeleted(ctx context.Context, domainID int64, a store.Attempt) {
	if a.Mode != quiz.ModeTest || a.Source == "live" || s.TestResult == nil {
		return
	}
	res, err := s.LearnerResult(ctx, domainID, a.TestID, a.UserID)
	if err != nil {
		s.logger().Error("test result after delete", "attempt_id", a.ID, "err", err)
		return
	}
	if err := s.TestResult(ctx, domainID, a.UserID, a.TestID, res.Graded && res.Passed, s.now()); err != nil {
		s.logger().Error("test result after delete: completion", "attempt_id", a.ID, "err", err)
	}
}

// RunSweeper sweeps every interval until ctx ends.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.logger().Error("quiz expiry sweep", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
