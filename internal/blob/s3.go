package blob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where an S3-compatible store is and how to sign in to it.
// Empty fields are read from the usual AWS environment variables
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION,
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL).
type S3Config struct {
	// URL is s3://bucket/prefix (the prefix may be empty).
	URL string
	// Endpoint is the server's base URL, http(s)://host:port; empty means
	// AWS S3 (s3.amazonaws.com).
	Endpoint string
	Region   string
	// PathStyle addresses the bucket as endpoint/bucket rather than
	// bucket.endpoint (most self-hosted servers need it).
	PathStyle bool
	AccessKey string
	SecretKey string
	// PartSize is the size of each part of a multipart upload (at least
	// 5 MiB); 0 means 16 MiB. An upload holds one part in memory, and an
	// object has at most 10,000 parts.
	PartSize uint64
}

// S3 is a Store in an S3-compatible bucket. Object names are the prefix
// joined with the keys Dir uses, so a folder copied object by object
// (lectern blob migrate) keeps its keys.
type S3 struct {
	client   *minio.Client
	core     minio.Core
	bucket   string
	prefix   string
	partSize uint64
}

// ParseS3URL splits s3://bucket/prefix.
func ParseS3URL(raw string) (bucket, prefix string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return "", "", fmt.Errorf("blob URL must be s3://bucket/prefix, not %q", raw)
	}
	return u.Host, strings.Trim(u.Path, "/"), nil
}

// NewS3 connects to the bucket of c (no request is made until the first
// use; see Check).
func NewS3(c S3Config) (*S3, error) {
	bucket, prefix, err := ParseS3URL(c.URL)
	if err != nil {
		return nil, err
	}
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL_S3")
	}
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL")
	}
	if endpoint == "" {
		endpoint = "https://s3.amazonaws.com"
	}
	eu, err := url.Parse(endpoint)
	if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" || (eu.Path != "" && eu.Path != "/") {
		return nil, fmt.Errorf("blob endpoint must be http(s)://host[:port], not %q", endpoint)
	}
	region := c.Region
	if region == "" {
		region = os.Getenv("AWS_REGION")
	}
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	creds := credentials.NewEnvAWS()
	if c.AccessKey != "" || c.SecretKey != "" {
		creds = credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")
	}
	lookup := minio.BucketLookupAuto
	if c.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(eu.Host, &minio.Options{Creds: creds, Secure: eu.Scheme == "https", Region: region, BucketLookup: lookup})
	if err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	ps := c.PartSize
	if ps == 0 {
		ps = 16 << 20
	}
	if ps < 5<<20 {
		return nil, fmt.Errorf("blob store: part size must be at least 5 MiB")
	}
	return &S3{client: client, core: minio.Core{Client: client}, bucket: bucket, prefix: prefix, partSize: ps}, nil
}

// Check makes sure the bucket exists and the credentials work.
func (s *S3) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("blob store: bucket %q: %w", s.bucket, err)
	}
	if !ok {
		return fmt.Errorf("blob store: bucket %q does not exist", s.bucket)
	}
	return nil
}

// String is the store's URL (without credentials).
func (s *S3) String() string { return "s3://" + path.Join(s.bucket, s.prefix) }

func (s *S3) name(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if s.prefix == "" {
		return key, nil
	}
	return s.prefix + "/" + key, nil
}

// checkKey refuses keys that are not plain relative slash paths.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") || path.Clean(key) != key || key == ".." || strings.HasPrefix(key, "../") {
		return fmt.Errorf("blob: bad key %q", key)
	}
	return nil
}

// Put streams r into a new object under prefix. A blob larger than a part
// goes up as a multipart upload that is completed only at the end of r:
// until then, and forever if the process dies, no object is visible under
// the key (the server keeps the parts of an abandoned upload until a
// lifecycle rule removes them; an upload that fails is aborted).
func (s *S3) Put(prefix string, r io.Reader) (string, int64, error) {
	if strings.Contains(prefix, "..") {
		return "", 0, fmt.Errorf("blob: bad prefix %q", prefix)
	}
	b := make([]byte, 16)
	rand.Read(b)
	key := path.Join(prefix, hex.EncodeToString(b))
	n, err := s.PutAt(key, r)
	return key, n, err
}

// PutAt streams r into the object of key, as Put does.
func (s *S3) PutAt(key string, r io.Reader) (int64, error) {
	name, err := s.name(key)
	if err != nil {
		return 0, err
	}
	info, err := s.client.PutObject(context.Background(), s.bucket, name, r, -1,
		minio.PutObjectOptions{PartSize: s.partSize, ContentType: "application/octet-stream"})
	if err != nil {
		return 0, fmt.Errorf("blob store: put %s: %w", key, err)
	}
	return info.Size, nil
}

// Open stats the object; reads then fetch byte ranges from the current
// offset, so a seek (an HTTP range request) reads only what it needs.
func (s *S3) Open(key string) (File, error) {
	name, err := s.name(key)
	if err != nil {
		return nil, err
	}
	info, err := s.client.StatObject(context.Background(), s.bucket, name, minio.StatObjectOptions{})
	if err != nil {
		if isNotFound(err) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("blob store: stat %s: %w", key, err)
	}
	return &s3File{s: s, name: name, size: info.Size, mod: info.LastModified, etag: info.ETag}, nil
}

// Delete removes the object; a missing object is not an error.
func (s *S3) Delete(key string) error {
	name, err := s.name(key)
	if err != nil {
		return err
	}
	err = s.client.RemoveObject(context.Background(), s.bucket, name, minio.RemoveObjectOptions{})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("blob store: delete %s: %w", key, err)
	}
	return nil
}

// PresignGet returns a URL that reads the object of key without
// credentials until it expires (for tools such as ffprobe).
func (s *S3) PresignGet(key string, expiry time.Duration) (string, error) {
	name, err := s.name(key)
	if err != nil {
		return "", err
	}
	u, err := s.client.PresignedGetObject(context.Background(), s.bucket, name, expiry, nil)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

func isNotFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == minio.NoSuchKey || r.StatusCode == http.StatusNotFound
}

// s3File reads an object with ranged GETs.
type s3File struct {
	s    *S3
	name string
	size int64
	mod  time.Time
	etag string

	off  int64
	body io.ReadCloser // open at off, or nil
}

func (f *s3File) Size() int64        { return f.size }
func (f *s3File) ModTime() time.Time { return f.mod }

func (f *s3File) Read(p []byte) (int, error) {
	if f.off >= f.size {
		return 0, io.EOF
	}
	if f.body == nil {
		var opts minio.GetObjectOptions
		if f.off > 0 {
			opts.SetRange(f.off, 0)
		}
		if f.etag != "" {
			opts.SetMatchETag(f.etag)
		}
		body, _, _, err := f.s.core.GetObject(context.Background(), f.s.bucket, f.name, opts)
		if err != nil {
			return 0, fmt.Errorf("blob store: read %s: %w", f.name, err)
		}
		f.body = body
	}
	n, err := f.body.Read(p)
	f.off += int64(n)
	if err == io.EOF && f.off < f.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (f *s3File) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = f.off + offset
	case io.SeekEnd:
		abs = f.size + offset
	default:
		return 0, errors.New("blob: bad whence")
	}
	if abs < 0 {
		return 0, errors.New("blob: negative position")
	}
	if abs != f.off && f.body != nil {
		f.body.Close()
		f.body = nil
	}
	f.off = abs
	return abs, nil
}

func (f *s3File) Close() error {
	if f.body != nil {
		err := f.body.Close()
		f.body = nil
		return err
	}
	return nil
}
