package store

import (
	"context"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// The learner portal's view of a user's enrollments in tests and live
// classes (courses go through the learn service's dashboard).

// EnrolledTests returns the published tests a user is enrolled in,
// directly or through a bundle, by name.
func (s *Store) EnrolledTests(ctx context.Context, domainID, userID int64) ([]lms.Test, error) {
	rows, err := s.read().query(ctx, "SELECT "+prefixCols("t.", testCols)+` FROM tests t
		WHERE t.domain_id = ? AND t.status = ? AND t.id IN (SELECT item_id FROM enrollments
			WHERE domain_id = ? AND user_id = ? AND item_kind = ?)
		ORDER BY t.name, t.id`, domainID, lms.TestPublished, domainID, userID, lms.KindTest)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.Test
	for rows.Next() {
		t, err := scanTest(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// EnrolledClasses returns the live classes a user is enrolled in, directly
// or through a bundle, that have a sitting not cancelled and not over at
// now, with their occurrences; the caller orders them by sitting.
func (s *Store) EnrolledClasses(ctx context.Context, domainID, userID int64, now time.Time) ([]lms.LiveClass, error) {
	d := s.read()
	rows, err := d.query(ctx, "SELECT "+classSittingsCols+` FROM live_classes
		WHERE domain_id = ? AND id IN (SELECT item_id FROM enrollments
			WHERE domain_id = ? AND user_id = ? AND item_kind = ?)
		AND EXISTS (SELECT 1 FROM class_occurrences o WHERE o.domain_id = live_classes.domain_id
			AND o.class_id = live_classes.id AND o.cancelled = 0 AND o.ends_at > ?)
		ORDER BY id`, domainID, domainID, userID, lms.KindClass, formatTime(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.LiveClass
	for rows.Next() {
		c, err := scanClassSittings(rows, true)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
