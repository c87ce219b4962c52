package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrBackupPostgres is returned by BackupSQLite on PostgreSQL, whose own
// tools (pg_dump, pg_restore) make consistent copies.
var ErrBackupPostgres = errors.New("the store is PostgreSQL: back it up with pg_dump (and copy the blob bucket); see docs/ops/backup.md")

// BackupSQLite writes a consistent copy of the SQLite database to path,
// which must not exist yet. It runs VACUUM INTO in one read transaction, so
// it sees the database as of one moment while other connections (and other
// processes) keep reading and writing. It runs on the write connection
// (the read pool is query_only, which refuses VACUUM), so in this process
// writes wait for it; the backup command is a process of its own.
func (s *Store) BackupSQLite(ctx context.Context, path string) error {
	if s.pg {
		return ErrBackupPostgres
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("backup: %s already exists", path)
	}
	if _, err := s.wdb.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		return fmt.Errorf("backup: vacuum into %s: %w", path, err)
	}
	return nil
}

// SchemaVersion is the newest migration applied to the store (0 when none).
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	d := s.read()
	ok, err := d.exists(ctx, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
	if s.pg {
		ok, err = d.exists(ctx, "SELECT 1 FROM information_schema.tables WHERE table_name = 'schema_migrations'")
	}
	if err != nil || !ok {
		return 0, err
	}
	return d.count(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
}

// CheckSQLiteFile opens the SQLite database at path read-only and runs
// SQLite's integrity check on it.
func CheckSQLiteFile(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", SQLiteDSN(path)+"&mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("%s is not a readable SQLite database: %w", filepath.Base(path), err)
	}
	if res != "ok" {
		return fmt.Errorf("%s fails SQLite's integrity check: %s", filepath.Base(path), res)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM domains").Scan(&n); err != nil {
		return fmt.Errorf("%s is not a Lectern database: %w", filepath.Base(path), err)
	}
	return nil
}
