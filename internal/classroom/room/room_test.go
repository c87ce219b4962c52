package room_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
	"github.com/lectern-lms/lectern/internal/store"
)

var start = time.Date(2031, 3, 10, 15, 0, 0, 0, time.UTC)

// env is a hub on a real store with a settable clock and fake media.
type env struct {
	t      *testing.T
	st     *store.Store
	hub    *room.Hub
	clock  *apitest.Clock
	domain int64
	media  *fakeMedia
}

func newEnv(t *testing.T, b apitest.Backend) *env {
	st := apitest.OpenStore(t, b)
	d, _, err := st.CreateDomain(context.Background(), "A")
	if err != nil {
		t.Fatal(err)
	}
	clock := &apitest.Clock{}
	clock.Set(start)
	e := &env{t: t, st: st, clock: clock, domain: d.ID, media: &fakeMedia{}}
	e.hub = &room.Hub{Store: st, Now: clock.Now, Media: e.media.factory, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Lang: func(n int) string {
			if n == 14 {
				return "fr"
			}
			return ""
		}}
	t.Cleanup(e.hub.Close)
	return e
}

// each runs fn on every backend with a fresh env.
func each(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { fn(t, newEnv(t, b)) })
	}
}

// class makes a one-hour class starting at start with settings applied.
func (e *env) class(set func(c *lms.LiveClass)) lms.LiveClass {
	c := lms.LiveClass{Title: "Algebra", Date: "2031-03-10", StartMinute: 900, EndMinute: 960, TimezoneID: 28,
		TimezoneName: "Europe/London", Currency: "usd", Published: 1,
		Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}}
	if set != nil {
		set(&c)
	}
	c, err := e.st.CreateLiveClass(context.Background(), e.domain, c)
	if err != nil {
		e.t.Fatal(err)
	}
	c, err = e.st.LiveClass(context.Background(), e.domain, c.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// client is a test's end of a connection.
type client struct {
	t       *testing.T
	conn    *room.Conn
	welcome map[string]any
	buf     []map[string]any
}

type joinOpts struct {
	teacher bool
	plan    string
	extend  int
	resume  *room.Resume
	name    string
}

func (e *env) join(c lms.LiveClass, user string, o joinOpts) (*client, error) {
	plan := o.plan
	if plan == "" {
		plan = "unlimited"
	}
	name := o.name
	if name == "" {
		name = "User " + user
	}
	l := signing.Launch{Domain: e.domain, Class: c.ID, Occurrence: c.Occurrences[0].Seq, UserID: user, UserName: name,
		Teacher: o.teacher, Extend: o.extend, Expires: start.Add(3 * time.Hour)}
	conn, err := e.hub.Join(context.Background(), room.Entry{Launch: l, Class: c, Plan: lms.PlanOf(plan), Resume: o.resume})
	if err != nil {
		return nil, err
	}
	cl := &client{t: e.t, conn: conn}
	cl.welcome = cl.next("welcome", "")
	return cl, nil
}

func (e *env) mustJoin(c lms.LiveClass, user string, o joinOpts) *client {
	e.t.Helper()
	cl, err := e.join(c, user, o)
	if err != nil {
		e.t.Fatalf("join %s: %v", user, err)
	}
	return cl
}

func failCode(err error) string {
	var f *room.Fail
	if errors.As(err, &f) {
		return f.Code
	}
	return fmt.Sprint(err)
}

// next returns the next message of type typ (and kind, if given),
// skipping others; it fails the test after 5 seconds.
func (c *client) next(typ, kind string) map[string]any {
	c.t.Helper()
	for i, m := range c.buf {
		if m["type"] == typ && (kind == "" || m["kind"] == kind || m["key"] == kind) {
			c.buf = slices.Delete(c.buf, i, i+1)
			return m
		}
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case data, ok := <-c.conn.Out():
			if !ok {
				c.t.Fatalf("connection closed (%s) while waiting for %s %s", c.conn.CloseReason(), typ, kind)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				c.t.Fatal(err)
			}
			if m["type"] == typ && (kind == "" || m["kind"] == kind || m["key"] == kind) {
				return m
			}
			c.buf = append(c.buf, m)
		case <-timeout:
			c.t.Fatalf("no %s %s message; got %v", typ, kind, c.buf)
		}
	}
}

// send passes a message to the room and waits until the room has
// handled it (a ping's pong comes after it).
func (c *client) send(m map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(m)
	c.conn.Handle(b)
	c.conn.Handle([]byte(`{"type":"ping"}`))
	c.next("pong", "")
}

// closed waits for the room to close the connection and returns why.
func (c *client) closed() string {
	c.t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-c.conn.Out():
			if !ok {
				return c.conn.CloseReason()
			}
		case <-timeout:
			c.t.Fatal("connection not closed")
		}
	}
}

// chat waits for a chat event with text, skipping other chat events.
func (c *client) chat(text string) map[string]any {
	c.t.Helper()
	for {
		m := c.next("event", "chat")["message"].(map[string]any)
		if m["text"] == text {
			return m
		}
	}
}

func (c *client) perms() []string {
	var out []string
	for _, p := range c.welcome["permissions"].([]any) {
		out = append(out, p.(string))
	}
	return out
}

func (c *client) seq() int64 { return int64(c.welcome["seq"].(float64)) }

// fakeMedia records what the room asks of the media engine.
type fakeMedia struct {
	mu        sync.Mutex
	published []string
	closed    []string
	n         int
	speaking  func(streamID string, on bool) // the room's, once set
}

// speak tells the room that a stream's sound started or stopped being
// voice, as the SFU would.
func (f *fakeMedia) speak(streamID string, on bool) {
	f.mu.Lock()
	fn := f.speaking
	f.mu.Unlock()
	fn(streamID, on)
}

func (f *fakeMedia) factory(send func(string, room.Signal), ended func(string)) room.Media {
	return &fakeRoom{f: f, send: send}
}

type fakeRoom struct {
	f    *fakeMedia
	send func(string, room.Signal)
}

func (r *fakeRoom) OnSpeaking(fn func(string, bool)) {
	r.f.mu.Lock()
	r.f.speaking = fn
	r.f.mu.Unlock()
}
func (r *fakeRoom) AddConn(conn, userID string, receive bool) {}
func (r *fakeRoom) RemoveConn(conn string)                    {}
func (r *fakeRoom) Close()                                    {}
func (r *fakeRoom) Signal(conn string, sig room.Signal) error { return nil }
func (r *fakeRoom) Publish(conn, clientStream, label, sdp string) (string, error) {
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	r.f.n++
	r.f.published = append(r.f.published, label)
	r.send(conn, room.Signal{Kind: "answer", Stream: clientStream, SDP: "answer"})
	return fmt.Sprintf("s%d", r.f.n), nil
}
func (r *fakeRoom) CloseStream(id string) {
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	r.f.closed = append(r.f.closed, id)
}

func TestPermissionMatrix(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		for board := range 3 {
			for corporate := range 2 {
				for screen := range 2 {
					for private := range 2 {
						name := fmt.Sprintf("board%d_corporate%d_screen%d_private%d", board, corporate, screen, private)
						t.Run(name, func(t *testing.T) {
							c := e.class(func(c *lms.LiveClass) {
								c.IsBoard, c.IsCorporate, c.IsScreenshare, c.IsPrivateChat = board, corporate, screen, private
							})
							teacher := e.mustJoin(c, "t", joinOpts{teacher: true}).perms()
							student := e.mustJoin(c, "s", joinOpts{}).perms()
							media := board == 0
							want := map[string][2]bool{ // permission: teacher, student
								"op":           {true, false},
								"audio":        {media, media && corporate == 1},
								"video":        {media, media && corporate == 1},
								"screen":       {media && screen == 1, false},
								"chat":         {board != 1, board != 1},
								"chat:private": {board != 1, board != 1 && private == 0},
								"draw":         {true, false},
							}
							for perm, w := range want {
								if got := slices.Contains(teacher, perm); got != w[0] {
									t.Errorf("teacher %s: %v, want %v (%v)", perm, got, w[0], teacher)
								}
								if got := slices.Contains(student, perm); got != w[1] {
									t.Errorf("student %s: %v, want %v (%v)", perm, got, w[1], student)
								}
							}
						})
					}
				}
			}
		}
	})
}

func TestPublishIsEnforced(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		t.Run("isCorporate 0 until the teacher allows", func(t *testing.T) {
			c := e.class(func(c *lms.LiveClass) { c.IsScreenshare = 1 })
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
			student := e.mustJoin(c, "s", joinOpts{})
			student.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "cam1", "label": "camera", "sdp": "v=0", "ref": 7})
			er := student.next("error", "")
			if er["code"] != "forbidden" || er["ref"] != 7.0 || !strings.Contains(er["message"].(string), "Raise your hand") {
				t.Fatalf("refusal %v", er)
			}
			if cl := student.next("rtc", "close"); cl["stream"] != "cam1" {
				t.Fatalf("close %v", cl)
			}
			// Hand up: the teacher sees the queue; allowing lowers it.
			student.send(map[string]any{"type": "hand", "up": true})
			if h := teacher.next("event", "hands"); fmt.Sprint(h["hands"]) != "[s]" {
				t.Fatalf("hands %v", h)
			}
			teacher.send(map[string]any{"type": "moderate", "action": "allow-media", "userId": "s"})
			student.next("notice", "media-allowed")
			student.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "cam1", "label": "camera", "sdp": "v=0"})
			if a := student.next("rtc", "answer"); a["stream"] != "cam1" {
				t.Fatalf("answer %v", a)
			}
			if s := teacher.next("event", "stream"); s["stream"].(map[string]any)["userId"] != "s" {
				t.Fatalf("stream event %v", s)
			}
			// A student may not share a screen until allowed, even when sharing is on.
			student.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "scr", "label": "screen", "sdp": "v=0"})
			if er := student.next("error", ""); er["code"] != "forbidden" {
				t.Fatalf("screen %v", er)
			}
			teacher.send(map[string]any{"type": "moderate", "action": "allow-screen", "userId": "s"})
			student.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "scr", "label": "screen", "sdp": "v=0"})
			student.next("rtc", "answer")
			// Withdrawing media closes the camera and refuses a new one.
			teacher.send(map[string]any{"type": "moderate", "action": "revoke-media", "userId": "s"})
			student.next("notice", "media-revoked")
			if u := teacher.next("event", "unstream"); u["id"] == "" {
				t.Fatalf("unstream %v", u)
			}
			student.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "cam2", "label": "camera", "sdp": "v=0"})
			if er := student.next("error", ""); er["code"] != "forbidden" {
				t.Fatalf("after revoke %v", er)
			}
		})
		t.Run("isScreenshare 0 refuses the teacher's screen", func(t *testing.T) {
			c := e.class(nil)
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
			teacher.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "scr", "label": "screen", "sdp": "v=0"})
			if er := teacher.next("error", ""); er["code"] != "forbidden" || !strings.Contains(er["message"].(string), "Screen sharing is off") {
				t.Fatalf("%v", er)
			}
			teacher.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "cam", "label": "camera", "sdp": "v=0"})
			teacher.next("rtc", "answer")
		})
		t.Run("isBoard 1 and 2 have no media", func(t *testing.T) {
			for _, board := range []int{1, 2} {
				c := e.class(func(c *lms.LiveClass) { c.IsBoard = board })
				teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
				teacher.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "cam", "label": "camera", "sdp": "v=0"})
				if er := teacher.next("error", ""); er["code"] != "forbidden" {
					t.Fatalf("board %d: %v", board, er)
				}
			}
		})
		t.Run("mute closes the microphone; mute-all every student's", func(t *testing.T) {
			c := e.class(func(c *lms.LiveClass) { c.IsCorporate = 1 })
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
			a := e.mustJoin(c, "a", joinOpts{})
			b := e.mustJoin(c, "b", joinOpts{})
			for _, s := range []*client{a, b} {
				s.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "mic", "label": "mic", "sdp": "v=0"})
				s.next("rtc", "answer")
			}
			teacher.send(map[string]any{"type": "moderate", "action": "mute", "userId": "a"})
			a.next("notice", "muted")
			teacher.send(map[string]any{"type": "room", "action": "mute-all"})
			b.next("notice", "muted")
			for _, p := range e.hub.Room(room.Key{Domain: e.domain, Class: c.ID, Sitting: 1}).Participants() {
				if p.Audio {
					t.Errorf("%s still has audio", p.UserID)
				}
			}
			// Students cannot moderate.
			a.send(map[string]any{"type": "moderate", "action": "mute", "userId": "b", "ref": 3})
			if er := a.next("error", ""); er["code"] != "forbidden" {
				t.Fatalf("%v", er)
			}
		})
	})
}

func TestSeats(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		t.Run("seat_attendees", func(t *testing.T) {
			c := e.class(func(c *lms.LiveClass) { c.SeatAttendees = 1 })
			e.mustJoin(c, "s1", joinOpts{})
			if _, err := e.join(c, "s2", joinOpts{}); failCode(err) != room.FailFull {
				t.Fatalf("second student: %v", err)
			}
			// A second device of the same user takes no seat; the teacher always enters.
			e.mustJoin(c, "s1", joinOpts{})
			e.mustJoin(c, "t", joinOpts{teacher: true})
		})
		t.Run("free plan: two connections", func(t *testing.T) {
			c := e.class(nil)
			free := joinOpts{plan: "free"}
			e.mustJoin(c, "s1", free)
			e.mustJoin(c, "s2", free)
			if _, err := e.join(c, "s3", free); failCode(err) != room.FailFull {
				t.Fatalf("third: %v", err)
			}
			e.mustJoin(c, "t", joinOpts{teacher: true, plan: "free"})
		})
		t.Run("a seat frees when its user leaves", func(t *testing.T) {
			c := e.class(func(c *lms.LiveClass) { c.SeatAttendees = 1 })
			s1 := e.mustJoin(c, "s1", joinOpts{})
			s1.conn.Leave()
			s1.closed()
			e.mustJoin(c, "s2", joinOpts{})
		})
	})
}

func TestChat(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		t.Run("private messages follow isPrivateChat", func(t *testing.T) {
			for _, private := range []int{0, 1} {
				c := e.class(func(c *lms.LiveClass) { c.IsPrivateChat = private })
				teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
				a := e.mustJoin(c, "a", joinOpts{})
				b := e.mustJoin(c, "b", joinOpts{})
				x := e.mustJoin(c, "x", joinOpts{})
				a.send(map[string]any{"type": "chat", "text": "psst", "to": "b", "ref": 1})
				if private == 1 {
					if er := a.next("error", ""); er["code"] != "forbidden" {
						t.Fatalf("student to student with isPrivateChat 1: %v", er)
					}
				} else {
					m := b.next("event", "chat")["message"].(map[string]any)
					if m["text"] != "psst" || m["to"] != "b" || m["from"] != "a" {
						t.Fatalf("%v", m)
					}
				}
				a.send(map[string]any{"type": "chat", "text": "question", "to": "t"})
				if m := teacher.next("event", "chat")["message"].(map[string]any); m["text"] != "question" {
					t.Fatalf("%v", m)
				}
				teacher.send(map[string]any{"type": "chat", "text": "answer", "to": "a"})
				a.chat("answer")
				teacher.send(map[string]any{"type": "chat", "text": "hello all"})
				if m := x.next("event", "chat")["message"].(map[string]any); m["text"] != "hello all" || m["to"] != "" {
					t.Fatalf("x: %v (private messages leaked before it?)", m)
				}
				// A late joiner sees the group message only.
				late := e.mustJoin(c, "late", joinOpts{})
				chat := late.welcome["snapshot"].(map[string]any)["chat"].([]any)
				if len(chat) != 1 || chat[0].(map[string]any)["text"] != "hello all" {
					t.Fatalf("late joiner's chat: %v", chat)
				}
			}
		})
		t.Run("length and rate limits", func(t *testing.T) {
			c := e.class(nil)
			a := e.mustJoin(c, "a", joinOpts{})
			a.send(map[string]any{"type": "chat", "text": strings.Repeat("é", room.MaxChatRunes+1)})
			if er := a.next("error", ""); er["code"] != "too-long" {
				t.Fatalf("%v", er)
			}
			for i := range room.ChatBurst {
				a.send(map[string]any{"type": "chat", "text": fmt.Sprint("m", i)})
				a.next("event", "chat")
			}
			a.send(map[string]any{"type": "chat", "text": "one too many"})
			if er := a.next("error", ""); er["code"] != "rate-limited" {
				t.Fatalf("%v", er)
			}
			e.clock.Set(start.Add(room.ChatWindow))
			a.send(map[string]any{"type": "chat", "text": "later"})
			a.next("event", "chat")
		})
		t.Run("isBoard 1 has no chat", func(t *testing.T) {
			c := e.class(func(c *lms.LiveClass) { c.IsBoard = 1 })
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
			teacher.send(map[string]any{"type": "chat", "text": "hi"})
			if er := teacher.next("error", ""); er["code"] != "forbidden" {
				t.Fatalf("%v", er)
			}
		})
		t.Run("history outlives the room", func(t *testing.T) {
			e.clock.Set(start)
			c := e.class(nil)
			a := e.mustJoin(c, "a", joinOpts{})
			a.send(map[string]any{"type": "chat", "text": "kept"})
			a.conn.Leave()
			a.closed()
			e.hub.IdleTimeout = time.Millisecond
			e.clock.Set(start.Add(time.Second))
			e.hub.CheckTimers()
			if r := e.hub.Room(room.Key{Domain: e.domain, Class: c.ID, Sitting: 1}); r != nil {
				t.Fatal("idle room still open")
			}
			b := e.mustJoin(c, "b", joinOpts{})
			chat := b.welcome["snapshot"].(map[string]any)["chat"].([]any)
			if len(chat) != 1 || chat[0].(map[string]any)["text"] != "kept" {
				t.Fatalf("%v", chat)
			}
		})
	})
}

func TestRemoval(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		c := e.class(nil)
		teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
		s := e.mustJoin(c, "s", joinOpts{})
		s2 := e.mustJoin(c, "s", joinOpts{}) // a second device goes too
		teacher.send(map[string]any{"type": "moderate", "action": "remove", "userId": "s"})
		for _, cl := range []*client{s, s2} {
			if why := cl.closed(); why != "removed" {
				t.Fatalf("closed because %q", why)
			}
		}
		if l := teacher.next("event", "leave"); l["userId"] != "s" {
			t.Fatalf("%v", l)
		}
		if _, err := e.join(c, "s", joinOpts{}); failCode(err) != room.FailRemoved {
			t.Fatalf("rejoin: %v", err)
		}
		// Kept in the store: a new room instance refuses too.
		e.hub.Close()
		hub := &room.Hub{Store: e.st, Now: e.clock.Now}
		defer hub.Close()
		l := signing.Launch{Domain: e.domain, Class: c.ID, Occurrence: 1, UserID: "s", Expires: start.Add(time.Hour)}
		if _, err := hub.Join(context.Background(), room.Entry{Launch: l, Class: c, Plan: lms.PlanOf("")}); failCode(err) != room.FailRemoved {
			t.Fatalf("after restart: %v", err)
		}
	})
}

func TestTimer(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		t.Run("extend in 15-minute steps, at most an hour", func(t *testing.T) {
			e.clock.Set(start)
			c := e.class(nil)
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
			student := e.mustJoin(c, "s", joinOpts{})
			if teacher.welcome["endsAt"] != start.Add(time.Hour).Format(time.RFC3339) || teacher.welcome["now"] != start.Format(time.RFC3339) {
				t.Fatalf("endsAt %v, now %v", teacher.welcome["endsAt"], teacher.welcome["now"])
			}
			for i := 1; i <= 4; i++ {
				teacher.send(map[string]any{"type": "room", "action": "extend"})
				want := start.Add(time.Hour + time.Duration(i)*15*time.Minute).Format(time.RFC3339)
				if ev := student.next("event", "timer"); ev["endsAt"] != want {
					t.Fatalf("extension %d: %v, want %s", i, ev, want)
				}
			}
			teacher.send(map[string]any{"type": "room", "action": "extend"})
			if er := teacher.next("error", ""); er["code"] != "forbidden" {
				t.Fatalf("fifth extension: %v", er)
			}
			// Warned five minutes before the end; closed at the end.
			e.clock.Set(start.Add(2*time.Hour - 4*time.Minute))
			e.hub.CheckTimers()
			student.next("notice", "ending-soon")
			e.clock.Set(start.Add(2 * time.Hour))
			e.hub.CheckTimers()
			if ev := student.next("event", "ended"); ev["reason"] != "time" {
				t.Fatalf("%v", ev)
			}
			if why := student.closed(); why != "time" {
				t.Fatalf("closed: %s", why)
			}
			e.clock.Set(start.Add(30 * time.Minute))
			if _, err := e.join(c, "s", joinOpts{}); failCode(err) != room.FailEnded {
				t.Fatalf("rejoin an ended sitting: %v", err)
			}
		})
		t.Run("isExtend 1 cannot extend", func(t *testing.T) {
			e.clock.Set(start)
			c := e.class(nil)
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true, extend: 1})
			teacher.send(map[string]any{"type": "room", "action": "extend"})
			if er := teacher.next("error", ""); er["code"] != "forbidden" {
				t.Fatalf("%v", er)
			}
			e.clock.Set(start.Add(time.Hour))
			e.hub.CheckTimers()
			teacher.next("event", "ended")
		})
		t.Run("free plan sessions end after 30 minutes", func(t *testing.T) {
			e.clock.Set(start.Add(-20 * time.Minute)) // the teacher prepares early
			c := e.class(nil)
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true, plan: "free"})
			if teacher.welcome["endsAt"] != start.Add(30*time.Minute).Format(time.RFC3339) {
				t.Fatalf("endsAt %v", teacher.welcome["endsAt"])
			}
			teacher.send(map[string]any{"type": "room", "action": "extend"})
			if er := teacher.next("error", ""); !strings.Contains(er["message"].(string), "plan") {
				t.Fatalf("%v", er)
			}
		})
		t.Run("the teacher ends the class", func(t *testing.T) {
			e.clock.Set(start)
			c := e.class(nil)
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
			student := e.mustJoin(c, "s", joinOpts{})
			teacher.conn.Handle([]byte(`{"type":"room","action":"end"}`))
			if ev := student.next("event", "ended"); ev["reason"] != "teacher" {
				t.Fatalf("%v", ev)
			}
			if _, err := e.join(c, "t", joinOpts{teacher: true}); failCode(err) != room.FailEnded {
				t.Fatalf("%v", err)
			}
		})
	})
}

func TestResume(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		e.clock.Set(start)
		c := e.class(nil)
		teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
		a := e.mustJoin(c, "a", joinOpts{})
		connID, seq := a.welcome["conn"].(string), a.seq()
		a.conn.Leave()
		a.closed()
		teacher.send(map[string]any{"type": "chat", "text": "while you were away"})

		back := e.mustJoin(c, "a", joinOpts{resume: &room.Resume{Conn: connID, Seq: seq}})
		if back.welcome["resumed"] != true || back.welcome["snapshot"] != nil || back.welcome["conn"] != connID {
			t.Fatalf("welcome %v", back.welcome)
		}
		// Missed: a's own leave, the chat; then its own join.
		if m := back.next("event", "chat")["message"].(map[string]any); m["text"] != "while you were away" {
			t.Fatalf("%v", m)
		}
		if j := back.next("event", "join"); j["participant"].(map[string]any)["userId"] != "a" || j["seq"].(float64) != back.welcome["seq"] {
			t.Fatalf("own join after the replay: %v", j)
		}
		// Another user's connection id resumes nothing.
		other := e.mustJoin(c, "b", joinOpts{resume: &room.Resume{Conn: teacher.welcome["conn"].(string), Seq: seq}})
		if other.welcome["resumed"] != false || other.welcome["snapshot"] == nil {
			t.Fatalf("stolen resume: %v", other.welcome)
		}
		// A sequence number from the future gets a snapshot.
		again := e.mustJoin(c, "a", joinOpts{resume: &room.Resume{Conn: connID, Seq: 1 << 40}})
		if again.welcome["resumed"] != false {
			t.Fatalf("%v", again.welcome)
		}
		if why := back.closed(); why != "replaced" {
			t.Fatalf("old connection: %s", why)
		}
	})
}

func TestAttendanceAndPoints(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		u, err := e.st.CreateUser(ctx, e.domain, lms.User{Username: "ann", Email: "ann@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.SetPointRule(ctx, e.domain, store.EventClassAttended, 5); err != nil {
			t.Fatal(err)
		}
		e.clock.Set(start.Add(5 * time.Minute))
		c := e.class(nil)
		ref := fmt.Sprint(u.ID)
		a := e.mustJoin(c, ref, joinOpts{})
		e.clock.Set(start.Add(20 * time.Minute))
		a.conn.Leave()
		a.closed()
		e.clock.Set(start.Add(25 * time.Minute))
		e.mustJoin(c, ref, joinOpts{}) // rejoining gives no second award
		evs, err := e.st.Attendance(ctx, e.domain, c.ID, ref)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range evs {
			got = append(got, ev.Kind+"@"+ev.At.Sub(start).String())
		}
		if fmt.Sprint(got) != "[join@5m0s leave@20m0s join@25m0s]" {
			t.Fatalf("attendance %v", got)
		}
		total, err := e.st.UserPoints(ctx, e.domain, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if total != 5 {
			t.Fatalf("points %d, want 5 once", total)
		}
		// A restart closes the open session at the restart time.
		e.hub.Close()
		n, err := e.st.CloseOpenAttendance(ctx, start.Add(40*time.Minute))
		if err != nil || n != 0 {
			t.Fatalf("hub close left %d open (%v)", n, err)
		}
	})
}
