package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// TestRecordingImportDocumentedLine runs the command line exactly as
// docs/api/classroom-launch.md writes it, flags after the file (issue 12,
// item 8).
func TestRecordingImportDocumentedLine(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st.Migrate(ctx)
	d, _, _ := st.CreateDomain(ctx, "A")
	start := time.Date(2031, 1, 1, 9, 0, 0, 0, time.UTC)
	c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "T", Date: "2031-01-01", StartMinute: 540, EndMinute: 600,
		TimezoneName: "UTC", Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	file := filepath.Join(t.TempDir(), "lecture.mp4")
	os.WriteFile(file, []byte("not really a video"), 0o600)
	for _, args := range [][]string{
		{"recording", "import", "--class", fmt.Sprint(c.ID), file, "--data-dir", dir, "--json"},
		{"recording", "import", file, "--class=" + fmt.Sprint(c.ID), "--json", "--data-dir", dir},
	} {
		code, out, errOut := lectern(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil || got["class_id"] != float64(c.ID) {
			t.Fatalf("%v: output %q: %v", args, out, err)
		}
	}
	if code, _, _ := lectern(t, "recording", "import", "--class", fmt.Sprint(c.ID), file, "other.mp4", "--data-dir", dir); code != 2 {
		t.Errorf("two files: exit %d, want 2", code)
	}
}
