package store

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
)

// A class's sittings are a table keyed by (class_id, seq) without a rowid
// (migration 0045), with no other index, and every statement that reads
// or changes them finds them by that key. Migration 0042 dropped
// class_occurrences_starts: no statement used it, and each sitting
// written paid for it; 0045 dropped the rowid, its AUTOINCREMENT and the
// index class_occurrences_seq, which the key now is.
func TestSittingsFoundByTheirIndex(t *testing.T) {
	ctx := context.Background()
	s := openSQLiteStore(t)
	// column reads the one text column of the rows of q.
	column := func(q string) []string {
		var out []string
		if err := scanStrings(ctx, s.read(), &out, q); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if origins := column("SELECT origin FROM pragma_index_list('class_occurrences')"); !slices.Equal(origins, []string{"pk"}) {
		t.Errorf("class_occurrences indexes by origin %v, want its primary key alone", origins)
	}
	if wr := column("SELECT CAST(wr AS TEXT) FROM pragma_table_list('class_occurrences')"); !slices.Equal(wr, []string{"1"}) {
		t.Errorf("class_occurrences without rowid: %v, want [1]", wr)
	}
	if key := column("SELECT name FROM pragma_table_info('class_occurrences') WHERE pk > 0 ORDER BY pk"); !slices.Equal(key, []string{"class_id", "seq"}) {
		t.Errorf("class_occurrences is keyed by %v, want [class_id seq]", key)
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
		if !strings.Contains(all, "USING PRIMARY KEY (class_id=?)") {
			t.Errorf("%s\nplan %q: the sittings are not found by their key", q, all)
		}
	}
}
