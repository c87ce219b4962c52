package store

import (
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// errUnique and errForeignKey are the dialect-neutral forms of constraint
// violations. mapErr produces them from driver error codes, never from
// message text.
var (
	errUnique     = errors.New("unique constraint violated")
	errForeignKey = errors.New("foreign key constraint violated")
)

// mapErr normalises driver errors: unique and foreign-key violations become
// errUnique and errForeignKey (wrapping the original). Other errors pass
// through.
func mapErr(err error) error {
	if err == nil || errors.Is(err, sql.ErrNoRows) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505":
			return errors.Join(errUnique, err)
		case "23503":
			return errors.Join(errForeignKey, err)
		}
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errors.Join(errUnique, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return errors.Join(errForeignKey, err)
		}
	}
	return err
}

// isUnique reports whether err is a unique-constraint violation.
func isUnique(err error) bool { return errors.Is(mapErr(err), errUnique) }
