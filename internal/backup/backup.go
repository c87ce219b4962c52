// Package backup writes and reads Lectern's backup archives: a gzipped tar
// of a consistent copy of the SQLite database, the data dir's server
// secret and its blobs folder, with a manifest of every file's size and
// SHA-256 written last.
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/store"
)

// Format and Version name the archive format in its manifest.
const (
	Format  = "lectern-backup"
	Version = 1
)

// The names of the archive's entries, which are also their names in the
// data dir.
const (
	DBFile       = "lectern.db"
	SecretFile   = "server.secret"
	BlobsDir     = "blobs"
	ManifestFile = "manifest.json"
)

// Manifest describes an archive; it is its last entry.
type Manifest struct {
	Format         string    `json:"format"`
	Version        int       `json:"version"`
	CreatedAt      time.Time `json:"created_at"`
	LecternVersion string    `json:"lectern_version"`
	SchemaVersion  int64     `json:"schema_version"`
	// Blobs is "included" when the blobs folder is in the archive, or
	// "external" when the server keeps them in an S3-compatible bucket
	// (copy the bucket yourself).
	Blobs string `json:"blobs"`
	Files []File `json:"files"`
}

// File is one file of the archive.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Options says what Write copies.
type Options struct {
	// DataDir holds server.secret and, unless ExternalBlobs, the blobs
	// folder.
	DataDir string
	// ExternalBlobs is set when the blobs live in an S3-compatible bucket.
	ExternalBlobs  bool
	LecternVersion string
	Now            func() time.Time
}

// Write writes an archive of st (which must be SQLite) and the data dir to
// w. The database is copied first, as of one moment, with VACUUM INTO;
// the blobs are copied after it, so every blob a copied row names is there
// (blobs are written before the rows that name them and never changed).
// A blob deleted between the two steps is left out.
func Write(ctx context.Context, st *store.Store, o Options, w io.Writer) (Manifest, error) {
	if st.Postgres() {
		return Manifest{}, store.ErrBackupPostgres
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	m := Manifest{Format: Format, Version: Version, CreatedAt: now().UTC(), LecternVersion: o.LecternVersion, Blobs: "included"}
	if o.ExternalBlobs {
		m.Blobs = "external"
	}
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return m, err
	}
	m.SchemaVersion = v

	tmp, err := os.MkdirTemp(o.DataDir, ".backup-*")
	if err != nil {
		return m, err
	}
	defer os.RemoveAll(tmp)
	dbCopy := filepath.Join(tmp, DBFile)
	if err := st.BackupSQLite(ctx, dbCopy); err != nil {
		return m, err
	}

	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	add := func(name, src string) error {
		f, err := addFile(tw, name, src)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, f)
		return nil
	}
	if err := add(DBFile, dbCopy); err != nil {
		return m, err
	}
	if err := add(SecretFile, filepath.Join(o.DataDir, SecretFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return m, err
	}
	if !o.ExternalBlobs {
		root := filepath.Join(o.DataDir, BlobsDir)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // no blobs yet, or a folder deleted meanwhile
				}
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".upload-") {
				return nil // uploads in progress are not blobs yet
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			err = add(path.Join(BlobsDir, filepath.ToSlash(rel)), p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted since the database copy
			}
			return err
		})
		if err != nil {
			return m, fmt.Errorf("backup: blobs: %w", err)
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	if err := writeEntry(tw, ManifestFile, b, m.CreatedAt); err != nil {
		return m, err
	}
	if err := tw.Close(); err != nil {
		return m, err
	}
	return m, gz.Close()
}

// addFile copies the file at src into the archive as name.
func addFile(tw *tar.Writer, name, src string) (File, error) {
	f, err := os.Open(src)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return File{}, err
	}
	mode := int64(0o640)
	if name == SecretFile {
		mode = 0o600
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: info.Size(), ModTime: info.ModTime(), Typeflag: tar.TypeReg}); err != nil {
		return File{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(f, info.Size()))
	if err != nil {
		return File{}, err
	}
	if n != info.Size() {
		return File{}, fmt.Errorf("backup: %s shrank while being copied", src)
	}
	return File{Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func writeEntry(tw *tar.Writer, name string, b []byte, mtime time.Time) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o640, Size: int64(len(b)), ModTime: mtime, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err := tw.Write(b)
	return err
}
