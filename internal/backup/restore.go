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
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/store"
)

// ErrNotEmpty is returned by Restore when the target data dir holds files
// and Force is not set.
var ErrNotEmpty = errors.New("the target data dir is not empty (use --force to replace its contents; they are kept aside)")

// RestoreOptions says where Restore puts an archive.
type RestoreOptions struct {
	DataDir string
	// Force replaces the contents of a non-empty data dir; the old
	// contents are moved to a folder named .before-restore-TIME inside it.
	Force bool
	Now   func() time.Time
}

// RestoreResult tells what Restore did.
type RestoreResult struct {
	Manifest Manifest
	// KeptAside is where the data dir's previous contents went ("" when
	// it was empty).
	KeptAside string
}

// Restore reads an archive from r into a staging folder inside the data
// dir, checks it (every file against the manifest, the database with
// SQLite's integrity check), and only then moves its files into place, one
// rename each. Nothing in the data dir is touched before the whole archive
// has been read and checked. The server must not be running on the data
// dir.
func Restore(ctx context.Context, r io.Reader, o RestoreOptions) (RestoreResult, error) {
	var res RestoreResult
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	if err := os.MkdirAll(o.DataDir, 0o750); err != nil {
		return res, err
	}
	existing, err := os.ReadDir(o.DataDir)
	if err != nil {
		return res, err
	}
	if len(existing) > 0 && !o.Force {
		return res, ErrNotEmpty
	}
	stage, err := os.MkdirTemp(o.DataDir, ".restore-*")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(stage)
	m, err := extract(r, stage)
	if err != nil {
		return res, fmt.Errorf("archive rejected, nothing restored: %w", err)
	}
	res.Manifest = m
	if err := store.CheckSQLiteFile(ctx, filepath.Join(stage, DBFile)); err != nil {
		return res, fmt.Errorf("archive rejected, nothing restored: %w", err)
	}

	if len(existing) > 0 {
		aside := filepath.Join(o.DataDir, ".before-restore-"+now().UTC().Format("20060102T150405Z"))
		if err := os.Mkdir(aside, 0o700); err != nil {
			return res, err
		}
		for _, e := range existing {
			if err := os.Rename(filepath.Join(o.DataDir, e.Name()), filepath.Join(aside, e.Name())); err != nil {
				return res, fmt.Errorf("move the old %s aside: %w", e.Name(), err)
			}
		}
		res.KeptAside = aside
	}
	staged, err := os.ReadDir(stage)
	if err != nil {
		return res, err
	}
	for _, e := range staged {
		if err := os.Rename(filepath.Join(stage, e.Name()), filepath.Join(o.DataDir, e.Name())); err != nil {
			return res, fmt.Errorf("move %s into place: %w", e.Name(), err)
		}
	}
	return res, nil
}

// maxManifest bounds the manifest's size.
const maxManifest = 64 << 20

// extract writes the archive's files under dir and checks them against its
// manifest: the same names, sizes and SHA-256 sums, nothing more or less.
func extract(r io.Reader, dir string) (Manifest, error) {
	var m Manifest
	gz, err := gzip.NewReader(r)
	if err != nil {
		return m, fmt.Errorf("not a gzip file: %w", err)
	}
	tr := tar.NewReader(gz)
	got := map[string]File{}
	var manifest []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return m, fmt.Errorf("read archive: %w", err)
		}
		if manifest != nil {
			return m, errors.New("entries after the manifest")
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return m, fmt.Errorf("entry %q is not a regular file", h.Name)
		}
		if h.Name == ManifestFile {
			if manifest, err = io.ReadAll(io.LimitReader(tr, maxManifest)); err != nil {
				return m, err
			}
			continue
		}
		if !allowedName(h.Name) {
			return m, fmt.Errorf("unexpected entry %q", h.Name)
		}
		if _, dup := got[h.Name]; dup {
			return m, fmt.Errorf("entry %q appears twice", h.Name)
		}
		f, err := writeFile(filepath.Join(dir, filepath.FromSlash(h.Name)), tr, h.Name == SecretFile)
		if err != nil {
			return m, err
		}
		f.Name = h.Name
		got[h.Name] = f
	}
	if manifest == nil {
		return m, errors.New("no manifest (the archive is truncated or not a Lectern backup)")
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return m, fmt.Errorf("manifest: %w", err)
	}
	if m.Format != Format || m.Version != Version {
		return m, fmt.Errorf("manifest: format %q version %d, want %q version %d", m.Format, m.Version, Format, Version)
	}
	if len(m.Files) != len(got) {
		return m, fmt.Errorf("manifest lists %d files, the archive holds %d", len(m.Files), len(got))
	}
	for _, want := range m.Files {
		if got[want.Name] != want {
			return m, fmt.Errorf("%s: size or SHA-256 differs from the manifest", want.Name)
		}
	}
	if _, ok := got[DBFile]; !ok {
		return m, errors.New("no " + DBFile + " in the archive")
	}
	return m, nil
}

// allowedName reports whether name is one a backup holds: the database,
// the secret, or a file under blobs/ with a clean relative path.
func allowedName(name string) bool {
	if name == DBFile || name == SecretFile {
		return true
	}
	rest, ok := strings.CutPrefix(name, BlobsDir+"/")
	return ok && rest != "" && path.Clean(name) == name && !strings.HasPrefix(rest, "../") && !strings.Contains(name, "\\")
}

func writeFile(p string, r io.Reader, secret bool) (File, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return File{}, err
	}
	mode := os.FileMode(0o640)
	if secret {
		mode = 0o600
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return File{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return File{}, fmt.Errorf("extract %s: %w", filepath.Base(p), err)
	}
	return File{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
