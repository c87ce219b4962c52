// Package lmsapi serves the LMS management API under /api/v1: header
// authentication, parameter merging, the error shape, and one file of
// handlers per resource.
package lmsapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/cert"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/jsonx"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/payment"
	"github.com/lectern-lms/lectern/internal/portal"
	"github.com/lectern-lms/lectern/internal/quizsvc"
	"github.com/lectern-lms/lectern/internal/store"
	"github.com/lectern-lms/lectern/internal/webhook"
)

// Prefix is where the API lives.
const Prefix = "/api/v1"

// API is the LMS management API.
type API struct {
	Store   *store.Store
	Logger  *slog.Logger
	Limiter *httpx.RateLimiter
	// AuthGuard limits failed authentications per client address (nil:
	// no limit).
	AuthGuard *httpx.AuthGuard
	// MaxBody is the largest request body accepted, in bytes.
	MaxBody int64
	// Now is the clock of quotes and leaderboard periods (time.Now when
	// nil).
	Now func() time.Time
	// Quiz is the test engine (made from Store and Now when nil).
	Quiz *quizsvc.Service
	// Certs issues and revokes certificates.
	Certs *cert.Issuer
	// Portal issues login links and ends learner sessions (nil: the
	// sign-in endpoints answer 503).
	Portal *portal.Portal
	// Learn applies the course-content rules (progress, locks).
	Learn *learn.Service
	// Payments takes cart checkouts and refunds.
	Payments *payment.Service
	// MaxUpload is the largest lesson file accepted (DefaultMaxUpload
	// when 0).
	MaxUpload int64
	// Webhooks sends the test deliveries of /webhooks/test.
	Webhooks *webhook.Worker
	// WebhookAllowPrivate accepts endpoint URLs on private and loopback
	// addresses (--webhook-allow-private).
	WebhookAllowPrivate bool
}

func (a *API) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// call is one authenticated request: the caller's domain and the merged
// parameters.
type call struct {
	Domain store.Domain
	P      *httpx.Params
}

// handlerFunc is an API handler. A returned error is written in the API's
// error shape; handlers write successes themselves.
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *call) error

// Register adds every /api/v1 route to mux.
func (a *API) Register(mux *http.ServeMux) {
	rt := httpx.NewRouter(mux, func(w http.ResponseWriter, r *http.Request, allow []string) {
		a.writeError(w, r, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
			message: "method " + r.Method + " is not allowed on " + r.URL.Path + "; use " + strings.Join(allow, " or ")})
	})
	mux.HandleFunc(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		a.writeError(w, r, &apiError{status: http.StatusNotFound, code: "not_found", message: "no such endpoint: " + r.URL.Path})
	})
	a.routes(rt)
}

// Routes lists every route of the API as "METHOD /api/v1/...", sorted
// (for the OpenAPI document's test).
func Routes() []string {
	rt := httpx.NewRouter(http.NewServeMux(), nil)
	(&API{}).routes(rt)
	return rt.Routes()
}

// handle registers h for method and path (relative to Prefix).
func (a *API) handle(rt *httpx.Router, method, path string, h handlerFunc) {
	rt.Handle(method, Prefix+path, a.wrap(h))
}

// wrap runs the steps every call shares, in order: content negotiation
// (406), authentication (401), rate limit (429), parameter reading (413,
// 400), then h.
func (a *API) wrap(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpx.AcceptsJSON(r) {
			a.writeError(w, r, &apiError{status: http.StatusNotAcceptable, code: "not_acceptable",
				message: "this API answers only application/json; change the Accept header"})
			return
		}
		if retry, blocked := a.AuthGuard.Blocked(r); blocked {
			httpx.RetryAfter(w.Header(), retry)
			a.writeError(w, r, &apiError{status: http.StatusTooManyRequests, code: "rate_limited",
				message: "too many failed authentications from your address; retry after " + w.Header().Get("Retry-After") + " seconds"})
			return
		}
		d, err := a.authenticate(r)
		if err != nil {
			if errors.As(err, new(*apiError)) {
				a.AuthGuard.Failed(r)
			}
			a.writeError(w, r, err)
			return
		}
		httpx.RequestInfo(r.Context()).DomainID = d.ID
		dec := a.Limiter.Allow("lms:" + strconv.FormatInt(d.ID, 10))
		dec.SetHeaders(w.Header())
		if !dec.Allowed {
			a.writeError(w, r, &apiError{status: http.StatusTooManyRequests, code: "rate_limited",
				message: "rate limit exceeded; retry after " + w.Header().Get("Retry-After") + " seconds"})
			return
		}
		p, err := httpx.ReadParamsStructured(r, a.MaxBody, structuredParams)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		if err := h(w, r, &call{Domain: d, P: p}); err != nil {
			a.writeError(w, r, err)
		}
	})
}

// authenticate checks the Authorization and x-domain-id headers.
func (a *API) authenticate(r *http.Request) (store.Domain, error) {
	key := strings.TrimSpace(r.Header.Get("Authorization"))
	if len(key) > 7 && strings.EqualFold(key[:7], "bearer ") {
		key = strings.TrimSpace(key[7:])
	}
	rawID := strings.TrimSpace(r.Header.Get("X-Domain-Id"))
	switch {
	case key == "" && rawID == "":
		return store.Domain{}, unauthorized("missing Authorization and x-domain-id headers")
	case key == "":
		return store.Domain{}, unauthorized("missing Authorization header (send your LMS API key)")
	case rawID == "":
		return store.Domain{}, unauthorized("missing x-domain-id header")
	}
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil || id <= 0 {
		return store.Domain{}, unauthorized("x-domain-id must be a positive integer")
	}
	d, err := a.Store.AuthLMS(r.Context(), id, key)
	if err != nil {
		if lms.ErrorCode(err) == lms.CodeUnauthorized {
			return store.Domain{}, unauthorized("invalid API key or domain id")
		}
		return store.Domain{}, err
	}
	return d, nil
}

func unauthorized(msg string) error {
	return &apiError{status: http.StatusUnauthorized, code: "unauthorized", message: msg}
}

// apiError is an error with an HTTP status of its own (405, 406, 413, ...).
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

// writeError is the one place errors become responses. Anything that is not
// a client-facing error is logged with the request id and answered with a
// bare 500.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var body httpx.ErrorBody
	status := http.StatusInternalServerError
	var ae *apiError
	var le *lms.Error
	switch {
	case errors.As(err, &ae):
		status, body.Code, body.Message = ae.status, ae.code, ae.message
	case errors.Is(err, httpx.ErrBodyTooLarge):
		status, body.Code = http.StatusRequestEntityTooLarge, "body_too_large"
		body.Message = "request body is larger than " + strconv.FormatInt(a.MaxBody, 10) + " bytes"
	case errors.Is(err, httpx.ErrUnsupportedBody):
		status, body.Code = http.StatusUnsupportedMediaType, "unsupported_media_type"
		body.Message = "send the body as application/json, application/x-www-form-urlencoded or multipart/form-data"
	case errors.As(err, &le) && le.Code != lms.CodeInternal:
		status, body.Code, body.Message, body.Fields = httpx.CodeStatus(le.Code), string(le.Code), le.Message, le.Fields
	default:
		a.Logger.Error("internal error", "request_id", httpx.RequestInfo(r.Context()).RequestID, "path", r.URL.Path, "err", err)
		body.Code, body.Message = "internal", "internal server error"
	}
	httpx.WriteError(w, r, status, body)
}

// ok writes {"message": message, "data": data}; data is left out when nil.
func ok(w http.ResponseWriter, message string, data any) error {
	httpx.WriteJSON(w, http.StatusOK, okBody{Data: data, Message: message})
	return nil
}

// okWith writes the bytes ok(w, message, data) writes, with data written
// by appendData: the point reads' answers without reflection
// (TestOkWithMatchesOk).
func okWith(w http.ResponseWriter, message string, appendData func(b []byte) []byte) error {
	return writeWithMessage(w, "data", appendData, message)
}

// writeWithMessage writes the bytes writeJSON writes of an object of two
// members, key (sorted before "message") with the value appendValue
// appends as JSON, and message.
func writeWithMessage(w http.ResponseWriter, key string, appendValue func(b []byte) []byte, message string) error {
	bp := httpx.AnswerBuffer()
	defer httpx.FreeAnswerBuffer(bp)
	b := append(jsonx.AppendString(append(*bp, '{'), key), ':')
	b = appendValue(b)
	b = append(b, `,"message":`...)
	b = jsonx.AppendString(b, message)
	b = append(b, "}\n"...)
	*bp = b
	httpx.WriteJSONBytes(w, http.StatusOK, b)
	return nil
}

// okBody is ok's answer. Its fields are in the order a map's keys were
// written in before (sorted), so the bytes are the same; a struct is
// encoded without building and sorting a map on every answer.
type okBody struct {
	Data    any    `json:"data,omitempty"` // left out when nil
	Message string `json:"message"`
}

// idParam reads one required positive id parameter.
func idParam(c *call, name string) (int64, error) {
	var v lms.Validator
	id := c.P.ID(&v, name)
	return id, v.Err()
}
