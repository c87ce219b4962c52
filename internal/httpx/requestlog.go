package httpx

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LogHandler is the server's slog.Handler: slog's text or JSON handler,
// except that the one line Log writes per request is put together by hand,
// in the same bytes slog would write, at a quarter of the cost (the request
// line was 4-6 % of a point read's CPU; see docs/performance.md). Every
// other record, and a request line holding a string that slog would quote
// or escape differently, goes to slog's handler.
//
// w must keep each Write whole (an *os.File or a logwriter.Writer do), as
// the request lines are written beside slog's own.
type LogHandler struct {
	slog.Handler // slog's handler, for every other record
	w            io.Writer
	json         bool
	second       atomic.Pointer[secondStamp] // the last line's second, written out
}

// secondStamp is a second of a request line's time, written out: the date
// and clock to the second, and the zone. Formatting the whole time for
// each line was most of the line's cost; a second's lines share these.
type secondStamp struct {
	unix  int64
	loc   *time.Location
	clock string // 2006-01-02T15:04:05
	zone  string // Z07:00
}

// NewLogHandler returns a LogHandler writing JSON lines to w if format is
// "json", else text lines (key=value).
func NewLogHandler(format string, w io.Writer) *LogHandler {
	if format == "json" {
		return &LogHandler{Handler: slog.NewJSONHandler(w, nil), w: w, json: true}
	}
	return &LogHandler{Handler: slog.NewTextHandler(w, nil), w: w}
}

// requestLine is what Log writes about one request.
type requestLine struct {
	time      time.Time
	method    string
	path      string
	status    int
	duration  time.Duration
	domainID  int64
	requestID string
	ids       string // "" when the route names no numeric id
}

// record is the line as a slog record, for handlers other than LogHandler.
func (l *requestLine) record() slog.Record {
	rec := slog.NewRecord(l.time, slog.LevelInfo, "request", 0)
	rec.AddAttrs(
		slog.String("method", l.method),
		slog.String("path", l.path),
		slog.Int("status", l.status),
		slog.Duration("duration", l.duration),
		slog.Int64("domain_id", l.domainID),
		slog.String("request_id", l.requestID),
	)
	if l.ids != "" {
		rec.AddAttrs(slog.String("ids", l.ids))
	}
	return rec
}

var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// logRequest writes l, and reports whether it put the line together by
// hand (false: slog's handler did).
func (h *LogHandler) logRequest(ctx context.Context, l *requestLine) (byHand bool) {
	if !plainLogText(l.method) || !plainLogText(l.path) || !plainLogText(l.requestID) || !idsLogText(l.ids) {
		h.Handler.Handle(ctx, l.record())
		return false
	}
	bp := lineBuffers.Get().(*[]byte)
	b := (*bp)[:0]
	if h.json {
		b = append(b, `{"time":"`...)
		b = h.appendTime(b, l.time)
		b = append(b, `","level":"INFO","msg":"request","method":"`...)
		b = append(b, l.method...)
		b = append(b, `","path":"`...)
		b = append(b, l.path...)
		b = append(b, `","status":`...)
		b = strconv.AppendInt(b, int64(l.status), 10)
		b = append(b, `,"duration":`...)
		b = strconv.AppendInt(b, int64(l.duration), 10)
		b = append(b, `,"domain_id":`...)
		b = strconv.AppendInt(b, l.domainID, 10)
		b = append(b, `,"request_id":"`...)
		b = append(b, l.requestID...)
		if l.ids != "" {
			b = append(b, `","ids":"`...)
			b = append(b, l.ids...)
		}
		b = append(b, "\"}\n"...)
	} else {
		b = append(b, "time="...)
		b = h.appendTime(b, l.time)
		b = append(b, " level=INFO msg=request method="...)
		b = append(b, l.method...)
		b = append(b, " path="...)
		b = append(b, l.path...)
		b = append(b, " status="...)
		b = strconv.AppendInt(b, int64(l.status), 10)
		b = append(b, " duration="...)
		b = append(b, l.duration.String()...)
		b = append(b, " domain_id="...)
		b = strconv.AppendInt(b, l.domainID, 10)
		b = append(b, " request_id="...)
		b = append(b, l.requestID...)
		if l.ids != "" {
			b = append(b, " ids="...)
			// slog quotes a value holding '=' or ' ' (as "id=7" does).
			if strings.ContainsAny(l.ids, "= ") {
				b = append(b, '"')
				b = append(b, l.ids...)
				b = append(b, '"')
			} else {
				b = append(b, l.ids...)
			}
		}
		b = append(b, '\n')
	}
	h.w.Write(b)
	*bp = b
	lineBuffers.Put(bp)
	return true
}

// appendTime appends t as slog writes a record's time: in JSON as
// time.RFC3339Nano (the fraction without its trailing zeros, none when
// zero), in text as 2006-01-02T15:04:05.000Z07:00 (milliseconds,
// truncated).
func (h *LogHandler) appendTime(b []byte, t time.Time) []byte {
	s := h.second.Load()
	if s == nil || s.unix != t.Unix() || s.loc != t.Location() {
		s = &secondStamp{unix: t.Unix(), loc: t.Location(), clock: t.Format("2006-01-02T15:04:05"), zone: t.Format("Z07:00")}
		h.second.Store(s)
	}
	b = append(b, s.clock...)
	ns := t.Nanosecond()
	if !h.json {
		b = appendFraction(b, ns/1e6, 3)
	} else if ns != 0 {
		digits := 9
		for ns%10 == 0 {
			ns /= 10
			digits--
		}
		b = appendFraction(b, ns, digits)
	}
	return append(b, s.zone...)
}

// appendFraction appends '.' and n in digits decimal digits, zero-padded.
func appendFraction(b []byte, n, digits int) []byte {
	b = append(b, ".000000000"[:digits+1]...)
	for i := len(b) - 1; n > 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return b
}

// plainLogText reports whether slog writes s as it is in both formats: not
// empty, and only letters, digits and "/-_.*{}:".
func plainLogText(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '/' || c == '-' || c == '_' || c == '.' || c == '*' || c == '{' || c == '}' || c == ':') {
			return false
		}
	}
	return true
}

// idsLogText reports whether ids is empty or a plain text with '=' and ' '
// (which slog's text handler quotes with nothing to escape).
func idsLogText(ids string) bool {
	for i := 0; i < len(ids); i++ {
		if c := ids[i]; c != '=' && c != ' ' && !plainLogText(ids[i:i+1]) {
			return false
		}
	}
	return true
}
