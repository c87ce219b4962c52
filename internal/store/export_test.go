package store

import "context"

// Test-only access to the store, for the store's own tests.

// PointsHistory returns the user's ledger rows, oldest first.
func (s *Store) PointsHistory(ctx context.Context, domainID, userID int64) ([]PointsEntry, error) {
	d := s.read()
	rows, err := d.query(ctx, `SELECT id, user_id, points, reason, event, created_at FROM points_ledger
		WHERE domain_id = ? AND user_id = ? ORDER BY created_at, id`, domainID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []PointsEntry{}
	for rows.Next() {
		var e PointsEntry
		if err := rows.Scan(&e.ID, &e.UserID, &e.Points, &e.Reason, &e.Event, timeCol(&e.CreatedAt)); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
