package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/server"
	"github.com/lectern-lms/lectern/internal/store"
)

func TestDomainSetHostAndRotateSSO(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			sargs := storeArgs(t, b)
			code, out, errOut := lectern(t, append([]string{"domain", "create", "--name", "School", "--json"}, sargs...)...)
			if code != 0 {
				t.Fatalf("create: %d %s %s", code, out, errOut)
			}
			var created struct {
				ID int64 `json:"domain_id"`
			}
			json.Unmarshal([]byte(out), &created)
			id := strconv.FormatInt(created.ID, 10)

			code, out, errOut = lectern(t, append([]string{"domain", "set-host", "--domain", id, "--host", "Learn.School.com"}, sargs...)...)
			if code != 0 || !strings.Contains(out, "learn.school.com") {
				t.Fatalf("set-host: %d %q %q", code, out, errOut)
			}
			code, _, errOut = lectern(t, append([]string{"domain", "set-host", "--domain", id, "--host", "https://learn.school.com"}, sargs...)...)
			if code == 0 || !strings.Contains(errOut, "--host must be a host name only") {
				t.Errorf("set-host with a URL: %d %q", code, errOut)
			}

			code, out, errOut = lectern(t, append([]string{"domain", "rotate-key", "--domain", id, "--api", "sso", "--json"}, sargs...)...)
			var first map[string]any
			if code != 0 || json.Unmarshal([]byte(out), &first) != nil || !strings.HasPrefix(first["sso_secret"].(string), "lss_") {
				t.Fatalf("rotate-key --api sso: %d %q %q", code, out, errOut)
			}
			code, out, errOut = lectern(t, append([]string{"domain", "rotate-key", "--domain", id, "--api=sso", "--grace", "1h", "--end-sessions"}, sargs...)...)
			if code != 0 || !strings.Contains(out, "secret:  lss_") || !strings.Contains(out, "Learner sessions ended: 0") {
				t.Fatalf("rotate-key --api=sso: %d %q %q", code, out, errOut)
			}
			// Both secrets are valid now: the new one and, for the grace
			// period, the first.
			cfgURL := ""
			dataDir := sargs[1]
			if len(sargs) > 2 {
				cfgURL = sargs[3]
			}
			st, err := store.Open(context.Background(), store.Options{DatabaseURL: cfgURL, DataDir: dataDir})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			secret, err := server.LoadSecret(dataDir)
			if err != nil {
				t.Fatal(err)
			}
			keys, err := st.SSOKeys(context.Background(), created.ID, secret, time.Now())
			if err != nil || len(keys) != 2 || keys[1].Secret != first["sso_secret"] || keys[1].Kid != first["kid"] || !strings.Contains(out, keys[0].Secret) {
				t.Errorf("keys after two rotations: %+v %v", keys, err)
			}
		})
	}
}

func TestSigninHelpAndUsage(t *testing.T) {
	for _, args := range [][]string{{"domain", "set-host", "--help"}, {"domain", "rotate-key", "--api", "sso", "--help"}} {
		code, _, errOut := lectern(t, args...)
		if code != 0 || len(errOut) < 40 {
			t.Errorf("%v: exit %d, help %q", args, code, errOut)
		}
	}
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"domain", "set-host", "--data-dir", dir, "--domain", "1"}, "--host NAME are required"},
		{[]string{"domain", "set-host", "--data-dir", dir, "--domain", "1", "--host", "localhost"}, "at least two labels"},
		{[]string{"domain", "rotate-key", "--data-dir", dir, "--api", "sso"}, "--domain ID is required"},
		{[]string{"domain", "rotate-key", "--data-dir", dir, "--api", "sso", "--domain", "1", "--grace", "-1h"}, "--grace must be"},
	} {
		code, _, errOut := lectern(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to contain %q", c.args, code, errOut, c.want)
		}
	}
}
