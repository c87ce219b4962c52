package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Domain is one LMS instance (tenant). Key hashes are never returned.
type Domain struct {
	ID            int64
	Name          string
	Plan          string
	ResponseStyle string // classroom API JSON style: "", "seed" or "compat"
	LaunchSecret  []byte // signs and encrypts classroom launch URLs
	CreatedAt     time.Time
}

// Keys are a domain's two API keys in the clear. They exist only in the
// return value of CreateDomain and RotateKey.
type Keys struct {
	LMS       string
	Classroom string
}

// API names one of a domain's two keys.
type API string

// The two APIs that have keys.
const (
	APILMS       API = "lms"
	APIClassroom API = "classroom"
)

// newKey returns a fresh API key: a prefix and 160 random bits in hex.
func newKey(prefix string) string {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + hex.EncodeToString(b)
}

// hashKey is how keys are kept at rest: hex SHA-256. Keys carry 160 random
// bits, so a fast unsalted hash is enough.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// CreateDomain creates a tenant and returns it with its keys in the clear.
func (s *Store) CreateDomain(ctx context.Context, name string) (Domain, Keys, error) {
	keys := Keys{LMS: newKey("lk_"), Classroom: newKey("ck_")}
	secret := make([]byte, 32)
	rand.Read(secret)
	d := Domain{Name: name, Plan: "unlimited", LaunchSecret: secret, CreatedAt: s.now()}
	err := s.tx(ctx, func(tx db) error {
		var err error
		d.ID, err = tx.insert(ctx, `INSERT INTO domains (name, lms_key_hash, classroom_key_hash, launch_secret, plan, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, name, hashKey(keys.LMS), hashKey(keys.Classroom), hex.EncodeToString(secret), d.Plan, formatTime(d.CreatedAt))
		return err
	})
	if err != nil {
		return Domain{}, Keys{}, err
	}
	return d, keys, nil
}

// RotateKey replaces one of a domain's keys and returns the new one.
func (s *Store) RotateKey(ctx context.Context, domainID int64, api API) (string, error) {
	var col, key string
	switch api {
	case APILMS:
		col, key = "lms_key_hash", newKey("lk_")
	case APIClassroom:
		col, key = "classroom_key_hash", newKey("ck_")
	default:
		return "", fmt.Errorf("unknown api %q (want lms or classroom)", api)
	}
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "UPDATE domains SET "+col+" = ? WHERE id = ?", hashKey(key), domainID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.NotFoundf("domain %d not found", domainID)
		}
		return nil
	})
	s.keys.forget(domainID)
	if err != nil {
		return "", err
	}
	return key, nil
}

const domainCols = "id, name, plan, response_style, launch_secret, created_at"

func scanDomain(row interface{ Scan(...any) error }) (Domain, error) {
	var d Domain
	if err := row.Scan(&d.ID, &d.Name, &d.Plan, &d.ResponseStyle, secretCol(&d.LaunchSecret), timeCol(&d.CreatedAt)); err != nil {
		return Domain{}, err
	}
	return d, nil
}

// Domains lists every domain by id.
func (s *Store) Domains(ctx context.Context) ([]Domain, error) {
	rows, err := s.read().query(ctx, "SELECT "+domainCols+" FROM domains ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Domain
	for rows.Next() {
		d, err := scanDomain(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// GetDomain returns one domain.
func (s *Store) GetDomain(ctx context.Context, id int64) (Domain, error) {
	d, err := scanDomain(s.read().queryRow(ctx, "SELECT "+domainCols+" FROM domains WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Domain{}, lms.NotFoundf("domain %d not found", id)
	}
	return d, err
}

// authLMS checks an LMS key against the database (AuthLMS).
func (s *Store) authLMS(ctx context.Context, domainID int64, key string) (Domain, error) {
	var stored string
	row := s.read().queryRow(ctx, "SELECT "+domainCols+", lms_key_hash FROM domains WHERE id = ?", domainID)
	var d Domain
	var secret, created string
	err := row.Scan(&d.ID, &d.Name, &d.Plan, &d.ResponseStyle, &secret, &created, &stored)
	given := hashKey(key)
	if errors.Is(err, sql.ErrNoRows) {
		// Compare anyway so an unknown domain costs the same as a wrong key.
		subtle.ConstantTimeCompare([]byte(given), []byte(given))
		return Domain{}, errUnauthorized
	}
	if err != nil {
		return Domain{}, err
	}
	if subtle.ConstantTimeCompare([]byte(given), []byte(stored)) != 1 {
		return Domain{}, errUnauthorized
	}
	if err := secretCol(&d.LaunchSecret).Scan(secret); err != nil {
		return Domain{}, err
	}
	if err := timeCol(&d.CreatedAt).Scan(created); err != nil {
		return Domain{}, err
	}
	return d, nil
}

// authClassroom checks a classroom key against the database
// (AuthClassroom). The lookup is by the key's SHA-256 through a unique
// index; the hash of a 160-bit random key leaks nothing usable through
// lookup timing, and the stored hash is compared in constant time as well.
func (s *Store) authClassroom(ctx context.Context, key string) (Domain, error) {
	given := hashKey(key)
	var stored string
	var d Domain
	var secret, created string
	err := s.read().queryRow(ctx, "SELECT "+domainCols+", classroom_key_hash FROM domains WHERE classroom_key_hash = ?", given).
		Scan(&d.ID, &d.Name, &d.Plan, &d.ResponseStyle, &secret, &created, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return Domain{}, errUnauthorized
	}
	if err != nil {
		return Domain{}, err
	}
	if subtle.ConstantTimeCompare([]byte(given), []byte(stored)) != 1 {
		return Domain{}, errUnauthorized
	}
	if err := secretCol(&d.LaunchSecret).Scan(secret); err != nil {
		return Domain{}, err
	}
	if err := timeCol(&d.CreatedAt).Scan(created); err != nil {
		return Domain{}, err
	}
	return d, nil
}

var errUnauthorized = &lms.Error{Code: lms.CodeUnauthorized, Message: "invalid API key or domain id"}

// SetDomainPlan sets the plan name of a domain.
func (s *Store) SetDomainPlan(ctx context.Context, domainID int64, plan string) error {
	return s.updateDomain(ctx, domainID, "plan", plan)
}

// SetResponseStyle sets the classroom API JSON style of a domain ("" means
// the server default).
func (s *Store) SetResponseStyle(ctx context.Context, domainID int64, style string) error {
	return s.updateDomain(ctx, domainID, "response_style", style)
}

func (s *Store) updateDomain(ctx context.Context, domainID int64, col, value string) error {
	defer s.keys.forget(domainID)
	return s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "UPDATE domains SET "+col+" = ? WHERE id = ?", value, domainID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.NotFoundf("domain %d not found", domainID)
		}
		return nil
	})
}

// minLaunchSecret is the shortest launch secret accepted from the store.
const minLaunchSecret = 16

// secretCol scans a domain's hex launch secret into *b. A value that does
// not decode, or decodes too short, is an error: an empty or short key
// must never sign or verify a launch link.
type secretColScanner struct{ b *[]byte }

func secretCol(b *[]byte) secretColScanner { return secretColScanner{b} }

// Scan implements sql.Scanner.
func (c secretColScanner) Scan(v any) error {
	s, null, ok := scannedText(v)
	if !ok || null {
		return fmt.Errorf("store: launch secret is a %T, not text", v)
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) < minLaunchSecret {
		return fmt.Errorf("store: corrupt launch secret (%d hex characters)", len(s))
	}
	*c.b = b
	return nil
}
