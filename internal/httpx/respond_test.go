package httpx

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWriteJSONBytesLength: an answer of any size goes out with its
// Content-Length, never in chunks, and arrives whole, through Log as the
// server wraps every handler: net/http's own length up to answerBuffered
// bytes, SetContentLength's past it.
func TestWriteJSONBytesLength(t *testing.T) {
	for _, n := range []int{2, 2047, answerBuffered, answerBuffered + 1, 4000, 4096, 5000, 8000, 9000, 16000, 33000, 70000} {
		body := `"` + strings.Repeat("x", n-2) + `"`
		srv := httptest.NewServer(Log(slog.New(slog.DiscardHandler), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			WriteJSONBytes(w, http.StatusCreated, []byte(body))
		})))
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusCreated || string(got) != body {
			t.Fatalf("%d bytes: status %d, %d bytes back", n, resp.StatusCode, len(got))
		}
		if resp.ContentLength != int64(n) || len(resp.TransferEncoding) != 0 {
			t.Errorf("%d bytes: Content-Length %d, Transfer-Encoding %v", n, resp.ContentLength, resp.TransferEncoding)
		}
	}
}
