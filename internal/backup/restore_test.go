package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// archive builds a backup archive from entries (name, content) and a
// manifest listing files.
func archive(t *testing.T, entries [][2]string, files []File) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	put := func(name, body string) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	for _, e := range entries {
		put(e[0], e[1])
	}
	m, _ := json.Marshal(Manifest{Format: Format, Version: Version, Files: files})
	put(ManifestFile, string(m))
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func file(name, body string) File {
	h := sha256.Sum256([]byte(body))
	return File{Name: name, Size: int64(len(body)), SHA256: hex.EncodeToString(h[:])}
}

// TestRestoreRejects: archives that do not match their manifest, or name
// paths outside the data dir, are refused before the data dir changes.
func TestRestoreRejects(t *testing.T) {
	for _, c := range []struct {
		name    string
		entries [][2]string
		files   []File
		want    string
	}{
		{"altered file", [][2]string{{DBFile, "db"}, {"blobs/a/1", "new"}}, []File{file(DBFile, "db"), file("blobs/a/1", "old")}, "differs from the manifest"},
		{"file not in the manifest", [][2]string{{DBFile, "db"}, {"blobs/a/1", "x"}}, []File{file(DBFile, "db")}, "lists 1 files"},
		{"path outside", [][2]string{{DBFile, "db"}, {"blobs/../../etc/x", "x"}}, nil, "unexpected entry"},
		{"unknown file", [][2]string{{DBFile, "db"}, {"other.txt", "x"}}, nil, "unexpected entry"},
		{"no database", [][2]string{{"blobs/a/1", "x"}}, []File{file("blobs/a/1", "x")}, "no lectern.db"},
		{"not a database", [][2]string{{DBFile, "db"}}, []File{file(DBFile, "db")}, "lectern.db"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "keep"), []byte("old"), 0o600)
			_, err := Restore(context.Background(), bytes.NewReader(archive(t, c.entries, c.files)), RestoreOptions{DataDir: dir, Force: true})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing restored") {
				t.Fatalf("err = %v, want one saying %q and nothing restored", err, c.want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 || entries[0].Name() != "keep" {
				t.Errorf("the data dir changed: %v", entries)
			}
		})
	}
}
