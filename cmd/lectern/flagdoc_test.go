package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/config"
)

// envName is the environment variable config.Parse reads for a flag.
func envName(flagName string) string {
	return "LECTERN_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// TestServeFlagsDocumented fails when a flag of serve is missing from
// `lectern serve --help` (with its environment variable) or from the
// README's settings table (with its environment variable), and when the
// table names a flag serve does not have.
func TestServeFlagsDocumented(t *testing.T) {
	cfg := config.Default()
	fs := serveFlagSet(&cfg, io.Discard)
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	if len(flags) < 20 {
		t.Fatalf("serve has %d flags; the flag set was not built", len(flags))
	}

	code, _, help := lectern(t, "serve", "--help")
	if code != 0 {
		t.Fatalf("serve --help: exit %d", code)
	}
	for _, f := range flags {
		line := regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f.Name) + `\b(.*)\n((?:    .*\n)*)`).FindString(help)
		if line == "" {
			t.Errorf("serve --help does not list --%s", f.Name)
		} else if !strings.Contains(line, "(env "+envName(f.Name)+")") {
			t.Errorf("serve --help does not name %s for --%s:\n%s", envName(f.Name), f.Name, line)
		}
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Configure\n")
	if !ok {
		t.Fatal("README has no ## Configure section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{} // flag name -> its table row
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`--([a-z0-9-]+)`").FindAllStringSubmatch(first, -1) {
			rows[m[1]] = line
		}
	}
	for _, f := range flags {
		row, ok := rows[f.Name]
		if !ok {
			t.Errorf("README's settings table has no row for --%s", f.Name)
			continue
		}
		if !strings.Contains(row, "`"+envName(f.Name)+"`") {
			t.Errorf("README's row for --%s does not name %s", f.Name, envName(f.Name))
		}
		delete(rows, f.Name)
	}
	for name := range rows {
		t.Errorf("README's settings table lists --%s, which serve does not have", name)
	}
}
