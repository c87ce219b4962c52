package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Learner sign-in rows: login links, JWT ids, portal sessions, SSO keys
// and a domain's portal host. Tokens reach this file in the clear and are
// kept only as their SHA-256 (hashKey); every instant comes from the
// caller's clock, so the server's settable clock governs expiry.

// SetLearnHost sets the host name of a domain's learner portal (stored in
// lower case); "" removes it. A host another domain has is a conflict.
func (s *Store) SetLearnHost(ctx context.Context, domainID int64, host string) error {
	var v any
	if host != "" {
		v = strings.ToLower(host)
	}
	return s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "UPDATE domains SET learn_host = ? WHERE id = ?", v, domainID)
		if isUnique(err) {
			return lms.Conflictf("host %s is already the portal host of another domain", host)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return lms.NotFoundf("domain %d not found", domainID)
		}
		return nil
	})
}

// LearnHost returns the host name of a domain's portal ("" when none).
func (s *Store) LearnHost(ctx context.Context, domainID int64) (string, error) {
	var host sql.NullString
	err := s.read().queryRow(ctx, "SELECT learn_host FROM domains WHERE id = ?", domainID).Scan(&host)
	if errors.Is(err, sql.ErrNoRows) {
		return "", lms.NotFoundf("domain %d not found", domainID)
	}
	return host.String, err
}

// DomainByLearnHost returns the domain whose portal host is host (any
// letter case).
func (s *Store) DomainByLearnHost(ctx context.Context, host string) (Domain, error) {
	d, err := scanDomain(s.read().queryRow(ctx, "SELECT "+domainCols+" FROM domains WHERE learn_host = ?", strings.ToLower(host)))
	if errors.Is(err, sql.ErrNoRows) {
		return Domain{}, lms.NotFoundf("no domain has the portal host %s", host)
	}
	return d, err
}

// LoginLink is a consumed login link: who it signs in and where to.
type LoginLink struct {
	ID        int64
	DomainID  int64
	UserID    int64
	Purpose   string
	ReturnTo  string
	ExpiresAt time.Time
}

// CreateLoginLink stores a login link for token (kept only as its hash).
// Links of the domain that expired more than a day before at are removed
// on the way.
func (s *Store) CreateLoginLink(ctx context.Context, l LoginLink, token string, at time.Time) error {
	return s.tx(ctx, func(tx db) error {
		if _, err := tx.exec(ctx, "DELETE FROM learn_login_links WHERE domain_id = ? AND expires_at < ?",
			l.DomainID, formatTime(at.Add(-24*time.Hour))); err != nil {
			return err
		}
		_, err := tx.insert(ctx, `INSERT INTO learn_login_links (domain_id, user_id, token_hash, purpose, return_to, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, l.DomainID, l.UserID, hashKey(token), l.Purpose, l.ReturnTo, formatTime(at), formatTime(l.ExpiresAt))
		return err
	})
}

// ConsumeLoginLink marks the domain's unused, unexpired link for token and
// purpose as used, in one UPDATE, and returns it. Of many concurrent
// calls with one token exactly one succeeds. A token that is unknown, of
// another domain or purpose, used or expired is a not-found error (and a
// token of another domain stays unused).
func (s *Store) ConsumeLoginLink(ctx context.Context, domainID int64, token, purpose string, at time.Time) (LoginLink, error) {
	l := LoginLink{DomainID: domainID, Purpose: purpose}
	err := s.tx(ctx, func(tx db) error {
		return tx.queryRow(ctx, `UPDATE learn_login_links SET used_at = ?
			WHERE token_hash = ? AND domain_id = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?
			RETURNING id, user_id, return_to, expires_at`,
			formatTime(at), hashKey(token), domainID, purpose, formatTime(at)).Scan(&l.ID, &l.UserID, &l.ReturnTo, timeCol(&l.ExpiresAt))
	})
	if errors.Is(err, sql.ErrNoRows) {
		return LoginLink{}, lms.NotFoundf("login link used, expired or unknown")
	}
	if err != nil {
		return LoginLink{}, err
	}
	return l, nil
}

// RevokeLoginLinks removes every unused login link of the domain and
// returns how many there were.
func (s *Store) RevokeLoginLinks(ctx context.Context, domainID int64) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "DELETE FROM learn_login_links WHERE domain_id = ? AND used_at IS NULL", domainID)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// UseJWTID records that the domain accepted a JWT with jti, keeping the
// record until expires (after which the JWT is refused anyway). A jti
// already recorded is a conflict. Expired records are removed on the way.
func (s *Store) UseJWTID(ctx context.Context, domainID int64, jti string, expires, at time.Time) error {
	return s.tx(ctx, func(tx db) error {
		if _, err := tx.exec(ctx, "DELETE FROM learn_jwt_ids WHERE domain_id = ? AND expires_at < ?", domainID, formatTime(at)); err != nil {
			return err
		}
		_, err := tx.exec(ctx, "INSERT INTO learn_jwt_ids (domain_id, jti, expires_at) VALUES (?, ?, ?)", domainID, jti, formatTime(expires))
		if isUnique(err) {
			return lms.Conflictf("jti %q was already used", jti)
		}
		return err
	})
}

// LearnSession is a learner's portal session with its user.
type LearnSession struct {
	ID         int64
	DomainID   int64
	User       lms.User
	Via        string // "link" or "jwt"
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
}

// CreateLearnSession stores a session for token (kept only as its hash)
// and returns its id. Ended sessions of the domain are removed on the way.
func (s *Store) CreateLearnSession(ctx context.Context, domainID, userID int64, token, via string, at, expires time.Time) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx db) error {
		if _, err := tx.exec(ctx, "DELETE FROM learn_sessions WHERE domain_id = ? AND expires_at < ?", domainID, formatTime(at)); err != nil {
			return err
		}
		var err error
		id, err = tx.insert(ctx, `INSERT INTO learn_sessions (domain_id, user_id, token_hash, via, created_at, last_seen_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, domainID, userID, hashKey(token), via, formatTime(at), formatTime(at), formatTime(expires))
		return err
	})
	return id, err
}

// ActiveLearnSession returns the domain's session for token if it has not
// reached its absolute end (at) and was seen after idleSince.
func (s *Store) ActiveLearnSession(ctx context.Context, domainID int64, token string, at, idleSince time.Time) (LearnSession, error) {
	var ls LearnSession
	err := s.read().queryRow(ctx, `SELECT s.id, s.domain_id, s.via, s.created_at, s.last_seen_at, s.expires_at,
			u.id, u.name, u.username, u.email, u.created_at
		FROM learn_sessions s JOIN users u ON u.id = s.user_id AND u.domain_id = s.domain_id
		WHERE s.domain_id = ? AND s.token_hash = ? AND s.expires_at > ? AND s.last_seen_at > ?`,
		domainID, hashKey(token), formatTime(at), formatTime(idleSince)).
		Scan(&ls.ID, &ls.DomainID, &ls.Via, timeCol(&ls.CreatedAt), timeCol(&ls.LastSeenAt), timeCol(&ls.ExpiresAt),
			&ls.User.ID, &ls.User.Name, &ls.User.Username, &ls.User.Email, timeCol(&ls.User.CreatedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return LearnSession{}, lms.NotFoundf("no active session")
	}
	if err != nil {
		return LearnSession{}, err
	}
	return ls, nil
}

// TouchLearnSession records that the session was used at at.
func (s *Store) TouchLearnSession(ctx context.Context, domainID, id int64, at time.Time) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, "UPDATE learn_sessions SET last_seen_at = ? WHERE domain_id = ? AND id = ?", formatTime(at), domainID, id)
		return err
	})
}

// EndLearnSession ends the domain's session for token (no error when
// there is none).
func (s *Store) EndLearnSession(ctx context.Context, domainID int64, token string) error {
	return s.tx(ctx, func(tx db) error {
		_, err := tx.exec(ctx, "DELETE FROM learn_sessions WHERE domain_id = ? AND token_hash = ?", domainID, hashKey(token))
		return err
	})
}

// EndLearnSessions ends every session of one learner, or of the whole
// domain when userID is 0, and returns how many it ended.
func (s *Store) EndLearnSessions(ctx context.Context, domainID, userID int64) (int64, error) {
	q, args := "DELETE FROM learn_sessions WHERE domain_id = ?", []any{domainID}
	if userID != 0 {
		q, args = q+" AND user_id = ?", append(args, userID)
	}
	var n int64
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, q, args...)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// SSOKey is one secret a domain's school signs JWT entries with. The
// HMAC key is the bytes of Secret as printed.
type SSOKey struct {
	Kid       string
	Secret    string
	CreatedAt time.Time
	// ExpiresAt is zero for the current key; a replaced key stays valid
	// until then.
	ExpiresAt time.Time
}

// RotateSSOKey makes a new current SSO key for the domain and returns it
// with its secret in the clear (the only time it is). The secret is kept
// sealed under sealKey (the server secret). The key it replaces stays
// valid for grace (not at all when grace is 0); keys replaced before it
// end now.
func (s *Store) RotateSSOKey(ctx context.Context, domainID int64, sealKey []byte, grace time.Duration, at time.Time) (SSOKey, error) {
	if _, err := s.GetDomain(ctx, domainID); err != nil {
		return SSOKey{}, err
	}
	k := SSOKey{Kid: newSecretHex(4), Secret: "lss_" + newSecretHex(32), CreatedAt: at.UTC().Truncate(time.Second)}
	sealed := sealSSO(sealKey, domainID, k.Kid, k.Secret)
	err := s.tx(ctx, func(tx db) error {
		if _, err := tx.exec(ctx, "DELETE FROM learn_sso_keys WHERE domain_id = ? AND expires_at IS NOT NULL", domainID); err != nil {
			return err
		}
		if grace > 0 {
			if _, err := tx.exec(ctx, "UPDATE learn_sso_keys SET expires_at = ? WHERE domain_id = ? AND expires_at IS NULL",
				formatTime(at.Add(grace)), domainID); err != nil {
				return err
			}
		} else if _, err := tx.exec(ctx, "DELETE FROM learn_sso_keys WHERE domain_id = ?", domainID); err != nil {
			return err
		}
		_, err := tx.insert(ctx, "INSERT INTO learn_sso_keys (domain_id, kid, secret_sealed, created_at) VALUES (?, ?, ?, ?)",
			domainID, k.Kid, sealed, formatTime(k.CreatedAt))
		return err
	})
	if err != nil {
		return SSOKey{}, err
	}
	return k, nil
}

// ErrSSOSeal is returned by SSOKeys for a secret sealed under another
// server secret (a different data dir's server.secret).
var ErrSSOSeal = errors.New("an SSO secret of this domain was sealed under another server secret (server.secret in the data dir); " +
	"make a new one with lectern domain rotate-key --api sso --data-dir <the server's data dir>")

// SSOKeys returns the domain's SSO keys valid at at, newest first, opened
// with sealKey (the server secret).
func (s *Store) SSOKeys(ctx context.Context, domainID int64, sealKey []byte, at time.Time) ([]SSOKey, error) {
	rows, err := s.read().query(ctx, `SELECT kid, secret_sealed, created_at, expires_at FROM learn_sso_keys
		WHERE domain_id = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY id DESC`, domainID, formatTime(at))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SSOKey
	for rows.Next() {
		var k SSOKey
		var sealed string
		if err := rows.Scan(&k.Kid, &sealed, timeCol(&k.CreatedAt), optTimeCol(&k.ExpiresAt)); err != nil {
			return nil, err
		}
		k.Secret, err = openSSO(sealKey, domainID, k.Kid, sealed)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

func newSecretHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// SSO secrets must come back for HMAC verification, so they are sealed,
// not hashed: AES-256-GCM under a key derived from the server secret
// (kept in the data dir, not in the database), with the domain id and key
// id as additional data so a sealed value cannot be moved to another
// domain or key.
func ssoAEAD(serverSecret []byte) cipher.AEAD {
	m := hmac.New(sha256.New, serverSecret)
	m.Write([]byte("sso-key-seal-v1"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		panic(err) // a 32-byte key never fails
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

func ssoAD(domainID int64, kid string) []byte {
	return []byte(strconv.FormatInt(domainID, 10) + "\n" + kid)
}

func sealSSO(serverSecret []byte, domainID int64, kid, secret string) string {
	aead := ssoAEAD(serverSecret)
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(secret), ssoAD(domainID, kid)))
}

func openSSO(serverSecret []byte, domainID int64, kid, sealed string) (string, error) {
	aead := ssoAEAD(serverSecret)
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(b) < aead.NonceSize() {
		return "", ErrSSOSeal
	}
	plain, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], ssoAD(domainID, kid))
	if err != nil {
		return "", ErrSSOSeal
	}
	return string(plain), nil
}
