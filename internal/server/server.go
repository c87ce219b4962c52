// Package server wires Lectern together: it opens the store, migrates it,
// builds the HTTP handler for both APIs and serves it until told to stop.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/classroom"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lmsapi"
	"github.com/lectern-lms/lectern/internal/store"
	"github.com/lectern-lms/lectern/internal/vcapi"
)

// Main is a running server. Use Open, then Serve; Close releases the store.
type Main struct {
	Config config.Config
	Logger *slog.Logger

	Store *store.Store
	// Now is the clock of the classroom API and pages; nil means
	// time.Now. Tests set it to walk a class through its life.
	Now func() time.Time

	listeners    []net.Listener
	servers      []*http.Server
	shuttingDown atomic.Bool
}

// Open opens and migrates the store and binds the listen addresses, so
// that Addr is known before Serve.
func (m *Main) Open(ctx context.Context) error {
	if m.Logger == nil {
		m.Logger = slog.Default()
	}
	st, err := store.Open(ctx, store.Options{DatabaseURL: m.Config.DatabaseURL, DataDir: m.Config.DataDir})
	if err != nil {
		return err
	}
	m.Store = st
	applied, err := st.Migrate(ctx)
	if err != nil {
		st.Close()
		return fmt.Errorf("migrate: %w", err)
	}
	for _, a := range applied {
		m.Logger.Info("migration applied", "version", a.Version, "name", a.Name)
	}
	addrs := []string{m.Config.Addr}
	if m.Config.AltAddr != "" {
		addrs = append(addrs, m.Config.AltAddr)
	}
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			m.closeListeners()
			st.Close()
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		m.listeners = append(m.listeners, ln)
	}
	return nil
}

func (m *Main) closeListeners() {
	for _, ln := range m.listeners {
		ln.Close()
	}
	m.listeners = nil
}

// Addr is the address the main listener is bound to (useful with port 0).
func (m *Main) Addr() string { return m.listeners[0].Addr().String() }

// Addrs are the addresses of every listener: the main one, then --alt-addr.
func (m *Main) Addrs() []string {
	out := make([]string, len(m.listeners))
	for i, ln := range m.listeners {
		out[i] = ln.Addr().String()
	}
	return out
}

// BaseURL is the URL clients reach this server at.
func (m *Main) BaseURL() string {
	c := m.Config
	if c.PublicURL == "" {
		c.Addr = m.Addr()
	}
	return c.BaseURL()
}

// Blobs is where recordings are kept: the blobs folder of the data dir.
func (m *Main) Blobs() blob.Store {
	return blob.Dir{Root: filepath.Join(m.Config.DataDir, "blobs")}
}

// Handler builds the HTTP handler of every API and page.
func (m *Main) Handler() http.Handler {
	limiter := httpx.NewRateLimiter(m.Config.RateLimit, m.Config.RateBurst)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := m.Store.Ping(ctx); err != nil {
			m.Logger.Error("readiness check failed", "err", err)
			httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "message": "store unreachable"})
			return
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	lms := &lmsapi.API{Store: m.Store, Logger: m.Logger, Limiter: limiter, MaxBody: m.Config.MaxBodyBytes, Now: m.Now}
	lms.Register(mux)
	blobs := m.Blobs()
	vc := &vcapi.API{Store: m.Store, Logger: m.Logger, Limiter: limiter, MaxBody: m.Config.MaxBodyBytes,
		DefaultStyle: m.Config.ResponseStyle, BaseURL: m.BaseURL, Blobs: blobs, Now: m.Now}
	vc.Register(mux)
	pages := &classroom.Pages{Store: m.Store, Blobs: blobs, Logger: m.Logger, Now: m.Now}
	pages.Register(mux)
	unavailable := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{
			"message": "server is shutting down; retry shortly", "code": "unavailable",
			"request_id": httpx.RequestInfo(r.Context()).RequestID})
	})
	return httpx.Log(m.Logger, httpx.Draining(&m.shuttingDown, unavailable, mux))
}

// Serve serves until ctx is done, then stops accepting, waits up to the
// shutdown timeout for in-flight requests, and returns. It does not close
// the store; call Close.
func (m *Main) Serve(ctx context.Context) error {
	h := m.Handler()
	var tlsConfig *tls.Config
	if m.Config.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(m.Config.TLSCert, m.Config.TLSKey)
		if err != nil {
			return fmt.Errorf("load TLS certificate: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	errc := make(chan error, len(m.listeners))
	var wg sync.WaitGroup
	for _, ln := range m.listeners {
		srv := &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       60 * time.Second,
			IdleTimeout:       120 * time.Second,
			ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
			TLSConfig:         tlsConfig,
		}
		m.servers = append(m.servers, srv)
		if tlsConfig != nil {
			ln = tls.NewListener(ln, tlsConfig)
		}
		wg.Add(1)
		go func(ln net.Listener) {
			defer wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}(ln)
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	m.shuttingDown.Store(true)
	m.Logger.Info("shutting down", "timeout", m.Config.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.Config.ShutdownTimeout)
	defer cancel()
	for _, srv := range m.servers {
		if err := srv.Shutdown(sctx); err != nil {
			m.Logger.Warn("shutdown did not finish in time; closing connections", "err", err)
			srv.Close()
		}
	}
	wg.Wait()
	return serveErr
}

// Close releases the listeners (if Serve never ran) and the store.
func (m *Main) Close() error {
	if len(m.servers) == 0 {
		m.closeListeners()
	}
	if m.Store != nil {
		return m.Store.Close()
	}
	return nil
}

// Run is Open, Serve and Close.
func (m *Main) Run(ctx context.Context) error {
	if err := m.Open(ctx); err != nil {
		return err
	}
	defer m.Close()
	m.announce(ctx)
	return m.Serve(ctx)
}

// announce logs where the server listens and, on an empty store, exactly
// how to get the first domain's credentials.
func (m *Main) announce(ctx context.Context) {
	m.Logger.Info("lectern listening", "addr", m.Addr(), "url", m.BaseURL(), "database", m.databaseName())
	ds, err := m.Store.Domains(ctx)
	if err != nil || len(ds) > 0 {
		return
	}
	cmd := "lectern domain create --name \"My School\""
	if m.Config.DatabaseURL != "" {
		cmd += " --database-url '<same as serve>'"
	} else if m.Config.DataDir != config.Default().DataDir {
		cmd += " --data-dir " + shellQuote(m.Config.DataDir)
	}
	m.Logger.Info("no domains yet: create the first one (it prints the domain id and both API keys) with: " + cmd)
}

func (m *Main) databaseName() string {
	if m.Store.Postgres() {
		return "postgresql"
	}
	return "sqlite in " + m.Config.DataDir
}

func shellQuote(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + s + "'"
		}
	}
	return s
}
