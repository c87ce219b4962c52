package store

import "context"

// lockRow takes a row lock on the domain's row id of table for the rest of
// the transaction, so that a read-modify-write (an update of some fields
// that rewrites the row) cannot lose a concurrent one: on PostgreSQL the
// second writer waits for the first to commit and then reads its result.
// SQLite needs nothing: its write transactions begin IMMEDIATE, one at a
// time, so their reads already see every committed write.
func lockRow(ctx context.Context, tx db, table string, domainID, id int64) error {
	if !tx.pg {
		return nil
	}
	_, err := tx.exec(ctx, "SELECT 1 FROM "+table+" WHERE domain_id = ? AND id = ? FOR UPDATE", domainID, id)
	return err
}
