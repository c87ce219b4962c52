package blob

import (
	"errors"
	"io"
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
	if err := d.Delete(key); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Open(key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open after delete: %v", err)
	}
	if err := d.Delete(key); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	for _, bad := range []string{"../etc/passwd", "/etc/passwd", ""} {
		if _, err := d.Open(bad); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("key %q accepted: %v", bad, err)
		}
	}
}
