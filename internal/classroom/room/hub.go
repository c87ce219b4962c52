// Package room is the live classroom's room service. Each sitting of a
// live class that someone has joined is one Room, owned by one goroutine:
// every change to its participants, permissions, chat, hands and timer
// runs there, in order, and gets a sequence number. Clients reach a room
// through a Conn (one per WebSocket); the Hub finds or opens the room a
// verified launch names.
package room

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
	"github.com/lectern-lms/lectern/internal/store"
)

// Key names a room: one sitting of one class of one domain.
type Key struct {
	Domain  int64
	Class   int64
	Sitting int
}

// Hub holds the open rooms.
type Hub struct {
	Store *store.Store
	// Media makes each room's media engine; nil runs rooms without media.
	Media MediaFactory
	// ICE returns the ICE servers (with fresh credentials) for a
	// connection; nil means none.
	ICE func(conn string) ICEConfig
	// Lang maps a class's isLang to the language the room forces ("" for
	// none).
	Lang func(isLang int) string
	// Recorder makes a sitting's recorder; nil means classes are not
	// recorded.
	Recorder RecorderFactory
	// FileURL returns the signed download link of a shared file, valid
	// until expires.
	FileURL func(domain int64, f lms.RoomFile, expires time.Time) string
	// Quiz runs in-class quizzes; nil turns them off.
	Quiz   QuizEngine
	Now    func() time.Time
	Logger *slog.Logger
	// Fence returns the lease this node holds room k under (on a
	// cluster); the room's writes carry it and are refused once another
	// node took the room over. nil (a single node) fences nothing.
	Fence func(k Key) store.Fence
	// IdleTimeout is how long an empty room stays open for reconnects
	// (default 2 minutes).
	IdleTimeout time.Duration

	mu     sync.Mutex
	rooms  map[Key]*Room
	closed bool
}

func (h *Hub) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Hub) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// Entry is what a connection brings to Join: the verified launch, the
// class and plan it belongs to, and, when reconnecting, what to resume.
type Entry struct {
	Launch signing.Launch
	Class  lms.LiveClass
	Plan   lms.Plan
	Resume *Resume
}

// Join enters the room of e's sitting, opening it if needed. On success
// the Conn's Out channel already holds the welcome message (and, on a
// resume, the missed events). A refusal is a *Fail.
func (h *Hub) Join(ctx context.Context, e Entry) (*Conn, error) {
	key := Key{Domain: e.Launch.Domain, Class: e.Launch.Class, Sitting: e.Launch.Occurrence}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, NewFail(FailEnded, "The server is restarting. Try again in a moment.")
	}
	if h.rooms == nil {
		h.rooms = map[Key]*Room{}
	}
	r := h.rooms[key]
	if r == nil {
		r = newRoom(h, key, e.Class, e.Plan)
		h.rooms[key] = r
		go r.run()
	}
	reply := make(chan joinResult, 1)
	r.q.post(func() { reply <- r.join(ctx, e) })
	h.mu.Unlock()
	select {
	case res := <-reply:
		return res.conn, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Room returns the open room of a sitting, or nil.
func (h *Hub) Room(k Key) *Room {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rooms[k]
}

// Rooms returns how many rooms are open.
func (h *Hub) Rooms() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.rooms)
}

// Run checks every room's timer once a second until ctx is done.
func (h *Hub) Run(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.CheckTimers()
		}
	}
}

// CheckTimers has every room check its clock now: warn before the end,
// close at the end, close when idle. Run calls it every second.
func (h *Hub) CheckTimers() {
	h.mu.Lock()
	rooms := make([]*Room, 0, len(h.rooms))
	for _, r := range h.rooms {
		rooms = append(rooms, r)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range rooms {
		wg.Add(1)
		if !r.q.post(func() { defer wg.Done(); r.checkTime() }) {
			wg.Done()
		}
	}
	wg.Wait()
}

// Close closes every room: connections are closed (their attendance
// sessions end now) and new joins are refused.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	rooms := make([]*Room, 0, len(h.rooms))
	for _, r := range h.rooms {
		rooms = append(rooms, r)
	}
	h.mu.Unlock()
	for _, r := range rooms {
		r.q.post(func() { r.shutdown("", "restart") })
		<-r.done
	}
}

// remove forgets r if it has nothing left to do: no connections and no
// pending work. It runs on r's goroutine and reports whether r must stop.
func (h *Hub) remove(r *Room, force bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !force && (len(r.conns) > 0 || r.q.len() > 0) {
		return false
	}
	if h.rooms[r.key] == r {
		delete(h.rooms, r.key)
	}
	r.q.stop()
	return true
}

func newConnID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "c" + hex.EncodeToString(b)
}

// mailbox is a room's unbounded queue of work. post never blocks, so
// callbacks from the media engine can post while the room goroutine is
// calling into it.
type mailbox struct {
	mu      sync.Mutex
	q       []func()
	wake    chan struct{}
	stopped bool
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

// post queues fn; it reports false if the room has stopped.
func (m *mailbox) post(fn func()) bool {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return false
	}
	m.q = append(m.q, fn)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return true
}

func (m *mailbox) take() []func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.q
	m.q = nil
	return q
}

func (m *mailbox) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.q)
}

func (m *mailbox) stop() {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
}
