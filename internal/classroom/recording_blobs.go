package classroom

import (
	"errors"
	"os"
	"path"
	"path/filepath"

	"github.com/lectern-lms/lectern/internal/blob"
)

// A live recording is written to local files as the media arrives (the
// WebM writer seeks back into each file when it finishes it, and the MP4
// export reads them with ffmpeg), in the spool folder BlobRoot. When the
// blob store is that same folder (a single node), the files are already
// in place. Otherwise (S3), each sitting's files are copied into the blob
// store under the same keys when the recording stops, before its rows
// say ready, and its spool folder is removed once the export is done.

// spooled reports whether recordings must be copied from the spool folder
// into a separate blob store.
func (rs *Recordings) spooled() bool {
	if rs.Blobs == nil {
		return false
	}
	d, ok := rs.Blobs.(blob.Dir)
	return !ok || filepath.Clean(d.Root) != filepath.Clean(rs.BlobRoot)
}

// upload copies the spool file of key into the blob store.
func (rs *Recordings) upload(key string) error {
	if !rs.spooled() {
		return nil
	}
	f, err := os.Open(filepath.Join(rs.BlobRoot, filepath.FromSlash(key)))
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = rs.Blobs.PutAt(key, f)
	return err
}

// uploadSitting copies every file of a sitting's spool folder (prefix)
// into the blob store.
func (rs *Recordings) uploadSitting(prefix string) error {
	if !rs.spooled() {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(rs.BlobRoot, filepath.FromSlash(prefix)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Type().IsRegular() {
			errs = append(errs, rs.upload(path.Join(prefix, e.Name())))
		}
	}
	return errors.Join(errs...)
}

// dropSpool removes a sitting's spool folder once its files are in the
// blob store.
func (rs *Recordings) dropSpool(prefix string) {
	if rs.spooled() {
		os.RemoveAll(filepath.Join(rs.BlobRoot, filepath.FromSlash(prefix)))
	}
}
