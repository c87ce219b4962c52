package payment

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
)

// Gateway secrets (a Stripe secret key, a webhook signing secret) are
// sealed with AES-256-GCM under a key derived from the server secret (the
// data dir's server.secret), with the domain and the field as additional
// data, so a sealed value cannot be moved to another row or field and a
// copy of the database alone opens nothing.

// errUnseal means a sealed secret does not open with this server's secret.
var errUnseal = errors.New("payment secret does not open with this server's secret (every server must share the data dir's server.secret; or set it again with lectern domain set-payment)")

func deriveKey(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

func gcm(secret []byte) (cipher.AEAD, error) {
	if len(secret) < 16 {
		return nil, errors.New("payment secrets need a server secret of at least 16 bytes")
	}
	block, err := aes.NewCipher(deriveKey(secret, "lectern payment-secret seal v1"))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Seal encrypts plain for the row named by ad; "" stays "".
func Seal(secret []byte, ad, plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	g, err := gcm(secret)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, g.NonceSize())
	rand.Read(nonce)
	return "v1." + base64.RawURLEncoding.EncodeToString(g.Seal(nonce, nonce, []byte(plain), []byte(ad))), nil
}

// Unseal opens what Seal made with the same secret and ad.
func Unseal(secret []byte, ad, sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	g, err := gcm(secret)
	if err != nil {
		return "", err
	}
	if len(sealed) < 3 || sealed[:3] != "v1." {
		return "", errUnseal
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed[3:])
	if err != nil || len(raw) < g.NonceSize() {
		return "", errUnseal
	}
	plain, err := g.Open(nil, raw[:g.NonceSize()], raw[g.NonceSize():], []byte(ad))
	if err != nil {
		return "", errUnseal
	}
	return string(plain), nil
}
