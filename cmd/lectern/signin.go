package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/server"
)

// rotatesSSO reports whether a rotate-key command line names --api sso
// (the learner portal's JWT secret, handled by runDomainRotateSSO).
func rotatesSSO(args []string) bool {
	for i, a := range args {
		if a == "--api=sso" || a == "-api=sso" {
			return true
		}
		if (a == "--api" || a == "-api") && i+1 < len(args) && args[i+1] == "sso" {
			return true
		}
	}
	return false
}

func runDomainRotateSSO(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("domain rotate-key --api sso", "Make a new secret for the learner portal's JWT entry (HS256) and print it, with\nits key id (kid), only now. The previous secret keeps working for --grace so the\nschool's site can switch; older ones stop at once. Unused login links are revoked.", stderr)
	cfg.StoreFlags(fs)
	id := fs.Int64("domain", 0, "the domain id (required)")
	fs.String("api", "sso", "sso")
	grace := fs.Duration("grace", 24*time.Hour, "how long the previous secret stays valid (0: it stops now)")
	endSessions := fs.Bool("end-sessions", false, "also end every learner session of the domain")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	if *id <= 0 || *grace < 0 || *grace > 30*24*time.Hour {
		fmt.Fprintln(stderr, "lectern domain rotate-key: --domain ID is required and --grace must be between 0 and 720h")
		return errUsage
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	secret, err := server.LoadSecret(cfg.DataDir)
	if err != nil {
		return err
	}
	now := time.Now()
	key, err := st.RotateSSOKey(ctx, *id, secret, *grace, now)
	if err != nil {
		return err
	}
	links, err := st.RevokeLoginLinks(ctx, *id)
	if err != nil {
		return err
	}
	var sessions int64
	if *endSessions {
		if sessions, err = st.EndLearnSessions(ctx, *id, 0); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"domain_id": *id, "api": "sso", "kid": key.Kid, "sso_secret": key.Secret,
			"previous_valid_until": now.Add(*grace).UTC().Format(time.RFC3339), "login_links_revoked": links, "sessions_ended": sessions})
	}
	fmt.Fprintf(stdout, "New SSO secret for domain %d (shown only now):\n\n  kid:     %s\n  secret:  %s\n\n", *id, key.Kid, key.Secret)
	fmt.Fprintln(stdout, "Sign JWT entries with HS256, this secret as the key and \"kid\": \""+key.Kid+"\" in the header.")
	if *grace > 0 {
		fmt.Fprintf(stdout, "The previous secret (if any) works until %s.\n", now.Add(*grace).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(stdout, "Unused login links revoked: %d.", links)
	if *endSessions {
		fmt.Fprintf(stdout, " Learner sessions ended: %d.", sessions)
	}
	fmt.Fprintln(stdout)
	return nil
}

func runDomainSetHost(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("domain set-host", "Serve a domain's learner portal on its own host name, such as learn.school.com\n(a CNAME to this server; TLS for it is the proxy's job). The portal then lives\nat / on that host, with the public URL's scheme and port, and login links use it.\n--host \"\" removes it (the portal stays at /{domain_id}/learn).", stderr)
	cfg.StoreFlags(fs)
	id := fs.Int64("domain", 0, "the domain id (required)")
	host := fs.String("host", "\x00", "the host name, such as learn.school.com; \"\" to remove (required)")
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	if *id <= 0 || *host == "\x00" {
		fmt.Fprintln(stderr, "lectern domain set-host: --domain ID and --host NAME are required")
		return errUsage
	}
	h, why := lms.PortalHost(*host)
	if why != "" {
		fmt.Fprintf(stderr, "lectern domain set-host: --host %s\n", why)
		return errUsage
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SetLearnHost(ctx, *id, h); err != nil {
		return err
	}
	if h == "" {
		fmt.Fprintf(stdout, "Domain %d: portal host removed; the portal is at /%d/learn on the public URL.\n", *id, *id)
		return nil
	}
	fmt.Fprintf(stdout, "Domain %d: learner portal host set to %s.\n", *id, h)
	return nil
}
