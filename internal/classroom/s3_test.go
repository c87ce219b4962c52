package classroom_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"net/url"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/blob/blobtest"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/lms"
)

// onS3 points the server's blob store at a new bucket of srv.
func onS3(t *testing.T, srv *blobtest.Server) apitest.Option {
	c := srv.Config(t, "school")
	return func(cfg *config.Config) {
		cfg.Blob = config.Blob{URL: c.URL, Endpoint: c.Endpoint, Region: c.Region, PathStyle: true, AccessKey: c.AccessKey, SecretKey: c.SecretKey}
	}
}

// TestBlobsOnS3: with --blob-url, a class's shared file and its recording
// end in the bucket (nothing left in the data dir's blobs folder) and
// download through their signed links, with ranges.
func TestBlobsOnS3(t *testing.T) {
	srv := blobtest.Start(t)
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		c, err := e.Store.CreateLiveClass(context.Background(), e.Domain.ID, lms.LiveClass{Title: "S3", Date: "2031-03-10",
			StartMinute: 900, EndMinute: 960, TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", Published: 1,
			IsBoard: 1, Record: 1, Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		id := itoa(c.ID)
		e.Clock.Set(start)
		ts := session(t, e, id, "t1", "1", true)
		teacher, _ := dial(t, e, map[string]any{"type": "hello", "protocol": 1, "session": ts})

		content := bytes.Repeat([]byte("0123456789"), 10_000)
		status, f := upload(t, e, ts, "", "notes.txt", bytes.NewReader(content))
		if status != 201 {
			t.Fatalf("upload: %d %v", status, f)
		}
		ev := teacher.until("event", "file")["file"].(map[string]any)
		req, _ := http.NewRequest("GET", e.URL+ev["url"].(string), nil)
		req.Header.Set("Range", "bytes=99990-")
		resp, err := e.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 206 || string(got) != "0123456789" {
			t.Fatalf("ranged download of a shared file: %d %q", resp.StatusCode, got)
		}

		teacher.send(map[string]any{"type": "room", "action": "record"})
		teacher.until("event", "recording")
		teacher.send(map[string]any{"type": "board", "op": "add", "object": map[string]any{"id": "s1", "page": "p1", "tool": "pen",
			"color": "#000000", "width": 3, "points": []int{1, 2, 3, 4}}})
		teacher.until("event", "board")
		teacher.send(map[string]any{"type": "room", "action": "end"})
		deadline := time.Now().Add(10 * time.Second)
		for apitest.Str(t, e.VC("getclassrecording", url.Values{"class_id": {id}}).JSON(t), "0.state") != "ready" {
			if time.Now().After(deadline) {
				t.Fatalf("never ready: %v", e.VC("getclassrecording", url.Values{"class_id": {id}}).JSON(t))
			}
			time.Sleep(20 * time.Millisecond)
		}
		rec := e.VC("getclassrecording", url.Values{"class_id": {id}}).JSON(t)
		resp, err = e.Client.Get(apitest.Str(t, rec, "0.record_url"))
		if err != nil {
			t.Fatal(err)
		}
		log, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(log), `"op":"add"`) {
			t.Fatalf("event log from the bucket %d:\n%s", resp.StatusCode, log)
		}
		// The spool folder goes once the files are in the bucket.
		spool := filepath.Join(e.Main.Config.DataDir, "blobs", "recordings")
		for time.Now().Before(deadline) {
			entries, _ := os.ReadDir(filepath.Join(spool, itoa(e.Domain.ID)))
			if len(entries) == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if entries, _ := os.ReadDir(filepath.Join(spool, itoa(e.Domain.ID))); len(entries) != 0 {
			t.Errorf("recording left in the spool folder: %v", entries)
		}
		if entries, _ := os.ReadDir(filepath.Join(e.Main.Config.DataDir, "blobs", "room-files")); len(entries) != 0 {
			t.Errorf("shared file written to the data dir: %v", entries)
		}
	}, onS3(t, srv))
}
