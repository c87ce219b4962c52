package classroom

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
)

// Router places live rooms when Lectern runs on several nodes: each room
// lives on one node, and a classroom WebSocket that reaches another node
// is relayed to it.
type Router interface {
	// Route returns "" when room k lives on this node (it may open it
	// here), else the internal base URL of the node it lives on. relayed
	// says the request was relayed by another node (such a request is
	// never relayed again).
	Route(ctx context.Context, k room.Key, r *http.Request) (owner string, err error)
	// RelayHeader is the header that marks a relayed request as coming
	// from a node of the cluster.
	RelayHeader(r *http.Request) http.Header
}

// Rooms is what the file routes ask of a live room: the local Hub on one
// node, or a cluster that forwards to the room's node.
type Rooms interface {
	CanShareFiles(k room.Key, userID string) bool
	FileShared(k room.Key, f lms.RoomFile)
}

func (p *Pages) rooms() Rooms {
	if p.RoomControl != nil {
		return p.RoomControl
	}
	return p.Hub
}

// relayDial bounds the connection to the owner of a relayed classroom
// WebSocket.
const relayDial = 2 * time.Second

// relay pipes the classroom WebSocket ws to the same route on the node at
// owner, starting with the hello already read. Messages pass unchanged both
// ways until either side closes; the owner's close status and reason are
// passed on, so clients react as to a direct connection.
func (p *Pages) relay(ctx context.Context, r *http.Request, ws *websocket.Conn, owner string, hello []byte) {
	u := "ws" + strings.TrimPrefix(strings.TrimRight(owner, "/"), "http") + "/classroom/ws"
	h := p.Router.RelayHeader(r)
	if o := r.Header.Get("Origin"); o != "" {
		h.Set("Origin", o)
	}
	// Nodes answer each other in milliseconds; a node that does not
	// within relayDial is taken for dead, and the client retries (on its
	// next attempt, the room is waited for and taken over: see
	// docs/ops/cluster.md).
	dctx, cancel := context.WithTimeout(ctx, relayDial)
	up, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPHeader: h, Host: r.Host})
	cancel()
	if err != nil {
		p.Logger.Warn("relay a classroom connection", "owner", owner, "err", err)
		ws.Close(websocket.StatusGoingAway, "restart")
		return
	}
	up.SetReadLimit(maxMessage)
	defer up.CloseNow()
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	err = up.Write(wctx, websocket.MessageText, hello)
	cancel()
	if err != nil {
		ws.Close(websocket.StatusGoingAway, "restart")
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(from, to *websocket.Conn) {
		defer func() { done <- struct{}{} }()
		for {
			typ, data, err := from.Read(ctx)
			if err != nil {
				status, reason := websocket.CloseStatus(err), ""
				var ce websocket.CloseError
				if errors.As(err, &ce) {
					reason = ce.Reason
				}
				if status == -1 {
					// The other side vanished (a node died): clients
					// reconnect as after a restart.
					status, reason = websocket.StatusGoingAway, "restart"
				}
				to.Close(status, reason)
				return
			}
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err = to.Write(wctx, typ, data)
			cancel()
			if err != nil {
				from.CloseNow()
				return
			}
		}
	}
	go pipe(ws, up)
	go pipe(up, ws)
	<-done
	ws.CloseNow()
	up.CloseNow()
	<-done
}

// moved is a hello for a room that lives on another node: the node's
// internal URL and the hello to pass on.
type moved struct {
	owner string
	hello []byte
}
