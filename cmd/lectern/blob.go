package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/server"
)

func runBlob(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "migrate" {
		fmt.Fprintln(stderr, "Usage: lectern blob migrate --from DIR --to s3://bucket/prefix\n\nCopy the blobs of a single-node install (its data dir's blobs folder) to an\nS3-compatible store.")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return nil
		}
		return errUsage
	}
	cfg := config.Default()
	flags := newFlagSet("blob migrate", "Copy every blob of the folder --from (default DATA_DIR/blobs) into the S3-compatible\nstore --to, under the same keys, so that servers started with --blob-url find\nthem. Blobs already there with the same size are skipped, so a run that stopped\ncan be started again. The folder is left as it was. Stop the server first (a\nrecording under way is written to the folder until it ends).", stderr)
	cfg.StoreFlags(flags)
	from := flags.String("from", "", "the blobs folder to copy (default DATA_DIR/blobs)")
	to := flags.String("to", "", "s3://bucket/prefix to copy into (default --blob-url)")
	if err := parseFlags(func() error { return cfg.Parse(flags, args[1:]) }); err != nil {
		return err
	}
	if *to != "" {
		cfg.Blob.URL = *to
	}
	if *from == "" {
		*from = filepath.Join(cfg.DataDir, "blobs")
	}
	if !strings.HasPrefix(cfg.Blob.URL, "s3://") {
		fmt.Fprintln(stderr, "lectern blob migrate: --to s3://bucket/prefix is required")
		return errUsage
	}
	if st, err := os.Stat(*from); err != nil || !st.IsDir() {
		return fmt.Errorf("--from %s is not a folder", *from)
	}
	dst, err := server.OpenBlobs(ctx, cfg)
	if err != nil {
		return err
	}
	n, skipped, size, err := migrateBlobs(ctx, *from, dst, stderr)
	fmt.Fprintf(stdout, "Copied %d blobs (%d bytes) to %s; %d were already there.\n", n, size, cfg.Blob.URL, skipped)
	return err
}

// migrateBlobs copies every file under dir (but the temporary files of
// uploads under way, named .upload-*) into dst under its slash path.
func migrateBlobs(ctx context.Context, dir string, dst blob.Store, stderr io.Writer) (copied, skipped int, size int64, err error) {
	var failed int
	walkErr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if f, err := dst.Open(key); err == nil {
			same := f.Size() == info.Size()
			f.Close()
			if same {
				skipped++
				return nil
			}
		} else if !errors.Is(err, blob.ErrNotFound) {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		n, err := dst.PutAt(key, src)
		src.Close()
		if err != nil {
			failed++
			fmt.Fprintf(stderr, "lectern blob migrate: %s: %v\n", key, err)
			return nil
		}
		copied++
		size += n
		return nil
	})
	if walkErr != nil {
		return copied, skipped, size, walkErr
	}
	if failed > 0 {
		return copied, skipped, size, fmt.Errorf("%d blobs were not copied (see above); run the command again", failed)
	}
	return copied, skipped, size, nil
}
