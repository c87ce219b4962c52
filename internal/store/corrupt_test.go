package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// TestCorruptRowsFailLoudly: a stored time or launch secret that does not
// parse is an error, never a zero time or an empty key (issue 12, item 14).
func TestCorruptRowsFailLoudly(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dir, u := t.TempDir(), apitest.IsolatedURL(t, b.URL)
			st, err := store.Open(ctx, store.Options{DatabaseURL: u, DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			driver, dsn, ph := "sqlite", filepath.Join(dir, "lectern.db"), "?"
			if u != "" {
				driver, dsn, ph = "pgx", u, "$1"
			}
			raw, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			d, keys, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "C", Date: "2030-01-02", StartMinute: 540, EndMinute: 600,
				TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
			if err != nil {
				t.Fatal(err)
			}
			corrupt := func(q string, arg any) {
				t.Helper()
				if _, err := raw.ExecContext(ctx, q+" = "+ph, arg); err != nil {
					t.Fatal(err)
				}
			}
			corrupt("UPDATE class_occurrences SET starts_at = '10000-01-01T00:00:00Z' WHERE class_id", c.ID)
			if got, err := st.LiveClass(ctx, d.ID, c.ID); err == nil {
				t.Errorf("a corrupt sitting start read as %v", got.Occurrences[0].Start)
			}
			corrupt("UPDATE live_classes SET created_at = 'yesterday' WHERE id", c.ID)
			if _, err := st.LiveClass(ctx, d.ID, c.ID); err == nil {
				t.Error("a corrupt created_at read without error")
			}
			corrupt("UPDATE domains SET launch_secret = 'not hex' WHERE id", d.ID)
			if got, err := st.AuthClassroom(ctx, keys.Classroom); err == nil {
				t.Errorf("a corrupt launch secret read as %x", got.LaunchSecret)
			}
			corrupt("UPDATE domains SET launch_secret = '' WHERE id", d.ID)
			if got, err := st.GetDomain(ctx, d.ID); err == nil {
				t.Errorf("an empty launch secret read as %x", got.LaunchSecret)
			}
		})
	}
}
