package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/pricing"
)

// Discounts: reductions on an item's price, or on every item's (global).
// The LMS API's discounts and the classroom API's class specials use these
// methods; every one is scoped by domain id.
//
// Codes are unique per domain among live discounts, compared
// case-insensitively: a discount is live from its creation until it is
// deleted or has expired (a discount not yet valid, or used up, is live
// and keeps its code). Liveness depends on the clock, so uniqueness is
// checked by the writing transaction rather than an index; on PostgreSQL
// a per-domain advisory lock serialises those transactions (SQLite has a
// single writer).

const discountCols = `id, item_kind, item_id, code, use_code, discount_limit, no_limit, type, value, start_at, end_at,
	never_expire, used, created_at`

func scanDiscount(row interface{ Scan(...any) error }) (lms.Discount, error) {
	var d lms.Discount
	var useCode, noLimit, never int
	err := row.Scan(&d.ID, &d.Kind, &d.ItemID, &d.Code, &useCode, &d.Limit, &noLimit, &d.Type, &d.Value, optTimeCol(&d.Start),
		optTimeCol(&d.End), &never, &d.Used, timeCol(&d.CreatedAt))
	d.UseCode, d.NoLimit, d.NeverExpire = useCode == 1, noLimit == 1, never == 1
	return d, err
}

// formatOptTime stores an optional instant: the empty string for zero
// (optTimeCol reads it back).
func formatOptTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

func queryDiscounts(ctx context.Context, d db, where string, args ...any) ([]lms.Discount, error) {
	rows, err := d.query(ctx, "SELECT "+discountCols+" FROM discounts WHERE "+where+" ORDER BY id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []lms.Discount{}
	for rows.Next() {
		x, err := scanDiscount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// lockCodes serialises code-uniqueness checks of one domain on PostgreSQL
// until the transaction ends.
func lockCodes(ctx context.Context, tx db, domainID int64) error {
	if !tx.pg {
		return nil
	}
	_, err := tx.exec(ctx, "SELECT pg_advisory_xact_lock(?)", int64(0x4c4543)<<40^domainID)
	return err
}

// checkCode is a conflict when another live discount of the domain has
// d's code. Call after lockCodes.
func checkCode(ctx context.Context, tx db, domainID int64, d lms.Discount) error {
	key := pricing.CodeKey(d.Code)
	if key == "" {
		return nil
	}
	var other int64
	err := tx.queryRow(ctx, `SELECT id FROM discounts WHERE domain_id = ? AND code_key = ? AND id <> ?
		AND (never_expire = 1 OR end_at = '' OR end_at > ?) ORDER BY id LIMIT 1`,
		domainID, key, d.ID, formatTime(tx.now())).Scan(&other)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return &lms.Error{Code: lms.CodeConflict,
		Message: fmt.Sprintf("discount code %q is already used by discount %d", d.Code, other),
		Fields:  []lms.FieldError{{Field: "discount_code", Message: fmt.Sprintf("is already used by discount %d", other)}}}
}

// AddDiscount adds a discount to item d.Kind/d.ItemID (which must exist,
// else not found) or, with Kind KindGlobal, to every item. A code already
// used by a live discount of the domain is a conflict. Used starts at 0.
// d must have passed pricing.CheckDiscount: the store keeps what it is
// given.
func (s *Store) AddDiscount(ctx context.Context, domainID int64, d lms.Discount) (lms.Discount, error) {
	d.ID, d.Used = 0, 0
	d.CreatedAt = s.now()
	err := s.tx(ctx, func(tx db) error {
		if d.Kind != lms.KindGlobal {
			if err := mustExist(ctx, tx, domainID, d.Kind, d.ItemID); err != nil {
				return err
			}
		}
		if err := lockCodes(ctx, tx, domainID); err != nil {
			return err
		}
		if err := checkCode(ctx, tx, domainID, d); err != nil {
			return err
		}
		var err error
		d.ID, err = tx.insert(ctx, `INSERT INTO discounts (domain_id, item_kind, item_id, code, code_key, use_code,
			discount_limit, no_limit, type, value, start_at, end_at, never_expire, used, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
			domainID, d.Kind, d.ItemID, d.Code, pricing.CodeKey(d.Code), lms.Flag(d.UseCode), d.Limit, lms.Flag(d.NoLimit), d.Type, d.Value,
			formatOptTime(d.Start), formatOptTime(d.End), lms.Flag(d.NeverExpire), formatTime(d.CreatedAt))
		return err
	})
	return d, err
}

// Discount returns one discount by id.
func (s *Store) Discount(ctx context.Context, domainID, id int64) (lms.Discount, error) {
	return discount(ctx, s.read(), domainID, id)
}

func discount(ctx context.Context, d db, domainID, id int64) (lms.Discount, error) {
	x, err := scanDiscount(d.queryRow(ctx, "SELECT "+discountCols+" FROM discounts WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return x, lms.NotFoundf("discount %d not found", id)
	}
	return x, err
}

// ownDiscount returns discount id of owner kind/itemID (itemID 0 for
// global): not found when the item does not exist, or the discount does
// not exist or is not the owner's.
func ownDiscount(ctx context.Context, d db, domainID int64, kind string, itemID, id int64) (lms.Discount, error) {
	if err := mustOwn(ctx, d, domainID, kind, itemID); err != nil {
		return lms.Discount{}, err
	}
	x, err := discount(ctx, d, domainID, id)
	if err == nil && (x.Kind != kind || x.ItemID != itemID) {
		if kind == lms.KindGlobal {
			err = lms.NotFoundf("global discount %d not found", id)
		} else {
			err = lms.NotFoundf("discount %d not found for %s %d", id, itemNames[kind], itemID)
		}
	}
	return x, err
}

// mustOwn checks a discount owner: an existing item, or global with id 0.
func mustOwn(ctx context.Context, d db, domainID int64, kind string, itemID int64) error {
	if kind == lms.KindGlobal {
		if itemID != 0 {
			return lms.Invalidf("item_id", "must be 0 for global discounts")
		}
		return nil
	}
	if _, ok := itemTables[kind]; !ok || kind == lms.KindBundle {
		return lms.Invalidf("item_kind", "must be course, test, class or global")
	}
	return mustExist(ctx, d, domainID, kind, itemID)
}

// UpdateDiscount applies edit to discount id of owner kind/itemID and
// saves it, in one transaction, with AddDiscount's check that the code is
// not taken. edit may refuse with an error, which is returned; it cannot
// move the discount to another owner nor change Used. edit is where the
// caller checks the edited discount (pricing.CheckDiscount).
func (s *Store) UpdateDiscount(ctx context.Context, domainID int64, kind string, itemID, id int64, edit func(*lms.Discount) error) (lms.Discount, error) {
	var d lms.Discount
	err := s.tx(ctx, func(tx db) error {
		if err := lockRow(ctx, tx, "discounts", domainID, id); err != nil {
			return err
		}
		var err error
		if d, err = ownDiscount(ctx, tx, domainID, kind, itemID, id); err != nil {
			return err
		}
		used, created := d.Used, d.CreatedAt
		if err := edit(&d); err != nil {
			return err
		}
		d.ID, d.Kind, d.ItemID, d.Used, d.CreatedAt = id, kind, itemID, used, created
		if err := lockCodes(ctx, tx, domainID); err != nil {
			return err
		}
		if err := checkCode(ctx, tx, domainID, d); err != nil {
			return err
		}
		_, err = tx.exec(ctx, `UPDATE discounts SET code = ?, code_key = ?, use_code = ?, discount_limit = ?, no_limit = ?,
			type = ?, value = ?, start_at = ?, end_at = ?, never_expire = ? WHERE domain_id = ? AND id = ?`,
			d.Code, pricing.CodeKey(d.Code), lms.Flag(d.UseCode), d.Limit, lms.Flag(d.NoLimit), d.Type, d.Value,
			formatOptTime(d.Start), formatOptTime(d.End), lms.Flag(d.NeverExpire), domainID, id)
		return err
	})
	return d, err
}

// Discounts returns an owner's discounts by id: an item's (not found when
// it does not exist), or the global ones with kind KindGlobal and itemID 0.
func (s *Store) Discounts(ctx context.Context, domainID int64, kind string, itemID int64) ([]lms.Discount, error) {
	d := s.read()
	if err := mustOwn(ctx, d, domainID, kind, itemID); err != nil {
		return nil, err
	}
	return queryDiscounts(ctx, d, "domain_id = ? AND item_kind = ? AND item_id = ?", domainID, kind, itemID)
}

// DeleteDiscount deletes discount id of owner kind/itemID (KindGlobal and
// 0 for a global one), with its redemption records. Not found when the
// item does not exist or the discount is not the owner's.
func (s *Store) DeleteDiscount(ctx context.Context, domainID int64, kind string, itemID, id int64) error {
	return s.tx(ctx, func(tx db) error {
		if _, err := ownDiscount(ctx, tx, domainID, kind, itemID, id); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "DELETE FROM discount_redemptions WHERE domain_id = ? AND discount_id = ?", domainID, id); err != nil {
			return err
		}
		_, err := tx.exec(ctx, "DELETE FROM discounts WHERE domain_id = ? AND id = ?", domainID, id)
		return err
	})
}

// RedeemDiscount records one use of discount discountID by userID (0 when
// the buyer is not a user of the domain) at instant at. The count is
// incremented atomically and only while the discount is valid at at and
// has uses left, so concurrent redemptions never exceed discount_limit.
// A discount used up, expired or not yet valid is a conflict saying which;
// an unknown discount or user is not found.
func (s *Store) RedeemDiscount(ctx context.Context, domainID, discountID int64, userID int64, at time.Time) error {
	return s.tx(ctx, func(tx db) error { return redeemDiscount(ctx, tx, domainID, discountID, userID, 0, at) })
}

// redeemDiscount is RedeemDiscount inside the caller's transaction: store
// code that takes a payment calls it from its own s.tx so that the
// redemption and the payment commit or roll back together. orderID (0 for
// none) names the order the use was taken for, so that a failed payment
// can release it.
func redeemDiscount(ctx context.Context, tx db, domainID, discountID, userID, orderID int64, at time.Time) error {
	if userID != 0 {
		ok, err := tx.exists(ctx, "SELECT 1 FROM users WHERE domain_id = ? AND id = ?", domainID, userID)
		if err != nil {
			return err
		}
		if !ok {
			return lms.NotFoundf("user %d not found", userID)
		}
	}
	ts := formatTime(at)
	res, err := tx.exec(ctx, `UPDATE discounts SET used = used + 1 WHERE domain_id = ? AND id = ?
		AND (no_limit = 1 OR used < discount_limit)
		AND (start_at = '' OR start_at <= ?)
		AND (never_expire = 1 OR end_at = '' OR end_at > ?)`, domainID, discountID, ts, ts)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		d, err := discount(ctx, tx, domainID, discountID)
		if err != nil {
			return err
		}
		switch pricing.Problem(d, at.UTC().Truncate(time.Second)) {
		case pricing.RefusedExpired:
			return lms.Conflictf("discount %d has expired", discountID)
		case pricing.RefusedNotYetValid:
			return lms.Conflictf("discount %d is not valid yet", discountID)
		}
		return lms.Conflictf("discount %d is used up (%d of %d uses)", discountID, d.Used, d.Limit)
	}
	_, err = tx.exec(ctx, "INSERT INTO discount_redemptions (domain_id, discount_id, user_id, order_id, redeemed_at) VALUES (?, ?, ?, ?, ?)",
		domainID, discountID, userID, orderID, ts)
	return err
}
