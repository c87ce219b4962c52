package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Attempt is one attempt at a test. Layout is the JSON of the frozen
// layout; Deadline and NextCheck are zero when there is none.
type Attempt struct {
	ID         int64
	TestID     int64
	UserID     int64
	Mode       string
	AttemptNo  int
	State      string
	Source     string
	ClassID    int64
	Sitting    int
	Layout     string
	StartedAt  time.Time
	Deadline   time.Time
	Capped     bool
	NextCheck  time.Time
	FinishedAt time.Time
	ScoreMilli int64
	MaxMilli   int64
	UpdatedAt  time.Time
	// Page is the page the learner is on (0-based) when the test's
	// navigation is sequential.
	Page int
}

// Answer is the saved response and mark of one slot of an attempt.
type Answer struct {
	Slot      int
	Response  string // JSON of quiz.Response
	Seq       int64
	SavedAt   time.Time
	MarkMilli int64
	Correct   string
	Pending   bool
	Manual    bool
	Comment   string
}

func attemptNotFound(id int64) error { return lms.NotFoundf("attempt %d not found", id) }

const attemptCols = `id, test_id, user_id, mode, attempt_no, state, source, class_id, sitting, layout, started_at, deadline, capped,
	next_check, finished_at, score_milli, max_milli, updated_at, page`

func scanAttempt(row interface{ Scan(...any) error }) (Attempt, error) {
	var a Attempt
	var capped int
	err := row.Scan(&a.ID, &a.TestID, &a.UserID, &a.Mode, &a.AttemptNo, &a.State, &a.Source, &a.ClassID, &a.Sitting, &a.Layout,
		timeCol(&a.StartedAt), optTimeCol(&a.Deadline), &capped, optTimeCol(&a.NextCheck), optTimeCol(&a.FinishedAt),
		&a.ScoreMilli, &a.MaxMilli, timeCol(&a.UpdatedAt), &a.Page)
	a.Capped = capped == 1
	return a, err
}

func attemptsWhere(ctx context.Context, d db, where string, args ...any) ([]Attempt, error) {
	rows, err := d.query(ctx, "SELECT "+attemptCols+" FROM quiz_attempts WHERE "+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// StartAttempt is race-safe: with the user locked (PostgreSQL; SQLite has
// one writer), it reads the user's attempts at the test (all modes, in
// start order) and calls decide, which either returns one of them to
// resume, or a new attempt to insert (AttemptNo is assigned here), or an
// error. The unique (test, user, mode, attempt_no) index is the last
// guard: two starts at once make one attempt. created reports an insert.
func (s *Store) StartAttempt(ctx context.Context, domainID, testID, userID int64,
	decide func(prior []Attempt) (resume *Attempt, fresh *Attempt, err error)) (a Attempt, created bool, err error) {
	for try := 0; try < 3; try++ {
		err = s.tx(ctx, func(tx db) error {
			if err := lockUser(ctx, tx, domainID, userID); err != nil {
				return err
			}
			if err := mustExist(ctx, tx, domainID, lms.KindTest, testID); err != nil {
				return err
			}
			prior, err := attemptsWhere(ctx, tx, "domain_id = ? AND test_id = ? AND user_id = ? ORDER BY started_at, id",
				domainID, testID, userID)
			if err != nil {
				return err
			}
			resume, fresh, err := decide(prior)
			if err != nil {
				return err
			}
			if resume != nil {
				a, created = *resume, false
				return nil
			}
			n := 0
			for _, p := range prior {
				if p.Mode == fresh.Mode && p.AttemptNo > n {
					n = p.AttemptNo
				}
			}
			a = *fresh
			a.TestID, a.UserID, a.AttemptNo, a.UpdatedAt = testID, userID, n+1, s.now()
			if a.Source == "" {
				a.Source = "portal"
			}
			a.ID, err = tx.insert(ctx, `INSERT INTO quiz_attempts (domain_id, test_id, user_id, mode, attempt_no, state, source, class_id,
				sitting, layout, started_at, deadline, capped, next_check, finished_at, score_milli, max_milli, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0, ?, ?)`,
				domainID, testID, userID, a.Mode, a.AttemptNo, a.State, a.Source, a.ClassID, a.Sitting, a.Layout,
				formatTime(a.StartedAt), formatOptTime(a.Deadline), lms.Flag(a.Capped), formatOptTime(a.NextCheck), a.MaxMilli, formatTime(a.UpdatedAt))
			created = err == nil
			return err
		})
		if !errors.Is(err, errUnique) {
			return a, created, err
		}
		// Another start won the race: read again and resume it.
	}
	return a, false, err
}

// Attempt returns one attempt of the domain.
func (s *Store) Attempt(ctx context.Context, domainID, id int64) (Attempt, error) {
	return attempt(ctx, s.read(), domainID, id, false)
}

func attempt(ctx context.Context, d db, domainID, id int64, lock bool) (Attempt, error) {
	q := "SELECT " + attemptCols + " FROM quiz_attempts WHERE domain_id = ? AND id = ?"
	if lock && d.pg {
		q += " FOR UPDATE"
	}
	a, err := scanAttempt(d.queryRow(ctx, q, domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, attemptNotFound(id)
	}
	return a, err
}

// Answers returns an attempt's answers by slot order.
func (s *Store) Answers(ctx context.Context, domainID, attemptID int64) ([]Answer, error) {
	return answers(ctx, s.read(), domainID, attemptID)
}

func answers(ctx context.Context, d db, domainID, attemptID int64) ([]Answer, error) {
	rows, err := d.query(ctx, `SELECT slot, response, seq, saved_at, mark_milli, correct, pending, manual, comment FROM quiz_answers
		WHERE domain_id = ? AND attempt_id = ? ORDER BY slot`, domainID, attemptID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Answer
	for rows.Next() {
		var a Answer
		var pending, manual int
		if err := rows.Scan(&a.Slot, &a.Response, &a.Seq, optTimeCol(&a.SavedAt), &a.MarkMilli, &a.Correct, &pending, &manual,
			&a.Comment); err != nil {
			return nil, err
		}
		a.Pending, a.Manual = pending == 1, manual == 1
		out = append(out, a)
	}
	return out, rows.Err()
}

// SaveAnswer stores a slot's response if seq is higher than the stored
// one (last write by seq wins across tabs). check runs first on the
// locked attempt and may refuse (time up, not the learner's, closed).
// saved is false for a stale seq; cur is the stored seq afterwards.
func (s *Store) SaveAnswer(ctx context.Context, domainID, attemptID int64, slot int, response string, seq int64, at time.Time,
	check func(a Attempt) error) (saved bool, cur int64, err error) {
	err = s.tx(ctx, func(tx db) error {
		a, err := attempt(ctx, tx, domainID, attemptID, true)
		if err != nil {
			return err
		}
		if err := check(a); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `INSERT INTO quiz_answers (domain_id, attempt_id, slot, response, seq, saved_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (attempt_id, slot) DO UPDATE SET response = excluded.response, seq = excluded.seq, saved_at = excluded.saved_at
			WHERE quiz_answers.seq < excluded.seq`, domainID, attemptID, slot, response, seq, formatTime(at))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		saved = n > 0
		return tx.queryRow(ctx, "SELECT seq FROM quiz_answers WHERE attempt_id = ? AND slot = ?", attemptID, slot).Scan(&cur)
	})
	return saved, cur, err
}

// MoveAttemptPage moves an attempt to page to after check accepts the
// locked attempt (a sequential test's rule lives with the caller); it
// returns the attempt as it is afterwards.
func (s *Store) MoveAttemptPage(ctx context.Context, domainID, id int64, to int, check func(a Attempt) error) (Attempt, error) {
	var a Attempt
	err := s.tx(ctx, func(tx db) error {
		var err error
		if a, err = attempt(ctx, tx, domainID, id, true); err != nil {
			return err
		}
		if err := check(a); err != nil {
			return err
		}
		if a.Page == to {
			return nil
		}
		a.Page, a.UpdatedAt = to, s.now()
		_, err = tx.exec(ctx, "UPDATE quiz_attempts SET page = ?, updated_at = ? WHERE domain_id = ? AND id = ?",
			a.Page, formatTime(a.UpdatedAt), domainID, id)
		return err
	})
	return a, err
}

// UpdateAttempt runs edit on the locked attempt and its answers, then
// writes back the attempt's state, times and scores, and every answer
// edit returns (marks, pending, comments; responses are kept as saved).
func (s *Store) UpdateAttempt(ctx context.Context, domainID, id int64, edit func(a *Attempt, ans []Answer) ([]Answer, error)) (Attempt, error) {
	var a Attempt
	err := s.tx(ctx, func(tx db) error {
		var err error
		if a, err = attempt(ctx, tx, domainID, id, true); err != nil {
			return err
		}
		ans, err := answers(ctx, tx, domainID, id)
		if err != nil {
			return err
		}
		changed, err := edit(&a, ans)
		if err != nil {
			return err
		}
		a.UpdatedAt = s.now()
		if _, err := tx.exec(ctx, `UPDATE quiz_attempts SET state = ?, deadline = ?, next_check = ?, finished_at = ?, score_milli = ?,
			max_milli = ?, updated_at = ? WHERE domain_id = ? AND id = ?`, a.State, formatOptTime(a.Deadline), formatOptTime(a.NextCheck),
			formatOptTime(a.FinishedAt), a.ScoreMilli, a.MaxMilli, formatTime(a.UpdatedAt), domainID, id); err != nil {
			return err
		}
		for _, x := range changed {
			if _, err := tx.exec(ctx, `INSERT INTO quiz_answers (domain_id, attempt_id, slot, mark_milli, correct, pending, manual, comment)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (attempt_id, slot) DO UPDATE SET mark_milli = excluded.mark_milli,
				correct = excluded.correct, pending = excluded.pending, manual = excluded.manual, comment = excluded.comment`,
				domainID, id, x.Slot, x.MarkMilli, x.Correct, lms.Flag(x.Pending), lms.Flag(x.Manual), x.Comment); err != nil {
				return err
			}
		}
		return nil
	})
	return a, err
}

// AttemptFilter selects attempts; zero fields match all.
type AttemptFilter struct {
	TestID, UserID, ClassID int64
	Sitting                 int
	State, Mode             string
}

// ListAttempts returns a page of attempts, newest first, and the total.
func (s *Store) ListAttempts(ctx context.Context, domainID int64, f AttemptFilter, p Page) ([]Attempt, int64, error) {
	where := "domain_id = ?"
	args := []any{domainID}
	add := func(cond string, v any) {
		where += " AND " + cond
		args = append(args, v)
	}
	if f.TestID != 0 {
		add("test_id = ?", f.TestID)
	}
	if f.UserID != 0 {
		add("user_id = ?", f.UserID)
	}
	if f.ClassID != 0 {
		add("class_id = ?", f.ClassID)
	}
	if f.Sitting != 0 {
		add("sitting = ?", f.Sitting)
	}
	if f.State != "" {
		add("state = ?", f.State)
	}
	if f.Mode != "" {
		add("mode = ?", f.Mode)
	}
	d := s.read()
	filtered := f != AttemptFilter{}
	total, err := listTotal(ctx, d, domainID, countQuizAttempts, filtered, where, args)
	if err != nil {
		return nil, 0, err
	}
	// Unfiltered, the page is read in order from quiz_attempts_started
	// (migration 0040). Filtered, SQLite (which keeps no statistics) would
	// take that index too, to skip the sort, and walk all the domain's
	// attempts for those of one test or class; ordering by +started_at
	// keeps it on the filter's index. PostgreSQL plans by its statistics
	// and has no unary plus for text.
	q := where + " ORDER BY started_at DESC, id DESC"
	if filtered && !d.pg {
		q = where + " ORDER BY +started_at DESC, id DESC"
	}
	if p.Limit > 0 {
		q += " LIMIT +? OFFSET +?"
		args = append(args, p.Limit, p.Offset)
	}
	out, err := attemptsWhere(ctx, d, q, args...)
	return out, total, err
}

// UserAttempts returns a user's attempts at a test in start order.
func (s *Store) UserAttempts(ctx context.Context, domainID, testID, userID int64) ([]Attempt, error) {
	return attemptsWhere(ctx, s.read(), "domain_id = ? AND test_id = ? AND user_id = ? ORDER BY started_at, id", domainID, testID, userID)
}

// DeleteAttempt deletes an attempt and its answers.
func (s *Store) DeleteAttempt(ctx context.Context, domainID, id int64) (Attempt, error) {
	var a Attempt
	err := s.tx(ctx, func(tx db) error {
		var err error
		if a, err = attempt(ctx, tx, domainID, id, true); err != nil {
			return err
		}
		_, err = tx.exec(ctx, "DELETE FROM quiz_attempts WHERE domain_id = ? AND id = ?", domainID, id)
		return err
	})
	return a, err
}

// AttemptRef names an attempt across domains (for the sweeper).
type AttemptRef struct {
	DomainID, ID int64
}

// DueAttempts returns up to limit attempts in progress or overdue whose
// next check is at or before at, across every domain (the expiry
// sweeper's query, on the (state, next_check) index).
func (s *Store) DueAttempts(ctx context.Context, at time.Time, limit int) ([]AttemptRef, error) {
	rows, err := s.read().query(ctx, `SELECT domain_id, id FROM quiz_attempts WHERE state IN ('in_progress', 'overdue')
		AND next_check <> '' AND next_check <= ? ORDER BY next_check LIMIT +?`, formatTime(at), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AttemptRef
	for rows.Next() {
		var r AttemptRef
		if err := rows.Scan(&r.DomainID, &r.ID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// TestAttemptUsers returns the ids of the users with attempts at a test.
func (s *Store) TestAttemptUsers(ctx context.Context, domainID, testID int64) ([]int64, error) {
	rows, err := s.read().query(ctx, "SELECT DISTINCT user_id FROM quiz_attempts WHERE domain_id = ? AND test_id = ? ORDER BY user_id",
		domainID, testID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// AwardOnce gives the user the domain's points for event once per reason
// (e.g. "passed test 7"): a second call with the same reason gives
// nothing. It reports whether points were given.
func (s *Store) AwardOnce(ctx context.Context, domainID, userID int64, event, reason string) (bool, error) {
	given := false
	err := s.tx(ctx, func(tx db) error {
		if err := lockUser(ctx, tx, domainID, userID); err != nil {
			return err
		}
		done, err := tx.exists(ctx, `SELECT 1 FROM points_ledger WHERE domain_id = ? AND user_id = ? AND event = ? AND reason = ?`,
			domainID, userID, event, reason)
		if err != nil || done {
			return err
		}
		before, err := tx.count(ctx, "SELECT COUNT(*) FROM points_ledger WHERE domain_id = ? AND user_id = ?", domainID, userID)
		if err != nil {
			return err
		}
		if err := s.awardEvent(ctx, tx, domainID, userID, event, reason); err != nil {
			return err
		}
		after, err := tx.count(ctx, "SELECT COUNT(*) FROM points_ledger WHERE domain_id = ? AND user_id = ?", domainID, userID)
		given = after > before
		return err
	})
	return given, err
}

// AttachClassTest attaches a test to a live class for in-class quizzes
// (attaching twice changes nothing).
func (s *Store) AttachClassTest(ctx context.Context, domainID, classID, testID int64) error {
	return s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindClass, classID); err != nil {
			return err
		}
		if err := mustExist(ctx, tx, domainID, lms.KindTest, testID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, "INSERT INTO quiz_class_tests (domain_id, class_id, test_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
			domainID, classID, testID, formatTime(s.now()))
		return err
	})
}

// ClassTests returns the ids of the tests attached to a class.
func (s *Store) ClassTests(ctx context.Context, domainID, classID int64) ([]int64, error) {
	d := s.read()
	if err := mustExist(ctx, d, domainID, lms.KindClass, classID); err != nil {
		return nil, err
	}
	rows, err := d.query(ctx, "SELECT test_id FROM quiz_class_tests WHERE domain_id = ? AND class_id = ? ORDER BY id", domainID, classID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
