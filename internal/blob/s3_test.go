package blob_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/blob/blobtest"
)

// stores are the two implementations, each on a fresh folder or bucket.
func stores(t *testing.T) map[string]blob.Store {
	srv := blobtest.Start(t)
	return map[string]blob.Store{
		"dir": blob.Dir{Root: t.TempDir()},
		"s3":  srv.Store(t, "lectern/blobs"),
	}
}

func TestStores(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			key, n, err := st.Put("recordings/7", strings.NewReader("hello video"))
			if err != nil || n != 11 || !strings.HasPrefix(key, "recordings/7/") {
				t.Fatalf("put: %q %d %v", key, n, err)
			}
			f, err := st.Open(key)
			if err != nil {
				t.Fatal(err)
			}
			if f.Size() != 11 || f.ModTime().IsZero() {
				t.Fatalf("size %d mod %v", f.Size(), f.ModTime())
			}
			f.Seek(6, io.SeekStart)
			b, _ := io.ReadAll(f)
			f.Seek(0, io.SeekStart)
			head := make([]byte, 5)
			io.ReadFull(f, head)
			f.Close()
			if string(b) != "video" || string(head) != "hello" {
				t.Fatalf("read %q then %q", b, head)
			}
			if n, err := st.PutAt("files/3/slides.pdf", strings.NewReader("v1")); err != nil || n != 2 {
				t.Fatalf("put at: %d %v", n, err)
			}
			if _, err := st.PutAt("files/3/slides.pdf", strings.NewReader("version 2")); err != nil {
				t.Fatal(err)
			}
			if got := read(t, st, "files/3/slides.pdf"); got != "version 2" {
				t.Fatalf("after replacing: %q", got)
			}
			if err := st.Delete(key); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Open(key); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("open after delete: %v", err)
			}
			if err := st.Delete(key); err != nil {
				t.Fatalf("second delete: %v", err)
			}
			for _, bad := range []string{"../etc/passwd", "/etc/passwd", "", "a/../../b"} {
				if _, err := st.Open(bad); err == nil || errors.Is(err, blob.ErrNotFound) {
					t.Errorf("open of key %q accepted: %v", bad, err)
				}
				if _, err := st.PutAt(bad, strings.NewReader("x")); err == nil {
					t.Errorf("put at key %q accepted", bad)
				}
			}
			if _, _, err := st.Put("../up", strings.NewReader("x")); err == nil {
				t.Error("prefix with .. accepted")
			}
		})
	}
}

func read(t *testing.T, st blob.Store, key string) string {
	t.Helper()
	f, err := st.Open(key)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRangeRequests serves a blob with http.ServeContent, as the download
// handlers do, and asks for ranges as a video player seeking would.
func TestRangeRequests(t *testing.T) {
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			key, _, err := st.Put("lessons/1", bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f, err := st.Open(key)
				if err != nil {
					http.Error(w, err.Error(), 500)
					return
				}
				defer f.Close()
				http.ServeContent(w, r, "v.webm", f.ModTime(), f)
			}))
			defer srv.Close()
			for _, tc := range []struct {
				rng        string
				from, to   int // the bytes expected: data[from:to]
				wantStatus int
			}{
				{"", 0, len(data), 200},
				{"bytes=0-99", 0, 100, 206},
				{"bytes=250000-", 250000, len(data), 206},
				{"bytes=-1000", len(data) - 1000, len(data), 206},
				{"bytes=123456-123460", 123456, 123461, 206},
			} {
				req, _ := http.NewRequest("GET", srv.URL, nil)
				if tc.rng != "" {
					req.Header.Set("Range", tc.rng)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.wantStatus || !bytes.Equal(b, data[tc.from:tc.to]) {
					t.Errorf("range %q: status %d, %d bytes; want %d, %d bytes", tc.rng, resp.StatusCode, len(b), tc.wantStatus, tc.to-tc.from)
				}
			}
		})
	}
}

// blockingReader gives n bytes, then waits for release and returns err.
type blockingReader struct {
	n       int
	sent    chan struct{}
	release chan error
}

func (r *blockingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		close(r.sent)
		return 0, <-r.release
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// TestS3MultipartUpload: a blob larger than a part goes up in parts; while
// the upload is under way (as when the process dies in it) no object is
// visible, nor after it fails; a finished one reads back whole.
func TestS3MultipartUpload(t *testing.T) {
	srv := blobtest.Start(t)
	cfg := srv.Config(t, "p")
	cfg.PartSize = 5 << 20
	st, err := blob.NewS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &blockingReader{n: 12 << 20, sent: make(chan struct{}), release: make(chan error)}
	done := make(chan error)
	go func() {
		_, err := st.PutAt("recordings/1/big.webm", r)
		done <- err
	}()
	<-r.sent // two parts are up, the third is in the buffer
	if _, err := st.Open("recordings/1/big.webm"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("half-uploaded blob visible: %v", err)
	}
	r.release <- errors.New("client went away")
	if err := <-done; err == nil {
		t.Fatal("upload with a failing reader succeeded")
	}
	if _, err := st.Open("recordings/1/big.webm"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("failed upload visible: %v", err)
	}

	data := bytes.Repeat([]byte("0123456789abcdef"), (12<<20)/16+3)
	n, err := st.PutAt("recordings/1/big.webm", bytes.NewReader(data))
	if err != nil || n != int64(len(data)) {
		t.Fatalf("put: %d %v", n, err)
	}
	f, err := st.Open("recordings/1/big.webm")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Size() != int64(len(data)) {
		t.Fatalf("size %d", f.Size())
	}
	f.Seek(11<<20+5, io.SeekStart)
	tail, _ := io.ReadAll(f)
	if !bytes.Equal(tail, data[11<<20+5:]) {
		t.Fatalf("tail after seek: %d bytes differ", len(tail))
	}
}

func TestParseS3URL(t *testing.T) {
	for _, tc := range []struct{ in, bucket, prefix string }{
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://b/a/c/", "b", "a/c"},
	} {
		b, p, err := blob.ParseS3URL(tc.in)
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("%q: %q %q %v", tc.in, b, p, err)
		}
	}
	for _, bad := range []string{"", "b/x", "http://b/x", "s3:///x", "s3://k:s@b/x", "s3://b/x?y=1"} {
		if _, _, err := blob.ParseS3URL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
