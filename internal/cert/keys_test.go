package cert

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
)

func TestSeal(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	sealed, err := seal(secret, "d1-aa", priv)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sealed, "v1."))
	if err != nil || bytes.Contains(raw, priv.Seed()) || strings.Contains(sealed, base64.RawURLEncoding.EncodeToString(priv.Seed())) {
		t.Fatalf("sealed key %q holds the seed in the clear (or is not v1.base64url: %v)", sealed, err)
	}
	got, err := unseal(secret, "d1-aa", sealed)
	if err != nil || !got.Equal(priv) {
		t.Fatalf("unseal = %v, %v; want the key back", got, err)
	}
	cases := []struct {
		name, kid, sealed string
		secret            []byte
	}{
		{"another server secret", "d1-aa", sealed, []byte("another secret, just as long....")},
		{"moved to another key id", "d1-bb", sealed, secret},
		{"tampered", "d1-aa", sealed[:len(sealed)-2] + "AA", secret},
		{"not sealed", "d1-aa", "plain", secret},
		{"empty", "d1-aa", "", secret},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := unseal(tc.secret, tc.kid, tc.sealed); err != errUnseal {
				t.Errorf("unseal: %v, want errUnseal", err)
			}
		})
	}
	if _, err := seal([]byte("short"), "d1-aa", priv); err == nil {
		t.Error("sealing with a 5-byte secret worked")
	}
}

func TestCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		c := NewCode()
		if n, ok := NormalizeCode(c); !ok || n != c || len(c) != CodeLen {
			t.Fatalf("NewCode() = %q is not canonical", c)
		}
		if seen[c] {
			t.Fatalf("code %s made twice in 1000", c)
		}
		seen[c] = true
	}
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"7K3M9QXRT2AB", "7K3M9QXRT2AB", true},
		{"7k3m-9qxr-t2ab", "7K3M9QXRT2AB", true},
		{" 7K3M 9QXR T2AB ", "7K3M9QXRT2AB", true},
		{"7K3MOQXRT2AB", "7K3M0QXRT2AB", true}, // O read as 0
		{"7K3MIQXRT2AL", "7K3M1QXRT2A1", true}, // I and L read as 1
		{"7K3M9QXRT2A", "", false},             // 11 characters
		{"7K3M9QXRT2ABC", "", false},           // 13
		{"7K3M9QXRT2AU", "", false},            // U is not in the alphabet
		{"7K3M9QXRT2A!", "", false},
		{"7K3M9QXRT2AÄ", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, ok := NormalizeCode(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NormalizeCode(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if FormatCode("7K3M9QXRT2AB") != "7K3M-9QXR-T2AB" {
		t.Errorf("FormatCode = %q", FormatCode("7K3M9QXRT2AB"))
	}
}
