package classroomapi

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/httpx"
)

// The answers' shapes and their JSON and XML are package wire's; these are
// their short names here.
type (
	obj     = wire.Obj
	kv      = wire.KV
	result  = wire.Result
	writeID = wire.WriteID
)

// Styles of JSON answer (see wire.StyleSeed and wire.StyleCompat).
const (
	StyleSeed   = wire.StyleSeed
	StyleCompat = wire.StyleCompat
)

// Headers of every classroom API answer: a browser that opens one (an
// answer labelled text/html holding a class title with <script>, say)
// never sniffs it into something else and never runs anything in it.
const (
	contentSecurityPolicy = "default-src 'none'; sandbox"
	htmlContentType       = "text/html; charset=UTF-8"
)

// The answers' header values, one slice each for every answer (see
// httpx.HeaderValue): Header.Set would make a slice per answer.
var (
	htmlType    = httpx.HeaderValue(htmlContentType)
	xmlType     = httpx.HeaderValue("application/xml; charset=utf-8")
	noSniff     = httpx.HeaderValue("nosniff")
	sandboxOnly = httpx.HeaderValue(contentSecurityPolicy)
)

// answer writes one request's answer: JSON in style, or XML.
type answer struct {
	w     http.ResponseWriter
	r     *http.Request
	style string
	xml   bool
	// errElem is the XML element of an error's text.
	errElem string
}

// error writes an API error with status.
func (a *answer) error(status int, msg string) {
	if a.xml {
		a.write(status, xmlType, wire.XMLError(msg, a.errElem))
		return
	}
	a.json(status, wire.JSONError(msg, a.style))
}

// result writes a successful answer.
func (a *answer) result(res *result) {
	if a.xml {
		a.write(http.StatusOK, xmlType, wire.XMLBody(res))
		return
	}
	buf := httpx.AnswerBuffer()
	defer httpx.FreeAnswerBuffer(buf)
	b, err := wire.AppendJSONBody(*buf, res, a.style)
	a.jsonBytes(http.StatusOK, b, err)
	*buf = b[:0]
}

// json writes v as JSON. The seed style labels it application/json. The
// compat style labels it text/html; charset=UTF-8, as the hosted service's
// PHP does (clients built on php-curl-class and jQuery decode what they
// get a second time, so only that label works for them), unless the
// request's Accept header names JSON.
func (a *answer) json(status int, v any) {
	buf := httpx.AnswerBuffer()
	defer httpx.FreeAnswerBuffer(buf)
	b, err := wire.AppendJSON(*buf, v) // escapes <, > and & as \u003c, \u003e, \u0026
	a.jsonBytes(status, b, err)
	*buf = b[:0]
}

// jsonBytes writes b, JSON that AppendJSON or AppendJSONBody wrote, or an
// internal error when writing it failed with err.
func (a *answer) jsonBytes(status int, b []byte, err error) {
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"status":"error","error":"internal server error"}`)
	}
	ctype := httpx.JSONType
	if a.style == StyleCompat && !acceptsJSON(a.r.Header.Values("Accept")) {
		ctype = htmlType
	}
	a.write(status, ctype, append(b, '\n'))
}

func (a *answer) write(status int, ctype []string, body []byte) {
	h := a.w.Header()
	h["Content-Type"] = ctype
	h["X-Content-Type-Options"] = noSniff
	h["Content-Security-Policy"] = sandboxOnly
	httpx.SetContentLength(h, len(body))
	a.w.WriteHeader(status)
	a.w.Write(body)
}

// acceptsJSON reports whether an Accept header names JSON: application/json,
// text/json or a +json type, with a quality above zero. Wildcards do not
// name JSON.
func acceptsJSON(accept []string) bool {
	for _, line := range accept {
		for _, part := range strings.Split(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if mt != "application/json" && mt != "text/json" && !strings.HasSuffix(mt, "+json") {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}
