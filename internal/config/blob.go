package config

import (
	"flag"
	"fmt"
	"strings"
)

// Blob says where large files (recordings, shared files, lesson media)
// are kept: the data dir's blobs folder when URL is empty, else an
// S3-compatible bucket.
type Blob struct {
	// URL is s3://bucket/prefix, or empty for the local folder.
	URL       string
	Endpoint  string
	Region    string
	PathStyle bool
	AccessKey string
	SecretKey string
}

func (c *Config) blobFlags(fs *flag.FlagSet) {
	b := &c.Blob
	fs.StringVar(&b.URL, "blob-url", b.URL, "s3://bucket/prefix to keep recordings and files in an S3-compatible store; empty for the data dir's blobs folder (env LECTERN_BLOB_URL)")
	fs.StringVar(&b.Endpoint, "blob-endpoint", b.Endpoint, "S3 endpoint, http(s)://host:port; default AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or AWS S3 (env LECTERN_BLOB_ENDPOINT)")
	fs.StringVar(&b.Region, "blob-region", b.Region, "S3 region; default AWS_REGION (env LECTERN_BLOB_REGION)")
	fs.BoolVar(&b.PathStyle, "blob-path-style", b.PathStyle, "address the bucket as ENDPOINT/BUCKET (most self-hosted S3 servers need it) (env LECTERN_BLOB_PATH_STYLE)")
	fs.StringVar(&b.AccessKey, "blob-access-key", b.AccessKey, "S3 access key id; default AWS_ACCESS_KEY_ID (env LECTERN_BLOB_ACCESS_KEY)")
	fs.StringVar(&b.SecretKey, "blob-secret-key", b.SecretKey, "S3 secret key; default AWS_SECRET_ACCESS_KEY; prefer the environment to the command line (env LECTERN_BLOB_SECRET_KEY)")
}

func (b Blob) check() error {
	if b.URL == "" {
		return nil
	}
	if !strings.HasPrefix(b.URL, "s3://") {
		return fmt.Errorf("--blob-url must be s3://bucket/prefix, not %q", b.URL)
	}
	if (b.AccessKey == "") != (b.SecretKey == "") {
		return fmt.Errorf("--blob-access-key and --blob-secret-key must be given together")
	}
	return nil
}
