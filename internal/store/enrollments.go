package store

import (
	"context"
	"fmt"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

// Enrollment is the outcome of Enroll.
type Enrollment struct {
	User lms.User
	// Already is true when the user was enrolled directly before: nothing
	// changed.
	Already bool
}

// enrollEvents are the point-rule events of direct enrollments.
var enrollEvents = map[string]string{
	lms.KindCourse: EventCourseEnrolled,
	lms.KindTest:   EventTestEnrolled,
	lms.KindClass:  EventClassEnrolled,
}

// Enroll enrolls the user with email in an item directly, and awards the
// domain's points for it in the same transaction (direct enrollments only:
// the items a bundle gives earn none). Enrolling in a
// bundle also enrolls in each of its items, marked as coming from the
// bundle, so that unenrolling from the bundle undoes exactly that. An
// unknown email or item is not found.
func (s *Store) Enroll(ctx context.Context, domainID int64, kind string, itemID int64, email string) (Enrollment, error) {
	var e Enrollment
	err := s.tx(ctx, func(tx db) error {
		var err error
		if e.User, err = s.userByEmail(ctx, tx, domainID, email); err != nil {
			return err
		}
		if err := mustExist(ctx, tx, domainID, kind, itemID); err != nil {
			return err
		}
		e.Already, err = s.enrollUser(ctx, tx, domainID, e.User.ID, kind, itemID)
		return err
	})
	return e, err
}

// enrollUser is Enroll inside the caller's transaction for a known user and
// an existing item: it reports already when the user was enrolled directly
// before (nothing changed).
func (s *Store) enrollUser(ctx context.Context, tx db, domainID, userID int64, kind string, itemID int64) (already bool, err error) {
	at := formatTime(s.now())
	res, err := tx.exec(ctx, `INSERT INTO enrollments (domain_id, user_id, item_kind, item_id, source_bundle_id, created_at)
		VALUES (?, ?, ?, ?, 0, ?) ON CONFLICT DO NOTHING`, domainID, userID, kind, itemID, at)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return true, nil
	}
	if err := emit(ctx, tx, domainID, event.EnrollmentCreatedEvent(userID, kind, itemID)); err != nil {
		return false, err
	}
	if rule, ok := enrollEvents[kind]; ok {
		return false, s.awardEvent(ctx, tx, domainID, userID, rule, fmt.Sprintf("enrolled in %s %d", itemNames[kind], itemID))
	}
	_, err = tx.exec(ctx, `INSERT INTO enrollments (domain_id, user_id, item_kind, item_id, source_bundle_id, created_at)
		SELECT domain_id, ?, item_kind, item_id, bundle_id, ? FROM bundle_items WHERE domain_id = ? AND bundle_id = ?
		ON CONFLICT DO NOTHING`, userID, at, domainID, itemID)
	return false, err
}

// Unenroll removes the user's direct enrollment in an item; for a bundle,
// also the enrollments in its items that came from it. Enrollments the
// user has in the same items directly or through another bundle stay. A
// user who is not directly enrolled is a conflict.
func (s *Store) Unenroll(ctx context.Context, domainID int64, kind string, itemID int64, email string) (lms.User, error) {
	var u lms.User
	err := s.tx(ctx, func(tx db) error {
		var err error
		if u, err = s.userByEmail(ctx, tx, domainID, email); err != nil {
			return err
		}
		if err := mustExist(ctx, tx, domainID, kind, itemID); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `DELETE FROM enrollments WHERE domain_id = ? AND user_id = ? AND item_kind = ? AND item_id = ?
			AND source_bundle_id = 0`, domainID, u.ID, kind, itemID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.Conflictf("%s is not enrolled in %s %d", u.Email, itemNames[kind], itemID)
		}
		if kind == lms.KindBundle {
			if _, err = tx.exec(ctx, "DELETE FROM enrollments WHERE domain_id = ? AND user_id = ? AND source_bundle_id = ?",
				domainID, u.ID, itemID); err != nil {
				return err
			}
		}
		return emit(ctx, tx, domainID, event.EnrollmentDeletedEvent(u.ID, kind, itemID))
	})
	return u, err
}

// IsEnrolled reports whether a user is enrolled in an item, directly or
// through a bundle.
func (s *Store) IsEnrolled(ctx context.Context, domainID, userID int64, kind string, itemID int64) (bool, error) {
	return s.read().exists(ctx, "SELECT 1 FROM enrollments WHERE domain_id = ? AND user_id = ? AND item_kind = ? AND item_id = ?",
		domainID, userID, kind, itemID)
}

// EnrollmentCount counts enrollments of one item kind, directly or
// through a bundle, each (user, item) pair once:
//   - userID and itemID: 1 if that user is enrolled in that item, else 0;
//   - userID only: the items of the kind the user is enrolled in;
//   - itemID only: the users enrolled in the item;
//   - neither: the users enrolled in at least one item of the kind.
//
// A userID or itemID the domain does not have is not found.
func (s *Store) EnrollmentCount(ctx context.Context, domainID int64, kind string, userID, itemID int64) (int64, error) {
	d := s.read()
	if userID != 0 {
		if _, err := user(ctx, d, domainID, userID); err != nil {
			return 0, err
		}
	}
	if itemID != 0 {
		if err := mustExist(ctx, d, domainID, kind, itemID); err != nil {
			return 0, err
		}
	}
	where := "domain_id = ? AND item_kind = ?"
	args := []any{domainID, kind}
	if userID != 0 {
		where += " AND user_id = ?"
		args = append(args, userID)
	}
	if itemID != 0 {
		where += " AND item_id = ?"
		args = append(args, itemID)
	}
	what := "DISTINCT user_id"
	if userID != 0 {
		what = "DISTINCT item_id"
	}
	return d.count(ctx, "SELECT COUNT("+what+") FROM enrollments WHERE "+where, args...)
}
