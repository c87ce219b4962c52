package store

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// hookCache keeps, on SQLite, each domain's enabled webhook endpoints as
// the group writer last read them, so that a write raising an event (emit)
// does not query webhook_endpoints every time: that query was a sixth of
// the writer's work in creating a user, for endpoints that rarely change
// (docs/performance.md, "Twenty-third pass").
//
// It is exact, never a while out of date. It is read and filled only in
// the writer's group transactions (db.detached), and emptied whenever what
// it holds may no longer be what that transaction would read:
//   - a statement of this process naming webhook_endpoints that is not a
//     SELECT (db.exec: every create, edit, enable, disable, delete and
//     import of an endpoint, whatever its store function);
//   - a function of a group rolled back to its savepoint, or a group lost:
//     what it wrote and what was read after it are gone;
//   - another process's commit (a `lectern` command on the same file):
//     the first event of each group compares the writer connection's
//     PRAGMA data_version, which moves only on other connections' commits
//     and which no other process can move while the group holds SQLite's
//     write lock.
//
// PostgreSQL has no group writer, and other nodes write to it: emit asks
// the database each time there.
type hookCache struct {
	mu      sync.Mutex
	version int64 // the writer connection's data_version when last compared
	checked bool  // version compared in the current group
	domains map[int64][]hookTarget
}

// hookTarget is an enabled endpoint: its id and the event types it is
// subscribed to (eventsCol: " type type ").
type hookTarget struct {
	id     int64
	events string
}

// clear forgets every domain's endpoints.
func (c *hookCache) clear() {
	c.mu.Lock()
	c.domains = nil
	c.mu.Unlock()
}

// groupStarted makes the next targets compare data_version again.
func (c *hookCache) groupStarted() {
	c.mu.Lock()
	c.checked = false
	c.mu.Unlock()
}

// targets returns the domain's enabled endpoints as tx reads them: from
// memory when tx is a group's and nothing has changed them since they were
// read.
func (c *hookCache) targets(ctx context.Context, tx db, domainID int64) ([]hookTarget, error) {
	if !tx.detached {
		return readTargets(ctx, tx, domainID)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.checked {
		var v int64
		if err := tx.queryRow(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			return nil, err
		}
		if v != c.version {
			c.domains, c.version = nil, v
		}
		c.checked = true
	}
	if t, ok := c.domains[domainID]; ok {
		return t, nil
	}
	t, err := readTargets(ctx, tx, domainID)
	if err != nil {
		return nil, err
	}
	if c.domains == nil {
		c.domains = make(map[int64][]hookTarget)
	}
	c.domains[domainID] = t
	return t, nil
}

// readTargets reads the domain's enabled endpoints.
func readTargets(ctx context.Context, tx db, domainID int64) ([]hookTarget, error) {
	var out []hookTarget
	err := scanRows(ctx, tx, "SELECT id, events FROM webhook_endpoints WHERE domain_id = ? AND enabled = 1", []any{domainID},
		func(r *sql.Rows) error {
			out = append(out, hookTarget{})
			return r.Scan(&out[len(out)-1].id, &out[len(out)-1].events)
		})
	return out, err
}

// changesHooks reports whether statement q may change webhook_endpoints.
func changesHooks(q string) bool {
	return strings.Contains(q, "webhook_endpoints") && !strings.HasPrefix(strings.TrimSpace(q), "SELECT")
}
