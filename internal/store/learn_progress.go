package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Learner progress: what each learner did in each lesson, course
// completions, test results, and when a learner was enrolled. The store
// records; the rules in internal/learn decide.

// CourseEnrolment is when a user was first enrolled in a course, directly
// or through a bundle.
type CourseEnrolment struct {
	CourseID   int64
	UserID     int64
	EnrolledAt time.Time
}

// EnrolledAt returns when a user was first enrolled in a course (directly
// or through a bundle); ok is false when they are not enrolled.
func (s *Store) EnrolledAt(ctx context.Context, domainID, userID, courseID int64) (at time.Time, ok bool, err error) {
	err = s.read().queryRow(ctx, `SELECT MIN(created_at) FROM enrollments WHERE domain_id = ? AND user_id = ?
		AND item_kind = ? AND item_id = ?`, domainID, userID, lms.KindCourse, courseID).Scan(optTimeCol(&at))
	if err != nil || at.IsZero() {
		return time.Time{}, false, err
	}
	return at, true, nil
}

// EnrolledCourses returns the courses a user is enrolled in, most recently
// enrolled first.
func (s *Store) EnrolledCourses(ctx context.Context, domainID, userID int64) ([]CourseEnrolment, error) {
	rows, err := s.read().query(ctx, `SELECT item_id, MIN(created_at) AS first FROM enrollments
		WHERE domain_id = ? AND user_id = ? AND item_kind = ? GROUP BY item_id ORDER BY first DESC, item_id DESC`,
		domainID, userID, lms.KindCourse)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CourseEnrolment
	for rows.Next() {
		e := CourseEnrolment{UserID: userID}
		if err := rows.Scan(&e.CourseID, timeCol(&e.EnrolledAt)); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// CourseLearners returns one page of the users enrolled in a course (by
// user id) with their first enrolment, and the number of all. An unknown
// course is not found.
func (s *Store) CourseLearners(ctx context.Context, domainID, courseID int64, p Page) ([]CourseEnrolment, int64, error) {
	d := s.read()
	if err := mustExist(ctx, d, domainID, lms.KindCourse, courseID); err != nil {
		return nil, 0, err
	}
	total, err := d.count(ctx, `SELECT COUNT(DISTINCT user_id) FROM enrollments WHERE domain_id = ? AND item_kind = ? AND item_id = ?`,
		domainID, lms.KindCourse, courseID)
	if err != nil {
		return nil, 0, err
	}
	rows, err := d.query(ctx, `SELECT user_id, MIN(created_at) FROM enrollments WHERE domain_id = ? AND item_kind = ? AND item_id = ?
		GROUP BY user_id ORDER BY user_id LIMIT +? OFFSET +?`, domainID, lms.KindCourse, courseID, p.Limit, p.Offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []CourseEnrolment
	for rows.Next() {
		e := CourseEnrolment{CourseID: courseID}
		if err := rows.Scan(&e.UserID, timeCol(&e.EnrolledAt)); err != nil {
			return nil, 0, err
		}
		out = append(out, e)
	}
	return out, total, rows.Err()
}

const progressCols = "lesson_id, user_id, opened_at, marked_at, completed_at, watched, position, updated_at"

func scanProgress(row interface{ Scan(...any) error }) (lms.LessonProgress, error) {
	var p lms.LessonProgress
	var watched string
	if err := row.Scan(&p.LessonID, &p.UserID, optTimeCol(&p.OpenedAt), optTimeCol(&p.MarkedAt), optTimeCol(&p.CompletedAt),
		&watched, &p.Position, optTimeCol(&p.UpdatedAt)); err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(watched), &p.Watched); err != nil {
		return p, fmt.Errorf("lesson %d progress: watched ranges: %w", p.LessonID, err)
	}
	return p, nil
}

// CourseProgress returns a learner's progress rows in a course by lesson
// id.
func (s *Store) CourseProgress(ctx context.Context, domainID, courseID, userID int64) (map[int64]lms.LessonProgress, error) {
	rows, err := s.read().query(ctx, "SELECT "+progressCols+` FROM lesson_progress
		WHERE domain_id = ? AND course_id = ? AND user_id = ?`, domainID, courseID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]lms.LessonProgress{}
	for rows.Next() {
		p, err := scanProgress(rows)
		if err != nil {
			return nil, err
		}
		out[p.LessonID] = p
	}
	return out, rows.Err()
}

// UpdateProgress applies edit to a learner's progress in a lesson (a new
// row when there is none) and saves it, in one transaction. Completion is
// not written here: see CompleteLesson.
func (s *Store) UpdateProgress(ctx context.Context, domainID int64, l lms.Lesson, userID int64, edit func(*lms.LessonProgress)) (lms.LessonProgress, error) {
	var p lms.LessonProgress
	err := s.tx(ctx, func(tx db) error {
		// The row exists first, then is read locked (PostgreSQL; SQLite's
		// single writer serialises anyway), so two reports of watched
		// ranges at once merge instead of one overwriting the other.
		if _, err := tx.exec(ctx, `INSERT INTO lesson_progress (domain_id, course_id, lesson_id, user_id, updated_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, lesson_id) DO NOTHING`, domainID, l.CourseID, l.ID, userID, formatTime(s.now())); err != nil {
			return mapErr(err)
		}
		q := "SELECT " + progressCols + " FROM lesson_progress WHERE domain_id = ? AND lesson_id = ? AND user_id = ?"
		if tx.pg {
			q += " FOR UPDATE"
		}
		var err error
		if p, err = scanProgress(tx.queryRow(ctx, q, domainID, l.ID, userID)); err != nil {
			return err
		}
		edit(&p)
		if p.Watched == nil {
			p.Watched = [][2]int{}
		}
		watched, _ := json.Marshal(p.Watched)
		p.UpdatedAt = s.now()
		_, err = tx.exec(ctx, `UPDATE lesson_progress SET opened_at = ?, marked_at = ?, watched = ?, position = ?, updated_at = ?
			WHERE domain_id = ? AND lesson_id = ? AND user_id = ?`, formatOptTime(p.OpenedAt), formatOptTime(p.MarkedAt),
			string(watched), p.Position, formatTime(p.UpdatedAt), domainID, l.ID, userID)
		return err
	})
	return p, err
}

// CompleteLesson records the first completion of a lesson by a learner at
// at, and gives the domain's lesson_completed points for it once per
// learner and lesson (a lesson completed again after a reset gives
// nothing). It reports whether the completion is new.
func (s *Store) CompleteLesson(ctx context.Context, domainID int64, l lms.Lesson, userID int64, at time.Time) (bool, error) {
	first := false
	err := s.tx(ctx, func(tx db) error {
		if err := lockUser(ctx, tx, domainID, userID); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `INSERT INTO lesson_progress (domain_id, course_id, lesson_id, user_id, completed_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, lesson_id) DO UPDATE SET completed_at = excluded.completed_at,
			updated_at = excluded.updated_at WHERE lesson_progress.completed_at = ''`,
			domainID, l.CourseID, l.ID, userID, formatTime(at), formatTime(s.now()))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		first = n > 0
		if !first {
			return nil
		}
		return s.awardOnce(ctx, tx, domainID, userID, EventLessonCompleted, fmt.Sprintf("completed lesson %d", l.ID))
	})
	return first, err
}

// awardOnce gives event's points with reason unless the learner's ledger
// already has that event with that reason.
func (s *Store) awardOnce(ctx context.Context, tx db, domainID, userID int64, event, reason string) error {
	done, err := tx.exists(ctx, "SELECT 1 FROM points_ledger WHERE domain_id = ? AND user_id = ? AND event = ? AND reason = ?",
		domainID, userID, event, reason)
	if err != nil || done {
		return err
	}
	return s.awardEvent(ctx, tx, domainID, userID, event, reason)
}

// UncompleteLesson clears a learner's stored completion of a lesson (a
// test lesson whose pass was taken back). It reports whether there was
// one.
func (s *Store) UncompleteLesson(ctx context.Context, domainID, lessonID, userID int64) (bool, error) {
	cleared := false
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, `UPDATE lesson_progress SET completed_at = '', updated_at = ? WHERE domain_id = ? AND lesson_id = ?
			AND user_id = ? AND completed_at <> ''`, formatTime(s.now()), domainID, lessonID, userID)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		cleared = n > 0
		return nil
	})
	return cleared, err
}

// CourseCompletion is when a learner first completed a course, and
// whether the completion hook has run for it.
type CourseCompletion struct {
	CompletedAt time.Time
	NotifiedAt  time.Time
}

// CourseCompletionOf returns a learner's completion of a course (zero
// times when none).
func (s *Store) CourseCompletionOf(ctx context.Context, domainID, courseID, userID int64) (CourseCompletion, error) {
	var c CourseCompletion
	err := s.read().queryRow(ctx, `SELECT completed_at, notified_at FROM course_completions WHERE domain_id = ? AND course_id = ?
		AND user_id = ?`, domainID, courseID, userID).Scan(optTimeCol(&c.CompletedAt), optTimeCol(&c.NotifiedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return CourseCompletion{}, nil
	}
	return c, err
}

// CompleteCourse records a learner's completion of a course at at, once:
// a completion already stored is kept with its time. The first one gives
// the domain's course_completed points (once per learner and course, even
// after a reset). It returns the stored completion and whether it is new.
func (s *Store) CompleteCourse(ctx context.Context, domainID, courseID, userID int64, at time.Time) (CourseCompletion, bool, error) {
	first := false
	err := s.tx(ctx, func(tx db) error {
		if err := lockUser(ctx, tx, domainID, userID); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `INSERT INTO course_completions (domain_id, course_id, user_id, completed_at) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, domainID, courseID, userID, formatTime(at))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		first = n > 0
		if !first {
			return nil
		}
		return s.awardOnce(ctx, tx, domainID, userID, EventCourseCompleted, fmt.Sprintf("completed course %d", courseID))
	})
	if err != nil {
		return CourseCompletion{}, false, err
	}
	c, err := s.CourseCompletionOf(ctx, domainID, courseID, userID)
	return c, first, err
}

// MarkCourseNotified records that the completion hook ran for a learner's
// completion of a course.
func (s *Store) MarkCourseNotified(ctx context.Context, domainID, courseID, userID int64, at time.Time) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, "UPDATE course_completions SET notified_at = ? WHERE domain_id = ? AND course_id = ? AND user_id = ?",
			formatTime(at), domainID, courseID, userID)
		return err
	})
}

// ResetProgress deletes a learner's progress in a course (opened, marked,
// watched, completions) and the course completion. Points already given
// stay; test results and attendance belong to the test engine and the
// classroom and stay too. It reports how many lesson rows were removed.
func (s *Store) ResetProgress(ctx context.Context, domainID, courseID, userID int64) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "DELETE FROM lesson_progress WHERE domain_id = ? AND course_id = ? AND user_id = ?", domainID, courseID, userID)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		_, err = tx.exec(ctx, "DELETE FROM course_completions WHERE domain_id = ? AND course_id = ? AND user_id = ?", domainID, courseID, userID)
		return err
	})
	return n, err
}

// SetTestResult records the test engine's verdict for a learner and test
// (replacing an earlier one). An unknown test or user is not found.
func (s *Store) SetTestResult(ctx context.Context, domainID int64, r lms.TestResult) error {
	return s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindTest, r.TestID); err != nil {
			return err
		}
		if _, err := user(ctx, tx, domainID, r.UserID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO learn_test_results (domain_id, test_id, user_id, passed, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (user_id, test_id) DO UPDATE SET passed = excluded.passed, at = excluded.at`,
			domainID, r.TestID, r.UserID, lms.Flag(r.Passed), formatTime(r.At))
		return err
	})
}

// TestResults returns a learner's test verdicts by test id.
func (s *Store) TestResults(ctx context.Context, domainID, userID int64) (map[int64]lms.TestResult, error) {
	rows, err := s.read().query(ctx, "SELECT test_id, passed, at FROM learn_test_results WHERE domain_id = ? AND user_id = ?", domainID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]lms.TestResult{}
	for rows.Next() {
		r := lms.TestResult{UserID: userID}
		if err := rows.Scan(&r.TestID, &r.Passed, timeCol(&r.At)); err != nil {
			return nil, err
		}
		out[r.TestID] = r
	}
	return out, rows.Err()
}

// ServerSecret returns the server-wide secret for purpose, making it at
// random the first time. Every process sharing the database gets the same
// one.
func (s *Store) ServerSecret(ctx context.Context, purpose string) ([]byte, error) {
	read := func() ([]byte, error) {
		var h string
		err := s.wdb.QueryRowContext(ctx, rebind("SELECT secret FROM server_secrets WHERE purpose = ?", s.pg), purpose).Scan(&h)
		if err != nil {
			return nil, err
		}
		return hex.DecodeString(h)
	}
	if b, err := read(); err == nil {
		return b, nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	b := make([]byte, 32)
	rand.Read(b)
	err := s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, "INSERT INTO server_secrets (purpose, secret, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
			purpose, hex.EncodeToString(b), formatTime(s.now()))
		return err
	})
	if err != nil {
		return nil, err
	}
	return read()
}
