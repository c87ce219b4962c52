package apitest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestPostgresURL(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]string
		url       string
		fatal     bool
		reasonHas string
	}{
		{name: "set", env: map[string]string{EnvDatabaseURL: "postgres://h/db"}, url: "postgres://h/db"},
		{name: "set under CI", env: map[string]string{EnvDatabaseURL: "postgres://h/db", "CI": "1"}, url: "postgres://h/db"},
		{name: "unset", env: map[string]string{}, reasonHas: "PostgreSQL run skipped"},
		{name: "unset under CI", env: map[string]string{"CI": "1"}, fatal: true, reasonHas: "CI must run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, why, fatal := postgresURL(func(k string) string { return tc.env[k] })
			if u != tc.url || fatal != tc.fatal || !strings.Contains(why, tc.reasonHas) {
				t.Errorf("postgresURL = %q, %q, %v; want %q, fatal %v, a reason with %q", u, why, fatal, tc.url, tc.fatal, tc.reasonHas)
			}
			if (u == "") == (why == "") {
				t.Errorf("exactly one of url and reason must be set: %q, %q", u, why)
			}
		})
	}
}

// TestHelperBackends, TestHelperPostgres and BenchmarkHelperBackends do
// nothing unless TestBackendsReport runs them in a child process.
func TestHelperBackends(t *testing.T) {
	if os.Getenv("APITEST_HELPER") == "" {
		return
	}
	var names []string
	for _, b := range Backends(t) {
		names = append(names, b.Name)
	}
	t.Logf("backends: %s", strings.Join(names, ","))
}

func TestHelperPostgres(t *testing.T) {
	if os.Getenv("APITEST_HELPER") == "" {
		return
	}
	t.Logf("backend: %s", Postgres(t).Name)
}

func BenchmarkHelperBackends(b *testing.B) {
	if os.Getenv("APITEST_HELPER") == "" {
		return
	}
	for _, be := range Backends(b) {
		b.Run(be.Name, func(b *testing.B) {})
	}
}

// TestBackendsReport runs the helpers above as go test -v would and checks
// what a developer sees: a counted SKIP with its reason without a database,
// a failure under CI, and the PostgreSQL run when the URL is set.
func TestBackendsReport(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		env    []string
		fail   bool
		output []string
	}{
		{name: "Backends without a URL", args: []string{"-test.run=^TestHelperBackends$"},
			output: []string{"--- SKIP: TestHelperBackends/postgres", "PostgreSQL run skipped", "backends: sqlite\n"}},
		{name: "Backends under CI", args: []string{"-test.run=^TestHelperBackends$"}, env: []string{"CI=1"}, fail: true,
			output: []string{"--- FAIL: TestHelperBackends", "CI must run the PostgreSQL tests"}},
		{name: "Backends with a URL", args: []string{"-test.run=^TestHelperBackends$"}, env: []string{EnvDatabaseURL + "=postgres://h/db"},
			output: []string{"backends: sqlite,postgres"}},
		{name: "Postgres without a URL", args: []string{"-test.run=^TestHelperPostgres$"},
			output: []string{"--- SKIP: TestHelperPostgres", "PostgreSQL run skipped"}},
		{name: "Postgres under CI", args: []string{"-test.run=^TestHelperPostgres$"}, env: []string{"CI=1"}, fail: true,
			output: []string{"--- FAIL: TestHelperPostgres", "CI must run the PostgreSQL tests"}},
		{name: "Postgres with a URL", args: []string{"-test.run=^TestHelperPostgres$"}, env: []string{EnvDatabaseURL + "=postgres://h/db"},
			output: []string{"backend: postgres"}},
		{name: "benchmark without a URL", args: []string{"-test.run=^$", "-test.bench=^BenchmarkHelperBackends$", "-test.benchtime=1x"},
			output: []string{"--- SKIP: BenchmarkHelperBackends/postgres", "PostgreSQL run skipped"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"-test.v", "-test.count=1"}, tc.args...)...)
			cmd.Env = append(os.Environ(), "APITEST_HELPER=1", EnvDatabaseURL+"=", "CI=")
			cmd.Env = append(cmd.Env, tc.env...)
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != tc.fail {
				t.Fatalf("child failed = %v (%v), want %v:\n%s", failed, err, tc.fail, out)
			}
			for _, want := range tc.output {
				if !strings.Contains(string(out), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
