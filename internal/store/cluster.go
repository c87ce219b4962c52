package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// ErrNotPostgres is returned by the cluster methods on SQLite: several
// nodes need PostgreSQL.
var ErrNotPostgres = errors.New("several nodes need PostgreSQL")

// Node is a running Lectern process of a cluster, as registered.
type Node struct {
	ID          string
	PublicURL   string
	InternalURL string
	UDPAddr     string
	Load        int
	Heartbeat   time.Time
}

// RoomKey names a live room: one sitting of one class of one domain.
type RoomKey struct {
	Domain, Class int64
	Sitting       int
}

// Lease is the ownership of a live room by a node. Epoch grows by one at
// each change of owner.
type Lease struct {
	Key   RoomKey
	Node  string
	Epoch int64
	// Previous is the node that held the lease before a takeover, and
	// PreviousHeartbeat its last heartbeat (when it stopped renewing); both
	// zero unless this claim took the lease over.
	Previous          string
	PreviousHeartbeat time.Time
	// Closed is how many attendance sessions of the room the takeover
	// closed (at PreviousHeartbeat, or at the takeover when that is
	// unknown), in the takeover's own transaction: no session the new
	// holder opens is recorded before them, or taken for one of them.
	Closed int
}

func (s *Store) cluster() (db, error) {
	if !s.pg {
		return db{}, ErrNotPostgres
	}
	return s.on(s.wdb), nil
}

func millis(d time.Duration) int64 { return d.Milliseconds() }

// RegisterNode adds or refreshes node n, heartbeat now.
func (s *Store) RegisterNode(ctx context.Context, n Node) error {
	d, err := s.cluster()
	if err != nil {
		return err
	}
	_, err = d.exec(ctx, `INSERT INTO cluster_nodes (id, public_url, internal_url, udp_addr, load, started, heartbeat)
		VALUES (?, ?, ?, ?, 0, now(), now())
		ON CONFLICT (id) DO UPDATE SET public_url = excluded.public_url, internal_url = excluded.internal_url,
		udp_addr = excluded.udp_addr, started = now(), heartbeat = now()`, n.ID, n.PublicURL, n.InternalURL, n.UDPAddr)
	return err
}

// Heartbeat records that node id is alive with load, and renews every
// lease it holds that has not expired, in one statement. It returns the
// leases it still holds; a room of the node missing from the
// list has been lost (the node stalled past the lease time) and must
// close.
func (s *Store) Heartbeat(ctx context.Context, id string, load int, ttl time.Duration) ([]Lease, error) {
	d, err := s.cluster()
	if err != nil {
		return nil, err
	}
	rows, err := d.query(ctx, `WITH n AS (UPDATE cluster_nodes SET heartbeat = now(), load = ? WHERE id = ? RETURNING id)
		UPDATE room_leases SET expires = now() + ? * interval '1 millisecond'
		WHERE node = (SELECT id FROM n) AND expires > now()
		RETURNING domain_id, class_id, sitting, epoch`, load, id, millis(ttl))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Lease
	for rows.Next() {
		l := Lease{Node: id}
		if err := rows.Scan(&l.Key.Domain, &l.Key.Class, &l.Key.Sitting, &l.Epoch); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// LeaveCluster removes node id and its leases (a clean shutdown, after its
// rooms closed).
func (s *Store) LeaveCluster(ctx context.Context, id string) error {
	d, err := s.cluster()
	if err != nil {
		return err
	}
	if _, err := d.exec(ctx, `DELETE FROM room_leases WHERE node = ?`, id); err != nil {
		return err
	}
	_, err = d.exec(ctx, `DELETE FROM cluster_nodes WHERE id = ?`, id)
	return err
}

// Nodes lists the nodes whose heartbeat is younger than ttl, least loaded
// first.
func (s *Store) Nodes(ctx context.Context, ttl time.Duration) ([]Node, error) {
	d, err := s.cluster()
	if err != nil {
		return nil, err
	}
	rows, err := d.query(ctx, `SELECT id, public_url, internal_url, udp_addr, load, heartbeat FROM cluster_nodes
		WHERE heartbeat > now() - ? * interval '1 millisecond' ORDER BY load, id`, millis(ttl))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Node
	for rows.Next() {
		var n Node
		if err := rows.Scan(&n.ID, &n.PublicURL, &n.InternalURL, &n.UDPAddr, &n.Load, &n.Heartbeat); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// Node returns a registered node, live or not.
func (s *Store) Node(ctx context.Context, id string) (Node, error) {
	d, err := s.cluster()
	if err != nil {
		return Node{}, err
	}
	var n Node
	err = d.queryRow(ctx, `SELECT id, public_url, internal_url, udp_addr, load, heartbeat FROM cluster_nodes WHERE id = ?`, id).
		Scan(&n.ID, &n.PublicURL, &n.InternalURL, &n.UDPAddr, &n.Load, &n.Heartbeat)
	if errors.Is(err, sql.ErrNoRows) {
		return Node{}, lms.NotFoundf("node %s not found", id)
	}
	return n, err
}

// ClaimRoom takes the lease of room k for node, in one statement: it
// succeeds when the room has no lease, when node already holds it (the
// epoch and the expiry stay: only the holder's heartbeats extend a live
// lease, so claims made for a node that just died do not keep its rooms),
// or when the holder's lease has expired (the epoch grows by one: a
// takeover). Otherwise it returns the live holder's lease. The database's
// clock decides expiry. A takeover closes the room's open attendance
// sessions in the same transaction (Lease.Closed): the new holder, whose
// own claims wait for the lease row until it commits, opens its sessions
// after.
func (s *Store) ClaimRoom(ctx context.Context, k RoomKey, node string, ttl time.Duration) (Lease, error) {
	if _, err := s.cluster(); err != nil {
		return Lease{}, err
	}
	l := Lease{Key: k}
	err := s.tx(ctx, func(d db) error {
		var prev sql.NullString
		var prevBeat sql.NullTime
		var mine bool
		token := newSecretHex(16)
		err := d.queryRow(ctx, `WITH old AS (SELECT l.node, n.heartbeat FROM room_leases l LEFT JOIN cluster_nodes n ON n.id = l.node
				WHERE l.domain_id = ? AND l.class_id = ? AND l.sitting = ?)
			INSERT INTO room_leases AS l (domain_id, class_id, sitting, node, epoch, taken, expires, claim)
			VALUES (?, ?, ?, ?, 1, now(), now() + ? * interval '1 millisecond', ?)
			ON CONFLICT (domain_id, class_id, sitting) DO UPDATE SET node = excluded.node,
				epoch = CASE WHEN l.node = excluded.node THEN l.epoch ELSE l.epoch + 1 END,
				taken = CASE WHEN l.node = excluded.node THEN l.taken ELSE now() END,
				expires = CASE WHEN l.node = excluded.node AND l.expires >= now() THEN l.expires ELSE excluded.expires END,
				claim = CASE WHEN l.node = excluded.node THEN l.claim ELSE excluded.claim END
			WHERE l.node = excluded.node OR l.expires < now()
			RETURNING l.node, l.epoch, (SELECT node FROM old), (SELECT heartbeat FROM old), l.claim = ?`,
			k.Domain, k.Class, k.Sitting, k.Domain, k.Class, k.Sitting, node, millis(ttl), token, token).Scan(&l.Node, &l.Epoch, &prev, &prevBeat, &mine)
		if errors.Is(err, sql.ErrNoRows) {
			// Held by another live node.
			return d.queryRow(ctx, `SELECT node, epoch FROM room_leases WHERE domain_id = ? AND class_id = ? AND sitting = ?`,
				k.Domain, k.Class, k.Sitting).Scan(&l.Node, &l.Epoch)
		}
		if err != nil {
			return err
		}
		// A takeover is the claim that changed the holder, which left its
		// own token in claim. (old is read from the statement's snapshot: a
		// claim that waited for a concurrent takeover sees the dead holder
		// there, and must not take over a second time; nor may one whose
		// transaction started in the same microsecond, which comparing now()
		// with taken allowed.)
		if !prev.Valid || prev.String == l.Node || !mine {
			return nil
		}
		l.Previous = prev.String
		if prevBeat.Valid {
			l.PreviousHeartbeat = prevBeat.Time
		}
		l.Closed, err = closeSittingAttendanceIn(ctx, d, l)
		return err
	})
	if err != nil {
		return Lease{}, err
	}
	return l, nil
}

// closeSittingAttendanceIn closes, in tx, the open attendance sessions of
// the room whose lease l took over: at its previous holder's last
// heartbeat, or now when it had none.
func closeSittingAttendanceIn(ctx context.Context, tx db, l Lease) (int, error) {
	at := l.PreviousHeartbeat
	if at.IsZero() {
		at = time.Now()
	}
	return closeAttendanceIn(ctx, tx, at, "domain_id = ? AND class_id = ? AND occurrence_seq = ?", l.Key.Domain, l.Key.Class, l.Key.Sitting)
}

// RoomLease returns the lease of room k, live or expired.
func (s *Store) RoomLease(ctx context.Context, k RoomKey) (Lease, time.Time, error) {
	d, err := s.cluster()
	if err != nil {
		return Lease{}, time.Time{}, err
	}
	l := Lease{Key: k}
	var expires time.Time
	err = d.queryRow(ctx, `SELECT node, epoch, expires FROM room_leases WHERE domain_id = ? AND class_id = ? AND sitting = ?`,
		k.Domain, k.Class, k.Sitting).Scan(&l.Node, &l.Epoch, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Lease{}, time.Time{}, lms.NotFoundf("room has no lease")
	}
	return l, expires, err
}

// ReleaseRoom drops node's lease of room k if it still holds it at epoch
// (the room closed).
func (s *Store) ReleaseRoom(ctx context.Context, k RoomKey, node string, epoch int64) error {
	d, err := s.cluster()
	if err != nil {
		return err
	}
	_, err = d.exec(ctx, `DELETE FROM room_leases WHERE domain_id = ? AND class_id = ? AND sitting = ? AND node = ? AND epoch = ?`,
		k.Domain, k.Class, k.Sitting, node, epoch)
	return err
}

// OrphanedLeases deletes the leases that expired more than grace ago (their
// node died and nobody joined since) and returns them, each with its
// node's last heartbeat as PreviousHeartbeat. Each room's open attendance
// sessions are closed in the same transaction (Lease.Closed), so that a
// session opened by a claim that comes after is not taken for one of
// them.
func (s *Store) OrphanedLeases(ctx context.Context, grace time.Duration) ([]Lease, error) {
	if _, err := s.cluster(); err != nil {
		return nil, err
	}
	var out []Lease
	err := s.tx(ctx, func(d db) error {
		err := scanRows(ctx, d, `WITH gone AS (DELETE FROM room_leases WHERE expires < now() - ? * interval '1 millisecond'
				RETURNING domain_id, class_id, sitting, node, epoch)
			SELECT g.domain_id, g.class_id, g.sitting, g.node, g.epoch, n.heartbeat FROM gone g LEFT JOIN cluster_nodes n ON n.id = g.node`,
			[]any{millis(grace)}, func(r *sql.Rows) error {
				var l Lease
				var beat sql.NullTime
				if err := r.Scan(&l.Key.Domain, &l.Key.Class, &l.Key.Sitting, &l.Node, &l.Epoch, &beat); err != nil {
					return err
				}
				l.Previous = l.Node
				if beat.Valid {
					l.PreviousHeartbeat = beat.Time
				}
				out = append(out, l)
				return nil
			})
		if err != nil {
			return err
		}
		for i := range out {
			if out[i].Closed, err = closeSittingAttendanceIn(ctx, d, out[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Fence names the lease a write on a live room is made under: the write is
// refused with ErrFenced unless Node still holds the lease of Key at Epoch
// (a node that lost a room, deposed by a takeover, cannot write for it any
// more). The zero Fence (a single node, or a write outside a live room)
// checks nothing.
type Fence struct {
	Key   RoomKey
	Node  string
	Epoch int64
}

// ErrFenced refuses a write made under a lease its node no longer holds.
var ErrFenced = errors.New("the room's lease is held by another node (stale epoch)")

// check refuses the transaction's write unless f's lease holds. On
// PostgreSQL the lease row stays share-locked until the transaction ends,
// so a takeover (which updates it) waits for the write or the write sees
// the new epoch: never both.
func (d db) checkFence(ctx context.Context, f Fence) error {
	if f.Node == "" {
		return nil
	}
	q := `SELECT 1 FROM room_leases WHERE domain_id = ? AND class_id = ? AND sitting = ? AND node = ? AND epoch = ?`
	if d.pg {
		q += " FOR SHARE"
	}
	ok, err := d.exists(ctx, q, f.Key.Domain, f.Key.Class, f.Key.Sitting, f.Node, f.Epoch)
	if err != nil {
		return err
	}
	if !ok {
		return ErrFenced
	}
	return nil
}

// CheckFence reports ErrFenced when f's lease no longer holds (a check
// before work outside the database, such as copying files to the blob
// store; the writes that follow check again).
func (s *Store) CheckFence(ctx context.Context, f Fence) error {
	return s.tx(ctx, func(tx db) error { return tx.checkFence(ctx, f) })
}
