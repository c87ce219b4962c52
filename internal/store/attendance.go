package store

import (
	"context"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

// AddAttendance appends join/leave events of a class.
func (s *Store) AddAttendance(ctx context.Context, domainID int64, events ...lms.AttendanceEvent) error {
	return s.AddFencedAttendance(ctx, domainID, Fence{}, events...)
}

// AddFencedAttendance appends join/leave events of a live room under its
// lease f: refused with ErrFenced when the node no longer holds it.
func (s *Store) AddFencedAttendance(ctx context.Context, domainID int64, f Fence, events ...lms.AttendanceEvent) error {
	return s.tx(ctx, func(tx db) error {
		if err := tx.checkFence(ctx, f); err != nil {
			return err
		}
		for _, e := range events {
			if e.Kind != lms.AttendanceJoin && e.Kind != lms.AttendanceLeave {
				return lms.Invalidf("kind", "must be join or leave")
			}
			ok, err := itemExists(ctx, tx, domainID, lms.KindClass, e.ClassID)
			if err != nil {
				return err
			}
			if !ok {
				return lms.NotFoundf("live class %d not found", e.ClassID)
			}
			if _, err := tx.exec(ctx, `INSERT INTO attendance_events (domain_id, class_id, occurrence_seq, user_ref,
				user_name, is_teacher, kind, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				domainID, e.ClassID, e.OccurrenceSeq, e.UserRef, e.UserName, lms.Flag(e.IsTeacher), e.Kind, formatTime(e.At)); err != nil {
				return err
			}
			if err := emit(ctx, tx, domainID, event.AttendanceEvent(e)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Attendance returns a class's events in time order, optionally for one
// user.
func (s *Store) Attendance(ctx context.Context, domainID, classID int64, userRef string) ([]lms.AttendanceEvent, error) {
	q := `SELECT class_id, occurrence_seq, user_ref, user_name, is_teacher, kind, at FROM attendance_events
		WHERE domain_id = ? AND class_id = ?`
	args := []any{domainID, classID}
	if userRef != "" {
		q += " AND user_ref = ?"
		args = append(args, userRef)
	}
	rows, err := s.read().query(ctx, q+" ORDER BY at, id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.AttendanceEvent
	for rows.Next() {
		var e lms.AttendanceEvent
		if err := rows.Scan(&e.ClassID, &e.OccurrenceSeq, &e.UserRef, &e.UserName, &e.IsTeacher, &e.Kind, timeCol(&e.At)); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
