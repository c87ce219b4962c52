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
	h["Content-Type"] = JSONType
	SetContentLength(h, len(b))
	w.WriteHeader(status)
	w.Write(b)
}

// JSONType is the Content-Type of a JSON answer, as a header value.
var JSONType = HeaderValue("application/json; charset=utf-8")

// HeaderValue returns a header value to assign to an http.Header under its
// canonical name, made once and shared by every answer that sends it,
// where Header.Set makes a slice per answer. Sharing is safe: net/http
// copies a handler's header when the status is written (Header.Clone),
// nothing here changes a value in place, and Add appends to a copy (the
// slice has no room past its one value).
func HeaderValue(v string) []string { return []string{v} }

// SetContentLength sets the Content-Length of an answer of n bytes,
// written whole in one Write before the handler returns. net/http holds
// the first answerBuffered bytes of an answer before it writes the header,
// and sends the length of an answer that ended within them itself,
// without allocating; a longer answer would go out in chunks, which costs
// the server and the client more than the header. So the header is set
// here only for the longer ones (TestWriteJSONBytesLength checks both
// sides of the line).
func SetContentLength(h http.Header, n int) {
	if n > answerBuffered {
		h["Content-Length"] = []string{strconv.Itoa(n)}
	}
}

// answerBuffered is net/http's bufferBeforeChunkingSize.
const answerBuffered = 2048

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
