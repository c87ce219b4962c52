package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/pricing"
)

// Pricing schemes: how a course, test or live class is sold. The LMS
// API's shopping-cart pricing and the classroom API's class schemes use
// these methods; every one is scoped by domain id.

const schemeCols = "id, item_kind, item_id, price_minor, days, lifetime, numbertimes, subscription, created_at"

func scanScheme(row interface{ Scan(...any) error }) (lms.PricingScheme, error) {
	var p lms.PricingScheme
	var lifetime, subscription int
	err := row.Scan(&p.ID, &p.Kind, &p.ItemID, &p.Price, &p.Days, &lifetime, &p.NumberTimes, &subscription, timeCol(&p.CreatedAt))
	p.Lifetime, p.Subscription = lifetime == 1, subscription == 1
	return p, err
}

// checkScheme enforces what every stored scheme satisfies, with the LMS
// API's field names.
func checkScheme(p *lms.PricingScheme) error {
	var v lms.Validator
	if p.Kind != lms.KindCourse && p.Kind != lms.KindTest && p.Kind != lms.KindClass {
		return lms.Invalidf("item_kind", "must be course, test or class")
	}
	v.Check(p.Price >= 0, "scheme_price", "must not be negative")
	if p.Lifetime {
		p.Days = 0
	} else {
		v.Check(p.Days >= 1, "scheme_days", "must be at least 1 unless lifetime is 1")
	}
	v.Check(p.NumberTimes >= 0, "numbertimes", "must not be negative (0 is unlimited)")
	return v.Err()
}

// AddPricingScheme adds a scheme to the item p.Kind/p.ItemID, which must
// exist in the domain (else not found). Days is set to 0 for a lifetime
// scheme.
func (s *Store) AddPricingScheme(ctx context.Context, domainID int64, p lms.PricingScheme) (lms.PricingScheme, error) {
	if err := checkScheme(&p); err != nil {
		return p, err
	}
	p.CreatedAt = s.now()
	err := s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, p.Kind, p.ItemID); err != nil {
			return err
		}
		var err error
		p.ID, err = tx.insert(ctx, `INSERT INTO pricing_schemes (domain_id, item_kind, item_id, price_minor, days, lifetime,
			numbertimes, subscription, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			domainID, p.Kind, p.ItemID, p.Price, p.Days, lms.Flag(p.Lifetime), p.NumberTimes, lms.Flag(p.Subscription), formatTime(p.CreatedAt))
		return err
	})
	return p, err
}

// PricingScheme returns one scheme by id.
func (s *Store) PricingScheme(ctx context.Context, domainID, id int64) (lms.PricingScheme, error) {
	return pricingScheme(ctx, s.read(), domainID, id)
}

func pricingScheme(ctx context.Context, d db, domainID, id int64) (lms.PricingScheme, error) {
	p, err := scanScheme(d.queryRow(ctx, "SELECT "+schemeCols+" FROM pricing_schemes WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, lms.NotFoundf("pricing scheme %d not found", id)
	}
	return p, err
}

// ownScheme returns scheme id of item kind/itemID: not found when the
// item does not exist, or the scheme does not exist or is another item's.
func ownScheme(ctx context.Context, d db, domainID int64, kind string, itemID, id int64) (lms.PricingScheme, error) {
	if err := mustExist(ctx, d, domainID, kind, itemID); err != nil {
		return lms.PricingScheme{}, err
	}
	p, err := pricingScheme(ctx, d, domainID, id)
	if err == nil && (p.Kind != kind || p.ItemID != itemID) {
		err = lms.NotFoundf("pricing scheme %d not found for %s %d", id, itemNames[kind], itemID)
	}
	return p, err
}

// UpdatePricingScheme applies edit to scheme id of item kind/itemID and
// saves it, in one transaction. edit may refuse with an error, which is
// returned; it cannot move the scheme to another item.
func (s *Store) UpdatePricingScheme(ctx context.Context, domainID int64, kind string, itemID, id int64, edit func(*lms.PricingScheme) error) (lms.PricingScheme, error) {
	var p lms.PricingScheme
	err := s.tx(ctx, func(tx db) error {
		if err := lockRow(ctx, tx, "pricing_schemes", domainID, id); err != nil {
			return err
		}
		var err error
		if p, err = ownScheme(ctx, tx, domainID, kind, itemID, id); err != nil {
			return err
		}
		if err := edit(&p); err != nil {
			return err
		}
		p.ID, p.Kind, p.ItemID = id, kind, itemID
		if err := checkScheme(&p); err != nil {
			return err
		}
		_, err = tx.exec(ctx, `UPDATE pricing_schemes SET price_minor = ?, days = ?, lifetime = ?, numbertimes = ?,
			subscription = ? WHERE domain_id = ? AND id = ?`,
			p.Price, p.Days, lms.Flag(p.Lifetime), p.NumberTimes, lms.Flag(p.Subscription), domainID, id)
		return err
	})
	return p, err
}

// PricingSchemes returns an item's schemes by id; not found when the item
// does not exist.
func (s *Store) PricingSchemes(ctx context.Context, domainID int64, kind string, itemID int64) ([]lms.PricingScheme, error) {
	d := s.read()
	if err := mustExist(ctx, d, domainID, kind, itemID); err != nil {
		return nil, err
	}
	rows, err := d.query(ctx, "SELECT "+schemeCols+" FROM pricing_schemes WHERE domain_id = ? AND item_kind = ? AND item_id = ? ORDER BY id",
		domainID, kind, itemID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []lms.PricingScheme{}
	for rows.Next() {
		p, err := scanScheme(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// DeletePricingScheme deletes scheme id of item kind/itemID; not found
// when the item does not exist or the scheme is not the item's.
func (s *Store) DeletePricingScheme(ctx context.Context, domainID int64, kind string, itemID, id int64) error {
	return s.tx(ctx, func(tx db) error {
		if _, err := ownScheme(ctx, tx, domainID, kind, itemID, id); err != nil {
			return err
		}
		_, err := tx.exec(ctx, "DELETE FROM pricing_schemes WHERE domain_id = ? AND id = ?", domainID, id)
		return err
	})
}

// Quote prices scheme schemeID of item kind/itemID with code (may be "")
// at instant at, with the item's and the global discounts (see package
// pricing for the rules). Not found when the item does not exist or the
// scheme is not the item's. Nothing is redeemed.
func (s *Store) Quote(ctx context.Context, domainID int64, kind string, itemID, schemeID int64, code string, at time.Time) (pricing.Result, error) {
	d := s.read()
	p, err := ownScheme(ctx, d, domainID, kind, itemID, schemeID)
	if err != nil {
		return pricing.Result{}, err
	}
	key := pricing.CodeKey(code)
	ds, err := queryDiscounts(ctx, d, `domain_id = ? AND ((item_kind = ? AND item_id = ?) OR item_kind = ? OR (code_key <> '' AND code_key = ?))`,
		domainID, kind, itemID, lms.KindGlobal, key)
	if err != nil {
		return pricing.Result{}, err
	}
	return pricing.Quote(pricing.Input{Kind: kind, ItemID: itemID, Scheme: p, Code: code, At: at, Discounts: ds}), nil
}
