// Package cluster runs one school on several Lectern processes (nodes)
// sharing one PostgreSQL database, which is also the registry: each node
// registers itself (id, public and internal URL, load, heartbeat), and each
// live room is owned by one node through a lease row with a fencing epoch.
//
// A room's lease is taken on its first join by the least loaded live node
// and renewed, with all of that node's leases, by one statement every
// TTL/3. A node that dies stops renewing: its leases expire TTL after its
// last heartbeat, the next join takes the room over (the epoch grows by
// one) and closes the attendance sessions left open at the dead node's
// last heartbeat; a sweeper does the same for rooms nobody rejoins. A
// classroom WebSocket that reaches a node other than the owner is relayed
// to the owner's internal URL, and the file routes' calls on a live room
// are forwarded to it over an authenticated internal call.
package cluster

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/store"
)

// DefaultTTL is how long a lease lives without renewal: a dead node's rooms
// move at most this long after its last heartbeat (renewals come every
// TTL/3, so at most TTL after its death).
const DefaultTTL = 9 * time.Second

// Cluster is this node's membership of the cluster.
type Cluster struct {
	Store  *store.Store
	Hub    *room.Hub
	Logger *slog.Logger
	// Self is this node as registered: ID and InternalURL are required.
	Self store.Node
	// TTL is the lease time (DefaultTTL when 0).
	TTL time.Duration
	// Secret signs the calls between nodes (shared through the database).
	Secret []byte
	// Client makes the calls to other nodes.
	Client *http.Client

	mu     sync.Mutex
	idle   map[room.Key]int   // heartbeats seen holding a lease without an open room
	lastOK time.Time          // last heartbeat that reached the database
	epochs map[room.Key]int64 // the leases this node holds, with their epochs
}

// Fence is the lease this node holds room k under, for the room's writes
// (the hub's and the recorder's Fence). A room this node does not hold
// gets epoch 0, which no lease has: its writes are refused.
func (c *Cluster) Fence(k room.Key) store.Fence {
	c.mu.Lock()
	defer c.mu.Unlock()
	return store.Fence{Key: storeKey(k), Node: c.Self.ID, Epoch: c.epochs[k]}
}

// held notes the epoch of a lease this node holds.
func (c *Cluster) held(k room.Key, epoch int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epochs == nil {
		c.epochs = map[room.Key]int64{}
	}
	c.epochs[k] = epoch
}

// NewNodeID is a node id for a process started without one: the host name
// and a random suffix.
func NewNodeID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	if host == "" {
		host = "node"
	}
	return host + "-" + hex.EncodeToString(b)
}

func (c *Cluster) ttl() time.Duration {
	if c.TTL > 0 {
		return c.TTL
	}
	return DefaultTTL
}

func (c *Cluster) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

func (c *Cluster) client() *http.Client {
	if c.Client != nil {
		return c.Client
	}
	return &http.Client{Timeout: 10 * time.Second}
}

func storeKey(k room.Key) store.RoomKey {
	return store.RoomKey{Domain: k.Domain, Class: k.Class, Sitting: k.Sitting}
}

// Join registers this node.
func (c *Cluster) Join(ctx context.Context) error {
	if c.Self.ID == "" || c.Self.InternalURL == "" {
		return errors.New("cluster: a node needs an id and an internal URL")
	}
	if err := c.Store.RegisterNode(ctx, c.Self); err != nil {
		return err
	}
	c.mu.Lock()
	c.lastOK = time.Now()
	c.mu.Unlock()
	return nil
}

// Leave removes this node and its leases from the registry, after its
// rooms have closed (a clean shutdown).
func (c *Cluster) Leave(ctx context.Context) error {
	return c.Store.LeaveCluster(ctx, c.Self.ID)
}

// Route says where room k lives, taking its lease for the least loaded
// live node when it has none (or its holder's expired): "" for this node,
// else the owner's internal URL. A request relayed by another node is
// never relayed again: that node chose this one.
func (c *Cluster) Route(ctx context.Context, k room.Key, r *http.Request) (string, error) {
	relayed := r != nil && c.verifyRelay(r.Header.Get(relayHeader))
	candidate := c.Self.ID
	live := map[string]bool{}
	if !relayed {
		// Live nodes renewed within a round and a half (they renew every
		// third of the TTL): a node that did not is likely dead, gets no
		// new rooms, and its rooms are waited for (below).
		nodes, err := c.Store.Nodes(ctx, c.ttl()/2)
		if err != nil {
			return "", err
		}
		if len(nodes) > 0 {
			candidate = nodes[0].ID
		}
		for _, n := range nodes {
			live[n.ID] = true
		}
	}
	l, err := c.Store.ClaimRoom(ctx, storeKey(k), candidate, c.ttl())
	if err != nil {
		return "", err
	}
	// The holder missed its last renewal: it is most likely dead.
	// Rather than send the client to it (the client would fail, back off
	// and come back later), hold the hello until the lease expires and
	// the room can be taken over (at most TTL; the hello's own timeout
	// bounds the wait).
	for give := time.Now().Add(c.ttl()); !relayed && l.Node != candidate && !live[l.Node]; {
		select {
		case <-ctx.Done():
			return c.nodeURL(context.WithoutCancel(ctx), l.Node)
		case <-time.After(takeoverPoll):
		}
		if time.Now().After(give) {
			break // it renews after all: it lives
		}
		if l, err = c.Store.ClaimRoom(ctx, storeKey(k), candidate, c.ttl()); err != nil {
			return "", err
		}
	}
	if l.Previous != "" {
		c.tookOver(ctx, l)
	}
	if l.Node == c.Self.ID {
		c.held(k, l.Epoch)
		return "", nil
	}
	if relayed {
		return "", errors.New("cluster: a relayed room lives on yet another node; the client will retry")
	}
	return c.nodeURL(ctx, l.Node)
}

// takeoverPoll is how often a hello waiting for a dead node's lease to
// expire tries to take the room.
const takeoverPoll = 200 * time.Millisecond

// nodeURL is the internal URL of node id.
func (c *Cluster) nodeURL(ctx context.Context, id string) (string, error) {
	n, err := c.Store.Node(ctx, id)
	if err != nil {
		return "", err
	}
	return n.InternalURL, nil
}

// tookOver finishes what a dead owner left of a room: its attendance
// sessions ended at its last heartbeat (the store closed them in the
// takeover's transaction, l.Closed), and the recording segments it was
// making fail (their files stayed on its disk; the recording goes on in a
// new segment on the new owner).
func (c *Cluster) tookOver(ctx context.Context, l store.Lease) {
	segs, err := c.Store.FailActiveRecordings(ctx, l.Key)
	if err != nil {
		c.logger().Error("close a dead node's recording segments", "class", l.Key.Class, "err", err)
	}
	c.logger().Info("room taken over from a node that stopped", "class", l.Key.Class, "sitting", l.Key.Sitting,
		"from", l.Previous, "to", l.Node, "epoch", l.Epoch, "sessions_closed", l.Closed, "segments_lost", segs)
}

// Run renews this node's leases every TTL/3 until ctx is done, closes the
// rooms whose leases it lost, releases the leases of rooms that closed,
// and sweeps the rooms of dead nodes that nobody rejoined.
func (c *Cluster) Run(ctx context.Context) {
	t := time.NewTicker(c.ttl() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Beat(ctx)
		}
	}
}

// Beat is one round of Run.
func (c *Cluster) Beat(ctx context.Context) {
	load := c.Hub.Participants() + c.Hub.Rooms()
	held, err := c.Store.Heartbeat(ctx, c.Self.ID, load, c.ttl())
	c.mu.Lock()
	if c.idle == nil {
		c.idle = map[room.Key]int{}
	}
	if err != nil {
		// Cut off from the database: once the leases may have expired,
		// another node may own the rooms; close them here.
		stale := time.Since(c.lastOK) > c.ttl()
		c.mu.Unlock()
		c.logger().Error("cluster heartbeat", "err", err)
		if stale {
			for _, k := range c.Hub.Keys() {
				c.Hub.Evict(k)
			}
		}
		return
	}
	c.lastOK = time.Now()
	mine := map[room.Key]int64{}
	for _, l := range held {
		mine[room.Key{Domain: l.Key.Domain, Class: l.Key.Class, Sitting: l.Key.Sitting}] = l.Epoch
	}
	// The leases held are the ones renewed (a claim made since this
	// heartbeat's statement is kept for the next one).
	if c.epochs == nil {
		c.epochs = map[room.Key]int64{}
	}
	for k := range c.epochs {
		if _, ok := mine[k]; !ok && c.Hub.Room(k) == nil {
			delete(c.epochs, k)
		}
	}
	for k, e := range mine {
		c.epochs[k] = e
	}
	var release []room.Key
	for k := range mine {
		if c.Hub.Room(k) != nil {
			delete(c.idle, k)
			continue
		}
		c.idle[k]++
		if c.idle[k] >= 3 {
			delete(c.idle, k)
			release = append(release, k)
		}
	}
	c.mu.Unlock()
	for _, k := range c.Hub.Keys() {
		if _, ok := mine[k]; !ok {
			c.logger().Warn("room lease lost; closing the room here", "class", k.Class, "sitting", k.Sitting)
			c.Hub.Evict(k)
		}
	}
	for _, k := range release {
		if err := c.Store.ReleaseRoom(ctx, storeKey(k), c.Self.ID, mine[k]); err != nil {
			c.logger().Error("release a room lease", "class", k.Class, "err", err)
		}
	}
	orphans, err := c.Store.OrphanedLeases(ctx, c.ttl())
	if err != nil {
		c.logger().Error("sweep room leases", "err", err)
		return
	}
	for _, l := range orphans {
		c.tookOver(ctx, l)
	}
}

// The relay header marks a classroom WebSocket relayed by a node:
// "node-id unix-time hmac".
const relayHeader = "X-Lectern-Relay"

// RelayHeader is the header of a WebSocket relayed from this node.
func (c *Cluster) RelayHeader(*http.Request) http.Header {
	h := http.Header{}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	h.Set(relayHeader, c.Self.ID+" "+ts+" "+c.sign("relay", c.Self.ID, ts))
	return h
}

func (c *Cluster) verifyRelay(v string) bool {
	f := strings.Fields(v)
	if len(f) != 3 || !fresh(f[1]) {
		return false
	}
	return equal(f[2], c.sign("relay", f[0], f[1]))
}

func (c *Cluster) sign(parts ...string) string {
	m := hmac.New(sha256.New, c.Secret)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// fresh reports whether a signed unix time is within a minute of now.
func fresh(ts string) bool {
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	d := time.Since(time.Unix(n, 0))
	return d < time.Minute && d > -time.Minute
}

func equal(a, b string) bool { return hmac.Equal([]byte(a), []byte(b)) }
