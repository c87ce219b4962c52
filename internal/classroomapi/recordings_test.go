package classroomapi_test

import (
	"context"
	"encoding/xml"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/classroom"
	"github.com/lectern-lms/lectern/internal/lms"
)

func TestRecordings(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		c := makeClass(t, e, e.Domain, "Recorded", start)
		id := itoa(c.ID)
		e.Clock.Set(start.Add(2 * time.Hour))

		empty := e.VC("getclassrecording", url.Values{"class_id": {id}})
		if apitest.Str(t, empty.JSON(t), "Recording") != "No video recording available" {
			t.Fatalf("empty list: %s", empty.Body)
		}

		video := strings.Repeat("0123456789", 100)
		first, err := classroom.ImportRecording(ctx, e.Store, e.Main.Blobs(), c.ID, "/tmp/Lecture One.mp4", strings.NewReader(video), start)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := classroom.ImportRecording(ctx, e.Store, e.Main.Blobs(), c.ID, "notes.webm", strings.NewReader("x"), start); err != nil {
			t.Fatal(err)
		}
		rid := itoa(first.ID)

		t.Run("list in every request style", func(t *testing.T) {
			answers := styles(t, e, "getclassrecording", url.Values{"class_id": {id}})
			for name, a := range answers {
				if n, _ := apitest.Lookup(a, "#"); n != 2 {
					t.Errorf("%s: %d recordings", name, n)
				}
				if apitest.Str(t, a, "0.id") != rid || apitest.Str(t, a, "0.classroom_id") != id ||
					apitest.Str(t, a, "0.fname") != "Lecture One.mp4" || apitest.Str(t, a, "0.status") != "1" ||
					apitest.Str(t, a, "0.date_recorded") != "2031-03-10" {
					t.Errorf("%s: %v", name, a)
				}
			}
		})
		t.Run("search", func(t *testing.T) {
			body := e.VC("getclassrecording", url.Values{"class_id": {id}, "search": {"LECTURE"}}).JSON(t)
			if n, _ := apitest.Lookup(body, "#"); n != 1 {
				t.Fatalf("%v", body)
			}
		})
		t.Run("getrecording link, ranges and expiry", func(t *testing.T) {
			body := e.VC("getrecording", url.Values{"record_id": {rid}}).JSON(t)
			link := apitest.Str(t, body, "0.record_url")
			status, got, h := fetch(t, e, link, nil)
			if status != 200 || got != video || h.Get("Content-Type") != "video/mp4" || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") {
				t.Fatalf("download: %d %q %v", status, got[:min(len(got), 20)], h)
			}
			status, got, h = fetch(t, e, link, map[string]string{"Range": "bytes=10-19"})
			if status != 206 || got != "0123456789" || h.Get("Content-Range") != "bytes 10-19/1000" {
				t.Fatalf("range: %d %q %v", status, got, h)
			}
			// record_path is the playback page; an imported recording plays its one file.
			play := apitest.Str(t, body, "0.record_path")
			status, page, _ := fetch(t, e, play, nil)
			boot := bootData(t, page)
			files, _ := boot["files"].([]any)
			if status != 200 || !strings.Contains(page, "/classroom/assets/playback.js") || len(files) != 1 {
				t.Fatalf("play: %d %s", status, page)
			}
			inline := files[0].(map[string]any)["url"].(string)
			if status, got, h := fetch(t, e, e.URL+inline, nil); status != 200 || got != video || !strings.HasPrefix(h.Get("Content-Disposition"), "inline") {
				t.Fatalf("the player's file: %d %v", status, h)
			}
			if status, _, _ := fetch(t, e, strings.Replace(link, "/recordings/"+rid, "/recordings/999", 1), nil); status != 403 {
				t.Errorf("link for another id: %d", status)
			}
			e.Clock.Set(start.Add(3*time.Hour + time.Second))
			if status, page, _ := fetch(t, e, link, nil); status != 403 || !strings.Contains(page, "expired") {
				t.Errorf("expired link: %d %s", status, page)
			}
			e.Clock.Set(start.Add(2 * time.Hour))
		})
		t.Run("export_url: each recording's own MP4", func(t *testing.T) {
			key, size, err := e.Main.Blobs().Put("recordings/test", strings.NewReader("mp4 bytes"))
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Store.SetRecordingExport(ctx, e.Domain.ID, first.ID, "ready", 100, &lms.RecordingFile{Role: "mp4", BlobKey: key,
				Name: "recording.mp4", ContentType: "video/mp4", Size: size}); err != nil {
				t.Fatal(err)
			}
			body := e.VC("getclassrecording", url.Values{"class_id": {id}}).JSON(t)
			for i := range 2 {
				n := itoa(int64(i))
				link := apitest.Str(t, body, n+".export_url")
				if apitest.Str(t, body, n+".id") != rid {
					if link != "" || apitest.Str(t, body, n+".export") == "ready" {
						t.Errorf("a recording without an MP4 has export_url %q", link)
					}
					continue
				}
				if apitest.Str(t, body, n+".export") != "ready" {
					t.Fatalf("%v", body)
				}
				if status, got, h := fetch(t, e, link, nil); status != 200 || got != "mp4 bytes" || h.Get("Content-Type") != "video/mp4" {
					t.Fatalf("export_url: %d %q %v", status, got, h)
				}
			}
			one := e.VC("getrecording", url.Values{"record_id": {rid}}).JSON(t)
			if apitest.Str(t, one, "0.export_url") == "" {
				t.Errorf("getrecording has no export_url: %v", one)
			}
		})
		t.Run("XML list", func(t *testing.T) {
			r := e.VC("getclassrecording", url.Values{"class_id": {id}, "format": {"xml"}})
			var doc struct {
				XMLName    xml.Name `xml:"xml"`
				Recordings []struct {
					ID        string `xml:"id"`
					RecordURL string `xml:"record_url"`
				} `xml:"recording"`
			}
			if err := xml.Unmarshal(r.Body, &doc); err != nil || len(doc.Recordings) != 2 || doc.Recordings[0].ID != rid {
				t.Fatalf("%v %+v: %s", err, doc, r.Body)
			}
		})
		t.Run("changestatusrecording toggles", func(t *testing.T) {
			for _, want := range []string{"0", "1"} {
				body := e.VC("changestatusrecording", url.Values{"id": {rid}}).JSON(t)
				if apitest.Str(t, body, "0.method") != "changestatusrecording" || apitest.Str(t, body, "0.record_id") != rid ||
					apitest.Str(t, body, "0.recording_status") != want {
					t.Fatalf("want %s: %v", want, body)
				}
				got := e.VC("getrecording", url.Values{"record_id": {rid}}).JSON(t)
				if apitest.Str(t, got, "0.status") != want {
					t.Fatalf("stored status: %v", got)
				}
			}
		})
		t.Run("another domain", func(t *testing.T) {
			for op, p := range map[string]url.Values{
				"getrecording": {"record_id": {rid}}, "changestatusrecording": {"id": {rid}}, "removeclassrecording": {"id": {rid}},
			} {
				p.Set("apikey", e.Other.ClassroomKey)
				if got := apitest.Str(t, e.VC(op, p).JSON(t), "0.error"); got != "Invalid Recording Owner" {
					t.Errorf("%s: %q", op, got)
				}
			}
			p := url.Values{"class_id": {id}, "apikey": {e.Other.ClassroomKey}}
			if got := apitest.Str(t, e.VC("getclassrecording", p).JSON(t), "0.error"); got != "Invalid Class Owner" {
				t.Errorf("getclassrecording: %q", got)
			}
		})
		t.Run("errors", func(t *testing.T) {
			for op, want := range map[string]string{
				"getrecording": "record_id is required", "changestatusrecording": "id is required",
				"removeclassrecording": "id is required", "getclassrecording": "class_id is required",
			} {
				if got := apitest.Str(t, e.VC(op, nil).JSON(t), "0.error"); got != want {
					t.Errorf("%s: %q", op, got)
				}
			}
			if got := apitest.Str(t, e.VC("getrecording", url.Values{"record_id": {"99999"}}).JSON(t), "0.error"); !strings.Contains(got, "no recording 99999") {
				t.Errorf("unknown: %q", got)
			}
		})
		t.Run("remove deletes row and file", func(t *testing.T) {
			link := apitest.Str(t, e.VC("getrecording", url.Values{"record_id": {rid}}).JSON(t), "0.record_url")
			body := e.VC("removeclassrecording", url.Values{"id": {rid}}).JSON(t)
			if apitest.Str(t, body, "0.record_id") != rid || apitest.Str(t, body, "0.method") != "removeclassrecording" {
				t.Fatalf("%v", body)
			}
			if _, err := os.Stat(filepath.Join(e.Main.Config.DataDir, "blobs", filepath.FromSlash(first.BlobKey))); !os.IsNotExist(err) {
				t.Errorf("file still there: %v", err)
			}
			if status, _, _ := fetch(t, e, link, nil); status != 404 {
				t.Errorf("link after removal: %d", status)
			}
			if got := apitest.Str(t, e.VC("getrecording", url.Values{"record_id": {rid}}).JSON(t), "0.error"); !strings.Contains(got, "no recording") {
				t.Errorf("after removal: %q", got)
			}
		})
	}, seedStyle)
}
