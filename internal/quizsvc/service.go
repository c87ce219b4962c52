// Package quizsvc runs the test engine on the store: starting, saving,
// submitting and grading attempts, results, and the expiry sweeper. The
// rules come from internal/quiz; the store only persists. The management
// API, the learner portal and in-class quizzes all go through a Service.
package quizsvc

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/schedule"
	"github.com/lectern-lms/lectern/internal/store"
)

// Service is the test engine.
type Service struct {
	Store  *store.Store
	Logger *slog.Logger
	// Now is the server's clock (time.Now when nil).
	Now func() time.Time
	// TestResult is told when a learner's pass/fail on a test is known or
	// changes (learn.Service.SetTestResult: it completes the lessons that
	// point at the test). nil does nothing.
	TestResult func(ctx context.Context, domainID, userID, testID int64, passed bool, at time.Time) error
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Second)
	}
	return time.Now().UTC().Truncate(time.Second)
}

func (s *Service) nowMS() int64 {
	if s.Now != nil {
		return s.Now().UnixMilli()
	}
	return time.Now().UnixMilli()
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// ErrCodeTimeUp is the error code of a save after the deadline.
const ErrCodeTimeUp lms.Code = "time_up"

func timeUp(deadline time.Time) error {
	return &lms.Error{Code: ErrCodeTimeUp, Message: "time is up: the attempt ended at " + deadline.UTC().Format(time.RFC3339) +
		"; answers saved before then were kept"}
}

func forbidden(format string, args ...any) error {
	return &lms.Error{Code: lms.CodeForbidden, Message: fmt.Sprintf(format, args...)}
}

// Settings returns a test and its settings (defaults when never set).
func (s *Service) Settings(ctx context.Context, domainID, testID int64) (lms.Test, quiz.Settings, error) {
	t, js, err := s.Store.TestSettings(ctx, domainID, testID)
	if err != nil {
		return t, quiz.Settings{}, err
	}
	st, err := decodeSettings(js)
	return t, st, err
}

func decodeSettings(js string) (quiz.Settings, error) {
	st := quiz.DefaultSettings()
	if js == "" {
		return st, nil
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return st, fmt.Errorf("test settings: %w", err)
	}
	return st, nil
}

// SetSettings applies edit to a test's settings and stores them if they
// validate.
func (s *Service) SetSettings(ctx context.Context, domainID, testID int64, edit func(*quiz.Settings) error) (quiz.Settings, error) {
	var st quiz.Settings
	_, err := s.Store.SetTestSettings(ctx, domainID, testID, func(cur string) (string, error) {
		var err error
		if st, err = decodeSettings(cur); err != nil {
			return "", err
		}
		if err := edit(&st); err != nil {
			return "", err
		}
		var v lms.Validator
		st.Validate(&v)
		if err := v.Err(); err != nil {
			return "", err
		}
		b, err := json.Marshal(st)
		return string(b), err
	})
	return st, err
}

// toQuiz reads a stored question version.
func toQuiz(q store.Question) (quiz.Question, error) {
	out := quiz.Question{Type: q.Type, Text: q.Text, Points: quiz.Milli(q.PointsMilli)}
	if err := json.Unmarshal([]byte(q.Data), &out.Data); err != nil {
		return out, fmt.Errorf("question %d version %d: %w", q.ID, q.Version, err)
	}
	return out, nil
}

// Allotted is a test's time limit in a mode (0 = untimed).
func Allotted(t lms.Test, mode string) time.Duration {
	hms := t.TimeTest
	if mode == quiz.ModeDemo {
		hms = t.TimeDemo
	}
	d, err := schedule.ParseHMS(hms)
	if err != nil {
		return 0
	}
	return d
}

func newRand() *rand.Rand {
	var b [16]byte
	crand.Read(b[:])
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])))
}

// buildLayout draws a fresh layout for a test.
func (s *Service) buildLayout(ctx context.Context, domainID, testID int64, st quiz.Settings) ([]quiz.SlotLayout, int64, error) {
	slots, err := s.Store.Slots(ctx, domainID, testID)
	if err != nil {
		return nil, 0, err
	}
	if len(slots) == 0 {
		return nil, 0, lms.Conflictf("test %d has no questions yet", testID)
	}
	cand := func(q store.Question) (quiz.Candidate, error) {
		qq, err := toQuiz(q)
		return quiz.Candidate{QuestionID: q.ID, VersionID: q.VersionID, Q: qq}, err
	}
	var specs []quiz.SlotSpec
	for _, sl := range slots {
		spec := quiz.SlotSpec{Points: quiz.Milli(sl.PointsMilli), Count: sl.DrawCount}
		if sl.QuestionID != 0 {
			q, err := s.Store.Question(ctx, domainID, sl.QuestionID)
			if err != nil {
				return nil, 0, err
			}
			c, err := cand(q)
			if err != nil {
				return nil, 0, err
			}
			spec.Fixed = &c
		} else {
			spec.Name = "category " + sl.Category
			if sl.Tag != "" {
				spec.Name = "tag " + sl.Tag
			}
			pool, err := s.Store.QuestionPool(ctx, domainID, sl.Category, sl.Tag)
			if err != nil {
				return nil, 0, err
			}
			for _, q := range pool {
				c, err := cand(q)
				if err != nil {
					return nil, 0, err
				}
				spec.Pool = append(spec.Pool, c)
			}
		}
		specs = append(specs, spec)
	}
	l, err := quiz.BuildLayout(specs, map[int64]*quiz.Question{}, st.ShuffleQuestions, st.ShuffleAnswers, newRand())
	if err != nil {
		if pe, ok := err.(*quiz.ErrPoolTooSmall); ok {
			return nil, 0, lms.Conflictf("test %d cannot be started: %s", testID, pe.Error())
		}
		return nil, 0, err
	}
	var max int64
	for _, sl := range l {
		max += sl.Points
	}
	return l, max, nil
}

func decodeLayout(a store.Attempt) ([]quiz.SlotLayout, error) {
	var l []quiz.SlotLayout
	if err := json.Unmarshal([]byte(a.Layout), &l); err != nil {
		return nil, fmt.Errorf("attempt %d layout: %w", a.ID, err)
	}
	return l, nil
}

// versions loads the question versions a layout names.
func (s *Service) versions(ctx context.Context, domainID int64, l []quiz.SlotLayout) (map[int64]*quiz.Question, error) {
	ids := make([]int64, len(l))
	for i, sl := range l {
		ids[i] = sl.VersionID
	}
	vs, err := s.Store.QuestionVersions(ctx, domainID, ids)
	if err != nil {
		return nil, err
	}
	out := map[int64]*quiz.Question{}
	for id, v := range vs {
		q, err := toQuiz(v)
		if err != nil {
			return nil, err
		}
		out[id] = &q
	}
	for _, sl := range l {
		if out[sl.VersionID] == nil {
			return nil, fmt.Errorf("question version %d of slot %d is missing", sl.VersionID, sl.Slot)
		}
	}
	return out, nil
}
