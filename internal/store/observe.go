package store

import (
	"database/sql"
	"time"
)

// SetQueryObserver makes the store report how long each statement took
// to answer; op is "exec", "query" or "query_row" (never the SQL text or
// its arguments).
func (s *Store) SetQueryObserver(fn func(op string, d time.Duration)) { s.observe.Store(&fn) }

// observer returns the query observer, or nil.
func (s *Store) observer() func(op string, d time.Duration) {
	if fn := s.observe.Load(); fn != nil {
		return *fn
	}
	return nil
}

// Pools returns the read and write connection pools (the same pool for
// PostgreSQL), for connection statistics.
func (s *Store) Pools() (read, write *sql.DB) { return s.rdb, s.wdb }

// timed reports the time since start to the observer, if any.
func (d db) timed(op string, start time.Time) {
	if d.obs != nil {
		d.obs(op, time.Since(start))
	}
}
