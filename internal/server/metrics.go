package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/lectern-lms/lectern/internal/metrics"
)

// openMetrics makes the registry, hooks the store and the classroom into
// it, and binds --metrics-addr when it is set.
func (m *Main) openMetrics() error {
	if m.Metrics == nil {
		m.Metrics = metrics.New()
	}
	mt := m.Metrics
	m.Store.SetQueryObserver(mt.ObserveQuery)
	read, write := m.Store.Pools()
	if read == write {
		mt.DBStats("store", read)
	} else {
		mt.DBStats("read", read)
		mt.DBStats("write", write)
	}
	mt.Gauge("lectern_classroom_rooms", "Live classroom rooms open in this process.", func() float64 {
		if m.Hub == nil {
			return 0
		}
		return float64(m.Hub.Rooms())
	})
	mt.Gauge("lectern_classroom_participants", "Users present in this process's live classroom rooms.", func() float64 {
		if m.Hub == nil {
			return 0
		}
		return float64(m.Hub.Participants())
	})
	if m.Config.MetricsAddr != "" {
		ln, err := net.Listen("tcp", m.Config.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen on %s (--metrics-addr): %w", m.Config.MetricsAddr, err)
		}
		m.metricsLn = ln
	}
	return nil
}

// metricsRoute adds GET /metrics to the main mux unless --metrics-addr
// moves it to a listener of its own.
func (m *Main) metricsRoute(mux *http.ServeMux) {
	if m.metricsLn == nil {
		mux.Handle("GET /metrics", m.Metrics.Handler())
	}
}

// MetricsAddr is the address of the --metrics-addr listener ("" when
// metrics are on the main address).
func (m *Main) MetricsAddr() string {
	if m.metricsLn == nil {
		return ""
	}
	return m.metricsLn.Addr().String()
}

// serveMetrics serves GET /metrics on the --metrics-addr listener, if
// any; the returned function stops it.
func (m *Main) serveMetrics() (stop func()) {
	if m.metricsLn == nil {
		return func() {}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn)}
	go func() {
		if err := srv.Serve(m.metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Logger.Error("metrics listener stopped", "err", err)
		}
	}()
	return func() { srv.Close() }
}
