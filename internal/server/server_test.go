package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/server"
)

// TestShutdownFinishesInFlight starts a request, begins shutdown while its
// handler is reading the body (the server reads past what was sent so
// far), and expects the request to complete and Serve to return once it
// has.
func TestShutdownFinishesInFlight(t *testing.T) {
	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.RTCUDPPort, cfg.TURNPort = 0, 0
	m := &server.Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, keys, err := m.Store.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	// The server's side of the connection tells when it reads for more
	// than the test has sent: the headers are parsed, the handler runs and
	// waits for the rest of the body.
	sent := new(atomic.Int64)
	waiting := make(chan struct{})
	m.WrapListeners(func(ln net.Listener) net.Listener {
		return &watchedListener{Listener: ln, sent: sent, waiting: waiting}
	})
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx) }()

	conn, err := net.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"username":"ann","email":"ann@example.com"}`
	start := fmt.Sprintf("POST /api/v1/users/create HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nx-domain-id: %d\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", keys.LMS, d.ID, len(body), body[:10])
	sent.Store(int64(len(start)))
	io.WriteString(conn, start)
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never read the request")
	}

	cancel()
	// Wait until the listener is closed: shutdown has begun.
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", m.Addr())
		if err != nil {
			break
		}
		c.Close()
		if i > 200 {
			t.Fatal("listener still accepting after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with a request in flight", err)
	default:
	}
	io.WriteString(conn, body[10:])
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight request got no answer: %v", err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("in-flight request: %d %s", resp.StatusCode, b)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the in-flight request finished")
	}
}

// watchedListener's connections close waiting when the server reads from
// one after having read sent bytes.
type watchedListener struct {
	net.Listener
	sent    *atomic.Int64
	waiting chan struct{}
	once    sync.Once
}

func (l *watchedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &watchedConn{Conn: c, l: l}, nil
}

type watchedConn struct {
	net.Conn
	l    *watchedListener
	read int64
}

func (c *watchedConn) Read(p []byte) (int, error) {
	if sent := c.l.sent.Load(); sent > 0 && c.read >= sent {
		c.l.once.Do(func() { close(c.l.waiting) })
	}
	n, err := c.Conn.Read(p)
	c.read += int64(n)
	return n, err
}

func TestHealthAndReadiness(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		for _, p := range []string{"/healthz", "/readyz"} {
			r := e.Do(apitest.Request{Method: "GET", Path: p, NoAuth: true})
			if r.Status != 200 || !strings.Contains(string(r.Body), `"ok"`) {
				t.Errorf("%s: %d %s", p, r.Status, r.Body)
			}
		}
		e.Store.Close()
		if r := e.Do(apitest.Request{Method: "GET", Path: "/readyz", NoAuth: true}); r.Status != 503 {
			t.Errorf("/readyz with the store closed: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apitest.Request{Method: "GET", Path: "/healthz", NoAuth: true}); r.Status != 200 {
			t.Errorf("/healthz with the store closed: %d", r.Status)
		}
	})
}
