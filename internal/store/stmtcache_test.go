package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Statements cached per SQLite connection: a transaction on the single
// writer connection reuses them (no second connection is needed, so no
// wait), a query whose cached statement still has open rows gets its own
// statement, and concurrent writers and readers finish with every row.
func TestSQLiteStatementCacheInTransactionsAndNestedQueries(t *testing.T) {
	ctx := context.Background()
	s := openSQLiteStore(t)
	d, _, err := s.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := s.CreateUser(ctx, d.ID, lms.User{Name: "U", Username: "u", Email: fmt.Sprintf("u%d@example.com", i)})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, _, err := s.ListUsers(ctx, d.ID, UserFilter{}, Page{Limit: 10})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	const q = "SELECT id FROM users WHERE domain_id = ? ORDER BY id"
	err = s.tx(ctx, func(tx db) error {
		outer, err := tx.query(ctx, q, d.ID)
		if err != nil {
			return err
		}
		defer outer.Close()
		rowsSeen := 0
		for outer.Next() {
			rowsSeen++
			// The same query while the outer one's rows are open.
			var inner int
			if err := tx.queryRow(ctx, "SELECT COUNT(*) FROM ("+q+")", d.ID).Scan(&inner); err != nil {
				return err
			}
			if err := scanRows(ctx, tx, q, []any{d.ID}, func(r *sql.Rows) error { return nil }); err != nil {
				return err
			}
			if inner != n {
				return fmt.Errorf("inner count %d, want %d", inner, n)
			}
			if _, err := tx.exec(ctx, "UPDATE users SET name = ? WHERE domain_id = ?", "V", d.ID); err != nil {
				return err
			}
		}
		if rowsSeen != n {
			return fmt.Errorf("outer rows %d, want %d", rowsSeen, n)
		}
		return outer.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// No query of the store binds a bare LIMIT ? or OFFSET ?: SQLite would
// re-prepare its cached statement at every call (see page.query).
func TestNoBareLimitPlaceholder(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	bare := regexp.MustCompile(`(?i)\b(LIMIT|OFFSET)\s+\?`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if bare.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s:%d binds a bare placeholder (write +?): %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// The group writer's savepoint statements run around every write: they are
// prepared once on the writer connection, although they have no arguments,
// and a failing write's rollback to its savepoint is cached too.
func TestSavepointStatementsPreparedOnce(t *testing.T) {
	ctx := context.Background()
	s := openSQLiteStore(t)
	d0, _, err := s.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	// s.tx, not CreateUser: a user's creation runs without a savepoint
	// (txFirstWriteDecides).
	add := func(d db) error { return insertUser(ctx, d, d0.ID, "u") }
	if err := s.tx(ctx, add); err != nil {
		t.Fatal(err)
	}
	if err := s.tx(ctx, add); !errors.Is(err, errUnique) {
		t.Fatalf("a duplicate email: %v, want a unique violation", err)
	}
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		stmts := dc.(*cachingConn).stmts
		for _, q := range []string{sqlSavepoint, sqlRelease, sqlRollbackTo} {
			if stmts[q] == nil {
				t.Errorf("%q is not among the writer connection's prepared statements", q)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
