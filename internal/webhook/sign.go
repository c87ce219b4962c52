// Package webhook delivers the events of the webhook outbox to the
// endpoints domains registered: signed in the scheme of the Standard
// Webhooks specification, retried with exponential back-off for a day,
// logged, and sent only to public addresses unless the operator allows
// otherwise.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// NewSecret returns a fresh signing secret: whsec_ and 32 random bytes in
// standard base64.
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// secretKey is the HMAC key of a secret: the bytes its base64 part
// decodes to.
func secretKey(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, errors.New("webhook secret must start with " + SecretPrefix)
	}
	return base64.StdEncoding.DecodeString(raw)
}

// Sign returns the webhook-signature header value for a message: "v1,"
// and the base64 HMAC-SHA256, keyed by the secret, of id "." timestamp
// (Unix seconds) "." body.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// RotationGrace is how long after a secret rotation deliveries are also
// signed with the secret it replaced.
const RotationGrace = 24 * time.Hour

// Secrets returns the secrets a delivery at now is signed with: the
// endpoint's secret, and the previous one while its grace period (until)
// lasts.
func Secrets(secret, previous string, until, now time.Time) []string {
	if previous != "" && now.Before(until) {
		return []string{secret, previous}
	}
	return []string{secret}
}

// SetHeaders sets the three headers of a signed delivery on h: one
// signature per secret, space-separated, as the Standard Webhooks scheme
// allows (a receiver accepts the delivery if any one verifies).
func SetHeaders(h http.Header, secrets []string, id string, ts time.Time, body []byte) error {
	sigs := make([]string, len(secrets))
	for i, secret := range secrets {
		var err error
		if sigs[i], err = Sign(secret, id, ts, body); err != nil {
			return err
		}
	}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", strings.Join(sigs, " "))
	return nil
}
