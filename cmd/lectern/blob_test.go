package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/blob/blobtest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// TestBlobMigrateThenServeFromS3 moves a single-node install's blobs to S3
// with blob migrate, then serves from the bucket alone (the folder gone):
// a recording imported before the move and one imported after download
// through their signed links, ranges included.
func TestBlobMigrateThenServeFromS3(t *testing.T) {
	srv := blobtest.Start(t)
	s3cfg := srv.Config(t, "school/blobs")
	// Credentials from the usual AWS variables, the rest from flags.
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	s3args := []string{"--blob-endpoint", srv.Endpoint, "--blob-region", "us-east-1", "--blob-path-style"}

	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st.Migrate(ctx)
	d, keys, _ := st.CreateDomain(ctx, "A")
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Hour)
	c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "T", Date: start.Format("2006-01-02"), StartMinute: start.Hour() * 60, EndMinute: start.Hour()*60 + 59,
		TimezoneName: "UTC", Occurrences: []lms.Occurrence{{Start: start, End: start.Add(59 * time.Minute)}}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	video := strings.Repeat("0123456789", 100)
	file := filepath.Join(t.TempDir(), "before.mp4")
	os.WriteFile(file, []byte(video), 0o600)
	if code, _, errOut := lectern(t, "recording", "import", "--class", fmt.Sprint(c.ID), "--data-dir", dir, file); code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	// An upload under way when the server stopped is not a blob.
	os.WriteFile(filepath.Join(dir, "blobs", "recordings", ".upload-123"), []byte("half"), 0o600)

	migrate := append([]string{"blob", "migrate", "--data-dir", dir, "--to", s3cfg.URL}, s3args...)
	code, out, errOut := lectern(t, migrate...)
	if code != 0 || !strings.Contains(out, "Copied 1 blobs (1000 bytes)") || !strings.Contains(out, "0 were already there") {
		t.Fatalf("migrate: %d %q %q", code, out, errOut)
	}
	code, out, _ = lectern(t, migrate...)
	if code != 0 || !strings.Contains(out, "Copied 0 blobs") || !strings.Contains(out, "1 were already there") {
		t.Fatalf("second migrate: %d %q", code, out)
	}
	if code, _, errOut := lectern(t, "blob", "migrate", "--data-dir", dir); code != 2 || !strings.Contains(errOut, "--to s3://bucket/prefix is required") {
		t.Fatalf("no --to: %d %q", code, errOut)
	}
	if code, _, errOut := lectern(t, append([]string{"blob", "migrate", "--data-dir", dir, "--to", "s3://no-such-bucket/x"}, s3args...)...); code != 1 || !strings.Contains(errOut, `bucket "no-such-bucket"`) {
		t.Fatalf("missing bucket: %d %q", code, errOut)
	}
	bucket, err := blob.NewS3(s3cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bucket.Open("recordings/.upload-123"); err == nil {
		t.Error("a temporary upload file was copied")
	}
	os.RemoveAll(filepath.Join(dir, "blobs"))

	after := filepath.Join(t.TempDir(), "after.mp4")
	os.WriteFile(after, []byte("AFTER"), 0o600)
	withS3 := append([]string{"--data-dir", dir, "--blob-url", s3cfg.URL}, s3args...)
	if code, _, errOut := lectern(t, append(append([]string{"recording", "import", "--class", fmt.Sprint(c.ID)}, withS3...), after)...); code != 0 {
		t.Fatalf("import into S3: %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "blobs")); err == nil {
		t.Error("import with --blob-url wrote into the data dir")
	}

	sctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(sctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--rtc-udp-port", "0", "--turn-port", "0"}, withS3...), io.Discard, logs)
	}()
	defer func() {
		cancel()
		<-done
	}()
	base := waitForAddr(t, logs)
	resp, err := http.Post(base+"/v2/getclassrecording?apikey="+keys.Classroom+"&class_id="+fmt.Sprint(c.ID), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	links := regexp.MustCompile(`"record_url":\s*"([^"]+)"`).FindAllStringSubmatch(string(body), -1)
	if len(links) != 2 {
		t.Fatalf("recordings: %s", body)
	}
	got := map[string]bool{}
	for _, l := range links {
		link := strings.ReplaceAll(l[1], `\u0026`, "&")
		req, _ := http.NewRequest("GET", link, nil)
		req.Header.Set("Range", "bytes=2-4")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 206 {
			t.Fatalf("ranged download: %d %s", resp.StatusCode, b)
		}
		got[string(b)] = true
	}
	if !got["234"] || !got["TER"] {
		t.Fatalf("ranges read %v; want 234 (migrated) and TER (imported into S3)", got)
	}
}
