package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

// AddRoomChat stores a chat message of a sitting and returns it with its
// id.
func (s *Store) AddRoomChat(ctx context.Context, domainID int64, m lms.ChatMessage) (lms.ChatMessage, error) {
	err := s.tx(ctx, func(tx db) error {
		var err error
		m.ID, err = tx.insert(ctx, `INSERT INTO room_chat (domain_id, class_id, occurrence_seq, from_ref, from_name, to_ref, body, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, domainID, m.ClassID, m.OccurrenceSeq, m.From, m.FromName, m.To, m.Text, formatTime(m.At))
		if errors.Is(err, errForeignKey) {
			return lms.NotFoundf("live class %d not found", m.ClassID)
		}
		return err
	})
	return m, err
}

// RoomChat returns the last limit messages of a sitting, oldest first.
func (s *Store) RoomChat(ctx context.Context, domainID, classID int64, seq, limit int) ([]lms.ChatMessage, error) {
	rows, err := s.read().query(ctx, `SELECT id, from_ref, from_name, to_ref, body, at FROM room_chat
		WHERE domain_id = ? AND class_id = ? AND occurrence_seq = ? ORDER BY id DESC LIMIT +?`, domainID, classID, seq, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.ChatMessage
	for rows.Next() {
		m := lms.ChatMessage{ClassID: classID, OccurrenceSeq: seq}
		if err := rows.Scan(&m.ID, &m.From, &m.FromName, &m.To, &m.Text, timeCol(&m.At)); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, rows.Err()
}

// AddRoomRemoval records that a user was removed from a sitting. Removing
// the same user twice is not an error.
func (s *Store) AddRoomRemoval(ctx context.Context, domainID, classID int64, seq int, userRef string, at time.Time) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, `INSERT INTO room_removals (domain_id, class_id, occurrence_seq, user_ref, at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, domainID, classID, seq, userRef, formatTime(at))
		return err
	})
}

// RoomRemovals returns the users removed from a sitting.
func (s *Store) RoomRemovals(ctx context.Context, domainID, classID int64, seq int) ([]string, error) {
	rows, err := s.read().query(ctx, `SELECT user_ref FROM room_removals
		WHERE domain_id = ? AND class_id = ? AND occurrence_seq = ? ORDER BY at, user_ref`, domainID, classID, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ref string
		if err := rows.Scan(&ref); err != nil {
			return nil, err
		}
		out = append(out, ref)
	}
	return out, rows.Err()
}

// Sitting returns what the store keeps of a sitting's room; a sitting
// whose room never opened has zero values.
func (s *Store) Sitting(ctx context.Context, domainID, classID int64, seq int) (lms.Sitting, error) {
	st := lms.Sitting{ClassID: classID, OccurrenceSeq: seq}
	err := s.read().queryRow(ctx, `SELECT extended_minutes, opened_at, ended_at, board_page, presentation, draw_all, files_all, recording
		FROM room_sittings WHERE domain_id = ? AND class_id = ? AND occurrence_seq = ?`, domainID, classID, seq).Scan(&st.ExtendedMinutes,
		optTimeCol(&st.OpenedAt), optTimeCol(&st.EndedAt), &st.BoardPage, &st.Presentation, &st.DrawAll, &st.FilesAll, &st.Recording)
	if errors.Is(err, sql.ErrNoRows) {
		return lms.Sitting{ClassID: classID, OccurrenceSeq: seq}, nil
	}
	if err != nil {
		return st, err
	}
	return st, nil
}

// SaveSitting writes a sitting's room state, and the events (webhooks)
// the caller says the change raises, in the same transaction.
func (s *Store) SaveSitting(ctx context.Context, domainID int64, st lms.Sitting, events ...event.Event) error {
	return s.SaveFencedSitting(ctx, domainID, Fence{}, st, events...)
}

// SaveFencedSitting is SaveSitting under the room's lease f: refused with
// ErrFenced when the node no longer holds it.
func (s *Store) SaveFencedSitting(ctx context.Context, domainID int64, f Fence, st lms.Sitting, events ...event.Event) error {
	return s.tx(ctx, func(tx db) error {
		if err := tx.checkFence(ctx, f); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO room_sittings (domain_id, class_id, occurrence_seq, extended_minutes, opened_at, ended_at,
				board_page, presentation, draw_all, files_all, recording)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (domain_id, class_id, occurrence_seq) DO UPDATE SET extended_minutes = excluded.extended_minutes,
				opened_at = excluded.opened_at, ended_at = excluded.ended_at, board_page = excluded.board_page,
				presentation = excluded.presentation, draw_all = excluded.draw_all, files_all = excluded.files_all,
				recording = excluded.recording`,
			domainID, st.ClassID, st.OccurrenceSeq, st.ExtendedMinutes, formatOptionalTime(st.OpenedAt), formatOptionalTime(st.EndedAt),
			st.BoardPage, st.Presentation, lms.Flag(st.DrawAll), lms.Flag(st.FilesAll), st.Recording)
		if errors.Is(mapErr(err), errForeignKey) {
			return lms.NotFoundf("live class %d not found", st.ClassID)
		}
		if err != nil {
			return err
		}
		for _, ev := range events {
			if err := emit(ctx, tx, domainID, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

func formatOptionalTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

// CloseOpenAttendance writes a leave event at instant at for every join
// that has none, in every domain: a server that stopped without its rooms
// closing them (a crash, a kill) closes them at its restart. It returns how
// many sessions it closed.
func (s *Store) CloseOpenAttendance(ctx context.Context, at time.Time) (int, error) {
	closed := 0
	err := s.tx(ctx, func(tx db) error {
		var err error
		closed, err = closeAttendanceIn(ctx, tx, at, "")
		return err
	})
	return closed, err
}

// closeAttendanceIn writes, in tx, a leave event at instant at for every
// join without one among the attendance rows that where (a SQL condition
// on attendance_events, "" for all) selects, and returns how many it
// wrote.
func closeAttendanceIn(ctx context.Context, tx db, at time.Time, where string, args ...any) (int, error) {
	if where != "" {
		where = "WHERE " + where
	}
	type open struct {
		domain, class int64
		seq           int
		ref, name     string
		teacher, n    int
	}
	var opens []open
	err := scanRows(ctx, tx, `SELECT domain_id, class_id, occurrence_seq, user_ref, MAX(user_name), MAX(is_teacher),
		SUM(CASE WHEN kind = 'join' THEN 1 ELSE -1 END)
		FROM attendance_events `+where+` GROUP BY domain_id, class_id, occurrence_seq, user_ref
		HAVING SUM(CASE WHEN kind = 'join' THEN 1 ELSE -1 END) > 0`, args, func(r *sql.Rows) error {
		var o open
		if err := r.Scan(&o.domain, &o.class, &o.seq, &o.ref, &o.name, &o.teacher, &o.n); err != nil {
			return err
		}
		opens = append(opens, o)
		return nil
	})
	if err != nil {
		return 0, err
	}
	closed := 0
	for _, o := range opens {
		for range o.n {
			if _, err := tx.exec(ctx, `INSERT INTO attendance_events (domain_id, class_id, occurrence_seq, user_ref,
				user_name, is_teacher, kind, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				o.domain, o.class, o.seq, o.ref, o.name, o.teacher, lms.AttendanceLeave, formatTime(at)); err != nil {
				return closed, err
			}
			if err := emit(ctx, tx, o.domain, event.AttendanceEvent(lms.AttendanceEvent{ClassID: o.class, OccurrenceSeq: o.seq,
				UserRef: o.ref, UserName: o.name, IsTeacher: o.teacher != 0, Kind: lms.AttendanceLeave, At: at})); err != nil {
				return closed, err
			}
			closed++
		}
	}
	return closed, nil
}

// AwardClassAttended gives an LMS user the domain's class_attended points
// for a sitting, once: a second call for the same sitting gives nothing.
// It reports whether points were given (false also when the domain has no
// such rule or no LMS user with that id).
func (s *Store) AwardClassAttended(ctx context.Context, domainID, userID, classID int64, seq int) (bool, error) {
	reason := fmt.Sprintf("attended class %d, sitting %d", classID, seq)
	given := false
	err := s.tx(ctx, func(tx db) error {
		if err := lockUser(ctx, tx, domainID, userID); err != nil {
			if lms.IsNotFound(err) {
				return nil
			}
			return err
		}
		done, err := tx.exists(ctx, `SELECT 1 FROM points_ledger WHERE domain_id = ? AND user_id = ? AND event = ? AND reason = ?`,
			domainID, userID, EventClassAttended, reason)
		if err != nil || done {
			return err
		}
		before, err := tx.count(ctx, "SELECT COUNT(*) FROM points_ledger WHERE domain_id = ? AND user_id = ?", domainID, userID)
		if err != nil {
			return err
		}
		if err := s.awardEvent(ctx, tx, domainID, userID, EventClassAttended, reason); err != nil {
			return err
		}
		after, err := tx.count(ctx, "SELECT COUNT(*) FROM points_ledger WHERE domain_id = ? AND user_id = ?", domainID, userID)
		given = after > before
		return err
	})
	return given, err
}

// SaveRoomUser writes what a sitting's room keeps of one user (upserted),
// under the room's lease f.
func (s *Store) SaveRoomUser(ctx context.Context, f Fence, domainID, classID int64, seq int, u lms.RoomUser) error {
	var hand int64
	if !u.HandAt.IsZero() {
		hand = u.HandAt.UnixNano()
	}
	return s.tx(ctx, func(tx db) error {
		if err := tx.checkFence(ctx, f); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO room_users (domain_id, class_id, occurrence_seq, user_ref, hand_at, media, screen, draw, files)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (domain_id, class_id, occurrence_seq, user_ref) DO UPDATE SET hand_at = excluded.hand_at,
				media = excluded.media, screen = excluded.screen, draw = excluded.draw, files = excluded.files`,
			domainID, classID, seq, u.UserRef, hand, tristate(u.Media), tristate(u.Screen), tristate(u.Draw), tristate(u.Files))
		if errors.Is(mapErr(err), errForeignKey) {
			return lms.NotFoundf("live class %d not found", classID)
		}
		return err
	})
}

// RoomUsers returns what a sitting's room keeps of its users, the raised
// hands first in the order they went up.
func (s *Store) RoomUsers(ctx context.Context, domainID, classID int64, seq int) ([]lms.RoomUser, error) {
	rows, err := s.read().query(ctx, `SELECT user_ref, hand_at, media, screen, draw, files FROM room_users
		WHERE domain_id = ? AND class_id = ? AND occurrence_seq = ?
		ORDER BY CASE WHEN hand_at = 0 THEN 1 ELSE 0 END, hand_at, user_ref`, domainID, classID, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.RoomUser
	for rows.Next() {
		var u lms.RoomUser
		var hand int64
		var media, screen, draw, files int
		if err := rows.Scan(&u.UserRef, &hand, &media, &screen, &draw, &files); err != nil {
			return nil, err
		}
		if hand != 0 {
			u.HandAt = time.Unix(0, hand).UTC()
		}
		u.Media, u.Screen, u.Draw, u.Files = fromTristate(media), fromTristate(screen), fromTristate(draw), fromTristate(files)
		out = append(out, u)
	}
	return out, rows.Err()
}

// tristate stores an optional permission: -1 unset, 0 false, 1 true.
func tristate(b *bool) int {
	if b == nil {
		return -1
	}
	return lms.Flag(*b)
}

func fromTristate(v int) *bool {
	if v < 0 {
		return nil
	}
	b := v == 1
	return &b
}
