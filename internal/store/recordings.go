package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

const recordingCols = `id, class_id, user_id, name, fname, blob_key, content_type, size, status, date_recorded, created_at,
	state, duration_ms, occurrence_seq, segment, export_state, export_progress`

func scanRecording(row interface{ Scan(...any) error }) (lms.Recording, error) {
	var r lms.Recording
	err := row.Scan(&r.ID, &r.ClassID, &r.UserID, &r.Name, &r.FName, &r.BlobKey, &r.ContentType, &r.Size,
		&r.Status, &r.DateRecorded, timeCol(&r.CreatedAt), &r.State, &r.DurationMS, &r.OccurrenceSeq, &r.Segment, &r.ExportState,
		&r.ExportProgress)
	return r, err
}

// AddRecording records a file already written to the blob store.
func (s *Store) AddRecording(ctx context.Context, domainID int64, r lms.Recording) (lms.Recording, error) {
	return s.AddFencedRecording(ctx, domainID, Fence{}, r)
}

// AddFencedRecording records a live room's recording (segment) under the
// room's lease f: refused with ErrFenced when the node no longer holds it.
func (s *Store) AddFencedRecording(ctx context.Context, domainID int64, f Fence, r lms.Recording) (lms.Recording, error) {
	r.CreatedAt = s.now()
	err := s.tx(ctx, func(tx db) error {
		if err := tx.checkFence(ctx, f); err != nil {
			return err
		}
		ok, err := itemExists(ctx, tx, domainID, lms.KindClass, r.ClassID)
		if err != nil {
			return err
		}
		if !ok {
			return lms.NotFoundf("live class %d not found", r.ClassID)
		}
		if r.State == "" {
			r.State = lms.RecordingReady
		}
		r.ID, err = tx.insert(ctx, `INSERT INTO recordings (domain_id, class_id, user_id, name, fname, blob_key,
			content_type, size, status, date_recorded, created_at, state, duration_ms, occurrence_seq, segment)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			domainID, r.ClassID, r.UserID, r.Name, r.FName, r.BlobKey, r.ContentType, r.Size, r.Status, r.DateRecorded,
			formatTime(r.CreatedAt), r.State, r.DurationMS, r.OccurrenceSeq, r.Segment)
		if err != nil || r.State != lms.RecordingReady {
			return err
		}
		return emit(ctx, tx, domainID, event.RecordingReadyEvent(r))
	})
	return r, err
}

// Recording returns one recording of the domain.
func (s *Store) Recording(ctx context.Context, domainID, id int64) (lms.Recording, error) {
	r, err := scanRecording(s.read().queryRow(ctx, "SELECT "+recordingCols+" FROM recordings WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return lms.Recording{}, lms.NotFoundf("recording %d not found", id)
	}
	return r, err
}

// RecordingOwner says which domain a recording belongs to, for the
// signed download links (which carry the domain id) and for operators.
func (s *Store) RecordingOwner(ctx context.Context, id int64) (int64, error) {
	var d int64
	err := s.read().queryRow(ctx, "SELECT domain_id FROM recordings WHERE id = ?", id).Scan(&d)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, lms.NotFoundf("recording %d not found", id)
	}
	return d, err
}

// ClassRecordings lists a class's recordings by id; search, when set,
// matches the file names (partial, case-insensitive).
func (s *Store) ClassRecordings(ctx context.Context, domainID, classID int64, search string) ([]lms.Recording, error) {
	q := "SELECT " + recordingCols + " FROM recordings WHERE domain_id = ? AND class_id = ?"
	args := []any{domainID, classID}
	if search != "" {
		q += ` AND (` + s.read().fold("name") + likeContains + ` OR ` + s.read().fold("fname") + likeContains + `)`
		args = append(args, likePattern(search), likePattern(search))
	}
	rows, err := s.read().query(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.Recording
	for rows.Next() {
		r, err := scanRecording(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ToggleRecordingStatus flips a recording between 1 (published) and 0 and
// returns the new status.
func (s *Store) ToggleRecordingStatus(ctx context.Context, domainID, id int64) (int, error) {
	var status int
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "UPDATE recordings SET status = 1 - status WHERE domain_id = ? AND id = ?", domainID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.NotFoundf("recording %d not found", id)
		}
		return tx.queryRow(ctx, "SELECT status FROM recordings WHERE domain_id = ? AND id = ?", domainID, id).Scan(&status)
	})
	return status, err
}

// DeleteRecording deletes the row and returns it so the caller can remove
// the file.
func (s *Store) DeleteRecording(ctx context.Context, domainID, id int64) (lms.Recording, error) {
	var r lms.Recording
	err := s.tx(ctx, func(tx db) error {
		var err error
		r, err = scanRecording(tx.queryRow(ctx, "SELECT "+recordingCols+" FROM recordings WHERE domain_id = ? AND id = ?", domainID, id))
		if errors.Is(err, sql.ErrNoRows) {
			return lms.NotFoundf("recording %d not found", id)
		}
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, "DELETE FROM recordings WHERE domain_id = ? AND id = ?", domainID, id)
		return err
	})
	return r, err
}

// ClassOwner says which domain a class belongs to (for operator commands
// that name a class by its id alone).
func (s *Store) ClassOwner(ctx context.Context, classID int64) (int64, error) {
	var d int64
	err := s.read().queryRow(ctx, "SELECT domain_id FROM live_classes WHERE id = ?", classID).Scan(&d)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, lms.NotFoundf("live class %d not found", classID)
	}
	return d, err
}

// FinishRecording writes what a recording became: its state, main file,
// duration and size, and its files (added to those it has).
func (s *Store) FinishRecording(ctx context.Context, domainID int64, r lms.Recording, files []lms.RecordingFile) error {
	return s.FinishFencedRecording(ctx, domainID, Fence{}, r, files)
}

// FinishFencedRecording is FinishRecording under a live room's lease f:
// refused with ErrFenced when the node no longer holds it.
func (s *Store) FinishFencedRecording(ctx context.Context, domainID int64, f Fence, r lms.Recording, files []lms.RecordingFile) error {
	return s.tx(ctx, func(tx db) error {
		if err := tx.checkFence(ctx, f); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `UPDATE recordings SET state = ?, blob_key = ?, name = ?, content_type = ?, size = ?, duration_ms = ?
			WHERE domain_id = ? AND id = ?`, r.State, r.BlobKey, r.Name, r.ContentType, r.Size, r.DurationMS, domainID, r.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.NotFoundf("recording %d not found", r.ID)
		}
		for _, f := range files {
			if _, err := tx.insert(ctx, `INSERT INTO recording_files (domain_id, recording_id, role, blob_key, name, content_type,
				user_ref, label, start_ms, duration_ms, width, height, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				domainID, r.ID, f.Role, f.BlobKey, f.Name, f.ContentType, f.UserRef, f.Label, f.StartMS, f.DurationMS,
				f.Width, f.Height, f.Size); err != nil {
				return err
			}
		}
		if r.State != lms.RecordingReady {
			return nil
		}
		return emit(ctx, tx, domainID, event.RecordingReadyEvent(r))
	})
}

// RecordingFiles returns a recording's files in order.
func (s *Store) RecordingFiles(ctx context.Context, domainID, recordingID int64) ([]lms.RecordingFile, error) {
	rows, err := s.read().query(ctx, `SELECT id, recording_id, role, blob_key, name, content_type, user_ref, label, start_ms,
		duration_ms, width, height, size FROM recording_files WHERE domain_id = ? AND recording_id = ? ORDER BY id`, domainID, recordingID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.RecordingFile
	for rows.Next() {
		var f lms.RecordingFile
		if err := rows.Scan(&f.ID, &f.RecordingID, &f.Role, &f.BlobKey, &f.Name, &f.ContentType, &f.UserRef, &f.Label,
			&f.StartMS, &f.DurationMS, &f.Width, &f.Height, &f.Size); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// RecordingFilesOfRole returns, in one query, the first file of role
// (by id) of each of the recordings ids that has one, by recording id.
func (s *Store) RecordingFilesOfRole(ctx context.Context, domainID int64, ids []int64, role string) (map[int64]lms.RecordingFile, error) {
	out := make(map[int64]lms.RecordingFile)
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{domainID, role}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := s.read().query(ctx, `SELECT id, recording_id, role, blob_key, name, content_type, user_ref, label, start_ms,
		duration_ms, width, height, size FROM recording_files WHERE domain_id = ? AND role = ? AND recording_id IN (`+placeholders(len(ids))+`)
		ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var f lms.RecordingFile
		if err := rows.Scan(&f.ID, &f.RecordingID, &f.Role, &f.BlobKey, &f.Name, &f.ContentType, &f.UserRef, &f.Label,
			&f.StartMS, &f.DurationMS, &f.Width, &f.Height, &f.Size); err != nil {
			return nil, err
		}
		if _, ok := out[f.RecordingID]; !ok {
			out[f.RecordingID] = f
		}
	}
	return out, rows.Err()
}

// SetRecordingRetention sets how many days a domain keeps recordings (0:
// for ever).
func (s *Store) SetRecordingRetention(ctx context.Context, domainID int64, days int) error {
	if days < 0 || days > 36500 {
		return lms.Invalidf("days", "must be 0 (keep for ever) to 36500")
	}
	return s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "UPDATE domains SET recording_retention_days = ? WHERE id = ?", days, domainID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.NotFoundf("domain %d not found", domainID)
		}
		return nil
	})
}

// ExpiredRecording is a recording past its domain's retention.
type ExpiredRecording struct {
	DomainID  int64
	Recording lms.Recording
}

// ExpiredRecordings returns up to limit finished recordings older than
// their domain's retention at instant now.
func (s *Store) ExpiredRecordings(ctx context.Context, now time.Time, limit int) ([]ExpiredRecording, error) {
	rows, err := s.read().query(ctx, `SELECT d.id, d.recording_retention_days, `+prefixCols("r.", recordingCols)+`
		FROM recordings r JOIN domains d ON d.id = r.domain_id
		WHERE d.recording_retention_days > 0 AND r.state <> ? ORDER BY r.created_at, r.id`, lms.RecordingActive)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ExpiredRecording
	for rows.Next() && len(out) < limit {
		var e ExpiredRecording
		var days int
		r := &e.Recording
		if err := rows.Scan(&e.DomainID, &days, &r.ID, &r.ClassID, &r.UserID, &r.Name, &r.FName, &r.BlobKey, &r.ContentType,
			&r.Size, &r.Status, &r.DateRecorded, timeCol(&r.CreatedAt), &r.State, &r.DurationMS, &r.OccurrenceSeq, &r.Segment,
			&r.ExportState, &r.ExportProgress); err != nil {
			return nil, err
		}
		if r.CreatedAt.Before(now.AddDate(0, 0, -days)) {
			out = append(out, e)
		}
	}
	return out, rows.Err()
}

// RecordingKeys lists the blobs of a recording: its main file and every
// file of it.
func (s *Store) RecordingKeys(ctx context.Context, domainID int64, r lms.Recording) ([]string, error) {
	keys := []string{r.BlobKey}
	files, err := s.RecordingFiles(ctx, domainID, r.ID)
	for _, f := range files {
		if !slices.Contains(keys, f.BlobKey) {
			keys = append(keys, f.BlobKey)
		}
	}
	return keys, err
}

// prefixCols puts prefix before each of a comma-separated column list.
func prefixCols(prefix, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// SetRecordingExport writes the export's state and progress, and adds its
// file when it is done.
func (s *Store) SetRecordingExport(ctx context.Context, domainID, id int64, state string, progress int, file *lms.RecordingFile) error {
	return s.tx(ctx, func(tx db) error {
		if _, err := tx.exec(ctx, "UPDATE recordings SET export_state = ?, export_progress = ? WHERE domain_id = ? AND id = ?",
			state, progress, domainID, id); err != nil {
			return err
		}
		if file == nil {
			return nil
		}
		_, err := tx.insert(ctx, `INSERT INTO recording_files (domain_id, recording_id, role, blob_key, name, content_type,
			user_ref, label, start_ms, duration_ms, width, height, size) VALUES (?, ?, ?, ?, ?, ?, '', '', 0, ?, ?, ?, ?)`,
			domainID, id, file.Role, file.BlobKey, file.Name, file.ContentType, file.DurationMS, file.Width, file.Height, file.Size)
		return err
	})
}

// NextRecordingSegment is the segment number a new recorder of a sitting
// starts at: one past the sitting's last recorded segment (0 for none), so
// that a recording that goes on after its node died continues its parts.
func (s *Store) NextRecordingSegment(ctx context.Context, domainID, classID int64, seq int) (int, error) {
	n, err := s.read().count(ctx, `SELECT COALESCE(MAX(segment) + 1, 0) FROM recordings
		WHERE domain_id = ? AND class_id = ? AND occurrence_seq = ?`, domainID, classID, seq)
	return int(n), err
}

// FailActiveRecordings marks failed the recordings of a sitting still
// shown as recording: their node died before it finished them, and their
// files stayed on its disk. It returns how many.
func (s *Store) FailActiveRecordings(ctx context.Context, k RoomKey) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, `UPDATE recordings SET state = ? WHERE domain_id = ? AND class_id = ? AND occurrence_seq = ? AND state = ?`,
			lms.RecordingFailed, k.Domain, k.Class, k.Sitting, lms.RecordingActive)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
