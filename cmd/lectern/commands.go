package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/classroom"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/logwriter"
	"github.com/lectern-lms/lectern/internal/server"
	"github.com/lectern-lms/lectern/internal/store"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := serveFlagSet(&cfg, stderr)
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	// The request log is written in batches (at most 100 ms late), not a
	// system call per request: see package logwriter.
	logs := logwriter.New(stderr, 64<<10, 100*time.Millisecond)
	defer logs.Close()
	m := &server.Main{Config: cfg, Logger: newLogger(cfg.LogFormat, logs)}
	return m.Run(ctx)
}

// serveFlagSet is serve's flag set, every flag bound to cfg.
func serveFlagSet(cfg *config.Config, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet("serve", "Run the HTTP server: the LMS API under /api/v1, the classroom API under /v2,\nhealth checks at /healthz and /readyz. Migrates the database first.\nEvery flag can be set in the environment instead: --data-dir is LECTERN_DATA_DIR.", stderr)
	cfg.ServeFlags(fs)
	return fs
}

func newLogger(format string, w io.Writer) *slog.Logger {
	return slog.New(httpx.NewLogHandler(format, w))
}

// openStore opens and migrates the store for an operator command.
func openStore(ctx context.Context, cfg config.Config) (*store.Store, error) {
	st, err := store.Open(ctx, store.Options{DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir})
	if err != nil {
		return nil, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return st, nil
}

// openStoreAndBlobs opens and migrates the store and opens the blob store,
// for the operator commands that move files (recording import, domain
// export and import). The caller closes the store.
func openStoreAndBlobs(ctx context.Context, cfg config.Config) (*store.Store, blob.Store, error) {
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	blobs, err := server.OpenBlobs(ctx, cfg)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, blobs, nil
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("migrate", "Apply every pending database migration and exit. serve does this too.", stderr)
	cfg.StoreFlags(fs)
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Options{DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir})
	if err != nil {
		return err
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	for _, a := range applied {
		fmt.Fprintf(stdout, "applied %s\n", a.Name)
	}
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "database is up to date")
	}
	return nil
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "Print the version of this binary.", stderr)
	if err := parseFlags(func() error { return fs.Parse(args) }); err != nil {
		return err
	}
	v := version
	if info, ok := debug.ReadBuildInfo(); ok && v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	fmt.Fprintln(stdout, "lectern "+v)
	return nil
}

var domainSubcommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"create":        runDomainCreate,
	"list":          runDomainList,
	"rotate-key":    runDomainRotateKey,
	"set-plan":      runDomainSetPlan,
	"set-retention": runDomainSetRetention,
	"set-style":     runDomainSetStyle,
	"set-host":      runDomainSetHost,
	"set-payment":   runDomainSetPayment,
	"export":        runDomainExport,
	"import":        runDomainImport,

	"set-require-purchase": runDomainSetRequirePurchase,
}

func runDomain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "Usage: lectern domain <create|list|rotate-key|set-plan|set-retention|set-style> [flags]\n\nManage domains: one domain is one LMS instance (tenant) with its own")
		fmt.Fprintln(stderr, "users, courses and classes, an LMS API key and a classroom API key.")
		fmt.Fprintln(stderr, "\n  create      create a domain and print its id and both keys (shown only now)")
		fmt.Fprintln(stderr, "  list        list domains")
		fmt.Fprintln(stderr, "  rotate-key  replace a domain's LMS, classroom or certificate issuer key")
		fmt.Fprintln(stderr, "  set-plan    set a domain's classroom plan (free or unlimited)")
		fmt.Fprintln(stderr, "  set-retention  set how many days a domain keeps recordings (0: for ever)")
		fmt.Fprintln(stderr, "  set-style   set a domain's classroom API JSON style (seed, compat or default)")
		fmt.Fprintln(stderr, "  set-host    serve a domain's learner portal on its own host name (learn.school.com)")
		fmt.Fprintln(stderr, "  rotate-key --api sso  make a new secret for the learner portal's JWT entry")
		fmt.Fprintln(stderr, "  set-payment set a domain's payment gateway (test, stripe or none)")
		fmt.Fprintln(stderr, "  set-require-purchase  make a student's launch of a paid class need a purchase (on or off)")
		fmt.Fprintln(stderr, "  export      write a domain's data and files as JSON lines (to move a school)")
		fmt.Fprintln(stderr, "  import      read an export into this server as a new domain")
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	if args[0] == "rotate-key" && rotatesSSO(args[1:]) {
		return runDomainRotateSSO(ctx, args[1:], stdout, stderr)
	}
	sub, ok := domainSubcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "lectern domain: unknown subcommand %q (want create, list, rotate-key, set-plan, set-retention or set-style)\n", args[0])
		return errUsage
	}
	return sub(ctx, args[1:], stdout, stderr)
}

func runDomainCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("domain create", "Create a domain (one LMS instance) and print its id and its two API keys.\nThe keys are shown only now; store them safely.", stderr)
	cfg.StoreFlags(fs)
	name := fs.String("name", "", "the domain's name (required)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	if *name == "" {
		fmt.Fprintln(stderr, "lectern domain create: --name is required")
		return errUsage
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	d, keys, err := st.CreateDomain(ctx, *name)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{
			"domain_id": d.ID, "name": d.Name, "api_key": keys.LMS, "classroom_api_key": keys.Classroom})
	}
	fmt.Fprintf(stdout, "Created domain %d (%s).\n\n", d.ID, d.Name)
	fmt.Fprintf(stdout, "  domain id:          %d\n  LMS API key:        %s\n  classroom API key:  %s\n\n", d.ID, keys.LMS, keys.Classroom)
	fmt.Fprintln(stdout, "The keys are shown only now. LMS API calls send headers")
	fmt.Fprintf(stdout, "  Authorization: %s\n  x-domain-id: %d\n", keys.LMS, d.ID)
	fmt.Fprintln(stdout, "Classroom API calls send apikey="+keys.Classroom)
	return nil
}

func runDomainList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("domain list", "List domains with their ids, names and plans (never their keys).", stderr)
	cfg.StoreFlags(fs)
	asJSON := fs.Bool("json", false, "print a JSON array")
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	ds, err := st.Domains(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]map[string]any, len(ds))
		for i, d := range ds {
			out[i] = map[string]any{"domain_id": d.ID, "name": d.Name, "plan": d.Plan, "created_at": d.CreatedAt}
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPLAN\tCREATED")
	for _, d := range ds {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", d.ID, d.Name, d.Plan, d.CreatedAt.Format("2006-01-02 15:04:05Z"))
	}
	return tw.Flush()
}

func runDomainRotateKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("domain rotate-key", "Replace one of a domain's API keys. The old key stops working at once;\nthe new one is printed only now.", stderr)
	cfg.StoreFlags(fs)
	id := fs.Int64("domain", 0, "the domain id (required)")
	api := fs.String("api", "", "which key: lms, classroom, or issuer (the certificate signing key) (required)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	if *id > 0 && *api == "issuer" {
		return rotateIssuerKey(ctx, cfg, *id, *asJSON, stdout)
	}
	if *id <= 0 || (*api != "lms" && *api != "classroom") {
		fmt.Fprintln(stderr, "lectern domain rotate-key: --domain ID and --api lms|classroom are required")
		return errUsage
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := st.RotateKey(ctx, *id, store.API(*api))
	if err != nil {
		return err
	}
	if *asJSON {
		field := "api_key"
		if *api == "classroom" {
			field = "classroom_api_key"
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"domain_id": *id, "api": *api, field: key})
	}
	fmt.Fprintf(stdout, "New %s key for domain %s: %s\n", *api, strconv.FormatInt(*id, 10), key)
	return nil
}

func runRecording(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "import" {
		fmt.Fprintln(stderr, "Usage: lectern recording import --class ID FILE [--data-dir DIR] [--json]\n\nAdd a recording file (made elsewhere) to a live class; classes also record themselves.\nFlags may come before or after FILE.")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return nil
		}
		return errUsage
	}
	cfg := config.Default()
	fs := newFlagSet("recording import", "Add FILE as a recording of a live class. The file is copied into the data\ndir's blob store and listed by getclassrecording, published (status 1).", stderr)
	cfg.StoreFlags(fs)
	classID := fs.Int64("class", 0, "the live class id (required)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(func() error { return cfg.Parse(fs, flagsFirst(fs, args[1:])) }); err != nil {
		return err
	}
	if *classID <= 0 || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "lectern recording import: --class ID and exactly one FILE are required")
		return errUsage
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	st, blobs, err := openStoreAndBlobs(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	rec, err := classroom.ImportRecording(ctx, st, blobs, *classID, fs.Arg(0), f, time.Now())
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"record_id": rec.ID, "class_id": rec.ClassID, "name": rec.Name, "size": rec.Size})
	}
	fmt.Fprintf(stdout, "Imported recording %d (%s, %d bytes) for class %d.\n", rec.ID, rec.Name, rec.Size, rec.ClassID)
	return nil
}

func runDomainSetRetention(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("domain set-retention", "Set how many days a domain keeps its class recordings. A running server deletes\nolder recordings and their files within the hour. 0 keeps them for ever (the default).", stderr)
	cfg.StoreFlags(fs)
	id := fs.Int64("domain", 0, "the domain's id (required)")
	days := fs.Int("days", -1, "days to keep recordings, 0 for ever (required)")
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	if *id <= 0 || *days < 0 {
		fmt.Fprintln(stderr, "lectern domain set-retention: --domain ID and --days N (0 or more) are required")
		return errUsage
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SetRecordingRetention(ctx, *id, *days); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Domain %d: recordings kept %s.\n", *id, retentionText(*days))
	return nil
}

func retentionText(days int) string {
	if days == 0 {
		return "for ever"
	}
	return fmt.Sprintf("%d days", days)
}

// domainSetting is a domain setting with a fixed set of values that an
// operator command changes.
type domainSetting struct {
	command, flag, help string
	values              []string
	set                 func(ctx context.Context, st *store.Store, domainID int64, value string) error
}

func runDomainSetPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runDomainSetting(ctx, args, stdout, stderr, domainSetting{
		command: "set-plan", flag: "plan", values: lms.PlanNames(),
		help: "Set a domain's classroom plan. free: 1 attendee seat, sittings of at most 30 minutes,\nno recording. unlimited (the default): no limits.",
		set: func(ctx context.Context, st *store.Store, id int64, v string) error {
			return st.SetDomainPlan(ctx, id, v)
		},
	})
}

func runDomainSetStyle(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runDomainSetting(ctx, args, stdout, stderr, domainSetting{
		command: "set-style", flag: "style", values: []string{"seed", "compat", "default"},
		help: "Set a domain's classroom API JSON style: seed (results in one-element arrays), compat\n(bare objects with status ok, as live clients read) or default (the server's --response-style).",
		set: func(ctx context.Context, st *store.Store, id int64, v string) error {
			if v == "default" {
				v = ""
			}
			return st.SetResponseStyle(ctx, id, v)
		},
	})
}

func runDomainSetting(ctx context.Context, args []string, stdout, stderr io.Writer, s domainSetting) error {
	cfg := config.Default()
	fs := newFlagSet("domain "+s.command, s.help, stderr)
	cfg.StoreFlags(fs)
	id := fs.Int64("domain", 0, "the domain's id (required)")
	value := fs.String(s.flag, "", "one of "+strings.Join(s.values, ", ")+" (required)")
	if err := parseFlags(func() error { return cfg.Parse(fs, args) }); err != nil {
		return err
	}
	if *id <= 0 || !slices.Contains(s.values, *value) {
		fmt.Fprintf(stderr, "lectern domain %s: --domain ID and --%s %s are required\n", s.command, s.flag, strings.Join(s.values, "|"))
		return errUsage
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := s.set(ctx, st, *id, *value); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Domain %d: %s set to %s.\n", *id, s.flag, *value)
	return nil
}
