package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/store"
)

// domain rotate-key --api issuer gives the domain a new signing key and
// keeps the old one published (retired).
func TestRotateIssuerKey(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			sargs := storeArgs(t, b)
			code, out, errOut := lectern(t, append([]string{"domain", "create", "--name", "Acme", "--json"}, sargs...)...)
			if code != 0 {
				t.Fatalf("domain create: %d %s", code, errOut)
			}
			var created struct {
				ID int64 `json:"domain_id"`
			}
			json.Unmarshal([]byte(out), &created)
			var kids []string
			for range 2 {
				code, out, errOut = lectern(t, append([]string{"domain", "rotate-key", "--domain", strconv.FormatInt(created.ID, 10), "--api", "issuer", "--json"}, sargs...)...)
				var res struct{ Kid string }
				if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Kid == "" {
					t.Fatalf("rotate-key --api issuer: %d %q %s", code, out, errOut)
				}
				kids = append(kids, res.Kid)
			}
			if kids[0] == kids[1] {
				t.Fatalf("two rotations gave the same key %s", kids[0])
			}
			dataDir := sargs[1]
			if fi, err := os.Stat(filepath.Join(dataDir, "server.secret")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("server.secret: %v (mode %v), want a 0600 file", err, fi)
			}
			url := ""
			if len(sargs) > 2 {
				url = sargs[3]
			}
			st, err := store.Open(context.Background(), store.Options{DatabaseURL: url, DataDir: dataDir})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			keys, err := st.IssuerKeys(context.Background(), created.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 2 || keys[0].KID != kids[1] || !keys[0].RetiredAt.IsZero() || keys[1].RetiredAt.IsZero() {
				t.Errorf("keys after two rotations = %+v, want the second current and the first retired", keys)
			}
		})
	}
}
