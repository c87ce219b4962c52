// Package server wires Lectern together: it opens the store, migrates it,
// builds the HTTP handler for both APIs and serves it until told to stop.
package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lectern-lms/lectern/internal/apidocs"
	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/classroom"
	"github.com/lectern-lms/lectern/internal/classroom/i18n"
	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/classroom/sfu"
	"github.com/lectern-lms/lectern/internal/classroom/turn"
	"github.com/lectern-lms/lectern/internal/classroomapi"
	"github.com/lectern-lms/lectern/internal/cluster"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lmsapi"
	"github.com/lectern-lms/lectern/internal/metrics"
	"github.com/lectern-lms/lectern/internal/portal"
	"github.com/lectern-lms/lectern/internal/quizsvc"
	"github.com/lectern-lms/lectern/internal/store"
	"github.com/lectern-lms/lectern/internal/webhook"
)

// Main is a running server. Use Open, then Serve; Close releases the store.
type Main struct {
	Config config.Config
	Logger *slog.Logger

	Store *store.Store
	// Secret is the server secret (see SecretFile).
	Secret []byte
	// Now is the clock of the classroom API and pages; nil means
	// time.Now. Tests set it to walk a class through its life.
	Now func() time.Time

	// Hub holds the live classroom's rooms.
	Hub *room.Hub
	// SFU forwards the rooms' media; TURN relays it for clients that
	// cannot reach the SFU directly (nil when --turn-port is 0).
	SFU  *sfu.SFU
	TURN *turn.Server

	recordings *classroom.Recordings
	blobs      blob.Store // set by Open (see blobs.go)
	cluster    *cluster.Cluster
	// Quiz is the test engine (set by Open).
	Quiz      *quizsvc.Service
	testClock *testClock

	// Learn is the course-content service (outline, locks, progress,
	// media); set by Open.
	Learn *learn.Service

	// Webhooks delivers the webhook outbox (set by Open). WebhookPoll is
	// how often it looks for due messages: 0 means WebhookPollInterval, a
	// negative value runs no worker in this process (tests).
	Webhooks    *webhook.Worker
	WebhookPoll time.Duration

	// Metrics is the Prometheus registry (set by Open).
	Metrics   *metrics.Metrics
	metricsLn net.Listener

	listeners    []net.Listener
	baseURL      string // BaseURL, once the listeners are bound
	servers      []*http.Server
	shuttingDown atomic.Bool
}

// Open opens and migrates the store and binds the listen addresses, so
// that Addr is known before Serve.
func (m *Main) Open(ctx context.Context) error {
	if m.Logger == nil {
		m.Logger = slog.Default()
	}
	m.openTestClock()
	st, err := store.Open(ctx, store.Options{
		DatabaseURL: m.Config.DatabaseURL, DataDir: m.Config.DataDir, Now: m.Now,
		// A cluster node shares its database with other writers.
		CacheRecords: m.Config.Cluster.InternalURL == "",
	})
	if err != nil {
		return err
	}
	m.Store = st
	if m.Secret, err = LoadSecret(m.Config.DataDir); err != nil {
		st.Close()
		return err
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		st.Close()
		return fmt.Errorf("migrate: %w", err)
	}
	for _, a := range applied {
		m.Logger.Info("migration applied", "version", a.Version, "name", a.Name)
	}
	if m.blobs, err = OpenBlobs(ctx, m.Config); err != nil {
		st.Close()
		return err
	}
	if err := m.openLearn(ctx); err != nil {
		st.Close()
		return err
	}
	m.quizService()
	if err := m.openMetrics(); err != nil {
		st.Close()
		return err
	}
	m.openWebhooks()
	addrs := []string{m.Config.Addr}
	if m.Config.AltAddr != "" {
		addrs = append(addrs, m.Config.AltAddr)
	}
	// Attendance sessions a stopped server left open end now.
	if n, err := m.closeOpenAttendance(ctx); err != nil {
		st.Close()
		return fmt.Errorf("close open attendance: %w", err)
	} else if n > 0 {
		m.Logger.Info("closed attendance sessions left open by the last run", "sessions", n)
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
	m.baseURL = m.boundBaseURL()
	if err := m.openMedia(); err != nil {
		m.closeListeners()
		st.Close()
		return err
	}
	if err := m.openCluster(ctx); err != nil {
		m.closeListeners()
		st.Close()
		return err
	}
	return nil
}

func (m *Main) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// mediaHost is the address the media ports bind to: loopback when the
// server listens only on loopback (it serves this machine only, and
// offers loopback candidates), else every address.
func (m *Main) mediaHost() (host string, loopback bool) {
	h, _, err := net.SplitHostPort(m.Config.Addr)
	if err == nil {
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() || h == "localhost" {
			return "127.0.0.1", true
		}
	}
	return "", false
}

// openMedia starts the SFU, the TURN server and the room hub.
func (m *Main) openMedia() error {
	host, loopback := m.mediaHost()
	cfg := sfu.Config{UDPAddr: net.JoinHostPort(host, strconv.Itoa(m.Config.RTCUDPPort)), Loopback: loopback, Logger: m.Logger}
	if m.Config.RTCPublicIP != "" {
		cfg.PublicIPs = []string{m.Config.RTCPublicIP}
	}
	s, err := sfu.New(cfg)
	if err != nil {
		return fmt.Errorf("media port: %w", err)
	}
	m.SFU = s
	if m.Config.TURNPort != 0 {
		secret := make([]byte, 32)
		rand.Read(secret)
		public := m.Config.RTCPublicIP
		if public == "" && loopback {
			public = "127.0.0.1"
		}
		t, err := turn.New(turn.Config{Addr: net.JoinHostPort(host, strconv.Itoa(m.Config.TURNPort)), PublicIP: public,
			Realm: "lectern", Secret: secret, AllowPeer: s.OwnsIP, Logger: m.Logger})
		if err != nil {
			s.Close()
			return fmt.Errorf("TURN port: %w", err)
		}
		m.TURN = t
	}
	recordings := &classroom.Recordings{Store: m.Store, BlobRoot: filepath.Join(m.Config.DataDir, "blobs"), Logger: m.Logger, Now: m.Now,
		Exporter: classroom.FindExporter(), Blobs: m.Blobs()}
	m.recordings = recordings
	m.Hub = &room.Hub{Store: m.Store, Media: classroom.SFUMedia(s), Lang: i18n.Tag, Now: m.Now, Logger: m.Logger,
		ICE:      func(conn string) room.ICEConfig { return room.ICEConfig{ICEServers: m.iceServers(conn)} },
		Recorder: recordings.Factory}
	return nil
}

// iceServers are the TURN servers a browser may use, with credentials
// valid for a day, for id (a connection).
func (m *Main) iceServers(id string) []room.ICEServer {
	if m.TURN == nil {
		return []room.ICEServer{}
	}
	host := "127.0.0.1"
	if u, err := url.Parse(m.BaseURL()); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	if m.Config.RTCPublicIP != "" {
		host = m.Config.RTCPublicIP
	}
	c := m.TURN.Credentials(host, id, 24*time.Hour)
	return []room.ICEServer{{URLs: c.URLs, Username: c.Username, Credential: c.Credential}}
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

// BaseURL is the URL clients reach this server at. Open works it out once
// the listeners are bound: launch links ask for it on every call.
func (m *Main) BaseURL() string {
	if m.baseURL != "" {
		return m.baseURL
	}
	return m.boundBaseURL()
}

func (m *Main) boundBaseURL() string {
	c := m.Config
	if c.PublicURL == "" {
		c.Addr = m.Addr()
	}
	return c.BaseURL()
}

// Blobs is where recordings and files are kept: the blobs folder of the
// data dir, or the S3-compatible store of --blob-url (see OpenBlobs).
func (m *Main) Blobs() blob.Store {
	if m.blobs != nil {
		return m.blobs
	}
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
	certs := m.certificates(limiter)
	certs.Register(mux)
	m.Learn.OnCourseCompleted = certs.OnCourseCompleted
	learner := &portal.Portal{Store: m.Store, Learn: m.Learn, Logger: m.Logger, Now: m.Now, BaseURL: m.BaseURL,
		Secure: strings.HasPrefix(m.BaseURL(), "https://"), Secret: m.Secret}
	learner.Register(mux)
	m.testClockRoutes(mux)
	m.metricsRoute(mux)
	pay := m.payments()
	pay.Register(mux)
	lms := &lmsapi.API{Store: m.Store, Logger: m.Logger, Limiter: limiter, MaxBody: m.Config.MaxBodyBytes, Now: m.Now, Portal: learner,
		Learn: m.Learn, Certs: certs, Payments: pay}
	lms.Webhooks, lms.WebhookAllowPrivate = m.Webhooks, m.Config.WebhookAllowPrivate
	lms.Quiz = m.quizService()
	lms.Register(mux)
	m.Learn.Register(mux)
	blobs := m.Blobs()
	vc := &classroomapi.API{Store: m.Store, Logger: m.Logger, Limiter: limiter, MaxBody: m.Config.MaxBodyBytes,
		DefaultStyle: m.Config.ResponseStyle, BaseURL: m.BaseURL, Blobs: blobs, Now: m.Now, Payments: pay}
	lms.AuthGuard = m.authGuard()
	vc.AuthGuard = lms.AuthGuard
	vc.Register(mux)
	pages := &classroom.Pages{Store: m.Store, Blobs: blobs, Logger: m.Logger, Now: m.Now, Hub: m.Hub,
		Check: m.SFU.CheckAnswer, ICE: m.iceServers, Converter: classroom.FindConverter()}
	m.Hub.FileURL = pages.FileURL
	if u, err := url.Parse(m.BaseURL()); err == nil && u.Host != "" {
		pages.Origins = []string{u.Host}
	}
	pages.Register(mux)
	m.clusterRoutes(mux, pages)
	new(apidocs.Docs).Register(mux)
	unavailable := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{
			"message": "server is shutting down; retry shortly", "code": "unavailable",
			"request_id": httpx.RequestInfo(r.Context()).RequestID})
	})
	// The route pattern reaches the metrics through their response
	// recorder (metrics.Route sets it) and the request log through the
	// request it handed down, which the mux sets it on.
	return m.Metrics.Wrap(httpx.Log(m.Logger, httpx.Draining(&m.shuttingDown, unavailable, learner.Front(metrics.Route(mux)))))
}

// Serve serves until ctx is done, then stops accepting, waits up to the
// shutdown timeout for in-flight requests, waits for its background loops
// to stop, and returns. It does not close the store; call Close.
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
	hubCtx, stopHub := context.WithCancel(ctx)
	defer stopHub()
	// The loops below use the store, and their first passes run at once:
	// Serve returns only once they have, so that none is still reading
	// or writing when the caller closes the store.
	var loops sync.WaitGroup
	loops.Go(func() { m.Hub.Run(hubCtx) })
	if m.cluster != nil {
		loops.Go(func() { m.cluster.Run(hubCtx) })
	}
	loops.Go(func() { m.recordings.RunRetention(hubCtx, m.Blobs(), time.Hour) })
	loops.Go(func() { m.Quiz.RunSweeper(hubCtx, QuizSweepInterval) })
	m.runWebhooks(hubCtx, &loops)
	defer m.serveMetrics()()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	m.shuttingDown.Store(true)
	m.Logger.Info("shutting down", "timeout", m.Config.ShutdownTimeout)
	// Rooms close first: their connections end (attendance sessions close
	// now) and clients reconnect to the next run.
	m.Hub.Close()
	m.leaveCluster()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.Config.ShutdownTimeout)
	defer cancel()
	for _, srv := range m.servers {
		if err := srv.Shutdown(sctx); err != nil {
			m.Logger.Warn("shutdown did not finish in time; closing connections", "err", err)
			srv.Close()
		}
	}
	wg.Wait()
	stopHub()
	loops.Wait()
	return serveErr
}

// Close releases the listeners (if Serve never ran), the media ports and
// the store.
func (m *Main) Close() error {
	if len(m.servers) == 0 {
		m.closeListeners()
	}
	if m.metricsLn != nil {
		m.metricsLn.Close()
	}
	if m.Hub != nil {
		m.Hub.Close()
	}
	if m.TURN != nil {
		m.TURN.Close()
	}
	if m.SFU != nil {
		m.SFU.Close()
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
