// Package vcapi serves the virtual classroom API: POST /v2/<operation>, and
// the legacy single entry points POST /v2, POST /v1 and POST / with
// task=<operation>. Requests authenticate with apikey (the domain's
// classroom key); answers are JSON in the specification's style or the
// compatibility style, or XML with format=xml.
//
// API-level failures (bad input, unknown or foreign ids, a bad key) are
// answered with HTTP 200 and the error body, as the hosted service does.
// Real faults are 5xx.
package vcapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
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
}

// operation is one entry of the operation table.
type operation struct {
	name string
	fn   func(ctx context.Context, c *call) (*result, error)
	// errElem is the XML element of an error's text: "message" for
	// schedule and payment, "errors" for the rest.
	errElem string
}

// apiError is an API-level failure: answered with HTTP 200 and the error
// body.
type apiError struct{ msg string }

func (e *apiError) Error() string { return e.msg }

// fail returns an API-level failure with a formatted message.
func fail(format string, args ...any) error { return &apiError{fmt.Sprintf(format, args...)} }

func (a *API) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Register adds the classroom API's entry points to mux.
func (a *API) Register(mux *http.ServeMux) {
	a.operations = map[string]operation{}
	for _, op := range a.operationTable() {
		a.operations[strings.ToLower(op.name)] = op
	}
	mux.HandleFunc("/v2/{operation}", a.serve)
	mux.HandleFunc("/v2", a.serve)
	mux.HandleFunc("/v1", a.serve)
	mux.HandleFunc("/{$}", a.serve)
}

// serve is every entry point: it reads the parameters, finds the
// operation, authenticates, runs it and writes the answer.
func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	p, err := httpx.ReadParams(r, a.MaxBody)
	if errors.Is(err, httpx.ErrUnsupportedBody) {
		err = nil // clients send odd content types with query-string parameters
	}
	style := a.DefaultStyle
	xmlOut := p != nil && strings.EqualFold(p.Get("format"), "xml")
	errElem := "errors"
	writeErr := func(status int, msg string) {
		if xmlOut {
			writeRaw(w, status, "application/xml; charset=utf-8", xmlError(msg, errElem))
			return
		}
		httpx.WriteJSON(w, status, jsonError(msg, style))
	}
	switch {
	case errors.Is(err, httpx.ErrBodyTooLarge):
		writeErr(http.StatusRequestEntityTooLarge, "request body is larger than "+strconv.FormatInt(a.MaxBody, 10)+" bytes")
		return
	case err != nil:
		writeErr(http.StatusOK, "request body could not be read: "+err.Error())
		return
	}
	if f := p.Get("format"); f != "" && !strings.EqualFold(f, "xml") && !strings.EqualFold(f, "json") {
		writeErr(http.StatusOK, "format must be json or xml")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeErr(http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed: every classroom API operation is a POST")
		return
	}
	name := r.PathValue("operation")
	if name == "" {
		name = p.Get("task")
		if name == "" {
			writeErr(http.StatusOK, "task is required: name the operation, e.g. task=listclass")
			return
		}
	}
	op, ok := a.operations[strings.ToLower(name)]
	if !ok {
		writeErr(http.StatusNotFound, "unknown operation "+strconv.Quote(name))
		return
	}
	errElem = op.errElem
	d, err := a.Store.AuthClassroom(r.Context(), p.Get("apikey"))
	if err != nil {
		if errors.As(err, new(*apiError)) || isUnauthorized(err) {
			writeErr(http.StatusOK, "Invalid API KEY")
			return
		}
		a.Logger.Error("authenticate", "request_id", httpx.RequestInfo(r.Context()).RequestID, "err", err)
		writeErr(http.StatusInternalServerError, "internal server error")
		return
	}
	httpx.RequestInfo(r.Context()).DomainID = d.ID
	if d.ResponseStyle != "" {
		style = d.ResponseStyle
	}
	dec := a.Limiter.Allow("vc:" + strconv.FormatInt(d.ID, 10))
	dec.SetHeaders(w.Header())
	if !dec.Allowed {
		writeErr(http.StatusTooManyRequests, "rate limit exceeded; retry after "+w.Header().Get("Retry-After")+" seconds")
		return
	}
	res, err := op.fn(r.Context(), &call{Domain: d, P: p, Op: op.name, Req: r})
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			writeErr(http.StatusOK, ae.msg)
			return
		}
		var se *statusError
		if errors.As(err, &se) {
			writeErr(se.status, se.msg)
			return
		}
		// The store's client-facing errors (a code already in use, ...)
		// are API-level failures too.
		var le *lms.Error
		if errors.As(err, &le) && le.Code != lms.CodeInternal {
			writeErr(http.StatusOK, le.Message)
			return
		}
		a.Logger.Error("internal error", "request_id", httpx.RequestInfo(r.Context()).RequestID, "operation", op.name, "err", err)
		writeErr(http.StatusInternalServerError, "internal server error")
		return
	}
	if xmlOut {
		writeRaw(w, http.StatusOK, "application/xml; charset=utf-8", xmlBody(res))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, jsonBody(res, style))
}

func writeRaw(w http.ResponseWriter, status int, ctype string, body []byte) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	w.Write(body)
}
