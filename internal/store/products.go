package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Product publication states. A new product is ProductNotPublished.
const (
	ProductPublished    = "Published"
	ProductNotPublished = "Not Published"
)

// Product is a product of a domain's shop. Money is in minor units
// (cents).
type Product struct {
	ID            int64
	Name          string
	Description   string
	Type          int64
	SKU           string
	PriceCents    int64
	ShippingCents int64
	TrackStock    int64 // 1 tracks stock, 0 does not
	Status        string
	CategoryID    int64 // 0 when the product has no category
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// ProductCategory is a category products may be filed under.
type ProductCategory struct {
	ID        int64
	Name      string
	IsStatus  int64 // 1 active, 0 inactive
	UserID    int64 // 0 when not made on behalf of a user
	CreatedAt time.Time
}

const productCols = "id, name, description, product_type, sku, price_cents, shipping_cents, is_track_stock, status, category_id, created_at, updated_at"

func scanProduct(row interface{ Scan(...any) error }) (Product, error) {
	var p Product
	var cat sql.NullInt64
	err := row.Scan(&p.ID, &p.Name, &p.Description, &p.Type, &p.SKU, &p.PriceCents, &p.ShippingCents,
		&p.TrackStock, &p.Status, &cat, timeCol(&p.CreatedAt), timeCol(&p.UpdatedAt))
	p.CategoryID = cat.Int64
	return p, err
}

// optionalCategoryID stores a product's category id: 0 (none) becomes NULL.
func optionalCategoryID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// CreateProduct adds a product, not published. A second product with the
// same SKU (compared exactly) in the domain is a conflict.
func (s *Store) CreateProduct(ctx context.Context, domainID int64, p Product) (Product, error) {
	p.CreatedAt = s.now()
	p.UpdatedAt = p.CreatedAt
	p.Status = ProductNotPublished
	err := s.tx(ctx, func(tx db) error {
		var err error
		p.ID, err = tx.insert(ctx, `INSERT INTO products (domain_id, name, description, product_type, sku, price_cents,
			shipping_cents, is_track_stock, status, category_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			domainID, p.Name, p.Description, p.Type, p.SKU, p.PriceCents, p.ShippingCents, p.TrackStock, p.Status,
			optionalCategoryID(p.CategoryID), formatTime(p.CreatedAt), formatTime(p.UpdatedAt))
		if isUnique(err) {
			return lms.Conflictf("a product with sku %s already exists", p.SKU)
		}
		return err
	})
	return p, err
}

// Product returns one product of the domain.
func (s *Store) Product(ctx context.Context, domainID, id int64) (Product, error) {
	return product(ctx, s.read(), domainID, id)
}

func product(ctx context.Context, d db, domainID, id int64) (Product, error) {
	p, err := scanProduct(d.queryRow(ctx, "SELECT "+productCols+" FROM products WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Product{}, lms.NotFoundf("product %d not found", id)
	}
	return p, err
}

// ListProducts returns one page of the domain's products by id, and the
// number of all of them.
func (s *Store) ListProducts(ctx context.Context, domainID int64, pg Page) ([]Product, int64, error) {
	d := s.read()
	total, err := d.count(ctx, "SELECT COUNT(*) FROM products WHERE domain_id = ?", domainID)
	if err != nil {
		return nil, 0, err
	}
	rows, err := d.query(ctx, "SELECT "+productCols+" FROM products WHERE domain_id = ? ORDER BY id LIMIT +? OFFSET +?",
		domainID, pg.Limit, pg.Offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Product{}
	for rows.Next() {
		p, err := scanProduct(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, p)
	}
	return out, total, rows.Err()
}

// DeleteProduct deletes a product of the domain.
func (s *Store) DeleteProduct(ctx context.Context, domainID, id int64) error {
	return s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "DELETE FROM products WHERE domain_id = ? AND id = ?", domainID, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return lms.NotFoundf("product %d not found", id)
		}
		return nil
	})
}

// ProductUpdate lists the product fields to change; nil leaves a field as
// it is. CategoryID 0 detaches the product from its category.
type ProductUpdate struct {
	Name          *string
	Description   *string
	PriceCents    *int64
	ShippingCents *int64
	CategoryID    *int64
	Status        *string
}

// UpdateProduct changes a product of the domain and returns it. A category
// id that is not one of the domain's categories is not found.
func (s *Store) UpdateProduct(ctx context.Context, domainID, id int64, u ProductUpdate) (Product, error) {
	var p Product
	err := s.tx(ctx, func(tx db) error {
		if err := lockRow(ctx, tx, "products", domainID, id); err != nil {
			return err
		}
		var err error
		if p, err = product(ctx, tx, domainID, id); err != nil {
			return err
		}
		if u.CategoryID != nil && *u.CategoryID != 0 {
			found, err := tx.exists(ctx, "SELECT 1 FROM product_categories WHERE domain_id = ? AND id = ?", domainID, *u.CategoryID)
			if err != nil {
				return err
			}
			if !found {
				return lms.NotFoundf("product category %d not found", *u.CategoryID)
			}
		}
		if u.Name != nil {
			p.Name = *u.Name
		}
		if u.Description != nil {
			p.Description = *u.Description
		}
		if u.PriceCents != nil {
			p.PriceCents = *u.PriceCents
		}
		if u.ShippingCents != nil {
			p.ShippingCents = *u.ShippingCents
		}
		if u.CategoryID != nil {
			p.CategoryID = *u.CategoryID
		}
		if u.Status != nil {
			p.Status = *u.Status
		}
		p.UpdatedAt = s.now()
		_, err = tx.exec(ctx, `UPDATE products SET name = ?, description = ?, price_cents = ?, shipping_cents = ?,
			category_id = ?, status = ?, updated_at = ? WHERE domain_id = ? AND id = ?`,
			p.Name, p.Description, p.PriceCents, p.ShippingCents, optionalCategoryID(p.CategoryID), p.Status, formatTime(p.UpdatedAt),
			domainID, id)
		if errors.Is(mapErr(err), errForeignKey) {
			// The category went away in a concurrent transaction.
			return lms.NotFoundf("product category %d not found", p.CategoryID)
		}
		return err
	})
	return p, err
}

const productCategoryCols = "id, name, is_status, user_id, created_at"

func scanProductCategory(row interface{ Scan(...any) error }) (ProductCategory, error) {
	var c ProductCategory
	err := row.Scan(&c.ID, &c.Name, &c.IsStatus, &c.UserID, timeCol(&c.CreatedAt))
	return c, err
}

// CreateProductCategory adds a category. A non-zero UserID must be one of
// the domain's users.
func (s *Store) CreateProductCategory(ctx context.Context, domainID int64, c ProductCategory) (ProductCategory, error) {
	c.CreatedAt = s.now()
	err := s.tx(ctx, func(tx db) error {
		if c.UserID != 0 {
			found, err := tx.exists(ctx, "SELECT 1 FROM users WHERE domain_id = ? AND id = ?", domainID, c.UserID)
			if err != nil {
				return err
			}
			if !found {
				return lms.NotFoundf("user %d not found", c.UserID)
			}
		}
		var err error
		c.ID, err = tx.insert(ctx, `INSERT INTO product_categories (domain_id, name, is_status, user_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)`, domainID, c.Name, c.IsStatus, c.UserID, formatTime(c.CreatedAt), formatTime(c.CreatedAt))
		return err
	})
	return c, err
}

func productCategory(ctx context.Context, d db, domainID, id int64) (ProductCategory, error) {
	c, err := scanProductCategory(d.queryRow(ctx, "SELECT "+productCategoryCols+" FROM product_categories WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return ProductCategory{}, lms.NotFoundf("product category %d not found", id)
	}
	return c, err
}

// UpdateProductCategory renames a category and, when isStatus is not nil,
// sets its status.
func (s *Store) UpdateProductCategory(ctx context.Context, domainID, id int64, name string, isStatus *int64) (ProductCategory, error) {
	var c ProductCategory
	err := s.tx(ctx, func(tx db) error {
		if err := lockRow(ctx, tx, "product_categories", domainID, id); err != nil {
			return err
		}
		var err error
		if c, err = productCategory(ctx, tx, domainID, id); err != nil {
			return err
		}
		c.Name = name
		if isStatus != nil {
			c.IsStatus = *isStatus
		}
		_, err = tx.exec(ctx, "UPDATE product_categories SET name = ?, is_status = ?, updated_at = ? WHERE domain_id = ? AND id = ?",
			c.Name, c.IsStatus, formatTime(s.now()), domainID, id)
		return err
	})
	return c, err
}

// DeleteProductCategory deletes a category and, in the same transaction,
// detaches the products filed under it (their category becomes none). It
// returns how many products were detached.
func (s *Store) DeleteProductCategory(ctx context.Context, domainID, id int64) (detached int64, err error) {
	err = s.tx(ctx, func(tx db) error {
		if _, err := productCategory(ctx, tx, domainID, id); err != nil {
			return err
		}
		res, err := tx.exec(ctx, "UPDATE products SET category_id = NULL, updated_at = ? WHERE domain_id = ? AND category_id = ?",
			formatTime(s.now()), domainID, id)
		if err != nil {
			return err
		}
		if detached, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.exec(ctx, "DELETE FROM product_categories WHERE domain_id = ? AND id = ?", domainID, id)
		return err
	})
	return detached, err
}

// ListProductCategories returns one page of the domain's categories by id,
// and the number of all of them.
func (s *Store) ListProductCategories(ctx context.Context, domainID int64, p Page) ([]ProductCategory, int64, error) {
	d := s.read()
	total, err := d.count(ctx, "SELECT COUNT(*) FROM product_categories WHERE domain_id = ?", domainID)
	if err != nil {
		return nil, 0, err
	}
	rows, err := d.query(ctx, "SELECT "+productCategoryCols+" FROM product_categories WHERE domain_id = ? ORDER BY id LIMIT +? OFFSET +?",
		domainID, p.Limit, p.Offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []ProductCategory{}
	for rows.Next() {
		c, err := scanProductCategory(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}
