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
	"path"
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

// Dir is a Store in a folder. Keys are relative slash paths of the form
// prefix/random-hex. Every file operation goes through an os.Root opened
// on the folder, so no key, and no symbolic link inside the folder, reaches
// a file outside it.
type Dir struct{ Root string }

// root opens the folder as an os.Root, creating it when missing.
func (d Dir) root() (*os.Root, error) {
	if err := os.MkdirAll(d.Root, 0o750); err != nil {
		return nil, err
	}
	return os.OpenRoot(d.Root)
}

// Put writes r under a new key made from prefix.
func (d Dir) Put(prefix string, r io.Reader) (string, int64, error) {
	if strings.Contains(prefix, "..") {
		return "", 0, fmt.Errorf("blob: bad prefix %q", prefix)
	}
	b := make([]byte, 16)
	rand.Read(b)
	key := path.Join(filepath.ToSlash(prefix), hex.EncodeToString(b))
	n, err := d.PutAt(key, r)
	if err != nil {
		return "", 0, err
	}
	return key, n, nil
}

// PutAt writes the blob of key to a temporary file and renames it into
// place, so a reader never sees half a file.
func (d Dir) PutAt(key string, r io.Reader) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	root, err := d.root()
	if err != nil {
		return 0, err
	}
	defer root.Close()
	dir := path.Dir(key)
	if err := root.MkdirAll(dir, 0o750); err != nil {
		return 0, err
	}
	b := make([]byte, 8)
	rand.Read(b)
	tmpName := path.Join(dir, ".upload-"+hex.EncodeToString(b))
	tmp, err := root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(tmp, r)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmpName, key)
	}
	if err != nil {
		root.Remove(tmpName)
		return 0, err
	}
	return n, nil
}

// Open opens a blob.
func (d Dir) Open(key string) (File, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	root, err := d.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("blob: %q is not a file", key)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &file{File: f, info: st}, nil
}

// Path returns the file name of a blob for a program that reads it by name
// (ffprobe). The blob must be a regular file inside the folder.
func (d Dir) Path(key string) (string, error) {
	f, err := d.Open(key)
	if err != nil {
		return "", err
	}
	f.Close()
	return filepath.Join(d.Root, filepath.FromSlash(key)), nil
}

// Delete removes a blob.
func (d Dir) Delete(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	root, err := d.root()
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
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
