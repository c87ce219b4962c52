package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

const userCols = "id, name, username, email, created_at"

func scanUser(row interface{ Scan(...any) error }) (lms.User, error) {
	var u lms.User
	err := row.Scan(intDest(&u.ID), &u.Name, &u.Username, &u.Email, timeCol(&u.CreatedAt))
	return u, err
}

// userListCols are the columns a listing of users reads: userCols but
// created_at, which no listing shows (a fifth of the cost of a page of
// 50 on SQLite, BenchmarkListUsers). Packing the three texts in one value
// (packed.go), as a class's fields are, made 205 fewer allocations a page
// on SQLite but no page cheaper, and PostgreSQL's dearer.
const userListCols = "id, name, username, email"

// scanListedUser scans a row of userListCols into *u.
func scanListedUser(r *sql.Rows, u *lms.User) error {
	return r.Scan(intDest(&u.ID), &u.Name, &u.Username, &u.Email)
}

// CreateUser adds a user. A second user with the same email (compared
// case-insensitively) in the domain is a conflict.
func (s *Store) CreateUser(ctx context.Context, domainID int64, u lms.User) (lms.User, error) {
	u.CreatedAt = s.now()
	err := s.txFirstWriteDecides(ctx, func(tx db) error {
		var err error
		u.ID, err = insertUserRow(ctx, tx, domainID, u)
		if isUnique(err) {
			return lms.Conflictf("a user with email %s already exists", u.Email)
		}
		if err != nil {
			return err
		}
		return emit(ctx, tx, domainID, event.UserCreatedEvent(u))
	})
	return u, err
}

// insertUserRow stores a user's row, created at u.CreatedAt, and counts
// it (countInserted).
func insertUserRow(ctx context.Context, tx db, domainID int64, u lms.User) (int64, error) {
	id, err := tx.insert(ctx, `INSERT INTO users (domain_id, name, username, email, email_key, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, domainID, u.Name, u.Username, u.Email, lms.EmailKey(u.Email), formatTime(u.CreatedAt))
	if err == nil {
		tx.countInserted(domainID, countUsers, 1)
	}
	return id, err
}

// User returns one user of the domain.
// A point read is answered from memory when the store caches records
// (recordcache.go).
func (s *Store) User(ctx context.Context, domainID, id int64) (lms.User, error) {
	return cachedRecord(ctx, s, &s.users, recordKey{domainID, id}, userSize, func(ctx context.Context) (lms.User, error) {
		return user(ctx, s.read(), domainID, id)
	})
}

// userSize is a user's size for the record cache, roughly.
func userSize(u lms.User) int { return 64 + len(u.Name) + len(u.Username) + len(u.Email) }

func userID(u lms.User) int64 { return u.ID }

func user(ctx context.Context, d db, domainID, id int64) (lms.User, error) {
	u, err := scanUser(d.queryRow(ctx, "SELECT "+userCols+" FROM users WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return lms.User{}, lms.NotFoundf("user %d not found", id)
	}
	return u, err
}

// UserByEmail returns the domain's user with that email (any letter case).
func (s *Store) UserByEmail(ctx context.Context, domainID int64, email string) (lms.User, error) {
	return s.userByEmail(ctx, s.read(), domainID, email)
}

func (s *Store) userByEmail(ctx context.Context, d db, domainID int64, email string) (lms.User, error) {
	u, err := scanUser(d.queryRow(ctx, "SELECT "+userCols+" FROM users WHERE domain_id = ? AND email_key = ?", domainID, lms.EmailKey(email)))
	if errors.Is(err, sql.ErrNoRows) {
		return lms.User{}, lms.NotFoundf("no user with email %s", email)
	}
	return u, err
}

// DeleteUserByEmail deletes a user and everything that hangs on them
// (enrollments, group memberships, points, badges, attendance) in one
// transaction, and returns the deleted user.
func (s *Store) DeleteUserByEmail(ctx context.Context, domainID int64, email string) (lms.User, error) {
	var u lms.User
	err := s.tx(ctx, func(tx db) error {
		var err error
		u, err = s.userByEmail(ctx, tx, domainID, email)
		if err != nil {
			return err
		}
		// Rows that reference users carry ON DELETE CASCADE. Attendance
		// names people by the classroom user id the launch carried, which
		// for an LMS user is their id as text (as learn reads it back).
		if _, err := tx.exec(ctx, "DELETE FROM attendance_events WHERE domain_id = ? AND user_ref = ?",
			domainID, strconv.FormatInt(u.ID, 10)); err != nil {
			return err
		}
		if _, err = tx.exec(ctx, "DELETE FROM users WHERE domain_id = ? AND id = ?", domainID, u.ID); err != nil {
			return err
		}
		tx.unlist("users", domainID, u.ID)
		return emit(ctx, tx, domainID, event.UserDeletedEvent(u))
	})
	return u, err
}

// UserFilter selects users for ListUsers.
type UserFilter struct {
	Name  string // partial, case-insensitive
	Email string // partial, case-insensitive
}

// ListUsers returns one page of the domain's users matching f, by id, and
// the number of all matches. Their CreatedAt is left zero (userListCols).
func (s *Store) ListUsers(ctx context.Context, domainID int64, f UserFilter, p Page) ([]lms.User, int64, error) {
	where := "domain_id = ?"
	args := []any{domainID}
	if f.Name != "" {
		where += ` AND ` + s.read().fold("name") + likeContains
		args = append(args, likePattern(f.Name))
	}
	if f.Email != "" {
		where += ` AND email_key` + likeContains
		args = append(args, likePattern(f.Email))
	}
	d := s.read()
	// Each row scanned into its element of a page with room for it
	// (appendRecord): growing the slice and copying users into it were
	// half the bytes a users/list allocated.
	var users []lms.User
	scan := func(r *sql.Rows) error {
		return scanListedUser(r, s.listedUsers.appendRecord(&users, p.Limit))
	}
	if f.Name == "" && f.Email == "" {
		gen := s.gen.Load() // before the page, as for any cached read
		total, err := rowCount(ctx, d, domainID, countUsers)
		if err != nil {
			return nil, 0, err
		}
		pg := page{table: "users", domainID: domainID, cols: userListCols, total: total, offset: p.Offset, limit: p.Limit}
		// With records cached, through the cache of users as listings
		// read them (cachedListPage).
		if !s.cacheRecords {
			err = listPage(ctx, d, pg, scan)
			return orEmpty(users), total, err
		}
		users, err = cachedListPage(ctx, s, d, &s.listedUsers, pg, gen, userSize, userID, scan, func() []lms.User { return users })
		return orEmpty(users), total, err
	}
	total, err := d.count(ctx, "SELECT COUNT(*) FROM users WHERE "+where, args...)
	if err != nil {
		return nil, 0, err
	}
	err = scanRows(ctx, d, "SELECT "+userListCols+" FROM users WHERE "+where+" ORDER BY id LIMIT +? OFFSET +?",
		append(args, p.Limit, p.Offset), scan)
	return orEmpty(users), total, err
}

// ReleaseUsers hands back a page that ListUsers returned, once the caller
// is done with it and with everything that points into it: a later page
// is put together in the same memory. Handing pages back is optional; a
// page is handed back once at most (twice, two later pages would share
// it).
func (s *Store) ReleaseUsers(users []lms.User) { s.listedUsers.releasePage(users) }

// likeContains compares with a likePattern, the parameter joined to an
// empty string rather than bare: SQLite marks a statement whose LIKE
// pattern is a bare parameter to be prepared again whenever a value is
// bound to it (for the LIKE optimisation, which looks at the pattern),
// whatever the left side is. That cost about 5 % of a filtered page of
// users and 10 % of a class search (BenchmarkListUsers,
// BenchmarkListLiveClasses).
const likeContains = ` LIKE (? || '') ESCAPE '\'`

// likePattern makes a case-insensitive "contains" LIKE pattern of s, with
// LIKE's wildcards escaped.
func likePattern(s string) string {
	return "%" + likeEscaper.Replace(strings.ToLower(s)) + "%"
}

// likeEscaper escapes LIKE's wildcards and its escape character. It is
// built once: building it was a third of the bytes a class search
// allocated.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
