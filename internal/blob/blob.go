// Package blob keeps large files (recordings, shared files, lesson media)
// outside the database. The default store is a folder (Dir); a deployment
// with several server processes uses an S3-compatible bucket (S3).
package blob

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Store holds blobs by key.
type Store interface {
	// Put writes r under a new key made from prefix and returns the key
	// and the number of bytes written.
	Put(prefix string, r io.Reader) (key string, size int64, err error)
	// PutAt writes r under key (a slash path made by an earlier Put's
	// prefix rules), replacing any blob there, and returns the number of
	// bytes written. Readers see the old blob or the whole new one.
	PutAt(key string, r io.Reader) (size int64, err error)
	// Open returns the blob for reading with seeks (for range requests).
	Open(key string) (File, error)
	// Delete removes a blob; deleting a missing blob is not an error.
	Delete(key string) error
}

// File is an open blob.
type File interface {
	io.ReadSeekCloser
	Size() int64
	ModTime() time.Time
}

// ErrNotFound is returned by Open for a missing key.
var ErrNotFound = errors.New("blob not found")

// Dir is a Store in a folder. Keys are relative paths of the form
// prefix/random-hex.
type Dir struct{ Root string }

// Put writes the blob to a temporary file and renames it into place, so a
// reader never sees half a file.
func (d Dir) Put(prefix string, r io.Reader) (string, int64, error) {
	if strings.Contains(prefix, "..") {
		return "", 0, fmt.Errorf("blob: bad prefix %q", prefix)
	}
	b := make([]byte, 16)
	rand.Read(b)
	key := filepath.ToSlash(filepath.Join(prefix, hex.EncodeToString(b)))
	path := filepath.Join(d.Root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".upload-*")
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(tmp, r)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", 0, err
	}
	return key, n, nil
}

func (d Dir) path(key string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(key))
	if key == "" || filepath.IsAbs(clean) || strings.HasPrefix(clean, "..") {
		return "", fmt.Errorf("blob: bad key %q", key)
	}
	return filepath.Join(d.Root, clean), nil
}

// Open opens a blob.
func (d Dir) Open(key string) (File, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &file{File: f, info: st}, nil
}

// Delete removes a blob.
func (d Dir) Delete(key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

type file struct {
	*os.File
	info fs.FileInfo
}

func (f *file) Size() int64        { return f.info.Size() }
func (f *file) ModTime() time.Time { return f.info.ModTime() }
