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
	"strings"
	"sync"
	"testing"
	"time"
)

// served is a `lectern serve` run in the test process.
type served struct {
	base string
	stop func()
}

// startServe runs the serve command on args until the test ends.
func startServe(t *testing.T, args ...string) served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--rtc-udp-port", "0", "--turn-port", "0", "--rate-limit", "0"}, args...), io.Discard, logs)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("serve exited %d:\n%s", code, logs)
			}
		})
	}
	t.Cleanup(stop)
	return served{base: waitForAddr(t, logs), stop: stop}
}

// lmsCall is one LMS API call with a domain's credentials.
func lmsCall(base, key, domain, method, path string, body any) (int, []byte, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, base+"/api/v1"+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", key)
	req.Header.Set("x-domain-id", domain)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// listEmails pages through /users/list and returns every user's email.
func listEmails(t *testing.T, base, key, domain string) map[string]bool {
	t.Helper()
	emails := map[string]bool{}
	for page := 1; ; page++ {
		status, body, err := lmsCall(base, key, domain, "POST", "/users/list", map[string]any{"page": page, "limit": 100})
		if err != nil || status != 200 {
			t.Fatalf("users/list page %d: %d %v %s", page, status, err, body)
		}
		var res struct {
			Data  []struct{ Email string }
			Total int
		}
		if err := json.Unmarshal(body, &res); err != nil {
			t.Fatal(err)
		}
		for _, u := range res.Data {
			emails[u.Email] = true
		}
		if len(res.Data) == 0 || len(emails) >= res.Total {
			return emails
		}
	}
}

// TestBackupUnderWriteLoadRestores backs up a serving SQLite install while
// clients create users through the API, restores the archive into an
// empty data dir, serves it, and finds every user whose creation was
// acknowledged before the backup started (and none that was never
// acknowledged or attempted), the same server secret, and the blobs.
func TestBackupUnderWriteLoadRestores(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServe(t, "--data-dir", dataDir)
	code, out, errOut := lectern(t, "domain", "create", "--name", "Backup School", "--json", "--data-dir", dataDir)
	if code != 0 {
		t.Fatalf("domain create: %s", errOut)
	}
	var d struct {
		DomainID json.Number `json:"domain_id"`
		APIKey   string      `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	domain := d.DomainID.String()
	// A blob, as the blob store keeps one.
	blobPath := filepath.Join(dataDir, "blobs", "recordings", "1", "r.webm")
	os.MkdirAll(filepath.Dir(blobPath), 0o750)
	if err := os.WriteFile(blobPath, []byte("recording bytes"), 0o640); err != nil {
		t.Fatal(err)
	}

	// Writers create users until told to stop; acked records each email
	// whose creation answered 200, in the order the answers came.
	var (
		mu        sync.Mutex
		acked     []string
		attempted = map[string]bool{}
		stop      = make(chan struct{})
		wg        sync.WaitGroup
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				email := fmt.Sprintf("w%d-%d@example.com", w, i)
				mu.Lock()
				attempted[email] = true
				mu.Unlock()
				status, body, err := lmsCall(srv.base, d.APIKey, domain, "POST", "/users/create",
					map[string]any{"username": fmt.Sprintf("w%d-%d", w, i), "email": email})
				if err != nil || status != 200 {
					t.Errorf("create %s: %d %v %s", email, status, err, body)
					return
				}
				mu.Lock()
				acked = append(acked, email)
				mu.Unlock()
			}
		}()
	}
	// Let some writes land, then back up while the writers go on.
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	archive := filepath.Join(t.TempDir(), "lectern.tar.gz")
	code, out, errOut = lectern(t, "backup", "--data-dir", dataDir, "--to", archive)
	mu.Lock()
	duringBackup := len(acked) - len(before)
	mu.Unlock()
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("backup: %d %s", code, errOut)
	}
	if !strings.Contains(out, "Wrote "+archive) {
		t.Errorf("backup output: %q", out)
	}
	t.Logf("users acknowledged before the backup: %d, during it: %d", len(before), duringBackup)
	srv.stop()

	// Restore into a fresh data dir and serve it.
	restored := filepath.Join(t.TempDir(), "data")
	code, out, errOut = lectern(t, "restore", "--from", archive, "--data-dir", restored)
	if code != 0 {
		t.Fatalf("restore: %d %s", code, errOut)
	}
	for _, f := range []string{"server.secret", "blobs/recordings/1/r.webm"} {
		want, _ := os.ReadFile(filepath.Join(dataDir, f))
		got, err := os.ReadFile(filepath.Join(restored, f))
		if err != nil || !bytes.Equal(got, want) || len(want) == 0 {
			t.Errorf("restored %s differs from the original (%v)", f, err)
		}
	}
	srv2 := startServe(t, "--data-dir", restored)
	emails := listEmails(t, srv2.base, d.APIKey, domain)
	for _, e := range before {
		if !emails[e] {
			t.Errorf("user %s was acknowledged before the backup started but is not in the restore", e)
		}
	}
	for e := range emails {
		if !attempted[e] {
			t.Errorf("restored user %s was never created", e)
		}
	}
	if len(emails) < len(before) {
		t.Errorf("restored %d users, %d acknowledged before the backup", len(emails), len(before))
	}
	t.Logf("restored users: %d", len(emails))
}

// TestRestoreRefusesAndVerifies covers restore's refusals: a non-empty
// target without --force, a damaged archive (nothing touched), PostgreSQL
// for backup; and --force keeping the old contents aside.
func TestRestoreRefusesAndVerifies(t *testing.T) {
	dataDir := t.TempDir()
	if code, _, errOut := lectern(t, "domain", "create", "--name", "S", "--data-dir", dataDir); code != 0 {
		t.Fatal(errOut)
	}
	os.WriteFile(filepath.Join(dataDir, "server.secret"), []byte(strings.Repeat("ab", 32)), 0o600)
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	if code, _, errOut := lectern(t, "backup", "--data-dir", dataDir, "--to", archive); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := lectern(t, "backup", "--data-dir", dataDir, "--to", archive); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Errorf("backup over an existing file: %d %s", code, errOut)
	}

	target := t.TempDir()
	os.WriteFile(filepath.Join(target, "keep.txt"), []byte("old"), 0o600)
	if code, _, errOut := lectern(t, "restore", "--from", archive, "--data-dir", target); code != 1 || !strings.Contains(errOut, "not empty") {
		t.Errorf("restore into a non-empty dir: %d %s", code, errOut)
	}

	good, _ := os.ReadFile(archive)
	for name, data := range map[string][]byte{
		"truncated": good[:len(good)/2],
		"not gzip":  []byte("hello"),
	} {
		bad := filepath.Join(t.TempDir(), "bad.tar.gz")
		os.WriteFile(bad, data, 0o600)
		code, _, errOut := lectern(t, "restore", "--from", bad, "--data-dir", target, "--force")
		if code != 1 || !strings.Contains(errOut, "nothing restored") {
			t.Errorf("%s archive: %d %s", name, code, errOut)
		}
		entries, _ := os.ReadDir(target)
		if len(entries) != 1 || entries[0].Name() != "keep.txt" {
			t.Errorf("%s archive: the target changed: %v", name, entries)
		}
	}

	code, out, errOut := lectern(t, "restore", "--data-dir", target, "--force", "--from", archive)
	if code != 0 || !strings.Contains(out, ".before-restore-") {
		t.Fatalf("restore --force: %d %s %s", code, out, errOut)
	}
	aside, _ := filepath.Glob(filepath.Join(target, ".before-restore-*", "keep.txt"))
	if len(aside) != 1 {
		t.Errorf("the old contents were not kept aside: %v", aside)
	}
	if _, err := os.Stat(filepath.Join(target, "lectern.db")); err != nil {
		t.Errorf("no database after restore: %v", err)
	}

	code, _, errOut = lectern(t, "backup", "--database-url", "postgres://u@127.0.0.1:1/x", "--to", filepath.Join(t.TempDir(), "x"))
	if code != 1 || !strings.Contains(errOut, "pg_dump") {
		t.Errorf("backup of PostgreSQL: %d %s", code, errOut)
	}
}
