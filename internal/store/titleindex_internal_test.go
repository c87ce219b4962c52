package store

import (
	"context"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Migration 0038 starts with every existing class indexed: 0034's triggers
// kept the index complete.
func TestTitleIndexMigrationStartsComplete(t *testing.T) {
	ctx := context.Background()
	s := openSQLiteStore(t)
	s.HoldTitleIndex()
	// Back to the schema before 0038.
	if _, err := s.wdb.ExecContext(ctx, `DROP TABLE live_classes_title_state;
		DROP TRIGGER live_classes_title_ins; DROP TRIGGER live_classes_title_del; DROP TRIGGER live_classes_title_upd;
		CREATE TRIGGER live_classes_title_ins AFTER INSERT ON live_classes BEGIN
			INSERT INTO live_classes_title (rowid, title) VALUES (NEW.id, NEW.title);
		END;
		CREATE TRIGGER live_classes_title_del AFTER DELETE ON live_classes BEGIN
			INSERT INTO live_classes_title (live_classes_title, rowid, title) VALUES ('delete', OLD.id, OLD.title);
		END;
		CREATE TRIGGER live_classes_title_upd AFTER UPDATE OF title ON live_classes BEGIN
			INSERT INTO live_classes_title (live_classes_title, rowid, title) VALUES ('delete', OLD.id, OLD.title);
			INSERT INTO live_classes_title (rowid, title) VALUES (NEW.id, NEW.title);
		END;
		DELETE FROM schema_migrations WHERE version = 38`); err != nil {
		t.Fatal(err)
	}
	d, _, err := s.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	var last int64
	for _, title := range []string{"Algebra", "Geometry", "Élodie's class"} {
		c, err := s.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: title, Date: "2030-01-02", StartMinute: 540,
			EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1,
			Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		last = c.ID
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	upto, maxID, err := s.ClassTitleIndexState(ctx)
	if err != nil || upto != last || maxID != last {
		t.Fatalf("after migrating: indexed_upto %d, highest id %d (%v), want %d", upto, maxID, err, last)
	}
	if err := s.CheckClassTitleIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
}

// A pass with no class to index writes nothing, so the pass every start
// runs does not move the store's generation, which would empty the record
// cache at a moment no test or reader can foresee.
func TestIdleTitlePassWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := openSQLiteStore(t)
	s.HoldTitleIndex()
	d, _, err := s.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	if _, err := s.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "Algebra", Date: "2030-01-02", StartMinute: 540,
		EndMinute: 600, TimezoneName: "UTC", Currency: "usd", Published: 1,
		Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, false} { // a class to index, then none
		gen := s.gen.Load()
		if err := s.IndexClassTitles(ctx, 10); err != nil {
			t.Fatal(err)
		}
		if moved := s.gen.Load() != gen; moved != want {
			t.Fatalf("pass %d: generation moved %v, want %v", i, moved, want)
		}
	}
	if upto, maxID, err := s.ClassTitleIndexState(ctx); err != nil || upto != maxID {
		t.Fatalf("indexed_upto %d, highest id %d (%v)", upto, maxID, err)
	}
}

func TestMergeDue(t *testing.T) {
	for _, c := range []struct {
		sizes []int64
		share int64
		want  bool
	}{
		{nil, 8, false},
		{[]int64{500}, 8, false},               // one segment
		{[]int64{800, 99}, 8, false},           // the rest under 1/8 of the largest
		{[]int64{800, 100}, 8, true},           // 1/8
		{[]int64{800, 100}, 16, true},          // over 1/16
		{[]int64{800, 40, 30, 30}, 8, true},    // 1/8 in three
		{[]int64{40, 800, 30, 29}, 8, false},   // the largest anywhere
		{[]int64{136, 135, 140, 108}, 8, true}, // equal segments
		{[]int64{1, 1}, 8, true},
		{[]int64{6400, 99}, 64, false},
		{[]int64{6400, 50, 50}, 64, true},
	} {
		if got := mergeDue(c.sizes, c.share); got != c.want {
			t.Errorf("mergeDue(%v, %d) = %v, want %v", c.sizes, c.share, got, c.want)
		}
	}
}

// A search asks the title index for the phrase of a short text, for the
// phrases of the two ends of a long one, cut on characters, quotes
// doubled.
func TestFTSSearch(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"abc", `"abc"`},
		{"abcdefgh", `"abcdefgh"`},
		{"History 103", `"Histo" AND "y 103"`},
		{`a "quoted" title`, `"a ""qu" AND "title"`},
		{"Élodie's clé", `"Élodi" AND "s clé"`},
		{"短い授業の三回目", `"短い授業の三回目"`},
		{"短い授業の三回目です", `"短い授業の" AND "三回目です"`},
	} {
		if got := ftsSearch(tc.text); got != tc.want {
			t.Errorf("ftsSearch(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
}
