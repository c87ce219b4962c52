package store

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
)

// A class's sittings have one index besides their key,
// class_occurrences_seq, and every statement that reads or changes them
// finds them by it. Migration 0042 dropped class_occurrences_starts: no
// statement used it, and each sitting written paid for it.
func TestSittingsFoundByTheirIndex(t *testing.T) {
	ctx := context.Background()
	s := openSQLiteStore(t)
	var indexes []string
	if err := scanRows(ctx, s.read(), "SELECT name FROM pragma_index_list('class_occurrences')", nil,
		func(r *sql.Rows) error {
			var name string
			err := r.Scan(&name)
			indexes = append(indexes, name)
			return err
		}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(indexes, []string{"class_occurrences_seq"}) {
		t.Errorf("class_occurrences indexes %v, want [class_occurrences_seq]", indexes)
	}
	for _, q := range []string{
		// ListLiveClasses, LiveClass: the sittings in one column.
		"SELECT " + sittingsCol("c") + " FROM live_classes c WHERE c.domain_id = 1 AND c.id = 1",
		// EnrolledClasses: a sitting not cancelled and not over.
		`SELECT id FROM live_classes WHERE domain_id = 1 AND EXISTS (SELECT 1 FROM class_occurrences o
			WHERE o.domain_id = live_classes.domain_id AND o.class_id = live_classes.id AND o.cancelled = 0
			AND o.ends_at > '2030-01-01T00:00:00Z')`,
		// updateLiveClass, SetSittingsCancelled.
		"DELETE FROM class_occurrences WHERE domain_id = 1 AND class_id = 1",
		"UPDATE class_occurrences SET cancelled = 1 WHERE domain_id = 1 AND class_id = 1",
	} {
		var plan []string
		if err := scanRows(ctx, s.read(), "EXPLAIN QUERY PLAN "+q, nil, func(r *sql.Rows) error {
			var id, parent, unused int
			var detail string
			if err := r.Scan(&id, &parent, &unused, &detail); err != nil {
				return err
			}
			plan = append(plan, detail)
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		all := strings.Join(plan, "; ")
		if !strings.Contains(all, "USING INDEX class_occurrences_seq (class_id=?)") {
			t.Errorf("%s\nplan %q: the sittings are not found by class_occurrences_seq", q, all)
		}
	}
}
