package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/lectern-lms/lectern/internal/cert"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/server"
)

// rotateIssuerKey gives a domain a new certificate signing key (domain
// rotate-key --api issuer). The old public key stays published, so
// credentials it signed keep verifying.
func rotateIssuerKey(ctx context.Context, cfg config.Config, domainID int64, asJSON bool, stdout io.Writer) error {
	secret, err := server.LoadSecret(cfg.DataDir)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	k, err := (&cert.Issuer{Store: st, Secret: secret}).RotateKey(ctx, domainID)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"domain_id": domainID, "api": "issuer", "kid": k.KID})
	}
	fmt.Fprintf(stdout, "New issuer key for domain %d: %s (older keys stay in /issuers/%d/jwks.json)\n", domainID, k.KID, domainID)
	return nil
}
