package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
)

// Page selects a slice of a listing.
type Page struct {
	Offset, Limit int
}

// itemNames are the words used in messages about an item kind.
var itemNames = map[string]string{
	lms.KindCourse: "course",
	lms.KindTest:   "test",
	lms.KindClass:  "live class",
	lms.KindBundle: "bundle",
}

func itemNotFound(kind string, id int64) error {
	return lms.NotFoundf("%s %d not found", itemNames[kind], id)
}

// deleteItem deletes an item and everything that hangs on it in one
// transaction, and emits events (webhooks) in it.
func (s *Store) deleteItem(ctx context.Context, domainID int64, kind string, id int64, events ...event.Event) error {
	return s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "DELETE FROM "+itemTables[kind]+" WHERE domain_id = ? AND id = ?", domainID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return itemNotFound(kind, id)
		}
		tx.unlist(itemTables[kind], domainID, id)
		if err := deleteOwned(ctx, tx, domainID, kind, id); err != nil {
			return err
		}
		for _, ev := range events {
			if err := emit(ctx, tx, domainID, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

// setStatus sets the publication status of a course or test.
func (s *Store) setStatus(ctx context.Context, domainID int64, kind string, id int64, status string) error {
	return s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "UPDATE "+itemTables[kind]+" SET status = ?, updated_at = ? WHERE domain_id = ? AND id = ?",
			status, formatTime(s.now()), domainID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return itemNotFound(kind, id)
		}
		return nil
	})
}

// Courses

const courseCols = "id, name, subtitle, instructor_description, highlight, description, alias, status, created_at, updated_at"

func scanCourse(row interface{ Scan(...any) error }) (lms.Course, error) {
	var c lms.Course
	err := row.Scan(intDest(&c.ID), &c.Name, &c.Subtitle, &c.InstructorDescription, &c.Highlight, &c.Description, &c.Alias,
		&c.Status, timeCol(&c.CreatedAt), timeCol(&c.UpdatedAt))
	return c, err
}

// CreateCourse adds an unpublished course.
func (s *Store) CreateCourse(ctx context.Context, domainID int64, c lms.Course) (lms.Course, error) {
	c.Status = lms.Unpublished
	c.CreatedAt, c.UpdatedAt = s.now(), s.now()
	err := s.tx(ctx, func(tx db) error {
		var err error
		c.ID, err = tx.insert(ctx, `INSERT INTO courses (domain_id, name, subtitle, instructor_description, highlight,
			description, alias, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			domainID, c.Name, c.Subtitle, c.InstructorDescription, c.Highlight, c.Description, c.Alias, c.Status,
			formatTime(c.CreatedAt), formatTime(c.UpdatedAt))
		if err != nil {
			return err
		}
		return emit(ctx, tx, domainID, event.CourseCreatedEvent(c))
	})
	return c, err
}

// Course returns one course.
// A point read is answered from memory when the store caches records
// (recordcache.go).
func (s *Store) Course(ctx context.Context, domainID, id int64) (lms.Course, error) {
	return cachedRecord(ctx, s, &s.courses, recordKey{domainID, id}, courseSize, func(ctx context.Context) (lms.Course, error) {
		return course(ctx, s.read(), domainID, id)
	})
}

// courseSize is a course's size for the record cache, roughly.
func courseSize(c lms.Course) int {
	return 96 + len(c.Name) + len(c.Subtitle) + len(c.InstructorDescription) + len(c.Highlight) +
		len(c.Description) + len(c.Alias) + len(c.Status)
}

func course(ctx context.Context, d db, domainID, id int64) (lms.Course, error) {
	c, err := scanCourse(d.queryRow(ctx, "SELECT "+courseCols+" FROM courses WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, itemNotFound(lms.KindCourse, id)
	}
	return c, err
}

// UpdateCourse applies edit to a course and saves it, in one transaction.
func (s *Store) UpdateCourse(ctx context.Context, domainID, id int64, edit func(*lms.Course)) (lms.Course, error) {
	var c lms.Course
	err := s.tx(ctx, func(tx db) error {
		if err := lockRow(ctx, tx, "courses", domainID, id); err != nil {
			return err
		}
		var err error
		if c, err = course(ctx, tx, domainID, id); err != nil {
			return err
		}
		edit(&c)
		c.UpdatedAt = s.now()
		_, err = tx.exec(ctx, `UPDATE courses SET name = ?, subtitle = ?, instructor_description = ?, highlight = ?,
			description = ?, alias = ?, updated_at = ? WHERE domain_id = ? AND id = ?`,
			c.Name, c.Subtitle, c.InstructorDescription, c.Highlight, c.Description, c.Alias, formatTime(c.UpdatedAt), domainID, id)
		return err
	})
	return c, err
}

// CourseName is a course as a listing of courses shows it.
type CourseName struct {
	ID   int64
	Name string
}

// ListCourseNames returns one page of the domain's courses by id, only
// their ids and names (what the listing sends: reading every column cost
// more than the page itself), and the number of all of them. With records
// cached, the page goes through the cache of listed course names
// (cachedListPage), as pages of users do: the page's ids as one value and
// the names from memory cost a page of 50 less than its 50 rows
// (docs/performance.md, "Sixteenth pass").
func (s *Store) ListCourseNames(ctx context.Context, domainID int64, p Page) ([]CourseName, int64, error) {
	d := s.read()
	gen := s.gen.Load() // before the page, as for any cached read
	total, err := rowCount(ctx, d, domainID, countCourses)
	if err != nil {
		return nil, 0, err
	}
	var out []CourseName
	scan := func(r *sql.Rows) error {
		c := s.listedCourses.appendRecord(&out, p.Limit)
		return r.Scan(intDest(&c.ID), &c.Name)
	}
	pg := page{table: "courses", domainID: domainID, cols: "id, name", total: total, offset: p.Offset, limit: p.Limit}
	if !s.cacheRecords {
		err = listPage(ctx, d, pg, scan)
		return orEmpty(out), total, err
	}
	out, err = cachedListPage(ctx, s, d, &s.listedCourses, pg, gen, courseNameSize, courseNameID, scan, func() []CourseName { return out })
	return orEmpty(out), total, err
}

// ReleaseCourseNames hands back a page that ListCourseNames returned, once
// the caller is done with it: a later page is put together in the same
// memory. Handing pages back is optional; a page is handed back once at
// most (twice, two later pages would share it).
func (s *Store) ReleaseCourseNames(names []CourseName) { s.listedCourses.releasePage(names) }

func courseNameSize(c CourseName) int { return 24 + len(c.Name) }

func courseNameID(c CourseName) int64 { return c.ID }

// DeleteCourse deletes a course with its enrollments, bundle memberships
// and whatever else hangs on it.
func (s *Store) DeleteCourse(ctx context.Context, domainID, id int64) error {
	return s.deleteItem(ctx, domainID, lms.KindCourse, id, event.CourseDeletedEvent(id))
}

// SetCourseStatus publishes or unpublishes a course.
func (s *Store) SetCourseStatus(ctx context.Context, domainID, id int64, status string) error {
	return s.setStatus(ctx, domainID, lms.KindCourse, id, status)
}

// list runs a paginated listing of table: the count of rows matching
// where, then one page of cols ordered by the first of them (an id), each
// passed to scan.
func (s *Store) list(ctx context.Context, table, where string, args []any, cols string, p Page, scan func(*sql.Rows) error) (int64, error) {
	order, _, _ := strings.Cut(cols, ",")
	d := s.read()
	total, err := d.count(ctx, "SELECT COUNT(*) FROM "+table+" WHERE "+where, args...)
	if err != nil {
		return 0, err
	}
	rows, err := d.query(ctx, "SELECT "+cols+" FROM "+table+" WHERE "+where+" ORDER BY "+order+" LIMIT +? OFFSET +?",
		append(args, p.Limit, p.Offset)...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return 0, err
		}
	}
	return total, rows.Err()
}

// Tests

const testCols = "id, name, description, instructions, time_demo, time_test, status, in_catalog, created_at, updated_at"

func scanTest(row interface{ Scan(...any) error }) (lms.Test, error) {
	var t lms.Test
	err := row.Scan(&t.ID, &t.Name, &t.Description, &t.Instructions, &t.TimeDemo, &t.TimeTest, &t.Status, &t.InCatalog,
		timeCol(&t.CreatedAt), timeCol(&t.UpdatedAt))
	return t, err
}

// CreateTest adds an unpublished test, listed in the catalog.
func (s *Store) CreateTest(ctx context.Context, domainID int64, t lms.Test) (lms.Test, error) {
	t.Status, t.InCatalog = lms.Unpublished, true
	t.CreatedAt, t.UpdatedAt = s.now(), s.now()
	err := s.tx(ctx, func(tx db) error {
		var err error
		t.ID, err = tx.insert(ctx, `INSERT INTO tests (domain_id, name, description, instructions, time_demo, time_test,
			status, in_catalog, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
			domainID, t.Name, t.Description, t.Instructions, t.TimeDemo, t.TimeTest, t.Status,
			formatTime(t.CreatedAt), formatTime(t.UpdatedAt))
		return err
	})
	return t, err
}

// Test returns one test, whether or not it is in the catalog.
func (s *Store) Test(ctx context.Context, domainID, id int64) (lms.Test, error) {
	return test(ctx, s.read(), domainID, id)
}

func test(ctx context.Context, d db, domainID, id int64) (lms.Test, error) {
	t, err := scanTest(d.queryRow(ctx, "SELECT "+testCols+" FROM tests WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, itemNotFound(lms.KindTest, id)
	}
	return t, err
}

// UpdateTest applies edit to a test and saves it, in one transaction.
func (s *Store) UpdateTest(ctx context.Context, domainID, id int64, edit func(*lms.Test)) (lms.Test, error) {
	var t lms.Test
	err := s.tx(ctx, func(tx db) error {
		if err := lockRow(ctx, tx, "tests", domainID, id); err != nil {
			return err
		}
		var err error
		if t, err = test(ctx, tx, domainID, id); err != nil {
			return err
		}
		edit(&t)
		t.UpdatedAt = s.now()
		_, err = tx.exec(ctx, `UPDATE tests SET name = ?, description = ?, instructions = ?, time_demo = ?, time_test = ?,
			in_catalog = ?, updated_at = ? WHERE domain_id = ? AND id = ?`,
			t.Name, t.Description, t.Instructions, t.TimeDemo, t.TimeTest, lms.Flag(t.InCatalog), formatTime(t.UpdatedAt), domainID, id)
		return err
	})
	return t, err
}

// ListTests returns one page of the domain's tests that are in the
// catalog, by id, and the number of all of them.
func (s *Store) ListTests(ctx context.Context, domainID int64, p Page) ([]lms.Test, int64, error) {
	var out []lms.Test
	total, err := s.list(ctx, "tests", "domain_id = ? AND in_catalog = 1", []any{domainID}, testCols, p, func(r *sql.Rows) error {
		t, err := scanTest(r)
		out = append(out, t)
		return err
	})
	return out, total, err
}

// DeleteTest deletes a test with everything that hangs on it.
func (s *Store) DeleteTest(ctx context.Context, domainID, id int64) error {
	return s.deleteItem(ctx, domainID, lms.KindTest, id)
}

// SetTestStatus publishes or unpublishes a test.
func (s *Store) SetTestStatus(ctx context.Context, domainID, id int64, status string) error {
	return s.setStatus(ctx, domainID, lms.KindTest, id, status)
}

// Bundles

const bundleCols = "id, name, description, created_at, updated_at"

func scanBundle(row interface{ Scan(...any) error }) (lms.Bundle, error) {
	var b lms.Bundle
	err := row.Scan(&b.ID, &b.Name, &b.Description, timeCol(&b.CreatedAt), timeCol(&b.UpdatedAt))
	return b, err
}

// CreateBundle adds an empty bundle.
func (s *Store) CreateBundle(ctx context.Context, domainID int64, b lms.Bundle) (lms.Bundle, error) {
	b.CreatedAt, b.UpdatedAt = s.now(), s.now()
	err := s.tx(ctx, func(tx db) error {
		var err error
		b.ID, err = tx.insert(ctx, "INSERT INTO bundles (domain_id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
			domainID, b.Name, b.Description, formatTime(b.CreatedAt), formatTime(b.UpdatedAt))
		return err
	})
	return b, err
}

// Bundle returns one bundle with its items (by kind, then id).
func (s *Store) Bundle(ctx context.Context, domainID, id int64) (lms.Bundle, error) {
	return bundle(ctx, s.read(), domainID, id)
}

func bundle(ctx context.Context, d db, domainID, id int64) (lms.Bundle, error) {
	b, err := scanBundle(d.queryRow(ctx, "SELECT "+bundleCols+" FROM bundles WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return b, itemNotFound(lms.KindBundle, id)
	}
	if err != nil {
		return b, err
	}
	b.Items, err = bundleItems(ctx, d, domainID, id)
	return b, err
}

func bundleItems(ctx context.Context, d db, domainID, bundleID int64) ([]lms.Item, error) {
	rows, err := d.query(ctx, "SELECT item_kind, item_id FROM bundle_items WHERE domain_id = ? AND bundle_id = ? ORDER BY item_kind, item_id",
		domainID, bundleID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	items := []lms.Item{}
	for rows.Next() {
		var it lms.Item
		if err := rows.Scan(&it.Kind, &it.ID); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, rows.Err()
}

// UpdateBundle applies edit to a bundle's name and description.
func (s *Store) UpdateBundle(ctx context.Context, domainID, id int64, edit func(*lms.Bundle)) (lms.Bundle, error) {
	var b lms.Bundle
	err := s.tx(ctx, func(tx db) error {
		if err := lockRow(ctx, tx, "bundles", domainID, id); err != nil {
			return err
		}
		var err error
		if b, err = bundle(ctx, tx, domainID, id); err != nil {
			return err
		}
		edit(&b)
		b.UpdatedAt = s.now()
		_, err = tx.exec(ctx, "UPDATE bundles SET name = ?, description = ?, updated_at = ? WHERE domain_id = ? AND id = ?",
			b.Name, b.Description, formatTime(b.UpdatedAt), domainID, id)
		return err
	})
	return b, err
}

// ListBundles returns one page of the domain's bundles by id (without
// items), and the number of all.
func (s *Store) ListBundles(ctx context.Context, domainID int64, p Page) ([]lms.Bundle, int64, error) {
	var out []lms.Bundle
	total, err := s.list(ctx, "bundles", "domain_id = ?", []any{domainID}, bundleCols, p, func(r *sql.Rows) error {
		b, err := scanBundle(r)
		out = append(out, b)
		return err
	})
	return out, total, err
}

// DeleteBundle deletes a bundle, its membership list, its enrollments and
// the enrollments it gave in its items.
func (s *Store) DeleteBundle(ctx context.Context, domainID, id int64) error {
	return s.deleteItem(ctx, domainID, lms.KindBundle, id)
}

// AddBundleItem puts a course, test or live class in a bundle and enrolls
// the bundle's enrolled users in it. added is false when it was already
// there.
func (s *Store) AddBundleItem(ctx context.Context, domainID, bundleID int64, it lms.Item) (added bool, err error) {
	err = s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindBundle, bundleID); err != nil {
			return err
		}
		if err := mustExist(ctx, tx, domainID, it.Kind, it.ID); err != nil {
			return err
		}
		if ok, err := tx.exists(ctx, "SELECT 1 FROM bundle_items WHERE bundle_id = ? AND item_kind = ? AND item_id = ?",
			bundleID, it.Kind, it.ID); err != nil || ok {
			return err
		}
		added = true
		if _, err := tx.exec(ctx, "INSERT INTO bundle_items (domain_id, bundle_id, item_kind, item_id) VALUES (?, ?, ?, ?)",
			domainID, bundleID, it.Kind, it.ID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO enrollments (domain_id, user_id, item_kind, item_id, source_bundle_id, created_at)
			SELECT domain_id, user_id, ?, ?, ?, ? FROM enrollments
			WHERE domain_id = ? AND item_kind = ? AND item_id = ? AND source_bundle_id = 0`,
			it.Kind, it.ID, bundleID, formatTime(s.now()), domainID, lms.KindBundle, bundleID)
		return err
	})
	return added, err
}

// RemoveBundleItem takes an item out of a bundle, with the enrollments in
// it that the bundle gave. removed is false when it was not there.
func (s *Store) RemoveBundleItem(ctx context.Context, domainID, bundleID int64, it lms.Item) (removed bool, err error) {
	err = s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindBundle, bundleID); err != nil {
			return err
		}
		res, err := tx.exec(ctx, "DELETE FROM bundle_items WHERE domain_id = ? AND bundle_id = ? AND item_kind = ? AND item_id = ?",
			domainID, bundleID, it.Kind, it.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		removed = true
		_, err = tx.exec(ctx, "DELETE FROM enrollments WHERE domain_id = ? AND item_kind = ? AND item_id = ? AND source_bundle_id = ?",
			domainID, it.Kind, it.ID, bundleID)
		return err
	})
	return removed, err
}

// mustExist is a not-found error unless the domain has the item.
func mustExist(ctx context.Context, d db, domainID int64, kind string, id int64) error {
	ok, err := itemExists(ctx, d, domainID, kind, id)
	if err == nil && !ok {
		err = itemNotFound(kind, id)
	}
	return err
}
