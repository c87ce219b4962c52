package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Storage is where a recording's files go. A Recorder creates every file
// through it and writes each one from start to end as the media arrives,
// so that a crash leaves the files written so far.
type Storage interface {
	// Create makes a new file. name is a plain file name (no directory,
	// see the Recorder for the names used), new within the recording.
	Create(name string) (File, error)
}

// File is a file being written.
//
// It must be seekable: the WebM writer reserves room for the seek index
// (Cues) and a Duration at the start of each file and fills them in when
// the file is finished (Seek to the spot, Write, Seek back to the end).
// Without them players cannot seek and show no length. If the File also
// implements io.WriterAt, that is used instead of seeking.
//
// Close finishes the file; it should make its data durable (as
// os.File.Sync does) before returning.
type File interface {
	io.Writer
	io.Seeker
	io.Closer
	// Name returns the name the file was created with.
	Name() string
}

// DirStorage writes files into a folder on a local disk, each straight to
// its final path: a crash leaves partial files that play up to their last
// flushed second (without Cues, with an approximate Duration). The folder
// is made on the first Create. A recording should have a folder of its
// own: Create refuses names that exist.
type DirStorage struct {
	Dir string
}

// Create creates name in the folder.
func (d DirStorage) Create(name string) (File, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || !filepath.IsLocal(name) {
		return nil, fmt.Errorf("record: invalid file name %q", name)
	}
	if err := os.MkdirAll(d.Dir, 0o750); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(d.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return nil, err
	}
	return &dirFile{File: f, name: name}, nil
}

// dirFile is an os.File that reports its plain name and syncs on Close.
type dirFile struct {
	*os.File
	name string
}

func (f *dirFile) Name() string { return f.name }

func (f *dirFile) Close() error {
	return errors.Join(f.File.Sync(), f.File.Close())
}
