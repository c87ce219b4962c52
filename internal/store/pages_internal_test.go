package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestPageTotalTooHigh: a page whose total was read before rows were
// deleted (two statements, two snapshots) is still one of the domain's
// pages. Read backwards past the rows left, it is the domain's first
// page; read forwards past them, it is empty.
func TestPageTotalTooHigh(t *testing.T) {
	st, domainID := openGroupStore(t)
	ctx := context.Background()
	var want []int64
	for i := range 5 {
		if err := st.tx(ctx, func(d db) error { return insertUser(ctx, d, domainID, fmt.Sprint("u", i)) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := scanRows(ctx, st.read(), "SELECT id FROM users WHERE domain_id = ? ORDER BY id", []any{domainID}, func(r *sql.Rows) error {
		var id int64
		err := r.Scan(&id)
		want = append(want, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	SetDirectPageOffset(t, 3)
	for _, tc := range []struct {
		name          string
		offset, limit int
		want          []int64
	}{
		{"backwards", 25, 10, want},
		{"forwards", 10, 5, nil},
	} {
		var got []int64
		err := listPage(ctx, st.read(), page{table: "users", domainID: domainID, cols: "id", total: 40, offset: tc.offset, limit: tc.limit},
			func(r *sql.Rows) error {
				var id int64
				err := r.Scan(&id)
				got = append(got, id)
				return err
			})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
