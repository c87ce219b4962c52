package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine to write while
// the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lectern runs one command line and returns its exit code and output.
func lectern(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// storeArgs are the flags that point a command at the test's database.
func storeArgs(t *testing.T, b apitest.Backend) []string {
	args := []string{"--data-dir", t.TempDir()}
	if u := apitest.IsolatedURL(t, b.URL); u != "" {
		args = append(args, "--database-url", u)
	}
	return args
}

// TestServeEndToEnd is the README's first minute: create a domain, start
// the real serve command on port 0, and make authenticated calls.
func TestServeEndToEnd(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			sargs := storeArgs(t, b)

			// serve on an empty store says how to get credentials.
			ctx, cancel := context.WithCancel(context.Background())
			logs := &syncBuffer{}
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--rtc-udp-port", "0", "--turn-port", "0"}, sargs...), io.Discard, logs)
			}()
			base := waitForAddr(t, logs)
			// The hint follows the address line (after a store query).
			if !waitForLog(logs, "lectern domain create --name") {
				t.Errorf("empty store: serve did not say how to create a domain:\n%s", logs)
			}

			code, out, errOut := lectern(t, append([]string{"domain", "create", "--name", "Acme Academy", "--json"}, sargs...)...)
			if code != 0 {
				t.Fatalf("domain create: %d %s", code, errOut)
			}
			var created map[string]any
			dec := json.NewDecoder(strings.NewReader(out))
			dec.UseNumber()
			if err := dec.Decode(&created); err != nil || dec.More() {
				t.Fatalf("domain create --json must print exactly one JSON object: %q", out)
			}
			if len(created) != 4 || created["name"] != "Acme Academy" {
				t.Fatalf("domain create --json = %v", created)
			}
			id := created["domain_id"].(json.Number).String()
			key, ckey := created["api_key"].(string), created["classroom_api_key"].(string)
			if len(key) < 35 || len(ckey) < 35 || key == ckey {
				t.Fatalf("keys too short or equal: %q %q", key, ckey)
			}

			get := func(method, path, key string) int {
				req, _ := http.NewRequest(method, base+path, nil)
				if key != "" {
					req.Header.Set("Authorization", key)
					req.Header.Set("x-domain-id", id)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", method, path, err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			for _, p := range []string{"/healthz", "/readyz"} {
				if s := get("GET", p, ""); s != 200 {
					t.Errorf("%s: %d", p, s)
				}
			}
			if s := get("POST", "/api/v1/users/list", key); s != 200 {
				t.Errorf("first authenticated call: %d", s)
			}

			code, out, _ = lectern(t, append([]string{"domain", "rotate-key", "--domain", id, "--api", "lms", "--json"}, sargs...)...)
			var rotated map[string]any
			if code != 0 || json.Unmarshal([]byte(out), &rotated) != nil {
				t.Fatalf("rotate-key: %d %q", code, out)
			}
			// The server trusted the old key a moment ago and keeps trusting
			// it for at most store.KeyCacheTTL: the command is another process.
			rotatedAt := time.Now()
			for s := get("POST", "/api/v1/users/list", key); s != 401; s = get("POST", "/api/v1/users/list", key) {
				if time.Since(rotatedAt) > store.KeyCacheTTL+time.Second {
					t.Errorf("old key %v after rotation: %d", time.Since(rotatedAt).Round(time.Millisecond), s)
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if s := get("POST", "/api/v1/users/list", rotated["api_key"].(string)); s != 200 {
				t.Errorf("new key after rotation: %d", s)
			}

			code, out, _ = lectern(t, append([]string{"domain", "list", "--json"}, sargs...)...)
			if code != 0 || !strings.Contains(out, `"Acme Academy"`) || strings.Contains(out, key) {
				t.Errorf("domain list: %d %s", code, out)
			}

			// The operator sets the plan and the JSON style; the classroom
			// API follows at once.
			for _, args := range [][]string{{"domain", "set-plan", "--domain", id, "--plan", "free"}, {"domain", "set-style", "--domain", id, "--style", "seed"},
				{"domain", "set-retention", "--domain", id, "--days", "90"}} {
				if code, _, errOut := lectern(t, append(args, sargs...)...); code != 0 {
					t.Fatalf("%v: %d %s", args, code, errOut)
				}
			}
			resp, err := http.Post(base+"/v2/getplan?apikey="+ckey, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			// The server's default style is compat (a bare object); the
			// domain's seed style answers a one-element array.
			var plan []map[string]any
			json.NewDecoder(resp.Body).Decode(&plan)
			resp.Body.Close()
			if len(plan) != 1 || plan[0]["status"] != "ok" || plan[0]["plan"] != "free" {
				t.Errorf("getplan after set-plan free and set-style seed: %v", plan)
			}

			cancel()
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("serve exited %d:\n%s", code, logs)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("serve did not stop after the signal")
			}
			for _, secret := range []string{key, ckey, rotated["api_key"].(string)} {
				if strings.Contains(logs.String(), secret) {
					t.Errorf("a key appears in the logs")
				}
			}
			if !regexp.MustCompile(`method=POST path=/api/v1/users/list status=200 duration=\S+ domain_id=` + id + ` request_id=[0-9a-f]{16}`).MatchString(logs.String()) {
				t.Errorf("no request log line with method, path, status, duration, domain id and request id:\n%s", logs)
			}
		})
	}
}

// waitForLog waits up to 10 s for text in logs.
func waitForLog(logs *syncBuffer, text string) bool {
	return waitUntil(func() bool { return strings.Contains(logs.String(), text) })
}

// waitUntil reports whether cond became true within 10 s, asking every
// 25 ms.
func waitUntil(cond func() bool) bool {
	for i := 0; i < 400; i++ {
		if cond() {
			return true
		}
		time.Sleep(25 * time.Millisecond)
	}
	return false
}

func waitForAddr(t *testing.T, logs *syncBuffer) string {
	t.Helper()
	re := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)`)
	// Up to a minute: a loaded machine migrating a fresh PostgreSQL
	// database took longer than ten seconds.
	for i := 0; i < 2400; i++ {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1]
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("serve did not report its address:\n%s", logs)
	return ""
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"serve", "--help"}, {"migrate", "--help"}, {"version", "--help"},
		{"domain", "--help"}, {"domain", "create", "--help"}, {"domain", "list", "--help"}, {"domain", "rotate-key", "--help"},
		{"domain", "set-plan", "--help"}, {"domain", "set-style", "--help"}, {"domain", "set-retention", "--help"},
		{"recording", "--help"}, {"recording", "import", "--help"},
	} {
		code, _, errOut := lectern(t, args...)
		if code != 0 || len(errOut) < 40 {
			t.Errorf("%v: exit %d, help %q", args, code, errOut)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, "unknown command"},
		{[]string{"domain", "create", "--data-dir", dir}, "--name is required"},
		{[]string{"domain", "rotate-key", "--data-dir", dir, "--domain", "1", "--api", "x"}, "--api lms|classroom"},
		{[]string{"serve", "--response-style", "fancy", "--data-dir", dir}, "--response-style must be seed or compat"},
		{[]string{"domain", "set-plan", "--data-dir", dir, "--domain", "1", "--plan", "gold"}, "--plan free|unlimited"},
		{[]string{"domain", "set-style", "--data-dir", dir, "--domain", "1"}, "--style seed|compat|default"},
		{[]string{"domain", "set-retention", "--data-dir", dir, "--domain", "1"}, "--days N"},
	} {
		code, _, errOut := lectern(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to contain %q", c.args, code, errOut, c.want)
		}
	}
}

func TestMigrateAndVersion(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := lectern(t, "migrate", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "applied 0001_core.sql") {
		t.Fatalf("first migrate: %d %q", code, out)
	}
	code, out, _ = lectern(t, "migrate", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "up to date") {
		t.Fatalf("second migrate: %d %q", code, out)
	}
	t.Setenv("LECTERN_DATA_DIR", dir)
	code, out, _ = lectern(t, "domain", "list")
	if code != 0 || !strings.Contains(out, "ID") {
		t.Fatalf("domain list from the environment's data dir: %d %q", code, out)
	}
	code, out, _ = lectern(t, "version")
	if code != 0 || !strings.HasPrefix(out, "lectern ") {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestRecordingImport(t *testing.T) {
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
	// A subscriber, so the import's recording.ready lands in the outbox
	// the running server delivers from.
	if _, err := st.CreateWebhook(ctx, d.ID, store.WebhookEndpoint{URL: "https://hooks.example.com/lectern",
		Events: []string{"recording.ready"}, Secret: "whsec_dGVzdA", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	file := filepath.Join(t.TempDir(), "talk.mp4")
	os.WriteFile(file, []byte("not really a video"), 0o600)

	code, out, errOut := lectern(t, "recording", "import", "--class", fmt.Sprint(c.ID), "--data-dir", dir, "--json", file)
	if code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || got["size"] != float64(18) || got["class_id"] != float64(c.ID) {
		t.Fatalf("import output %q: %v", out, err)
	}
	st, _ = store.Open(ctx, store.Options{DataDir: dir})
	defer st.Close()
	recs, err := st.ClassRecordings(ctx, d.ID, c.ID, "")
	if err != nil || len(recs) != 1 || recs[0].FName != "talk.mp4" || recs[0].ContentType != "video/mp4" {
		t.Fatalf("stored: %+v %v", recs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "blobs", filepath.FromSlash(recs[0].BlobKey))); err != nil {
		t.Fatalf("file not in the blob store: %v", err)
	}
	msgs, err := st.ClaimWebhookMessages(ctx, time.Now(), time.Minute, 10)
	if err != nil || len(msgs) != 1 || msgs[0].EventType != "recording.ready" {
		t.Fatalf("webhook outbox after the import: %+v, %v; want one recording.ready", msgs, err)
	}
	var ev struct {
		Data struct {
			ID      int64  `json:"id"`
			ClassID int64  `json:"class_id"`
			Name    string `json:"name"`
		} `json:"data"`
	}
	if err := json.Unmarshal(msgs[0].Payload, &ev); err != nil || ev.Data.ID != recs[0].ID || ev.Data.ClassID != c.ID || ev.Data.Name != "talk.mp4" {
		t.Fatalf("recording.ready payload %s: %v", msgs[0].Payload, err)
	}
	code, _, errOut = lectern(t, "recording", "import", "--class", "999", "--data-dir", dir, file)
	if code != 1 || !strings.Contains(errOut, "live class 999 not found") {
		t.Fatalf("unknown class: %d %q", code, errOut)
	}
	code, _, errOut = lectern(t, "recording", "import", "--data-dir", dir, file)
	if code != 2 || !strings.Contains(errOut, "--class ID and exactly one FILE") {
		t.Fatalf("no class: %d %q", code, errOut)
	}
}
