// Package blobtest starts a real S3-compatible server (versitygw, with a
// folder as its backend) for tests of code that keeps blobs in S3.
package blobtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lectern-lms/lectern/internal/blob"
)

// Server is a running versitygw.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Dir       string // the backend folder: bucket/object paths
}

// Find returns the versitygw binary: on PATH, else in GOBIN or GOPATH/bin.
// Without it the test is skipped, except under CI (CI set), where it fails:
// .ci/run installs it.
func Find(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	for _, dir := range []string{os.Getenv("GOBIN"), filepath.Join(goPath(), "bin")} {
		p := filepath.Join(dir, "versitygw")
		if dir != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	const msg = "versitygw is not installed: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func goPath() string {
	if p := os.Getenv("GOPATH"); p != "" {
		return filepath.SplitList(p)[0]
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go")
}

// Start runs versitygw on a free loopback port until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Find(t)
	s := &Server{AccessKey: "lectern-test", SecretKey: randHex(16), Dir: t.TempDir()}
	for attempt := 0; attempt < 5; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		cmd := exec.Command(bin, "--access", s.AccessKey, "--secret", s.SecretKey, "--port", addr, "posix", s.Dir)
		cmd.Stdout, cmd.Stderr = nil, nil
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		if ready(addr, exited) {
			t.Cleanup(func() { cmd.Process.Kill(); <-exited })
			s.Endpoint = "http://" + addr
			return s
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatal("versitygw did not start")
	return nil
}

func ready(addr string, exited chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// Bucket makes a new bucket and returns its name.
func (s *Server) Bucket(t testing.TB) string {
	t.Helper()
	name := "t-" + randHex(8)
	c, err := minio.New(s.Endpoint[len("http://"):], &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		BucketLookup: minio.BucketLookupPath, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatal(err)
	}
	return name
}

// Config is the S3Config of a new bucket on s, with prefix.
func (s *Server) Config(t testing.TB, prefix string) blob.S3Config {
	return blob.S3Config{URL: "s3://" + s.Bucket(t) + "/" + prefix, Endpoint: s.Endpoint, Region: "us-east-1",
		PathStyle: true, AccessKey: s.AccessKey, SecretKey: s.SecretKey}
}

// Store is a blob.S3 on a new bucket of s.
func (s *Server) Store(t testing.TB, prefix string) *blob.S3 {
	t.Helper()
	st, err := blob.NewS3(s.Config(t, prefix))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
