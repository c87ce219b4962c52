package store

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// Case-insensitive search folds text the same way on both databases.
// SQLite's own LOWER() folds only ASCII ("Élodie" stays "Élodie"), so on
// SQLite searches call lectern_fold, a function registered here that is Go's
// strings.ToLower; PostgreSQL's LOWER() folds every letter in a UTF-8
// database (Lectern requires one) and gives the same results. The pattern
// searched for is folded by strings.ToLower too (likePattern).
//
// A stored folded column would also work, but every writer of the row (and
// future ones) would have to keep it in step, and existing rows would need a
// backfill that SQL alone cannot compute on SQLite.
func init() {
	err := sqlite.RegisterDeterministicScalarFunction("lectern_fold", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case nil:
			return nil, nil
		case string:
			return strings.ToLower(v), nil
		case []byte:
			return strings.ToLower(string(v)), nil
		default:
			return strings.ToLower(fmt.Sprint(v)), nil
		}
	})
	if err != nil {
		panic(err)
	}
}

// fold is the SQL that case-folds column col for a search.
func (d db) fold(col string) string {
	if d.pg {
		return "LOWER(" + col + ")"
	}
	return "lectern_fold(" + col + ")"
}
