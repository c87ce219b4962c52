package server

import (
	"context"
	"path/filepath"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/config"
)

// OpenBlobs opens the blob store cfg names: the data dir's blobs folder, or
// the S3-compatible bucket of --blob-url, checked to exist and to accept
// the credentials.
func OpenBlobs(ctx context.Context, cfg config.Config) (blob.Store, error) {
	if cfg.Blob.URL == "" {
		return blob.Dir{Root: filepath.Join(cfg.DataDir, "blobs")}, nil
	}
	b := cfg.Blob
	s, err := blob.NewS3(blob.S3Config{URL: b.URL, Endpoint: b.Endpoint, Region: b.Region, PathStyle: b.PathStyle,
		AccessKey: b.AccessKey, SecretKey: b.SecretKey})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := s.Check(ctx); err != nil {
		return nil, err
	}
	return s, nil
}
