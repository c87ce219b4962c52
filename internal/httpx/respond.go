package httpx

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

// WriteJSON writes v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	p := AnswerBuffer()
	defer FreeAnswerBuffer(p)
	buf := bytes.NewBuffer(*p)
	// An Encoder escapes HTML characters as json.Marshal does, and ends the
	// value with a newline.
	err := json.NewEncoder(buf).Encode(v)
	*p = buf.Bytes()
	if err != nil {
		http.Error(w, `{"message":"internal server error","code":"internal"}`, http.StatusInternalServerError)
		return
	}
	WriteJSONBytes(w, status, *p)
}

// WriteJSONBytes writes b, an answer already encoded as JSON, with status.
func WriteJSONBytes(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	SetContentLength(h, len(b))
	w.WriteHeader(status)
	w.Write(b)
}

// SetContentLength sets the Content-Length of an answer of n bytes,
// written whole. Without it net/http sends an answer longer than 2 KB in
// chunks, which costs the server and the client more than the header.
func SetContentLength(h http.Header, n int) {
	h["Content-Length"] = []string{strconv.Itoa(n)}
}

// Answer buffers are reused between requests: a page of records would
// otherwise allocate its whole answer, several times over as it grows, on
// every call.
var answerPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledAnswer keeps a rare huge answer from pinning its memory.
const maxPooledAnswer = 256 << 10

// AnswerBuffer returns an empty byte slice to build an answer in; hand it
// back with FreeAnswerBuffer once the answer is written.
func AnswerBuffer() *[]byte {
	return answerPool.Get().(*[]byte)
}

// FreeAnswerBuffer returns b to the pool. Neither b nor what it held may be
// used afterwards.
func FreeAnswerBuffer(b *[]byte) {
	if cap(*b) > maxPooledAnswer {
		return
	}
	*b = (*b)[:0]
	answerPool.Put(b)
}
