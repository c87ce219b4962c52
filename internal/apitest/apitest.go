// Package apitest runs HTTP scenario tests against a real Lectern server on
// a real store. Run starts one server per backend: SQLite always, and
// PostgreSQL when LECTERN_TEST_DATABASE_URL is set (each test gets its own
// schema, dropped afterwards). Under CI (CI=true) a missing PostgreSQL URL
// fails the test instead of skipping it.
package apitest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/server"
	"github.com/lectern-lms/lectern/internal/store"
)

// EnvDatabaseURL names the variable holding the PostgreSQL URL for tests.
const EnvDatabaseURL = "LECTERN_TEST_DATABASE_URL"

// Backend is one database the suite runs on.
type Backend struct {
	Name string // "sqlite" or "postgres"
	URL  string // "" for SQLite
}

// SQLite is the SQLite backend, for a test that runs on SQLite only.
var SQLite = Backend{Name: "sqlite"}

// Backends returns the backends to test: SQLite, and PostgreSQL when
// LECTERN_TEST_DATABASE_URL is set. Without it the PostgreSQL run is a
// visible SKIP (a skipped subtest or sub-benchmark "postgres", shown by
// go test -v and counted by go test -json), and under CI (CI set) a failure.
func Backends(t testing.TB) []Backend {
	t.Helper()
	bs := []Backend{SQLite}
	u, why, fatal := postgresURL(os.Getenv)
	switch {
	case u != "":
		bs = append(bs, Backend{Name: "postgres", URL: u})
	case fatal:
		t.Fatal(why)
	default:
		switch tt := t.(type) {
		case *testing.T:
			tt.Run("postgres", func(t *testing.T) { t.Skip(why) })
		case *testing.B:
			tt.Run("postgres", func(b *testing.B) { b.Skip(why) })
		default:
			t.Log(why)
		}
	}
	return bs
}

// Postgres returns the PostgreSQL backend for a test that needs PostgreSQL
// (the cluster tables, several nodes). Without LECTERN_TEST_DATABASE_URL it
// skips t with the reason, and under CI it fails t.
func Postgres(t testing.TB) Backend {
	t.Helper()
	u, why, fatal := postgresURL(os.Getenv)
	if u == "" {
		if fatal {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return Backend{Name: "postgres", URL: u}
}

// postgresURL decides the PostgreSQL run from the environment: the URL, or
// why there is none and whether that is fatal (under CI, where every
// PostgreSQL run must happen).
func postgresURL(getenv func(string) string) (u, why string, fatal bool) {
	if u = getenv(EnvDatabaseURL); u != "" {
		return u, "", false
	}
	if getenv("CI") != "" {
		return "", EnvDatabaseURL + " is not set; CI must run the PostgreSQL tests", true
	}
	return "", EnvDatabaseURL + " not set: PostgreSQL run skipped (set it to postgres://... to run it)", false
}

// IsolatedURL creates a fresh schema in the PostgreSQL database at base
// and returns a URL whose connections use it; the schema is dropped when
// t ends. For SQLite (base "") it returns "".
func IsolatedURL(t testing.TB, base string) string {
	t.Helper()
	if base == "" {
		return ""
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "lt_" + hex.EncodeToString(b)
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		db.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvDatabaseURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// OpenStore opens and migrates a store on backend b for t.
func OpenStore(t testing.TB, b Backend) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{
		DatabaseURL: IsolatedURL(t, b.URL), DataDir: t.TempDir(),
		// As the server opens it, so every API test runs with the cache.
		CacheRecords: true,
	})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return st
}

// Domain is a tenant created for a test, with its keys in the clear.
type Domain struct {
	ID           int64
	Name         string
	LMSKey       string
	ClassroomKey string
}

// Env is a running server for one test on one backend.
type Env struct {
	T       testing.TB
	Backend Backend
	Main    *server.Main
	Store   *store.Store
	URL     string // base URL, no trailing slash
	Client  *http.Client
	// Domain is a domain created at start; Other is a second one for
	// cross-tenant checks.
	Domain Domain
	Other  Domain
	// Clock is the server's clock for the classroom API and pages: real
	// time until Set.
	Clock *Clock
	// Logs holds everything the server logged (every level).
	Logs *LogBuffer
}

// LogBuffer collects a server's log output.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns what was logged so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Reset drops what was logged so far (a benchmark's request lines would
// otherwise grow the buffer without end).
func (l *LogBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
}

// Clock is a settable clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the set time, or the real time if none was set.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		return time.Now()
	}
	return c.now
}

// Set fixes the clock at t (zero returns it to real time).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Option adjusts the server configuration of an Env.
type Option func(*config.Config)

// Run runs fn once per backend as a subtest, each with a fresh server.
func Run(t *testing.T, fn func(t *testing.T, e *Env), opts ...Option) {
	for _, b := range Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			fn(t, Start(t, b, opts...))
		})
	}
}

// Start boots the real server (server.Main, as `lectern serve` does) on
// port 0 with a temporary data dir on backend b.
func Start(t testing.TB, b Backend, opts ...Option) *Env {
	t.Helper()
	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.DatabaseURL = IsolatedURL(t, b.URL)
	cfg.RateLimit = 0
	cfg.RTCUDPPort = 0 // a free port: tests run in parallel
	cfg.TURNPort = 0   // off
	for _, o := range opts {
		o(&cfg)
	}
	logs := &LogBuffer{}
	var logOut io.Writer = logs
	if os.Getenv("LECTERN_TEST_LOG") != "" {
		logOut = io.MultiWriter(logs, os.Stderr)
	}
	logger := slog.New(httpx.NewLogHandler("text", logOut))
	clock := &Clock{}
	m := &server.Main{Config: cfg, Logger: logger, Now: clock.Now}
	ctx, cancel := context.WithCancel(context.Background())
	if err := m.Open(ctx); err != nil {
		cancel()
		t.Fatalf("open server: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		m.Close()
	})
	e := &Env{T: t, Backend: b, Main: m, Store: m.Store, URL: m.BaseURL(), Client: &http.Client{}, Clock: clock, Logs: logs}
	e.Domain = e.NewDomain("Domain A")
	e.Other = e.NewDomain("Domain B")
	return e
}

// RawDB opens the test server's database directly, for changes the API does
// not offer (breaking a row, renaming a user): OpenRaw on its data dir or
// PostgreSQL database.
func (e *Env) RawDB() (db *sql.DB, placeholder string) {
	e.T.Helper()
	return OpenRaw(e.T, e.Main.Config.DataDir, e.Main.Config.DatabaseURL)
}

// OpenRaw opens a store's database directly: the PostgreSQL database at
// databaseURL, or when that is empty the SQLite file in dataDir, waiting
// for the store's own writes (store.SQLiteDSN) rather than failing with
// SQLITE_BUSY. It gives the placeholder its driver writes for the first
// argument ("?" or "$1"), and is closed when the test ends.
func OpenRaw(t testing.TB, dataDir, databaseURL string) (db *sql.DB, placeholder string) {
	t.Helper()
	driver, dsn, ph := "sqlite", store.SQLiteDSN(filepath.Join(dataDir, "lectern.db")), "?"
	if databaseURL != "" {
		driver, dsn, ph = "pgx", databaseURL, "$1"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, ph
}

// NewDomain creates a domain in the store.
func (e *Env) NewDomain(name string) Domain {
	e.T.Helper()
	d, keys, err := e.Store.CreateDomain(context.Background(), name)
	if err != nil {
		e.T.Fatalf("create domain: %v", err)
	}
	return Domain{ID: d.ID, Name: d.Name, LMSKey: keys.LMS, ClassroomKey: keys.Classroom}
}

// Request is one HTTP call.
type Request struct {
	Method string
	Path   string // with query string if any
	// Body is sent as JSON unless it is a string (sent as is) or Form or
	// Multipart is set. nil sends no body.
	Body      any
	Form      url.Values // urlencoded body
	Multipart url.Values // multipart/form-data body
	Header    map[string]string
	// Domain whose LMS credentials to send; nil means e.Domain. NoAuth
	// sends none.
	Domain *Domain
	NoAuth bool
}

// Response is what came back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value (numbers as json.Number).
func (r *Response) JSON(t testing.TB) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("response is not JSON (%v): %s", err, r.Body)
	}
	return v
}

// Object decodes a JSON object body.
func (r *Response) Object(t testing.TB) map[string]any {
	t.Helper()
	m, ok := r.JSON(t).(map[string]any)
	if !ok {
		t.Fatalf("response is not a JSON object: %s", r.Body)
	}
	return m
}

// Do performs req and returns the response.
func (e *Env) Do(req Request) *Response {
	e.T.Helper()
	var body io.Reader
	ctype := ""
	switch {
	case req.Form != nil:
		body, ctype = strings.NewReader(req.Form.Encode()), "application/x-www-form-urlencoded"
	case req.Multipart != nil:
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		keys := make([]string, 0, len(req.Multipart))
		for k := range req.Multipart {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, v := range req.Multipart[k] {
				mw.WriteField(k, v)
			}
		}
		mw.Close()
		body, ctype = &buf, mw.FormDataContentType()
	case req.Body != nil:
		if s, ok := req.Body.(string); ok {
			body = strings.NewReader(s)
		} else {
			b, err := json.Marshal(req.Body)
			if err != nil {
				e.T.Fatalf("marshal body: %v", err)
			}
			body = bytes.NewReader(b)
		}
		ctype = "application/json"
	}
	hr, err := http.NewRequest(req.Method, e.URL+req.Path, body)
	if err != nil {
		e.T.Fatalf("new request: %v", err)
	}
	if ctype != "" {
		hr.Header.Set("Content-Type", ctype)
	}
	if !req.NoAuth {
		d := req.Domain
		if d == nil {
			d = &e.Domain
		}
		hr.Header.Set("Authorization", d.LMSKey)
		hr.Header.Set("x-domain-id", fmt.Sprint(d.ID))
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	resp, err := e.Client.Do(hr)
	if err != nil {
		e.T.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.T.Fatalf("read body: %v", err)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	e.checkAnswer(req, out)
	return out
}

// LMS calls /api/v1 + path with a JSON body (nil for none) as e.Domain.
func (e *Env) LMS(method, path string, body any) *Response {
	e.T.Helper()
	return e.Do(Request{Method: method, Path: "/api/v1" + path, Body: body})
}

// VC calls the classroom API: POST /v2/<op> with params as an urlencoded
// body and apikey set to e.Domain's classroom key (unless params has one).
func (e *Env) VC(op string, params url.Values) *Response {
	e.T.Helper()
	if params == nil {
		params = url.Values{}
	}
	if _, ok := params["apikey"]; !ok {
		params.Set("apikey", e.Domain.ClassroomKey)
	}
	return e.Do(Request{Method: "POST", Path: "/v2/" + op, Form: params, NoAuth: true})
}
