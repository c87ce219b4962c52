package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
)

// Calls on a live room that arrive on a node other than its owner (the
// file routes: may this user share files, a file was shared) are
// forwarded to the owner: POST /_cluster/rooms/{op} on its internal URL,
// signed with the cluster secret (Authorization: Lectern-Node id time
// hmac-of-path-and-body). Nodes accept only signed calls younger than a
// minute.

// roomCall is the body of a forwarded call.
type roomCall struct {
	Domain  int64        `json:"domain"`
	Class   int64        `json:"class"`
	Sitting int          `json:"sitting"`
	User    string       `json:"user,omitempty"`
	File    lms.RoomFile `json:"file"`
}

func (rc roomCall) key() room.Key {
	return room.Key{Domain: rc.Domain, Class: rc.Class, Sitting: rc.Sitting}
}

// CanShareFiles asks the room's owner whether userID may share files.
func (c *Cluster) CanShareFiles(k room.Key, userID string) bool {
	if c.Hub.Room(k) != nil {
		return c.Hub.CanShareFiles(k, userID)
	}
	var ok bool
	if err := c.forward(k, "can-share-files", roomCall{User: userID}, &ok); err != nil {
		c.logger().Warn("forward a room call", "op", "can-share-files", "class", k.Class, "err", err)
		return false
	}
	return ok
}

// FileShared tells the room's owner that f was shared.
func (c *Cluster) FileShared(k room.Key, f lms.RoomFile) {
	if c.Hub.Room(k) != nil {
		c.Hub.FileShared(k, f)
		return
	}
	if err := c.forward(k, "file-shared", roomCall{File: f}, nil); err != nil {
		c.logger().Warn("forward a room call", "op", "file-shared", "class", k.Class, "err", err)
	}
}

// errNoRoom: the room is open on no node.
var errNoRoom = fmt.Errorf("the room is not open on any node")

func (c *Cluster) forward(k room.Key, op string, rc roomCall, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, _, err := c.Store.RoomLease(ctx, storeKey(k))
	if lms.IsNotFound(err) || err == nil && l.Node == c.Self.ID {
		return errNoRoom
	}
	if err != nil {
		return err
	}
	n, err := c.Store.Node(ctx, l.Node)
	if err != nil {
		return err
	}
	rc.Domain, rc.Class, rc.Sitting = k.Domain, k.Class, k.Sitting
	body, _ := json.Marshal(rc)
	path := "/_cluster/rooms/" + op
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimRight(n.InternalURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", c.callAuth(path, body))
	resp, err := c.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("node %s answered %s", l.Node, resp.Status)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

func bodyHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (c *Cluster) callAuth(path string, body []byte) string {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	return "Lectern-Node " + c.Self.ID + " " + ts + " " + c.sign("call", c.Self.ID, ts, path, bodyHash(body))
}

func (c *Cluster) verifyCall(auth, path string, body []byte) bool {
	v, ok := strings.CutPrefix(auth, "Lectern-Node ")
	if !ok {
		return false
	}
	f := strings.Fields(v)
	if len(f) != 3 || !fresh(f[1]) {
		return false
	}
	return equal(f[2], c.sign("call", f[0], f[1], path, bodyHash(body)))
}

// Register adds the internal routes to mux.
func (c *Cluster) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /_cluster/rooms/{op}", c.serveCall)
}

func (c *Cluster) serveCall(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	if !c.verifyCall(r.Header.Get("Authorization"), r.URL.Path, body) {
		http.Error(w, "not a signed call of a node of this cluster", http.StatusUnauthorized)
		return
	}
	var rc roomCall
	if err := json.Unmarshal(body, &rc); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	k := rc.key()
	var out any
	switch r.PathValue("op") {
	case "can-share-files":
		out = c.Hub.CanShareFiles(k, rc.User)
	case "file-shared":
		c.Hub.FileShared(k, rc.File)
		out = true
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}
