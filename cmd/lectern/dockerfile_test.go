package main

import (
	"debug/elf"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/config"
)

// dockerInstructions reads the Dockerfile at path as its instructions,
// continuation lines joined and comments dropped: each is the keyword
// (upper case) and its arguments.
func dockerInstructions(t *testing.T, path string) [][2]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		if rest, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(rest + " ")
			continue
		}
		cur.WriteString(trimmed)
		keyword, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, [2]string{strings.ToUpper(keyword), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// TestDockerfile checks what can be checked of the image without a
// container engine (none runs where the tests run): a multi-stage build
// whose build command, run here as written, gives a static binary that
// starts; a final stage that runs as a non-root user with /data as its
// volume and data dir; a health check on a route the server answers; and
// only settings `serve` knows in its environment.
func TestDockerfile(t *testing.T) {
	ins := dockerInstructions(t, "../../Dockerfile")
	var stages, finalStage int
	var build string
	for i, in := range ins {
		switch in[0] {
		case "FROM":
			stages++
			finalStage = i
		case "RUN":
			if strings.Contains(in[1], "go build") {
				build = in[1]
			}
		}
	}
	if stages < 2 {
		t.Fatalf("%d FROM stages; want a build stage and a small final stage", stages)
	}
	final := map[string][]string{}
	for _, in := range ins[finalStage:] {
		final[in[0]] = append(final[in[0]], in[1])
	}

	// The final stage: a numeric or named user that is not root, created
	// with a uid above the system range.
	users := final["USER"]
	if len(users) != 1 || strings.HasPrefix(users[0], "root") || strings.HasPrefix(users[0], "0") {
		t.Errorf("final stage USER %q; want one non-root user", users)
	}
	if m := regexp.MustCompile(`adduser .*-u (\d+)`).FindStringSubmatch(strings.Join(final["RUN"], " ")); m == nil {
		t.Errorf("final stage creates no user with a fixed uid")
	} else if uid, _ := strconv.Atoi(m[1]); uid < 1000 {
		t.Errorf("the image's user has uid %d; want one outside the system range", uid)
	}
	if v := final["VOLUME"]; len(v) != 1 || v[0] != `["/data"]` {
		t.Errorf("final stage VOLUME %q; want [\"/data\"]", v)
	}
	env := strings.Join(final["ENV"], " ")
	if !strings.Contains(env, "LECTERN_DATA_DIR=/data") {
		t.Errorf("final stage ENV %q does not put the data dir on the volume", env)
	}
	cfg := config.Default()
	known := map[string]bool{}
	serveFlagSet(&cfg, io.Discard).VisitAll(func(f *flag.Flag) { known[envName(f.Name)] = true })
	for _, m := range regexp.MustCompile(`(LECTERN_[A-Z0-9_]+)=`).FindAllStringSubmatch(env, -1) {
		if !known[m[1]] {
			t.Errorf("the image sets %s, which serve does not read", m[1])
		}
	}
	hc := strings.Join(final["HEALTHCHECK"], " ")
	if !strings.Contains(hc, "http://127.0.0.1:8080/healthz") || !strings.Contains(env, "LECTERN_ADDR=:8080") {
		t.Errorf("HEALTHCHECK %q does not ask /healthz on the address the image listens on (ENV %q)", hc, env)
	}
	if e := final["ENTRYPOINT"]; len(e) != 1 || e[0] != `["lectern"]` {
		t.Errorf("ENTRYPOINT %q", e)
	}

	// The build stage's command, run from the module root as the image
	// runs it (VERSION as a build argument), must give a static binary.
	if !strings.HasPrefix(build, "CGO_ENABLED=0 go build ") {
		t.Fatalf("build command %q; want CGO_ENABLED=0 go build", build)
	}
	out := filepath.Join(t.TempDir(), "lectern")
	cmdline := strings.ReplaceAll(build, "${VERSION}", "docker-test")
	cmdline = strings.Replace(cmdline, "-o /out/lectern", "-o "+out, 1)
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the image's binary is dynamically linked (it has an interpreter); the final stage has no C library for it")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the image's binary needs %v", libs)
	}
	b, err := exec.Command(out, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(b), "docker-test") {
		t.Errorf("lectern version: %v %q; want the VERSION build argument", err, b)
	}
}
