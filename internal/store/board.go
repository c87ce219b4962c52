package store

import (
	"context"

	"github.com/lectern-lms/lectern/internal/lms"
)

// SaveBoardObjects writes objects of a sitting's board, replacing any
// with the same id, in one transaction.
func (s *Store) SaveBoardObjects(ctx context.Context, domainID, classID int64, seq int, objs []lms.BoardObject) error {
	return s.tx(ctx, func(tx db) error {
		for _, o := range objs {
			_, err := tx.exec(ctx, `INSERT INTO room_board_objects (domain_id, class_id, occurrence_seq, object_id, page, ord, data)
				VALUES (?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (domain_id, class_id, occurrence_seq, object_id) DO UPDATE SET page = excluded.page,
					ord = excluded.ord, data = excluded.data`,
				domainID, classID, seq, o.ID, o.Page, o.Ord, string(o.Data))
			if err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
}

// DeleteBoardObjects removes objects of a sitting's board by id.
func (s *Store) DeleteBoardObjects(ctx context.Context, domainID, classID int64, seq int, ids []string) error {
	return s.tx(ctx, func(tx db) error {
		for _, id := range ids {
			if _, err := tx.exec(ctx, `DELETE FROM room_board_objects WHERE domain_id = ? AND class_id = ? AND occurrence_seq = ?
				AND object_id = ?`, domainID, classID, seq, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClearBoardPage removes every object of one page of a sitting's board.
func (s *Store) ClearBoardPage(ctx context.Context, domainID, classID int64, seq int, page string) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, `DELETE FROM room_board_objects WHERE domain_id = ? AND class_id = ? AND occurrence_seq = ?
			AND page = ?`, domainID, classID, seq, page)
		return err
	})
}

// BoardObjects returns a sitting's board objects in drawing order.
func (s *Store) BoardObjects(ctx context.Context, domainID, classID int64, seq int) ([]lms.BoardObject, error) {
	rows, err := s.read().query(ctx, `SELECT object_id, page, ord, data FROM room_board_objects
		WHERE domain_id = ? AND class_id = ? AND occurrence_seq = ? ORDER BY ord, object_id`, domainID, classID, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.BoardObject
	for rows.Next() {
		var o lms.BoardObject
		var data string
		if err := rows.Scan(&o.ID, &o.Page, &o.Ord, &data); err != nil {
			return nil, err
		}
		o.Data = []byte(data)
		out = append(out, o)
	}
	return out, rows.Err()
}
