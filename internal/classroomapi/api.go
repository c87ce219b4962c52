// Package classroomapi serves the virtual classroom API: POST /v2/<operation>, and
// the legacy single entry points POST /v2, POST /v1 and POST / with
// task=<operation>. Requests authenticate with apikey (the domain's
// classroom key); answers are JSON in the specification's style or the
// compatibility style, or XML with format=xml.
//
// API-level failures (bad input, unknown or foreign ids, a bad key) are
// answered with HTTP 200 and the error body, as the hosted service does.
// Real faults are 5xx.
package classroomapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/payment"
	"github.com/lectern-lms/lectern/internal/store"
)

// API is the virtual classroom API.
type API struct {
	Store   *store.Store
	Logger  *slog.Logger
	Limiter *httpx.RateLimiter
	MaxBody int64
	// AuthGuard limits failed authentications per client address (nil:
	// no limit).
	AuthGuard *httpx.AuthGuard
	// DefaultStyle is the JSON style for domains that chose none.
	DefaultStyle string
	// BaseURL is the server's public URL, for launch and recording links.
	BaseURL func() string
	// Blobs holds recording files.
	Blobs blob.Store
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Payments takes class payments.
	Payments *payment.Service

	operations map[string]operation
}

// call is one authenticated operation call.
type call struct {
	Domain store.Domain
	P      *httpx.Params
	Op     string
	Req    *http.Request
	space  *recordSpace // see records
	xml    bool         // the answer is XML
}

// operation is one entry of the operation table.
type operation struct {
	name string
	fn   func(ctx context.Context, c *call) (*result, error)
	// errElem is the XML element of an error's text: "message" for
	// schedule and payment, "errors" for the rest.
	errElem string
}

// apiError is an API-level failure, answered with the error body and
// status (0 means HTTP 200, as the API answers most failures; an
// idempotency key conflict is a 409). It is the API's one error type of its
// own: the store's and the rules' client-facing errors are lms.Error.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// fail returns an API-level failure with a formatted message.
func fail(format string, args ...any) error { return &apiError{msg: fmt.Sprintf(format, args...)} }

func (a *API) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Register adds the classroom API's entry points to mux: /v2/<operation>
// and /v1/<operation> (the v1 API had the same shape), the legacy single
// entry points /v2, /v1 and / with task=<operation>, and every other path
// under /v1/ and /v2/, answered as an unknown path in the API's error
// shape.
func (a *API) Register(mux *http.ServeMux) {
	a.operations = map[string]operation{}
	for _, op := range a.operationTable() {
		key := strings.ToLower(op.name)
		a.operations[key] = op
		// Each operation has routes of its own, for its name as the
		// table spells it and in lower case: an exact route is found
		// without the wildcard's allocations, and its pattern is the
		// path to log as it is. /v2/{operation} takes other spellings.
		// Both routes pass the operation's key, already in lower case.
		serve := func(w http.ResponseWriter, r *http.Request) { a.serveOperation(w, r, key) }
		for _, name := range slices.Compact([]string{op.name, key}) {
			mux.HandleFunc("/v2/"+name, serve)
			mux.HandleFunc("/v1/"+name, serve)
		}
	}
	mux.HandleFunc("/v2/{operation}", a.serve)
	mux.HandleFunc("/v1/{operation}", a.serve)
	mux.HandleFunc("/v2", a.serve)
	mux.HandleFunc("/v1", a.serve)
	mux.HandleFunc("/{$}", a.serve)
	mux.HandleFunc("/v2/", a.serve)
	mux.HandleFunc("/v1/", a.serve)
}

// serve is every entry point but the operations' own routes: the
// operation is the path's {operation}, or the task parameter.
func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	a.serveOperation(w, r, r.PathValue("operation"))
}

// serveOperation reads the parameters, finds the operation (name, or the
// task parameter when name is ""), authenticates, runs it and writes the
// answer.
//
// The key is checked first, whatever else is wrong with the request, so
// that every answer, errors included, comes in the style of the key's
// domain; without a valid key, in the server's style.
func (a *API) serveOperation(w http.ResponseWriter, r *http.Request, name string) {
	bodyErr := wire.EmptyJSONBody(r, a.MaxBody)
	var p *httpx.Params
	var err error
	if bodyErr == nil {
		p, err = httpx.ReadParams(r, a.MaxBody)
		if errors.Is(err, httpx.ErrUnsupportedBody) {
			err = nil // clients send odd content types with query-string parameters
		}
	}
	var get func(string) string
	if p != nil {
		get = p.Get
	} else {
		get = r.URL.Query().Get // parameters when the body could not be read
	}
	ans := &answer{w: w, r: r, style: a.DefaultStyle, xml: strings.EqualFold(get("format"), "xml"), errElem: "errors"}

	// Failed authentications are limited per client address: past the
	// limit no key is checked at all.
	if retry, blocked := a.AuthGuard.Blocked(r); blocked {
		httpx.RetryAfter(w.Header(), retry)
		ans.error(http.StatusTooManyRequests, "too many failed authentications from your address; retry after "+w.Header().Get("Retry-After")+" seconds")
		return
	}
	var d store.Domain
	authErr := errNoKey
	if key := get("apikey"); key != "" {
		d, authErr = a.Store.AuthClassroom(r.Context(), key)
		if authErr != nil && (errors.As(authErr, new(*apiError)) || isUnauthorized(authErr)) {
			a.AuthGuard.Failed(r)
		}
		if authErr == nil {
			httpx.RequestInfo(r.Context()).DomainID = d.ID
			if d.ResponseStyle != "" {
				ans.style = d.ResponseStyle
			}
		}
	}

	if r.Pattern == "/v2/" || r.Pattern == "/v1/" {
		ans.error(http.StatusNotFound, "unknown path "+strconv.Quote(r.URL.Path)+": the classroom API answers POST /v2/<operation> (or /v1/<operation>), e.g. POST /v2/getclass")
		return
	}
	switch {
	case bodyErr != nil:
		ans.error(http.StatusOK, bodyErr.Error())
		return
	case errors.Is(err, httpx.ErrBodyTooLarge):
		ans.error(http.StatusRequestEntityTooLarge, "request body is larger than "+strconv.FormatInt(a.MaxBody, 10)+" bytes")
		return
	case err != nil:
		// A parameter that is not text (invalid UTF-8, a NUL, a JSON
		// object) names itself; anything else is about the body.
		var le *lms.Error
		if errors.As(err, &le) && le.Code == lms.CodeInvalid {
			ans.error(http.StatusOK, le.Message)
			return
		}
		ans.error(http.StatusOK, "request body could not be read: "+err.Error())
		return
	}
	if f := p.Get("format"); f != "" && !strings.EqualFold(f, "xml") && !strings.EqualFold(f, "json") {
		ans.error(http.StatusOK, "format must be json or xml")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		ans.error(http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed: every classroom API operation is a POST")
		return
	}
	if name == "" {
		name = p.Get("task")
		if name == "" {
			ans.error(http.StatusOK, "task is required: name the operation, e.g. task=listclass")
			return
		}
	}
	op, ok := a.operations[strings.ToLower(name)]
	if !ok {
		ans.error(http.StatusNotFound, "unknown operation "+strconv.Quote(name))
		return
	}
	ans.errElem = op.errElem
	if authErr != nil {
		if authErr == errNoKey || errors.As(authErr, new(*apiError)) || isUnauthorized(authErr) {
			ans.error(http.StatusOK, "Invalid API KEY")
			return
		}
		a.Logger.Error("authenticate", "request_id", httpx.RequestInfo(r.Context()).RequestID, "err", authErr)
		ans.error(http.StatusInternalServerError, "internal server error")
		return
	}
	dec := a.Limiter.Allow("vc:" + strconv.FormatInt(d.ID, 10))
	dec.SetHeaders(w.Header())
	if !dec.Allowed {
		ans.error(http.StatusTooManyRequests, "rate limit exceeded; retry after "+w.Header().Get("Retry-After")+" seconds")
		return
	}
	c := &call{Domain: d, P: p, Op: op.name, Req: r, xml: ans.xml}
	defer c.releaseRecords() // once the answer is written
	res, err := op.fn(r.Context(), c)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			status := http.StatusOK
			if ae.status != 0 {
				status = ae.status
			}
			ans.error(status, ae.msg)
			return
		}
		// The store's client-facing errors (a code already in use, ...)
		// are API-level failures too.
		var le *lms.Error
		if errors.As(err, &le) && le.Code != lms.CodeInternal {
			ans.error(http.StatusOK, le.Message)
			return
		}
		a.Logger.Error("internal error", "request_id", httpx.RequestInfo(r.Context()).RequestID, "operation", op.name, "err", err)
		ans.error(http.StatusInternalServerError, "internal server error")
		return
	}
	ans.result(res)
}

// errNoKey stands for a request that sent no apikey.
var errNoKey = errors.New("no apikey")
