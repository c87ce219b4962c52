package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

// Point events: what a point rule can give points for.
const (
	EventCourseEnrolled = "course_enrolled"
	EventTestEnrolled   = "test_enrolled"
	EventClassEnrolled  = "class_enrolled"
	EventClassAttended  = "class_attended"
	// Learner side and test engine.
	EventLessonCompleted   = "lesson_completed"
	EventCourseCompleted   = "course_completed"
	EventCertificateEarned = "certificate_earned"
	EventTestPassed        = "test_passed"
	EventLiveQuizCorrect   = "live_quiz_correct"
)

// PointEvents lists every event a rule can be set for, in display order.
var PointEvents = []string{EventCourseEnrolled, EventTestEnrolled, EventClassEnrolled, EventClassAttended,
	EventLessonCompleted, EventCourseCompleted, EventCertificateEarned, EventTestPassed, EventLiveQuizCorrect}

// ValidPointEvent reports whether event is one of PointEvents.
func ValidPointEvent(event string) bool { return slices.Contains(PointEvents, event) }

// PointRule is how many points an event gives.
type PointRule struct {
	Event  string
	Points int64
}

// PointsEntry is one row of the points ledger. Event is "" for an explicit
// grant or deduction.
type PointsEntry struct {
	ID        int64
	UserID    int64
	Points    int64
	Reason    string
	Event     string
	CreatedAt time.Time
}

// Badge is a badge definition; AwardedAt is set only when the badge is read
// as one a user has earned.
type Badge struct {
	ID             int64
	Description    string
	PointsRequired int64
	AwardedAt      time.Time
}

// PointsResult is a user's total after a change or an evaluation, and the
// badges that change or evaluation awarded.
type PointsResult struct {
	UserID  int64
	Total   int64
	Awarded []Badge
}

// LeaderboardEntry is one user's line on the leaderboard: their points in
// the period and the time of their latest ledger row in it.
type LeaderboardEntry struct {
	Rank   int64
	UserID int64
	Name   string
	Points int64
	Latest time.Time
}

// Leaderboard periods.
const (
	PeriodAll   = "all"
	PeriodMonth = "month"
	PeriodWeek  = "week"
)

// LeaderboardPeriods lists the accepted periods.
var LeaderboardPeriods = []string{PeriodAll, PeriodMonth, PeriodWeek}

// PeriodStart returns the first instant of period as seen at now, in UTC:
// the zero time for "all", the first of the current calendar month for
// "month", the Monday of the current ISO week for "week". ok is false for
// an unknown period.
func PeriodStart(period string, now time.Time) (start time.Time, ok bool) {
	now = now.UTC()
	switch period {
	case PeriodAll:
		return time.Time{}, true
	case PeriodMonth:
		return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC), true
	case PeriodWeek:
		back := (int(now.Weekday()) + 6) % 7 // days since Monday
		return time.Date(now.Year(), now.Month(), now.Day()-back, 0, 0, 0, 0, time.UTC), true
	}
	return time.Time{}, false
}

// PointRules returns the rule of every event in PointEvents; an event
// never set gives 0.
func (s *Store) PointRules(ctx context.Context, domainID int64) ([]PointRule, error) {
	rows, err := s.read().query(ctx, "SELECT event, points FROM point_rules WHERE domain_id = ?", domainID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	set := map[string]int64{}
	for rows.Next() {
		var r PointRule
		if err := rows.Scan(&r.Event, &r.Points); err != nil {
			return nil, err
		}
		set[r.Event] = r.Points
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]PointRule, len(PointEvents))
	for i, ev := range PointEvents {
		out[i] = PointRule{Event: ev, Points: set[ev]}
	}
	return out, nil
}

// SetPointRule sets how many points event gives (insert or update).
func (s *Store) SetPointRule(ctx context.Context, domainID int64, event string, points int64) (PointRule, error) {
	if !ValidPointEvent(event) {
		return PointRule{}, lms.Invalidf("event", "must be one of %s", strings.Join(PointEvents, ", "))
	}
	err := s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, `INSERT INTO point_rules (domain_id, event, points, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (domain_id, event) DO UPDATE SET points = excluded.points, updated_at = excluded.updated_at`,
			domainID, event, points, formatTime(s.now()))
		return err
	})
	return PointRule{Event: event, Points: points}, err
}

// AwardEvent appends to the user's ledger the points the domain's rule for
// event gives, with reason (the event name when reason is ""), and
// evaluates the user's badges. It does nothing when the rule gives 0 or was
// never set. An event not in PointEvents is an error; an unknown user is
// not found.
//
// AwardEvent runs its own transaction: call it after the transaction that
// caused the event has committed, never from inside one (on SQLite the
// single writer would wait on itself). Code in this package that wants the
// award inside its own transaction calls awardEvent with that transaction.
func (s *Store) AwardEvent(ctx context.Context, domainID, userID int64, event, reason string) error {
	return s.tx(ctx, func(tx db) error {
		return s.awardEvent(ctx, tx, domainID, userID, event, reason)
	})
}

func (s *Store) awardEvent(ctx context.Context, tx db, domainID, userID int64, event, reason string) error {
	if !ValidPointEvent(event) {
		return fmt.Errorf("award event: unknown event %q", event)
	}
	var points int64
	err := tx.queryRow(ctx, "SELECT points FROM point_rules WHERE domain_id = ? AND event = ?", domainID, event).Scan(&points)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && points == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	if reason == "" {
		reason = event
	}
	_, err = s.addPoints(ctx, tx, domainID, PointsEntry{UserID: userID, Points: points, Reason: reason, Event: event})
	return err
}

// AddPoints appends e to the ledger (e.CreatedAt defaults to now) and
// evaluates the user's badges, in one transaction. It returns the stored
// entry (with its id and time) and the user's new total and newly awarded
// badges.
func (s *Store) AddPoints(ctx context.Context, domainID int64, e PointsEntry) (PointsEntry, PointsResult, error) {
	var r addResult
	err := s.tx(ctx, func(tx db) error {
		var err error
		r, err = s.addPoints(ctx, tx, domainID, e)
		return err
	})
	if err != nil {
		return PointsEntry{}, PointsResult{}, err
	}
	e.ID, e.CreatedAt = r.entryID, r.createdAt
	return e, r.PointsResult, nil
}

type addResult struct {
	PointsResult
	entryID   int64
	createdAt time.Time
}

func (s *Store) addPoints(ctx context.Context, tx db, domainID int64, e PointsEntry) (addResult, error) {
	var r addResult
	if err := lockUser(ctx, tx, domainID, e.UserID); err != nil {
		return r, err
	}
	t := s.now()
	r.createdAt = e.CreatedAt.UTC().Truncate(time.Second)
	if e.CreatedAt.IsZero() {
		r.createdAt = t
	}
	var err error
	r.entryID, err = tx.insert(ctx, `INSERT INTO points_ledger (domain_id, user_id, points, reason, event, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, domainID, e.UserID, e.Points, e.Reason, e.Event, formatTime(r.createdAt))
	if errors.Is(err, errForeignKey) {
		return r, lms.NotFoundf("user %d not found", e.UserID)
	}
	if err != nil {
		return r, err
	}
	r.PointsResult, err = evaluateBadges(ctx, tx, domainID, e.UserID, t)
	return r, err
}

// lockUser checks that the user belongs to the domain and, on PostgreSQL,
// locks their row until the transaction ends, so that point changes and
// badge evaluations of one user run one after another and each sees the
// ones before it. (SQLite has one writer, which serialises them anyway.)
func lockUser(ctx context.Context, tx db, domainID, userID int64) error {
	q := "SELECT 1 FROM users WHERE domain_id = ? AND id = ?"
	if tx.pg {
		q += " FOR NO KEY UPDATE"
	}
	found, err := tx.exists(ctx, q, domainID, userID)
	if err != nil {
		return err
	}
	if !found {
		return lms.NotFoundf("user %d not found", userID)
	}
	return nil
}

// userTotal sums the user's ledger.
func userTotal(ctx context.Context, d db, domainID, userID int64) (int64, error) {
	return d.count(ctx, "SELECT CAST(COALESCE(SUM(points), 0) AS BIGINT) FROM points_ledger WHERE domain_id = ? AND user_id = ?",
		domainID, userID)
}

// evaluateBadges awards the user every badge of the domain whose
// points_required their total reaches and that they do not have yet. The
// caller holds the user's lock; the unique index on (user_id, badge_id)
// and ON CONFLICT DO NOTHING keep a badge from being awarded twice even so.
func evaluateBadges(ctx context.Context, tx db, domainID, userID int64, at time.Time) (PointsResult, error) {
	res := PointsResult{UserID: userID, Awarded: []Badge{}}
	var err error
	res.Total, err = userTotal(ctx, tx, domainID, userID)
	if err != nil {
		return res, err
	}
	rows, err := tx.query(ctx, `SELECT b.id, b.description, b.points_required FROM badges b
		WHERE b.domain_id = ? AND b.points_required <= ?
		AND NOT EXISTS (SELECT 1 FROM user_badges ub WHERE ub.user_id = ? AND ub.badge_id = b.id)
		ORDER BY b.points_required, b.id`, domainID, res.Total, userID)
	if err != nil {
		return res, err
	}
	var due []Badge
	for rows.Next() {
		var b Badge
		if err := rows.Scan(&b.ID, &b.Description, &b.PointsRequired); err != nil {
			rows.Close()
			return res, err
		}
		due = append(due, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, err
	}
	for _, b := range due {
		r, err := tx.exec(ctx, `INSERT INTO user_badges (domain_id, user_id, badge_id, awarded_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (user_id, badge_id) DO NOTHING`, domainID, userID, b.ID, formatTime(at))
		if err != nil {
			return res, mapErr(err)
		}
		if n, _ := r.RowsAffected(); n == 1 {
			b.AwardedAt = at
			res.Awarded = append(res.Awarded, b)
			if err := emit(ctx, tx, domainID, event.BadgeAwardedEvent(userID, b.ID, b.Description, b.PointsRequired, at)); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// EvaluateBadges returns the user's total and awards every badge it
// reaches that they do not have yet.
func (s *Store) EvaluateBadges(ctx context.Context, domainID, userID int64) (PointsResult, error) {
	var res PointsResult
	err := s.tx(ctx, func(tx db) error {
		if err := lockUser(ctx, tx, domainID, userID); err != nil {
			return err
		}
		var err error
		res, err = evaluateBadges(ctx, tx, domainID, userID, s.now())
		return err
	})
	return res, err
}

// UserPoints returns the user's total.
func (s *Store) UserPoints(ctx context.Context, domainID, userID int64) (int64, error) {
	d := s.read()
	found, err := d.exists(ctx, "SELECT 1 FROM users WHERE domain_id = ? AND id = ?", domainID, userID)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, lms.NotFoundf("user %d not found", userID)
	}
	return userTotal(ctx, d, domainID, userID)
}

const badgeCols = "id, description, points_required"

func scanBadge(row interface{ Scan(...any) error }) (Badge, error) {
	var b Badge
	err := row.Scan(&b.ID, &b.Description, &b.PointsRequired)
	return b, err
}

// CreateBadge adds a badge definition. It is awarded at users' next
// evaluation.
func (s *Store) CreateBadge(ctx context.Context, domainID int64, b Badge) (Badge, error) {
	err := s.tx(ctx, func(tx db) error {
		t := formatTime(s.now())
		var err error
		b.ID, err = tx.insert(ctx, `INSERT INTO badges (domain_id, description, points_required, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?)`, domainID, b.Description, b.PointsRequired, t, t)
		return err
	})
	return b, err
}

// Badge returns one badge definition of the domain.
func (s *Store) Badge(ctx context.Context, domainID, id int64) (Badge, error) {
	return badgeByID(ctx, s.read(), domainID, id)
}

func badgeByID(ctx context.Context, d db, domainID, id int64) (Badge, error) {
	b, err := scanBadge(d.queryRow(ctx, "SELECT "+badgeCols+" FROM badges WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Badge{}, lms.NotFoundf("badge %d not found", id)
	}
	return b, err
}

// BadgeUpdate names the fields UpdateBadge changes; nil leaves one as is.
type BadgeUpdate struct {
	Description    *string
	PointsRequired *int64
}

// UpdateBadge changes a badge definition and returns it. Users who already
// have the badge keep it.
func (s *Store) UpdateBadge(ctx context.Context, domainID, id int64, u BadgeUpdate) (Badge, error) {
	var b Badge
	err := s.tx(ctx, func(tx db) error {
		if err := lockRow(ctx, tx, "badges", domainID, id); err != nil {
			return err
		}
		var err error
		b, err = badgeByID(ctx, tx, domainID, id)
		if err != nil {
			return err
		}
		if u.Description != nil {
			b.Description = *u.Description
		}
		if u.PointsRequired != nil {
			b.PointsRequired = *u.PointsRequired
		}
		_, err = tx.exec(ctx, "UPDATE badges SET description = ?, points_required = ?, updated_at = ? WHERE domain_id = ? AND id = ?",
			b.Description, b.PointsRequired, formatTime(s.now()), domainID, id)
		return err
	})
	return b, err
}

// DeleteBadge deletes a badge definition; users who had it lose it (ON
// DELETE CASCADE).
func (s *Store) DeleteBadge(ctx context.Context, domainID, id int64) error {
	return s.tx(ctx, func(tx db) error {
		r, err := tx.exec(ctx, "DELETE FROM badges WHERE domain_id = ? AND id = ?", domainID, id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return lms.NotFoundf("badge %d not found", id)
		}
		return nil
	})
}

// ListBadges returns one page of the domain's badges by points_required
// then id, and how many there are.
func (s *Store) ListBadges(ctx context.Context, domainID int64, p Page) ([]Badge, int64, error) {
	d := s.read()
	total, err := d.count(ctx, "SELECT COUNT(*) FROM badges WHERE domain_id = ?", domainID)
	if err != nil {
		return nil, 0, err
	}
	rows, err := d.query(ctx, "SELECT "+badgeCols+" FROM badges WHERE domain_id = ? ORDER BY points_required, id LIMIT +? OFFSET +?",
		domainID, p.Limit, p.Offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Badge{}
	for rows.Next() {
		b, err := scanBadge(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, b)
	}
	return out, total, rows.Err()
}

// UserBadges returns the badges the user has earned, by points_required
// then id, with the time each was awarded.
func (s *Store) UserBadges(ctx context.Context, domainID, userID int64) ([]Badge, error) {
	d := s.read()
	found, err := d.exists(ctx, "SELECT 1 FROM users WHERE domain_id = ? AND id = ?", domainID, userID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, lms.NotFoundf("user %d not found", userID)
	}
	rows, err := d.query(ctx, `SELECT b.id, b.description, b.points_required, ub.awarded_at
		FROM user_badges ub JOIN badges b ON b.id = ub.badge_id
		WHERE ub.domain_id = ? AND ub.user_id = ? ORDER BY b.points_required, b.id`, domainID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Badge{}
	for rows.Next() {
		var b Badge
		if err := rows.Scan(&b.ID, &b.Description, &b.PointsRequired, timeCol(&b.AwardedAt)); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// LeaderboardQuery selects the ledger rows a leaderboard sums.
type LeaderboardQuery struct {
	// Since keeps ledger rows created at or after it; zero keeps all.
	Since time.Time
}

// Leaderboard ranks the domain's users who have ledger rows since q.Since
// by the sum of those rows, highest first, ties by user id ascending, and
// returns one page and the number of ranked users.
func (s *Store) Leaderboard(ctx context.Context, domainID int64, q LeaderboardQuery, p Page) ([]LeaderboardEntry, int64, error) {
	where := "l.domain_id = ?"
	args := []any{domainID}
	if !q.Since.IsZero() {
		where += " AND l.created_at >= ?"
		args = append(args, formatTime(q.Since))
	}
	d := s.read()
	total, err := d.count(ctx, "SELECT COUNT(DISTINCT l.user_id) FROM points_ledger l WHERE "+where, args...)
	if err != nil {
		return nil, 0, err
	}
	rows, err := d.query(ctx, `SELECT l.user_id, u.name, CAST(SUM(l.points) AS BIGINT) AS total_points, MAX(l.created_at)
		FROM points_ledger l JOIN users u ON u.id = l.user_id
		WHERE `+where+`
		GROUP BY l.user_id, u.name
		ORDER BY total_points DESC, l.user_id ASC
		LIMIT +? OFFSET +?`, append(args, p.Limit, p.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []LeaderboardEntry{}
	for rows.Next() {
		var e LeaderboardEntry
		if err := rows.Scan(&e.UserID, &e.Name, &e.Points, timeCol(&e.Latest)); err != nil {
			return nil, 0, err
		}
		e.Rank = int64(p.Offset + len(out) + 1)
		out = append(out, e)
	}
	return out, total, rows.Err()
}
