package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/lectern-lms/lectern/internal/lms"
)

// A domain moves between servers as rows (ExportDomain, ImportDomain).
// Which tables hold domain data, their columns and their references are
// read from the database's schema: every table with a domain_id column is
// domain data, and each of its foreign keys is remapped to the new ids on
// import. The references the schema does not declare (a column holding an
// id without a foreign key, or an (item_kind, item_id) pair) are listed in
// softRefs; the tables left out, with the reason, in notExported. A test
// fails when a table or an *_id column is in neither.

// KindRef marks an item_id column whose table is named by the row's
// item_kind (course, test, class, bundle; global has no item).
const KindRef = "(item_kind)"

// NotRef marks a column whose name ends in _id that holds no row id of
// this server (a gateway's id, a participant's name, an index).
const NotRef = "-"

// softRefs are references without a foreign key: table -> column -> the
// table the id is in, KindRef or NotRef. Ids of 0 mean "none" and stay 0.
var softRefs = map[string]map[string]string{
	"bundle_items":         {"item_id": KindRef},
	"discount_redemptions": {"user_id": "users", "order_id": "orders"},
	"discounts":            {"item_id": KindRef},
	"enrollments":          {"item_id": KindRef, "source_bundle_id": "bundles"},
	"live_classes":         {"owner_user_id": "users", "timezone_id": NotRef},
	"order_lines":          {"item_id": KindRef, "scheme_id": "pricing_schemes", "discount_id": "discounts"},
	"order_refunds":        {"gateway_refund_id": NotRef},
	"orders":               {"user_id": "users", "charge_id": NotRef, "checkout_id": NotRef},
	"payment_events":       {"event_id": NotRef},
	"pricing_schemes":      {"item_id": KindRef},
	"product_categories":   {"user_id": "users"},
	"purchase_grants":      {"class_id": "live_classes", "scheme_id": "pricing_schemes"},
	"quiz_attempts":        {"class_id": "live_classes"},
	"quiz_overrides":       {"scheme_id": "pricing_schemes"},
	"quiz_questions":       {"version_id": "quiz_question_versions"},
	"quiz_slots":           {"question_id": "quiz_questions"},
	"recordings":           {"user_id": NotRef}, // the classroom participant's own id (text)
	"room_board_objects":   {"object_id": NotRef},
	"unlock_overrides":     {"lesson_id": "lessons"},
	"lessons":              {"embed_id": NotRef},
}

// kindTables maps an item_kind to its table.
var kindTables = map[string]string{"course": "courses", "test": "tests", "class": "live_classes", "bundle": "bundles"}

// notExported are the tables a domain export leaves out, and why.
var notExported = map[string]string{
	"schema_migrations":        "the schema's own bookkeeping",
	"domains":                  "written as the export's domain line, not as rows",
	"cluster_nodes":            "the running nodes of a cluster, not domain data",
	"server_secrets":           "the server's own secrets",
	"room_leases":              "which node runs a live room now; rebuilt when the room opens",
	"idempotency_keys":         "a short-lived replay cache of payment requests",
	"learn_sessions":           "learners' portal sign-ins: they sign in again on the new server",
	"learn_login_links":        "one-time sign-in links: short-lived",
	"learn_jwt_ids":            "used sign-in token ids: short-lived",
	"row_counts":               "counters the inserts' triggers keep: rebuilt by the import itself",
	"webhook_messages":         "the webhook outbox: deliveries in flight on the old server (endpoints are exported)",
	"webhook_attempts":         "the webhook delivery log of the old server",
	"live_classes_title_state": "how far the SQLite title index has got (migration 0038): imported classes are indexed after the import",
}

// DumpColumn is one column of a table.
type DumpColumn struct {
	Name string
	// Ref is the table a foreign key points to, or a softRefs entry.
	Ref string
	// FK is set when Ref comes from a declared foreign key.
	FK bool
}

// DumpTable is one table of domain data.
type DumpTable struct {
	Name    string
	Columns []DumpColumn
	// HasID is set when the table has an id column the database assigns.
	HasID bool
}

// DumpPlan is the schema as a domain export sees it.
type DumpPlan struct {
	// Tables hold domain data, parents before the tables that reference
	// them through foreign keys.
	Tables []DumpTable
	// Left are the tables left out (the keys of notExported present in
	// the schema).
	Left []string
	// Unknown are tables with no domain_id that are not in notExported,
	// and "table.column" of id columns that are neither a foreign key nor
	// in softRefs. ExportDomain and ImportDomain refuse to run when any.
	Unknown []string
	// DomainColumns are the columns of the domains table.
	DomainColumns []string
}

// DomainDumpPlan reads the schema and says how a domain's rows are
// exported and imported.
func (s *Store) DomainDumpPlan(ctx context.Context) (DumpPlan, error) {
	var p DumpPlan
	tables, err := s.schemaTables(ctx)
	if err != nil {
		return p, err
	}
	byName := map[string]DumpTable{}
	for _, t := range tables {
		if t.Name == "domains" {
			for _, c := range t.Columns {
				p.DomainColumns = append(p.DomainColumns, c.Name)
			}
		}
		if _, ok := notExported[t.Name]; ok {
			p.Left = append(p.Left, t.Name)
			continue
		}
		hasDomain := false
		for i, c := range t.Columns {
			if c.Name == "domain_id" {
				hasDomain = true
				continue
			}
			if c.FK {
				continue
			}
			if r, ok := softRefs[t.Name][c.Name]; ok {
				t.Columns[i].Ref = r
				continue
			}
			if strings.HasSuffix(c.Name, "_id") || strings.HasSuffix(c.Name, "_ids") {
				p.Unknown = append(p.Unknown, t.Name+"."+c.Name)
			}
		}
		if !hasDomain {
			p.Unknown = append(p.Unknown, t.Name)
			continue
		}
		byName[t.Name] = t
	}
	// Order: a table after every table its foreign keys name.
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	done := map[string]bool{}
	var visit func(n string, path []string) error
	visit = func(n string, path []string) error {
		if done[n] {
			return nil
		}
		if slices.Contains(path, n) {
			return fmt.Errorf("domain export: foreign keys form a cycle: %s", strings.Join(append(path, n), " -> "))
		}
		for _, c := range byName[n].Columns {
			if c.FK && c.Ref != n && c.Ref != "domains" {
				if _, ok := byName[c.Ref]; !ok {
					p.Unknown = append(p.Unknown, n+"."+c.Name+" -> "+c.Ref)
					continue
				}
				if err := visit(c.Ref, append(path, n)); err != nil {
					return err
				}
			}
		}
		done[n] = true
		p.Tables = append(p.Tables, byName[n])
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return p, err
		}
	}
	sort.Strings(p.Left)
	sort.Strings(p.Unknown)
	return p, nil
}

// schemaTables lists every table with its columns and foreign keys.
func (s *Store) schemaTables(ctx context.Context) ([]DumpTable, error) {
	d := s.read()
	var names []string
	// Ordinary tables only: a virtual table (a full-text index) and its
	// shadow tables are kept by triggers on the table they index (and
	// the title indexer, titleindex.go).
	q := "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
	if s.pg {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
	}
	if err := scanStrings(ctx, d, &names, q); err != nil {
		return nil, err
	}
	var out []DumpTable
	for _, n := range names {
		t := DumpTable{Name: n}
		fks := map[string]string{}
		if s.pg {
			var cols []string
			if err := scanStrings(ctx, d, &cols, "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position", n); err != nil {
				return nil, err
			}
			for _, c := range cols {
				t.Columns = append(t.Columns, DumpColumn{Name: c})
			}
			rows, err := d.query(ctx, `SELECT a.attname, cf.relname FROM pg_constraint c
				JOIN pg_class cl ON cl.oid = c.conrelid JOIN pg_class cf ON cf.oid = c.confrelid
				JOIN pg_namespace ns ON ns.oid = cl.relnamespace
				JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
				WHERE c.contype = 'f' AND cl.relname = ? AND ns.nspname = current_schema()`, n)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var col, ref string
				if err := rows.Scan(&col, &ref); err != nil {
					rows.Close()
					return nil, err
				}
				fks[col] = ref
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		} else {
			rows, err := d.query(ctx, "SELECT name FROM pragma_table_info(?) ORDER BY cid", n)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var c string
				if err := rows.Scan(&c); err != nil {
					rows.Close()
					return nil, err
				}
				t.Columns = append(t.Columns, DumpColumn{Name: c})
			}
			rows.Close()
			rows, err = d.query(ctx, `SELECT "from", "table" FROM pragma_foreign_key_list(?)`, n)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var col, ref string
				if err := rows.Scan(&col, &ref); err != nil {
					rows.Close()
					return nil, err
				}
				fks[col] = ref
			}
			rows.Close()
		}
		for i, c := range t.Columns {
			if c.Name == "id" {
				t.HasID = true
			}
			if ref, ok := fks[c.Name]; ok {
				t.Columns[i].Ref, t.Columns[i].FK = ref, true
			}
		}
		out = append(out, t)
	}
	return out, nil
}

func scanStrings(ctx context.Context, d db, out *[]string, q string, args ...any) error {
	rows, err := d.query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return err
		}
		*out = append(*out, v)
	}
	return rows.Err()
}

// DumpRow is one row: its table and its values by column.
type DumpRow struct {
	Table string         `json:"table"`
	Row   map[string]any `json:"row"`
}

func (p DumpPlan) check() error {
	if len(p.Unknown) > 0 {
		return fmt.Errorf("domain export: the schema has tables or id columns the export does not know: %s", strings.Join(p.Unknown, ", "))
	}
	return nil
}

// ExportDomain calls fn with the domain's row (table "domains") and then
// every row of domain data, parents first, in one read transaction where
// the dialect allows (PostgreSQL: repeatable read; SQLite: one snapshot).
func (s *Store) ExportDomain(ctx context.Context, domainID int64, fn func(DumpRow) error) error {
	p, err := s.DomainDumpPlan(ctx)
	if err != nil {
		return err
	}
	if err := p.check(); err != nil {
		return err
	}
	conn, err := s.rdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	opts := &sql.TxOptions{ReadOnly: true}
	if s.pg {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	d := s.on(tx)
	dump := func(table string, cols []string, where string, order bool) (int, error) {
		q := "SELECT " + quoteCols(cols) + " FROM " + table + " WHERE " + where
		if order {
			q += " ORDER BY id"
		}
		rows, err := d.query(ctx, q, domainID)
		if err != nil {
			return 0, fmt.Errorf("export %s: %w", table, err)
		}
		defer rows.Close()
		n := 0
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return n, err
			}
			r := DumpRow{Table: table, Row: make(map[string]any, len(cols))}
			for i, c := range cols {
				if b, ok := vals[i].([]byte); ok {
					r.Row[c] = string(b)
				} else {
					r.Row[c] = vals[i]
				}
			}
			if err := fn(r); err != nil {
				return n, err
			}
			n++
		}
		return n, rows.Err()
	}
	n, err := dump("domains", p.DomainColumns, "id = ?", false)
	if err != nil {
		return err
	}
	if n == 0 {
		return lms.NotFoundf("domain %d not found", domainID)
	}
	for _, t := range p.Tables {
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = c.Name
		}
		if _, err := dump(t.Name, cols, "domain_id = ?", t.HasID); err != nil {
			return err
		}
	}
	return nil
}

func quoteCols(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = `"` + c + `"`
	}
	return strings.Join(q, ", ")
}

// ImportResult tells what ImportDomain did.
type ImportResult struct {
	DomainID int64
	Rows     int
	// NewKeys holds fresh API keys when the exported key hashes were
	// already in use on this server (the same domain imported twice); the
	// exported keys then do not work here. Empty when they came along.
	NewKeys Keys
	// LearnHostCleared is set when the portal host name was in use here.
	LearnHostCleared bool
	// Dangling counts references without a foreign key whose row was
	// not in the export (a deleted user's order, say); they became 0.
	Dangling int
}

// ImportDomain creates a new domain from rows as ExportDomain wrote them
// (the domains row first), in one transaction: every row gets a new id
// and every reference is remapped to the new ids. API key hashes come
// along, so the domain's keys keep working, unless another domain here
// has them.
func (s *Store) ImportDomain(ctx context.Context, rows []DumpRow) (ImportResult, error) {
	p, err := s.DomainDumpPlan(ctx)
	if err != nil {
		return ImportResult{}, err
	}
	if err := p.check(); err != nil {
		return ImportResult{}, err
	}
	if len(rows) == 0 || rows[0].Table != "domains" {
		return ImportResult{}, fmt.Errorf("domain import: the first row must be the domain's")
	}
	im := &domainImport{tables: map[string]DumpTable{}, order: map[string]int{}, ids: map[string]map[int64]int64{}, last: -1}
	for i, t := range p.Tables {
		im.tables[t.Name] = t
		im.order[t.Name] = i
	}
	err = s.tx(ctx, func(tx db) error {
		if err := im.insertDomain(ctx, tx, p.DomainColumns, rows[0].Row); err != nil {
			return err
		}
		// The counters are written once at the end (one update of the
		// same counter row per inserted row made PostgreSQL's import
		// time grow as the square of the rows).
		return withoutCountTriggers(ctx, tx, im.res.DomainID, func() error {
			for n, r := range rows[1:] {
				if err := im.insertRow(ctx, tx, n+3, r); err != nil {
					return err
				}
			}
			return im.fixUp(ctx, tx)
		})
	})
	if err != nil {
		return ImportResult{}, err
	}
	s.titles.wrote(int64(len(im.ids["live_classes"])))
	return im.res, nil
}

// domainImport is one ImportDomain under way: the plan's tables and their
// order, the new id of every row imported so far, and the soft references
// to set once the rows they name exist.
type domainImport struct {
	tables map[string]DumpTable
	order  map[string]int
	last   int                        // order of the last row's table
	ids    map[string]map[int64]int64 // table -> old id -> new id
	fixups []importFixup
	res    ImportResult
}

// importFixup is a soft reference of row id (table.col) to the row old of
// target, imported later in the file.
type importFixup struct {
	table, col, target string
	id, old            int64
}

// insertDomain inserts the domain's row, with new keys when another
// domain here has its keys, and without its portal host when another
// domain uses it.
func (im *domainImport) insertDomain(ctx context.Context, tx db, columns []string, dom map[string]any) error {
	cols, vals := []string{}, []any{}
	for _, c := range columns {
		v, ok := dom[c]
		if c == "id" || !ok {
			continue
		}
		cols, vals = append(cols, c), append(vals, jsonValue(v))
	}
	taken, err := tx.exists(ctx, "SELECT 1 FROM domains WHERE lms_key_hash = ? OR classroom_key_hash = ?", jsonValue(dom["lms_key_hash"]), jsonValue(dom["classroom_key_hash"]))
	if err != nil {
		return err
	}
	if taken {
		im.res.NewKeys = Keys{LMS: newKey("lk_"), Classroom: newKey("ck_")}
	}
	for i, c := range cols {
		switch {
		case c == "lms_key_hash" && taken:
			vals[i] = hashKey(im.res.NewKeys.LMS)
		case c == "classroom_key_hash" && taken:
			vals[i] = hashKey(im.res.NewKeys.Classroom)
		case c == "learn_host" && vals[i] != nil && vals[i] != "":
			used, err := tx.exists(ctx, "SELECT 1 FROM domains WHERE learn_host = ?", vals[i])
			if err != nil {
				return err
			}
			if used {
				vals[i], im.res.LearnHostCleared = nil, true
			}
		}
	}
	im.res.DomainID, err = tx.insert(ctx, "INSERT INTO domains ("+quoteCols(cols)+") VALUES ("+placeholders(len(cols))+")", vals...)
	if err != nil {
		return fmt.Errorf("import the domain: %w", err)
	}
	return nil
}

// droppedColumns are the columns, as table.column, that exports from an
// earlier version hold and this one no longer has: an import reads past
// them. A sitting's id went in migration 0045 (a sitting is its class and
// its seq).
var droppedColumns = map[string]bool{"class_occurrences.id": true}

// insertRow checks the row of the file's line against the plan and
// inserts it with its references remapped.
func (im *domainImport) insertRow(ctx context.Context, tx db, line int, r DumpRow) error {
	t, ok := im.tables[r.Table]
	if !ok {
		return fmt.Errorf("domain import: line %d: table %q is not domain data on this server", line, r.Table)
	}
	if im.order[r.Table] < im.last {
		return fmt.Errorf("domain import: line %d: %s comes after the tables it references", line, r.Table)
	}
	im.last = im.order[r.Table]
	known := map[string]bool{}
	for _, c := range t.Columns {
		known[c.Name] = true
	}
	for c := range r.Row {
		if !known[c] && !droppedColumns[r.Table+"."+c] {
			return fmt.Errorf("domain import: line %d: %s has no column %q on this server", line, r.Table, c)
		}
	}
	var oldID int64
	cols, vals := []string{}, []any{}
	var later []importFixup
	for _, c := range t.Columns {
		raw, ok := r.Row[c.Name]
		if !ok {
			continue
		}
		v := jsonValue(raw)
		switch {
		case c.Name == "id" && t.HasID:
			oldID = asInt(v)
			continue
		case c.Name == "domain_id":
			v = im.res.DomainID
		case c.Ref == NotRef || c.Ref == "" || v == nil:
		case c.FK:
			nv, ok := im.ids[c.Ref][asInt(v)]
			if !ok {
				return fmt.Errorf("domain import: line %d: %s.%s names %s %v, which is not in the export", line, r.Table, c.Name, c.Ref, v)
			}
			v = nv
		default: // a soft reference
			target := c.Ref
			if target == KindRef {
				target = kindTables[fmt.Sprint(jsonValue(r.Row["item_kind"]))]
			}
			old := asInt(v)
			if old == 0 || target == "" {
				break
			}
			if nv, ok := im.ids[target][old]; ok {
				v = nv
			} else if im.order[target] >= im.order[r.Table] {
				later = append(later, importFixup{table: r.Table, col: c.Name, target: target, old: old})
				v = int64(0)
			} else {
				v, im.res.Dangling = int64(0), im.res.Dangling+1
			}
		}
		cols, vals = append(cols, c.Name), append(vals, v)
	}
	q := "INSERT INTO " + r.Table + " (" + quoteCols(cols) + ") VALUES (" + placeholders(len(cols)) + ")"
	im.res.Rows++
	if !t.HasID {
		if _, err := tx.exec(ctx, q, vals...); err != nil {
			return fmt.Errorf("domain import: line %d (%s): %w", line, r.Table, err)
		}
		return nil
	}
	id, err := tx.insert(ctx, q, vals...)
	if col, ok := serverUnique[r.Table]; ok && isUnique(err) {
		return fmt.Errorf("domain import: line %d: %s %v is already used on this server, by the school this file was exported from or by an earlier import of it; %ss are unique on a server, so import this file into another server, or delete that copy of the school first",
			line, col.what, jsonValue(r.Row[col.name]), col.what)
	}
	if err != nil {
		return fmt.Errorf("domain import: line %d (%s): %w", line, r.Table, err)
	}
	if im.ids[r.Table] == nil {
		im.ids[r.Table] = map[int64]int64{}
	}
	im.ids[r.Table][oldID] = id
	for _, f := range later {
		f.id = id
		im.fixups = append(im.fixups, f)
	}
	return nil
}

// serverUnique names the columns of domain data that are unique on the
// whole server, not per domain: public names that must keep naming one
// row. A school holding such rows cannot be imported next to itself; the
// import says so (ImportDomain keeps API keys working by making new ones,
// but a certificate's code is printed on the certificate, and a signing
// key's id is sealed into its private key).
var serverUnique = map[string]struct{ name, what string }{
	"certificates": {"code", "certificate code"},
	"issuer_keys":  {"kid", "certificate signing key id"},
}

// fixUp sets the soft references to rows imported after the rows that
// name them; one whose row was not in the file counts as dangling.
func (im *domainImport) fixUp(ctx context.Context, tx db) error {
	for _, f := range im.fixups {
		nv, ok := im.ids[f.target][f.old]
		if !ok {
			im.res.Dangling++
			continue
		}
		if _, err := tx.exec(ctx, "UPDATE "+f.table+` SET "`+f.col+`" = ? WHERE id = ?`, nv, f.id); err != nil {
			return err
		}
	}
	return nil
}

// jsonValue turns a value decoded from JSON (numbers as json.Number) into
// one the drivers take: int64 for integers, float64, string, bool or nil.
func jsonValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	}
	return v
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case string:
		var i int64
		fmt.Sscan(x, &i)
		return i
	}
	return 0
}
