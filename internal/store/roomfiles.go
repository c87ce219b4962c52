package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/lectern-lms/lectern/internal/lms"
)

const roomFileCols = `id, class_id, occurrence_seq, user_ref, user_name, name, content_type, kind, size, blob_key, status, created_at`

func scanRoomFile(sc interface{ Scan(...any) error }) (lms.RoomFile, error) {
	var f lms.RoomFile
	err := sc.Scan(&f.ID, &f.ClassID, &f.OccurrenceSeq, &f.UserRef, &f.UserName, &f.Name, &f.ContentType, &f.Kind,
		&f.Size, &f.BlobKey, &f.Status, timeCol(&f.CreatedAt))
	return f, err
}

// AddRoomFile records a shared file, refusing it with a conflict when the
// domain's shared files would then take more than quota bytes (0: no
// limit). Concurrent uploads are checked one after another.
func (s *Store) AddRoomFile(ctx context.Context, domainID int64, f lms.RoomFile, quota int64) (lms.RoomFile, error) {
	err := s.tx(ctx, func(tx db) error {
		if tx.pg {
			if _, err := tx.exec(ctx, "SELECT 1 FROM domains WHERE id = ? FOR UPDATE", domainID); err != nil {
				return err
			}
		}
		if quota > 0 {
			used, err := tx.count(ctx, "SELECT COALESCE(SUM(size), 0) FROM room_files WHERE domain_id = ?", domainID)
			if err != nil {
				return err
			}
			if used+f.Size > quota {
				return lms.Conflictf("the school's shared files would exceed its quota of %d MB", quota>>20)
			}
		}
		var err error
		f.ID, err = tx.insert(ctx, `INSERT INTO room_files (domain_id, class_id, occurrence_seq, user_ref, user_name, name,
			content_type, kind, size, blob_key, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			domainID, f.ClassID, f.OccurrenceSeq, f.UserRef, f.UserName, f.Name, f.ContentType, f.Kind, f.Size, f.BlobKey,
			f.Status, formatTime(f.CreatedAt))
		if errors.Is(err, errForeignKey) {
			return lms.NotFoundf("live class %d not found", f.ClassID)
		}
		return err
	})
	return f, err
}

// UpdateRoomFile writes a file's content type, size, blob and status (a
// conversion finished or failed).
func (s *Store) UpdateRoomFile(ctx context.Context, domainID int64, f lms.RoomFile) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, `UPDATE room_files SET content_type = ?, size = ?, blob_key = ?, status = ?, name = ?
			WHERE domain_id = ? AND id = ?`, f.ContentType, f.Size, f.BlobKey, f.Status, f.Name, domainID, f.ID)
		return err
	})
}

// RoomFile returns one shared file of the domain.
func (s *Store) RoomFile(ctx context.Context, domainID, id int64) (lms.RoomFile, error) {
	f, err := scanRoomFile(s.read().queryRow(ctx, "SELECT "+roomFileCols+" FROM room_files WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return f, lms.NotFoundf("file %d not found", id)
	}
	return f, err
}

// RoomFiles returns the files shared in a class, oldest first.
func (s *Store) RoomFiles(ctx context.Context, domainID, classID int64) ([]lms.RoomFile, error) {
	rows, err := s.read().query(ctx, "SELECT "+roomFileCols+" FROM room_files WHERE domain_id = ? AND class_id = ? ORDER BY id",
		domainID, classID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.RoomFile
	for rows.Next() {
		f, err := scanRoomFile(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
