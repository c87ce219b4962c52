package blob

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDir(t *testing.T) {
	d := Dir{Root: t.TempDir()}
	key, n, err := d.Put("recordings/7", strings.NewReader("hello video"))
	if err != nil || n != 11 || !strings.HasPrefix(key, "recordings/7/") {
		t.Fatalf("put: %q %d %v", key, n, err)
	}
	f, err := d.Open(key)
	if err != nil {
		t.Fatal(err)
	}
	f.Seek(6, io.SeekStart)
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "video" || f.Size() != 11 {
		t.Fatalf("read %q size %d", b, f.Size())
	}
	if n, err := d.PutAt(key, strings.NewReader("new")); err != nil || n != 3 {
		t.Fatalf("put at: %d %v", n, err)
	}
	if f, err := d.Open(key); err != nil || f.Size() != 3 {
		t.Fatalf("open after put at: %v", err)
	} else {
		f.Close()
	}
	entries, _ := os.ReadDir(filepath.Join(d.Root, "recordings", "7"))
	if len(entries) != 1 {
		t.Errorf("the folder holds %d files, want the blob only (no temporary file left)", len(entries))
	}
	if err := d.Delete(key); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Open(key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open after delete: %v", err)
	}
	if err := d.Delete(key); err != nil {
		t.Fatalf("second delete: %v", err)
	}
}

// TestDirStaysInsideItsFolder: no key and no symbolic link reaches a file
// outside the folder, for reading, writing or deleting.
func TestDirStaysInsideItsFolder(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o750); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("keep"), 0o640); err != nil {
		t.Fatal(err)
	}
	d := Dir{Root: filepath.Join(base, "blobs")}
	if _, _, err := d.Put("x", strings.NewReader("in")); err != nil {
		t.Fatal(err)
	}
	// Links inside the folder that point outside it: to a file and to a
	// folder.
	if err := os.Symlink(secret, filepath.Join(d.Root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(d.Root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	bad := []string{"../outside/secret", "x/../../outside/secret", "..", "/etc/passwd", secret, "", "link", "dirlink/secret",
		"dirlink/new", "x\\..\\..\\outside\\secret", "./link"}
	for _, key := range bad {
		if f, err := d.Open(key); err == nil {
			f.Close()
			t.Errorf("Open(%q) reached a file outside the folder", key)
		} else if errors.Is(err, ErrNotFound) && key != "dirlink/new" {
			t.Errorf("Open(%q): %v, want a refusal", key, err)
		}
		if _, err := d.Path(key); err == nil {
			t.Errorf("Path(%q) gave a name", key)
		}
	}
	for _, key := range bad {
		// Writing at "link" replaces the link itself (a rename does not
		// follow it); every other key is refused. Nothing outside changes
		// (checked below).
		if _, err := d.PutAt(key, strings.NewReader("overwritten")); err == nil && key != "link" {
			t.Errorf("PutAt(%q) wrote", key)
		}
	}
	for _, key := range bad {
		d.Delete(key)
	}
	if _, _, err := d.Put("../outside", strings.NewReader("x")); err == nil {
		t.Error("Put with prefix ../outside wrote")
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "keep" {
		t.Errorf("the file outside the folder became %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("the folder outside holds %d files, want 1", len(entries))
	}
}
