package room

import (
	"encoding/json"
	"sync"
)

// Conn is one connection (one device) of a user in a room. The WebSocket
// layer writes what Out yields and passes what it reads to Handle; when
// the socket closes it calls Leave.
type Conn struct {
	room   *Room
	id     string
	user   string
	extend int

	out       chan []byte
	closeOnce sync.Once
	reason    string // set before out is closed
}

func newConn(r *Room, id, user string) *Conn {
	return &Conn{room: r, id: id, user: user, extend: 1, out: make(chan []byte, outBuffer)}
}

// ID is the connection id (the one a client resumes with).
func (c *Conn) ID() string { return c.id }

// Out yields the messages to send, in order. It is closed when the room
// ends the connection; CloseReason then says why.
func (c *Conn) Out() <-chan []byte { return c.out }

// CloseReason is why the room closed the connection: "removed", "ended",
// "time", "replaced", "slow", "restart" or "left" (the client left). Read it
// only after Out is closed.
func (c *Conn) CloseReason() string { return c.reason }

// Handle passes a message the client sent to the room. A message that is
// not JSON gets an error answer.
func (c *Conn) Handle(raw []byte) {
	var m clientMsg
	err := json.Unmarshal(raw, &m)
	m.raw = raw
	c.room.q.post(func() {
		if c.room.conns[c.id] != c {
			return
		}
		if err != nil {
			c.room.sendTo(c, errorMsg{Type: "error", Code: ErrInvalid, Message: "The message is not valid JSON."})
			return
		}
		c.room.handle(c, m)
	})
}

// Leave tells the room the connection's socket has closed.
func (c *Conn) Leave() {
	c.room.q.post(func() { c.room.leave(c) })
}

// push queues data; a connection too slow to keep up is dropped. It runs
// on the room goroutine.
func (c *Conn) push(data []byte) {
	if c.reason != "" {
		return
	}
	select {
	case c.out <- data:
	default:
		c.room.q.post(func() {
			if c.room.conns[c.id] == c {
				c.room.detach(c, "slow")
			}
		})
		c.close("slow")
	}
}

// close ends the connection's output with reason. It runs on the room
// goroutine.
func (c *Conn) close(reason string) {
	c.closeOnce.Do(func() {
		if reason == "" {
			reason = "left"
		}
		c.reason = reason
		close(c.out)
	})
}
