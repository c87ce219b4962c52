package httpx

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

type ctxKey int

const infoKey ctxKey = 0

// Info is per-request data that middleware and handlers share: the request
// id and, once authenticated, the domain id. It is logged with the request.
type Info struct {
	RequestID string
	DomainID  int64
}

// RequestInfo returns the request's Info (never nil inside Log).
func RequestInfo(ctx context.Context) *Info {
	if i, ok := ctx.Value(infoKey).(*Info); ok {
		return i
	}
	return &Info{}
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// newRequestID returns 16 random hex digits. They tell requests apart and
// need not be secret: the runtime's generator (ChaCha8, seeded by the
// system) is half the cost of crypto/rand here (68 against 128 ns).
func newRequestID() string {
	var n [8]byte
	var b [16]byte
	binary.BigEndian.PutUint64(n[:], rand.Uint64())
	hex.Encode(b[:], n[:])
	return string(b[:])
}

// logged is what Log keeps of a request, in one allocation rather than
// three.
type logged struct {
	info   Info
	w      statusWriter
	header [1]string // the X-Request-Id header's value
}

// Log assigns each request an id (returned as X-Request-Id), recovers from
// panics with a 500, and writes one structured log line per request with
// method, path, status, duration, domain id and request id. The path is the
// route pattern, never the request's own path, whose segments may hold
// tokens, signatures or emails (see LogPath); the numeric ids the pattern
// names are logged beside it. Query strings are not logged: classroom
// clients put their API key there.
func Log(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		l := &logged{info: Info{RequestID: newRequestID()}, w: statusWriter{ResponseWriter: w}}
		l.header[0] = l.info.RequestID
		w.Header()["X-Request-Id"] = l.header[:] // the name in canonical form
		info, sw := &l.info, &l.w
		r = r.WithContext(context.WithValue(r.Context(), infoKey, info))
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logger.Error("panic", "request_id", info.RequestID, "panic", v)
				if sw.status == 0 {
					WriteJSON(sw, http.StatusInternalServerError, map[string]any{
						"message": "internal server error", "code": "internal", "request_id": info.RequestID})
				}
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			// The handler is called directly, with no caller's program
			// counter: Logger.LogAttrs would walk the stack for one on every
			// request, and the line never shows it.
			h, ctx := logger.Handler(), r.Context()
			if !h.Enabled(ctx, slog.LevelInfo) {
				return
			}
			end := time.Now()
			line := requestLine{time: end, method: r.Method, path: LogPath(r), status: status,
				duration: end.Sub(start), domainID: info.DomainID, requestID: info.RequestID, ids: logIDs(r)}
			if lh, ok := h.(*LogHandler); ok {
				lh.logRequest(ctx, &line)
				return
			}
			h.Handle(ctx, line.record())
		}()
		next.ServeHTTP(sw, r)
	})
}

// Draining answers 503 once the server has begun shutting down, for
// requests that still arrive on open connections, and asks the client to
// close the connection.
func Draining(shuttingDown *atomic.Bool, unavailable http.Handler, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if shuttingDown.Load() {
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "5")
			unavailable.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// AcceptsJSON reports whether the Accept header allows a JSON answer. No
// header, */*, application/* and application/json (with any parameters or
// q > 0) all do.
func AcceptsJSON(r *http.Request) bool {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return true
	}
	for _, h := range accept {
		for _, part := range strings.Split(h, ",") {
			mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			if mt != "*/*" && mt != "application/*" && mt != "application/json" && mt != "" {
				continue
			}
			if qZero(params) {
				continue
			}
			return true
		}
	}
	return false
}

// qZero reports whether media-type parameters carry q=0 (not acceptable).
func qZero(params string) bool {
	for _, kv := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(kv, "=")
		if strings.TrimSpace(strings.ToLower(k)) == "q" {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q <= 0
		}
	}
	return false
}

// LogPath is the path to log for r: the pattern of the route that served
// it ("/classroom/e/{token}", "/api/v1/users/getuserbyEmail/{email}"), so
// that the values of wildcards never reach the log; only the classroom
// API's operation name is filled in ("/v2/listclass"). A request no pattern
// matched (or one served by a handler that copied the request) is logged
// with every segment that is not a short plain word replaced by "*": a
// token, a signature or an email never is one.
func LogPath(r *http.Request) string {
	if r.Pattern != "" {
		_, path, ok := strings.Cut(r.Pattern, " ")
		if !ok {
			path = r.Pattern
		}
		if i := strings.IndexByte(path, '/'); i > 0 {
			path = path[i:] // a host-qualified pattern
		}
		// The classroom API's operation name is no secret: log it.
		if op := r.PathValue("operation"); op != "" && plainSegment(op) {
			path = strings.Replace(path, "{operation}", op, 1)
		}
		return path
	}
	segs := strings.Split(r.URL.Path, "/")
	for i, seg := range segs {
		if !plainSegment(seg) {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, "/")
}

// plainSegment reports whether seg is safe to log: at most 32 letters,
// digits, '-' and '_' (an operation or resource name, or a number).
func plainSegment(seg string) bool {
	if len(seg) > 32 {
		return false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// logIDs returns "name=value" pairs for the pattern's wildcards whose value
// is a number (ids, never tokens), space-separated.
func logIDs(r *http.Request) string {
	if r.Pattern == "" {
		return ""
	}
	var b strings.Builder
	for name, rest, ok := nextWildcard(r.Pattern); ok; name, rest, ok = nextWildcard(rest) {
		v := r.PathValue(name)
		if v == "" || len(v) > 19 || strings.Trim(v, "0123456789") != "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name + "=" + v)
	}
	return b.String()
}
