package store

import (
	"context"

	"github.com/lectern-lms/lectern/internal/lms"
)

// itemTables maps an item kind to its table.
var itemTables = map[string]string{
	lms.KindCourse: "courses",
	lms.KindTest:   "tests",
	lms.KindClass:  "live_classes",
	lms.KindBundle: "bundles",
}

// itemExists reports whether the domain has an item of that kind and id.
func itemExists(ctx context.Context, d db, domainID int64, kind string, id int64) (bool, error) {
	return d.exists(ctx, "SELECT 1 FROM "+itemTables[kind]+" WHERE domain_id = ? AND id = ?", domainID, id)
}

// ownedTables are the tables whose rows hang on an item by (kind, id)
// columns rather than a foreign key. deleteOwned clears them; a table added
// later that hangs on items is added here.
var ownedTables = []struct{ table, kindCol, idCol string }{
	{"enrollments", "item_kind", "item_id"},
	{"bundle_items", "item_kind", "item_id"},
	{"pricing_schemes", "item_kind", "item_id"}, {"discounts", "item_kind", "item_id"},
}

// deleteOwned removes every row that hangs on an item, inside the
// transaction that deletes the item, so nothing dangles. Rows tied to an
// item by a foreign key (occurrences of a class, items of a bundle) go by
// ON DELETE CASCADE.
func deleteOwned(ctx context.Context, tx db, domainID int64, kind string, id int64) error {
	for _, t := range ownedTables {
		if _, err := tx.exec(ctx, "DELETE FROM "+t.table+" WHERE domain_id = ? AND "+t.kindCol+" = ? AND "+t.idCol+" = ?", domainID, kind, id); err != nil {
			return err
		}
	}
	if kind == lms.KindBundle {
		// Enrollments that exist because of this bundle.
		if _, err := tx.exec(ctx, "DELETE FROM enrollments WHERE domain_id = ? AND source_bundle_id = ?", domainID, id); err != nil {
			return err
		}
	}
	return nil
}
