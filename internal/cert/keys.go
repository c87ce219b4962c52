package cert

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// sealKey derives the key that seals issuer private keys at rest from the
// server secret, with its own purpose label (as internal/signing derives
// its keys from a domain's launch secret).
func sealKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("lectern issuer-key seal v1"))
	return m.Sum(nil)
}

// seal encrypts an Ed25519 private key with AES-256-GCM under the server
// secret; the key id is the additional data, so a sealed key cannot be
// moved to another row.
func seal(secret []byte, kid string, priv ed25519.PrivateKey) (string, error) {
	gcm, err := newGCM(secret)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, gcm.NonceSize())
	rand.Read(nonce)
	out := gcm.Seal(nonce, nonce, priv.Seed(), []byte(kid))
	return "v1." + base64.RawURLEncoding.EncodeToString(out), nil
}

// errUnseal means a sealed key does not open with this server's secret.
var errUnseal = errors.New("issuer key does not open with this server's secret")

func unseal(secret []byte, kid, sealed string) (ed25519.PrivateKey, error) {
	gcm, err := newGCM(secret)
	if err != nil {
		return nil, err
	}
	if len(sealed) < 3 || sealed[:3] != "v1." {
		return nil, errUnseal
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed[3:])
	if err != nil || len(raw) < gcm.NonceSize() {
		return nil, errUnseal
	}
	seed, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(kid))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, errUnseal
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

func newGCM(secret []byte) (cipher.AEAD, error) {
	if len(secret) < 16 {
		return nil, errors.New("issuer keys need a server secret of at least 16 bytes")
	}
	block, err := aes.NewCipher(sealKey(secret))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// signingKey is a domain's current key, opened.
type signingKey struct {
	kid  string
	priv ed25519.PrivateKey
}

// newKID returns a fresh key id: the domain and 64 random bits.
func newKID(domainID int64) string {
	b := make([]byte, 8)
	rand.Read(b)
	return fmt.Sprintf("d%d-%s", domainID, hex.EncodeToString(b))
}

// newIssuerKey makes and seals a fresh Ed25519 key for a domain.
func (i *Issuer) newIssuerKey(domainID int64) (store.IssuerKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return store.IssuerKey{}, err
	}
	kid := newKID(domainID)
	sealed, err := seal(i.Secret, kid, priv)
	if err != nil {
		return store.IssuerKey{}, err
	}
	return store.IssuerKey{KID: kid, Public: pub, PrivateSealed: sealed}, nil
}

// key returns the domain's signing key, creating one the first time. A
// key that does not open with this server's secret (the secret file was
// lost, or another server of the fleet has a different one) is an error,
// never a silent new key: copy the secret file, or rotate the key with
// lectern domain rotate-key --api issuer.
func (i *Issuer) key(ctx context.Context, domainID int64) (signingKey, error) {
	k, err := i.Store.CurrentIssuerKey(ctx, domainID)
	if lms.IsNotFound(err) {
		fresh, err := i.newIssuerKey(domainID)
		if err != nil {
			return signingKey{}, err
		}
		if k, err = i.Store.AddIssuerKey(ctx, domainID, fresh, false); err != nil {
			return signingKey{}, err
		}
	} else if err != nil {
		return signingKey{}, err
	}
	priv, err := unseal(i.Secret, k.KID, k.PrivateSealed)
	if err != nil {
		return signingKey{}, fmt.Errorf("domain %d issuer key %s: %w (every server must share the data dir's server.secret; "+
			"or run lectern domain rotate-key --api issuer)", domainID, k.KID, err)
	}
	return signingKey{kid: k.KID, priv: priv}, nil
}

// RotateKey gives a domain a new signing key. The old one is retired but
// stays in the domain's JWKS, so credentials it signed keep verifying.
func (i *Issuer) RotateKey(ctx context.Context, domainID int64) (store.IssuerKey, error) {
	fresh, err := i.newIssuerKey(domainID)
	if err != nil {
		return store.IssuerKey{}, err
	}
	return i.Store.AddIssuerKey(ctx, domainID, fresh, true)
}

// JWK is one public key of a JWKS (RFC 8037 OKP key).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// JWKS returns a domain's public keys, current first. A domain that has
// never signed has none.
func (i *Issuer) JWKS(ctx context.Context, domainID int64) ([]JWK, error) {
	keys, err := i.Store.IssuerKeys(ctx, domainID)
	if err != nil {
		return nil, err
	}
	out := make([]JWK, len(keys))
	for n, k := range keys {
		out[n] = JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.Public), Kid: k.KID, Use: "sig", Alg: "EdDSA"}
	}
	return out, nil
}
