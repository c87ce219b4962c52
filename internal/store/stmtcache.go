package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// SQLite statements are prepared once per connection and reused.
//
// The driver parses and plans every query it is given (issue 13's profile:
// statement preparation took more CPU than running the statements). A
// statement belongs to the connection that prepared it, so the cache lives
// in the connection: a query inside a transaction runs on the
// transaction's connection and finds that connection's statements. (A
// *sql.Stmt prepared on the pool instead would need a second connection
// while a transaction holds the single writer connection, and wait for it
// for ever.)
//
// Only queries with arguments are cached (scripts such as migrations have
// none), and the group writer's savepoints, at most stmtCacheSize per
// connection; a statement whose rows are still open is not shared, the
// query then gets a statement of its own.

const stmtCacheSize = 256

// savepointStmts are the group writer's statements, run around every
// write (groupcommit.go): cached although they have no arguments.
var savepointStmts = map[string]bool{sqlSavepoint: true, sqlRelease: true, sqlRollbackTo: true}

// sqliteConnector opens connections of the registered "sqlite" driver
// with a statement cache in each.
type sqliteConnector struct {
	base driver.Driver
	dsn  string
}

func openSQLiteDB(dsn string) (*sql.DB, error) {
	probe, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	base := probe.Driver()
	probe.Close()
	return sql.OpenDB(sqliteConnector{base: base, dsn: dsn}), nil
}

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.base.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &cachingConn{conn: conn, stmts: map[string]*cachedStmt{}}, nil
}

func (c sqliteConnector) Driver() driver.Driver { return c.base }

// sqliteConn is what the SQLite driver's connections implement.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

type cachedStmt struct {
	stmt interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	}
	busy bool // its rows are open
}

// cachingConn is one SQLite connection and its prepared statements. Like
// every driver.Conn, it is used by one goroutine at a time.
type cachingConn struct {
	conn  driver.Conn
	stmts map[string]*cachedStmt
}

func (c *cachingConn) base() sqliteConn { return c.conn.(sqliteConn) }

// stmt returns the cached statement for query, preparing it if needed, or
// nil when the query is not to be cached or its statement is busy.
func (c *cachingConn) stmt(ctx context.Context, query string, nargs int) (*cachedStmt, error) {
	if nargs == 0 && !savepointStmts[query] {
		return nil, nil
	}
	if s, ok := c.stmts[query]; ok {
		if s.busy {
			return nil, nil
		}
		return s, nil
	}
	if len(c.stmts) >= stmtCacheSize {
		return nil, nil
	}
	ds, err := c.base().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := ds.(interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	})
	if !ok {
		ds.Close()
		return nil, nil
	}
	s := &cachedStmt{stmt: st}
	c.stmts[query] = s
	return s, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.stmt(ctx, query, len(args))
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.base().ExecContext(ctx, query, args)
	}
	return s.stmt.ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.stmt(ctx, query, len(args))
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.base().QueryContext(ctx, query, args)
	}
	rows, err := s.stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.busy = true
	return &cachedRows{Rows: rows, s: s}, nil
}

func (c *cachingConn) Prepare(query string) (driver.Stmt, error) { return c.conn.Prepare(query) }
func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.base().PrepareContext(ctx, query)
}
func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.base().BeginTx(context.Background(), driver.TxOptions{})
}
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.base().BeginTx(ctx, opts)
}
func (c *cachingConn) Ping(ctx context.Context) error         { return c.base().Ping(ctx) }
func (c *cachingConn) ResetSession(ctx context.Context) error { return c.base().ResetSession(ctx) }
func (c *cachingConn) IsValid() bool                          { return c.base().IsValid() }

// Close finalizes the cached statements, then closes the connection.
func (c *cachingConn) Close() error {
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.stmt.Close())
		delete(c.stmts, q)
	}
	errs = append(errs, c.conn.Close())
	return errors.Join(errs...)
}

// cachedRows frees its statement for the next query when closed.
type cachedRows struct {
	driver.Rows
	s *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.s.busy = false
	return err
}
