// Command lectern-bench measures a running Lectern server: it seeds one
// domain through the public APIs (users, courses, live classes), then runs
// closed-loop load at C connections against named scenarios, each beside a
// bare net/http handler started in the same process, and prints requests
// per second, p50, p99 and errors as a table and, with -json, as JSON.
//
// It talks only to the addresses it is given (-addr, and -bare-addr when
// set), and every phase is bounded in time. Start the server with
// --rate-limit 0, or the per-key limit is what gets measured:
//
//	lectern domain create --name bench          # prints the keys
//	lectern serve --rate-limit 0 &
//	LECTERN_BENCH_LMS_KEY=lk_... LECTERN_BENCH_CLASSROOM_KEY=ck_... \
//	  lectern-bench -addr http://127.0.0.1:8080 -domain 1 -classes 100000
//
// With -serve-bare ADDR it only serves the bare handlers on ADDR, until
// interrupted, so that another run can compare them in a process of their
// own (-bare-addr and the scenarios bare-get-apart and bare-post-apart)
// with the ones in its own process.
//
// See docs/performance.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "lectern-bench:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	Addr         string
	DomainID     int64
	LMSKey       string
	ClassroomKey string
	Users        int
	Courses      int
	Classes      int
	SeedConns    int
	Conns        int
	Duration     time.Duration
	Rounds       int
	Scenarios    []string
	JSONPath     string
	Progress     bool
	// ServerPID, when set, is the measured server's process id on this
	// machine: each scenario then reports the server's CPU time per request.
	ServerPID int
	// Spread is how many users, courses and classes the point reads cycle
	// over: 1 reads the same record again and again, as the issue's
	// measurements did; more shows what a read costs when the server
	// does not have the record in memory.
	Spread int
	// Slice, when set, runs each scenario in slices of this length, each
	// after a slice of its bare handler, and takes its ratio from those
	// slices: a machine whose speed drifts within a run then moves both
	// sides of the ratio alike.
	Slice time.Duration
	// BareAddr is the base URL of bare handlers served by another process
	// (lectern-bench -serve-bare), for the -apart scenarios.
	BareAddr string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lectern-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var scen string
	fs.StringVar(&c.Addr, "addr", "http://127.0.0.1:8080", "base URL of the Lectern server to measure (the only address contacted, besides -bare-addr)")
	fs.Int64Var(&c.DomainID, "domain", 0, "domain id the keys belong to")
	fs.StringVar(&c.LMSKey, "lms-key", os.Getenv("LECTERN_BENCH_LMS_KEY"), "LMS API key (env LECTERN_BENCH_LMS_KEY; prefer the environment)")
	fs.StringVar(&c.ClassroomKey, "classroom-key", os.Getenv("LECTERN_BENCH_CLASSROOM_KEY"), "classroom API key (env LECTERN_BENCH_CLASSROOM_KEY)")
	fs.IntVar(&c.Users, "users", 1000, "users the domain should hold before the load (missing ones are created)")
	fs.IntVar(&c.Courses, "courses", 1000, "courses the domain should hold before the load")
	fs.IntVar(&c.Classes, "classes", 10000, "live classes the domain should hold before the load")
	fs.IntVar(&c.SeedConns, "seed-c", 8, "connections used while seeding")
	fs.IntVar(&c.Conns, "c", 32, "connections (closed loop: each sends its next request when the last is answered)")
	fs.DurationVar(&c.Duration, "d", 5*time.Second, "how long each scenario runs in each round")
	fs.IntVar(&c.Rounds, "rounds", 3, "rounds; the scenarios are interleaved in each, and the median rate is reported")
	fs.StringVar(&scen, "scenarios", strings.Join(defaultScenarios, ","), "comma-separated scenarios to run, or 'all' (this default list); "+strings.Join(floorScenarios, ", ")+" run only when named")
	fs.StringVar(&c.JSONPath, "json", "", "also write the results as JSON to this file ('-' for standard output)")
	fs.BoolVar(&c.Progress, "progress", true, "show a progress bar while seeding")
	fs.IntVar(&c.Spread, "spread", 1, "users, courses and classes the point reads (getuser, courses/get, getclass) cycle over; 1 reads one record of each again and again")
	fs.IntVar(&c.ServerPID, "server-pid", 0, "process id of the server when it runs on this machine (Linux): report its CPU time per request, steadier than req/s on a shared machine")
	fs.StringVar(&c.BareAddr, "bare-addr", "", "base URL of the bare handlers of another process (lectern-bench -serve-bare), for the scenarios bare-get-apart and bare-post-apart")
	serveBareAddr := fs.String("serve-bare", "", "only serve the bare handlers on this host:port until interrupted, for another run's -bare-addr")
	fs.DurationVar(&c.Slice, "slice", 0, "run each scenario in slices of this length, each after a slice of its bare handler, and compare it with those (steadier ratios on a machine whose speed drifts); 0 compares with the bare runs at the start of each round")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *serveBareAddr != "" {
		return serveBare(ctx, *serveBareAddr, stderr)
	}
	if err := c.check(); err != nil {
		return err
	}
	if scen == "all" {
		scen = strings.Join(defaultScenarios, ",")
	}
	for _, s := range strings.Split(scen, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		sc, ok := scenarioByName(s)
		if !ok {
			return fmt.Errorf("-scenarios: unknown scenario %q (known: %s)", s, strings.Join(slices.Concat(defaultScenarios, floorScenarios), ", "))
		}
		if sc.apart() && c.BareAddr == "" {
			return fmt.Errorf("-scenarios: %s needs -bare-addr, the bare handlers of another process (lectern-bench -serve-bare)", s)
		}
		c.Scenarios = append(c.Scenarios, s)
	}
	if len(c.Scenarios) == 0 {
		return errors.New("-scenarios: name at least one scenario")
	}

	cl := newClient(c.Addr, c.Conns)
	seedStart := time.Now()
	fix, err := seed(ctx, cl, c, stderr)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	fmt.Fprintf(stderr, "seeded in %s: %d users, %d courses, %d classes\n", time.Since(seedStart).Round(time.Millisecond), fix.Users, fix.Courses, fix.Classes)

	rep, err := measure(ctx, cl, c, fix, stderr)
	if err != nil {
		return err
	}
	printTable(stdout, rep)
	if c.JSONPath != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		b = append(b, '\n')
		if c.JSONPath == "-" {
			_, err = stdout.Write(b)
		} else {
			err = os.WriteFile(c.JSONPath, b, 0o644)
		}
		if err != nil {
			return fmt.Errorf("-json: %w", err)
		}
	}
	return nil
}

func (c *config) check() error {
	u, err := url.Parse(c.Addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-addr: want a base URL such as http://127.0.0.1:8080, got %q", c.Addr)
	}
	c.Addr = strings.TrimRight(c.Addr, "/")
	if c.BareAddr != "" {
		u, err := url.Parse(c.BareAddr)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return fmt.Errorf("-bare-addr: want a base URL such as http://127.0.0.1:8090, got %q", c.BareAddr)
		}
		c.BareAddr = strings.TrimRight(c.BareAddr, "/")
	}
	switch {
	case c.DomainID <= 0:
		return errors.New("-domain: give the id of the domain the keys belong to (lectern domain create prints it)")
	case c.LMSKey == "":
		return errors.New("-lms-key: missing (or set LECTERN_BENCH_LMS_KEY)")
	case c.ClassroomKey == "":
		return errors.New("-classroom-key: missing (or set LECTERN_BENCH_CLASSROOM_KEY)")
	case c.Users < 1 || c.Courses < 1 || c.Classes < 20:
		return errors.New("-users and -courses must be at least 1, -classes at least 20")
	case c.Conns < 1 || c.SeedConns < 1:
		return errors.New("-c and -seed-c must be at least 1")
	case c.Duration <= 0:
		return errors.New("-d must be positive")
	case c.Rounds < 1:
		return errors.New("-rounds must be at least 1")
	case c.Slice < 0 || c.Slice > c.Duration:
		return errors.New("-slice must be between 0 (off) and -d")
	case c.ServerPID < 0:
		return errors.New("-server-pid must be a process id")
	case c.Spread < 1 || c.Spread > min(c.Users, c.Courses, c.Classes):
		return errors.New("-spread must be at least 1 and at most each of -users, -courses and -classes")
	}
	if c.ServerPID > 0 {
		if _, err := processCPU(c.ServerPID); err != nil {
			return fmt.Errorf("-server-pid: %w", err)
		}
	}
	return nil
}
