// Package metrics exposes Lectern's Prometheus metrics: HTTP requests by
// route pattern and status, latency, store queries and connections,
// rate-limited requests, live rooms and participants, and webhook
// deliveries. Label values are route patterns, methods, status codes and
// fixed names only: never ids, keys or emails.
package metrics

import (
	"database/sql"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is one registry and the collectors Lectern updates. A nil
// *Metrics is valid and records nothing.
type Metrics struct {
	Registry *prometheus.Registry

	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	queries     *prometheus.HistogramVec
	deliveries  *prometheus.CounterVec
	failures    *prometheus.CounterVec
	delLatency  prometheus.Histogram

	// The series a request or a statement updates, looked up by their
	// labels once rather than on every request (hashing the label values
	// was 2 % of the server's CPU under a point read).
	requestSeries sync.Map                       // seriesKey → *requestSeries
	queryOps      map[string]prometheus.Observer // by op; read-only after New
}

type seriesKey struct {
	method, route string
	status        int
}

type requestSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// series returns the collectors of a request's labels.
func (m *Metrics) series(method, route string, status int) *requestSeries {
	k := seriesKey{method, route, status}
	if s, ok := m.requestSeries.Load(k); ok {
		return s.(*requestSeries)
	}
	s, _ := m.requestSeries.LoadOrStore(k, &requestSeries{
		requests: m.requests.WithLabelValues(method, route, strconv.Itoa(status)),
		latency:  m.latency.WithLabelValues(method, route),
	})
	return s.(*requestSeries)
}

// New returns metrics on a fresh registry that also holds the Go runtime
// and process collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{Registry: reg}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lectern_http_requests_total",
		Help: "HTTP requests by method, route pattern and status code.",
	}, []string{"method", "route", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "lectern_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by method and route pattern.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"method", "route"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lectern_http_rate_limited_total",
		Help: "Requests refused with 429 Too Many Requests, by route pattern.",
	}, []string{"route"})
	m.queries = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "lectern_store_query_duration_seconds",
		Help:    "Time for the database to answer a statement, by kind (exec, query, query_row).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	}, []string{"op"})
	m.queryOps = make(map[string]prometheus.Observer)
	for _, op := range []string{"exec", "query", "query_row"} {
		m.queryOps[op] = m.queries.WithLabelValues(op)
	}
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lectern_webhook_deliveries_total",
		Help: "Webhook delivery attempts by result: success, failure (will retry), or gave_up.",
	}, []string{"result"})
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lectern_webhook_delivery_failures_total",
		Help: "Failed webhook delivery attempts (tests included) by reason: status_4xx, status_5xx, redirect, timeout, refused_address, connect, signing.",
	}, []string{"reason"})
	m.delLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "lectern_webhook_delivery_duration_seconds",
		Help:    "Time for a webhook receiver to answer.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 15},
	})
	reg.MustRegister(m.requests, m.latency, m.rateLimited, m.queries, m.deliveries, m.failures, m.delLatency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every result exists from the start, so that rate() sees the first
	// failure.
	for _, r := range []string{"success", "failure", "gave_up"} {
		m.deliveries.WithLabelValues(r)
	}
	for _, r := range FailureReasons {
		m.failures.WithLabelValues(r)
	}
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// ObserveQuery records one statement's latency; op is exec, query or
// query_row.
func (m *Metrics) ObserveQuery(op string, d time.Duration) {
	if m == nil {
		return
	}
	o, ok := m.queryOps[op]
	if !ok {
		o = m.queries.WithLabelValues(op)
	}
	o.Observe(d.Seconds())
}

// ObserveDelivery records one webhook attempt: result is success, failure
// or gave_up.
func (m *Metrics) ObserveDelivery(result string, d time.Duration) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues(result).Inc()
	if d > 0 {
		m.delLatency.Observe(d.Seconds())
	}
}

// FailureReasons are the reason label values of
// lectern_webhook_delivery_failures_total.
var FailureReasons = []string{"status_4xx", "status_5xx", "redirect", "timeout", "refused_address", "connect", "signing"}

// ObserveDeliveryFailure counts one failed webhook attempt by reason (one
// of FailureReasons).
func (m *Metrics) ObserveDeliveryFailure(reason string) {
	if m == nil {
		return
	}
	m.failures.WithLabelValues(reason).Inc()
}

// DBStats registers the connection pool statistics of db (open, in use,
// idle, waits) under the pool's name ("read" or "write").
func (m *Metrics) DBStats(name string, db *sql.DB) {
	if m == nil || db == nil {
		return
	}
	m.Registry.MustRegister(collectors.NewDBStatsCollector(db, name))
}

// Gauge registers a gauge whose value fn reads at scrape time.
func (m *Metrics) Gauge(name, help string, fn func() float64) {
	if m == nil {
		return
	}
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

// Wrap counts and times each request next serves. The route label comes
// from Route, which must wrap the ServeMux inside next; requests that no
// mux pattern named (such as learner portal pages on a domain's host)
// are labelled "other".
func (m *Metrics) Wrap(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		route := routeLabel(rec.pattern)
		method := methodLabel(r.Method)
		s := m.series(method, route, rec.status)
		s.requests.Inc()
		s.latency.Observe(time.Since(start).Seconds())
		if rec.status == http.StatusTooManyRequests {
			m.rateLimited.WithLabelValues(route).Inc()
		}
	})
}

// Route wraps a ServeMux so that Wrap can label requests with the pattern
// the mux matched (the mux records it on the request it was given). The
// result still answers Handler(r), as the mux does.
func Route(mux *http.ServeMux) http.Handler { return routed{mux} }

type routed struct{ *http.ServeMux }

// ServeHTTP hands the pattern to Wrap's recorder, found by unwrapping the
// response writers the layers between them added (each has Unwrap, for
// http.ResponseController): no request copy or context value per request.
func (rt routed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.ServeMux.ServeHTTP(w, r)
	for {
		if rec, ok := w.(*statusRecorder); ok {
			rec.pattern = r.Pattern
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// routeLabel is the pattern without its method (the method has its own
// label), or "unmatched".
func routeLabel(pattern string) string {
	if pattern == "" {
		return "other"
	}
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == ' ' {
			return pattern[i+1:]
		}
		if pattern[i] == '/' {
			break
		}
	}
	return pattern
}

// methodLabel keeps the label set small: unknown methods are "other".
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// statusRecorder remembers the status code written through it.
type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	pattern     string // the route's, set by routed
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.status, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wroteHeader = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer
// (flushing, hijacking for WebSockets, deadlines).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
