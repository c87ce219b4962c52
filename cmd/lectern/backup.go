package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lectern-lms/lectern/internal/backup"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/store"
)

func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("backup", "Write a backup archive (tar.gz) of a SQLite install while it serves: a consistent\ncopy of the database, the data dir's server.secret and its blobs folder.\nThe archive holds the secret that seals payment and signing keys: keep it safe.\nWith PostgreSQL use pg_dump instead (docs/ops/backup.md).", stderr)
	cfg.StoreFlags(fs)
	to := fs.String("to", "", "the archive file to write (required; must not exist)")
	if err := parseFlags(func() error { return cfg.Parse(fs, flagsFirst(fs, args)) }); err != nil {
		return err
	}
	if *to == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "lectern backup: --to FILE is required (and nothing else)")
		return errUsage
	}
	if isPostgres(cfg.DatabaseURL) {
		return store.ErrBackupPostgres
	}
	if cfg.DatabaseURL == "" {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, backup.DBFile)); err != nil {
			return fmt.Errorf("no database to back up in %s: %w", cfg.DataDir, err)
		}
	}
	if _, err := os.Lstat(*to); err == nil {
		return fmt.Errorf("%s already exists", *to)
	}
	st, err := store.Open(ctx, store.Options{DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir})
	if err != nil {
		return err
	}
	defer st.Close()

	// Write beside the target and rename, so FILE is complete or absent.
	f, err := os.CreateTemp(filepath.Dir(*to), "."+filepath.Base(*to)+".partial-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	m, err := backup.Write(ctx, st, backup.Options{DataDir: cfg.DataDir, ExternalBlobs: cfg.Blob.URL != "", LecternVersion: version}, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(f.Name(), *to); err != nil {
		return err // Link, unlike Rename, never replaces a file made meanwhile
	}
	var size int64
	for _, fl := range m.Files {
		size += fl.Size
	}
	fmt.Fprintf(stdout, "Wrote %s: %d files, %d bytes before compression, schema version %d.\n", *to, len(m.Files), size, m.SchemaVersion)
	if m.Blobs == "external" {
		fmt.Fprintln(stdout, "The blobs are in the S3-compatible bucket of --blob-url and not in the archive: copy the bucket too.")
	}
	return nil
}

func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("restore", "Put a backup archive back into a data dir. The archive is read and checked in full\n(every file's SHA-256, the database's integrity) before anything in the data dir\nchanges. Stop the server first. A non-empty data dir is refused unless --force,\nwhich moves its old contents into .before-restore-TIME inside it.", stderr)
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "the data dir to restore into (env LECTERN_DATA_DIR)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "must be empty: restore puts back SQLite installs only (env LECTERN_DATABASE_URL)")
	from := fs.String("from", "", "the archive to read (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty data dir (kept aside, not deleted)")
	if err := parseFlags(func() error { return cfg.Parse(fs, flagsFirst(fs, args)) }); err != nil {
		return err
	}
	if *from == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "lectern restore: --from FILE is required (and nothing else)")
		return errUsage
	}
	if cfg.DatabaseURL != "" {
		return errors.New("--database-url is set: restore writes a SQLite data dir; for PostgreSQL use pg_restore (docs/ops/backup.md)")
	}
	f, err := os.Open(*from)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := backup.Restore(ctx, f, backup.RestoreOptions{DataDir: cfg.DataDir, Force: *force})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Restored %d files into %s (backup of %s, schema version %d).\n", len(res.Manifest.Files), cfg.DataDir,
		res.Manifest.CreatedAt.Format("2006-01-02 15:04:05Z"), res.Manifest.SchemaVersion)
	if res.KeptAside != "" {
		fmt.Fprintf(stdout, "The previous contents are in %s; delete it when the restored server works.\n", res.KeptAside)
	}
	if res.Manifest.Blobs == "external" {
		fmt.Fprintln(stdout, "The backup's blobs were in an S3-compatible bucket: restore the bucket too.")
	}
	return nil
}

func isPostgres(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}
