package classroom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/classroom"
	"github.com/lectern-lms/lectern/internal/lms"
)

// upload posts a file to the room with session; kind may be "".
func upload(t *testing.T, e *apitest.Env, session, kind, name string, body io.Reader) (int, map[string]any) {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		if kind != "" {
			mw.WriteField("kind", kind)
		}
		fw, _ := mw.CreateFormFile("file", name)
		_, err := io.Copy(fw, body)
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest("POST", e.URL+"/classroom/files", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if session != "" {
		req.Header.Set(classroom.SessionHeader, session)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// blobFiles lists the files under the data dir's shared-file blobs.
func blobFiles(t *testing.T, e *apitest.Env) []string {
	var out []string
	filepath.WalkDir(filepath.Join(e.Main.Config.DataDir, "blobs", "room-files"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestSharedFiles(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		c, err := e.Store.CreateLiveClass(context.Background(), e.Domain.ID, lms.LiveClass{Title: "Files", Date: "2031-03-10",
			StartMinute: 900, EndMinute: 960, TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", Published: 1,
			Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		id := itoa(c.ID)
		e.Clock.Set(start)
		ts, ss := session(t, e, id, "t1", "1", true), session(t, e, id, "s1", "0", true)

		if status, m := upload(t, e, ts, "", "a.txt", strings.NewReader("hi")); status != 403 {
			t.Fatalf("not in the room yet: %d %v", status, m)
		}
		teacher, _ := dial(t, e, map[string]any{"type": "hello", "protocol": 1, "session": ts})
		student, _ := dial(t, e, map[string]any{"type": "hello", "protocol": 1, "session": ss})

		t.Run("share and download", func(t *testing.T) {
			content := bytes.Repeat([]byte("lecture notes\n"), 1000)
			status, f := upload(t, e, ts, "", `..\..\secret/../notes "final".txt`, bytes.NewReader(content))
			if status != 201 || f["name"] != "notes final.txt" || f["size"] != float64(len(content)) || f["status"] != "ready" {
				t.Fatalf("%d %v", status, f)
			}
			ev := student.until("event", "file")["file"].(map[string]any)
			if ev["id"] != f["id"] || ev["url"] == "" {
				t.Fatalf("event %v", ev)
			}
			resp, err := e.Client.Get(e.URL + ev["url"].(string))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(got, content) || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") ||
				!strings.Contains(resp.Header.Get("Content-Disposition"), "notes final.txt") {
				t.Fatalf("download: %d bytes, %v", len(got), resp.Header)
			}
			tampered := strings.Replace(ev["url"].(string), "sig=", "sig=0", 1)
			if r := e.Do(apitest.Request{Method: "GET", Path: tampered, NoAuth: true}); r.Status != 403 {
				t.Errorf("tampered link: %d", r.Status)
			}
		})
		t.Run("refusals name the problem", func(t *testing.T) {
			if status, m := upload(t, e, "", "", "a.txt", strings.NewReader("x")); status != 401 || m["field"] != classroom.SessionHeader {
				t.Errorf("no session: %d %v", status, m)
			}
			if status, m := upload(t, e, ss, "", "a.txt", strings.NewReader("x")); status != 403 || !strings.Contains(m["error"].(string), "teacher") {
				t.Errorf("student without permission: %d %v", status, m)
			}
			if status, m := upload(t, e, ts, "presentation", "slides.pdf", strings.NewReader("not a pdf at all")); status != 415 ||
				!strings.Contains(m["error"].(string), "PDF") {
				t.Errorf("fake pdf: %d %v", status, m)
			}
			if status, m := upload(t, e, ts, "slides", "a.pdf", strings.NewReader("%PDF-1.4")); status != 400 || m["field"] != "kind" {
				t.Errorf("bad kind: %d %v", status, m)
			}
			if status, m := upload(t, e, ts, "", "empty.txt", strings.NewReader("")); status != 400 {
				t.Errorf("empty: %d %v", status, m)
			}
			// An office document converts only where LibreOffice is.
			status, m := upload(t, e, ts, "presentation", "deck.pptx", strings.NewReader("PK\x03\x04 a zip"))
			if classroom.FindConverter() == nil {
				if status != 415 || !strings.Contains(m["error"].(string), "LibreOffice") {
					t.Errorf("pptx without LibreOffice: %d %v", status, m)
				}
			} else if status != 201 || m["status"] != "converting" {
				t.Errorf("pptx with LibreOffice: %d %v", status, m)
			}
		})
		t.Run("over the plan's size leaves nothing behind", func(t *testing.T) {
			before := len(blobFiles(t, e))
			if err := e.Store.SetDomainPlan(context.Background(), e.Domain.ID, "free"); err != nil {
				t.Fatal(err)
			}
			defer e.Store.SetDomainPlan(context.Background(), e.Domain.ID, "unlimited")
			big := io.LimitReader(zeros{}, lms.Plans["free"].FileMaxBytes+1)
			if status, m := upload(t, e, ts, "", "big.bin", big); status != 413 || !strings.Contains(m["error"].(string), "10 MB") {
				t.Fatalf("too large: %d %v", status, m)
			}
			if after := blobFiles(t, e); len(after) != before {
				t.Fatalf("a refused upload left files: %v", after)
			}
			entries, _ := os.ReadDir(filepath.Join(e.Main.Config.DataDir, "blobs", "room-files", itoa(e.Domain.ID)))
			for _, en := range entries {
				if strings.HasPrefix(en.Name(), ".upload") {
					t.Errorf("half-written upload left: %s", en.Name())
				}
			}
		})
		t.Run("students share when allowed; presentations open", func(t *testing.T) {
			teacher.send(map[string]any{"type": "moderate", "action": "allow-files", "userId": "s1"})
			student.until("notice", "")
			if status, m := upload(t, e, ss, "", "homework.txt", strings.NewReader("done")); status != 201 || m["by"] != "s1" {
				t.Fatalf("%d %v", status, m)
			}
			status, pdf := upload(t, e, ts, "presentation", "deck.pdf", strings.NewReader("%PDF-1.4\n% a tiny pdf\n"))
			if status != 201 || pdf["kind"] != "presentation" || pdf["type"] != "application/pdf" {
				t.Fatalf("%d %v", status, pdf)
			}
			teacher.send(map[string]any{"type": "presentation", "action": "open", "file": pdf["id"], "pages": 3})
			ev := student.until("event", "presentation")["presentation"].(map[string]any)
			if ev["file"] != pdf["id"] || ev["page"] != 1.0 || ev["pages"] != 3.0 || ev["url"] == "" {
				t.Fatalf("%v", ev)
			}
			teacher.send(map[string]any{"type": "presentation", "action": "page", "page": 2})
			if ev := student.until("event", "presentation")["presentation"].(map[string]any); ev["page"] != 2.0 {
				t.Fatalf("%v", ev)
			}
			student.send(map[string]any{"type": "presentation", "action": "page", "page": 3})
			if er := student.until("error", ""); er["code"] != "forbidden" {
				t.Fatalf("%v", er)
			}
		})
	})
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"notes.txt":                      "notes.txt",
		"../../etc/passwd":               "passwd",
		`C:\Users\ann\report.docx`:       "report.docx",
		".htaccess":                      "htaccess",
		"":                               "file",
		"a\x00b\nc.txt":                  "abc.txt",
		`say "hi".txt`:                   "say hi.txt",
		"/":                              "file",
		strings.Repeat("x", 200) + ".md": strings.Repeat("x", 117) + ".md",
	} {
		if got := classroom.SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}
