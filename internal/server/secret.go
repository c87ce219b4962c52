package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SecretFile is the name, in the data dir, of the server secret: 32
// random bytes in hex, made on first start. Keys that must not live in the
// database (the seal of certificate issuer keys) are derived from it, so a
// copy of the database alone opens nothing. Processes that share one
// PostgreSQL database must share this file too.
const SecretFile = "server.secret"

// LoadSecret reads the server secret from the data dir, creating it (mode
// 0600) the first time.
func LoadSecret(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, SecretFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dataDir, 0o750); err != nil {
			return nil, fmt.Errorf("server secret: %w", err)
		}
		secret := make([]byte, 32)
		rand.Read(secret)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return LoadSecret(dataDir) // another process made it first
		}
		if err != nil {
			return nil, fmt.Errorf("server secret: %w", err)
		}
		_, werr := f.WriteString(hex.EncodeToString(secret) + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("server secret: write %s: %w", path, werr)
		}
		return secret, nil
	}
	if err != nil {
		return nil, fmt.Errorf("server secret: %w", err)
	}
	secret, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(secret) < 16 {
		return nil, fmt.Errorf("server secret: %s must hold at least 32 hex digits", path)
	}
	return secret, nil
}
