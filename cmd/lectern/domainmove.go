package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/domainfile"
)

func runDomainExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("domain export", "Write one domain's data (every row of every table that holds domain data, and\nthe files its rows name) as JSON lines, to move the school to another server\nwith lectern domain import. See docs/ops/backup.md.", stderr)
	cfg.StoreFlags(fs)
	id := fs.Int64("domain", 0, "the domain id (required)")
	to := fs.String("to", "", "the file to write (must not exist); default standard output")
	if err := parseFlags(func() error { return cfg.Parse(fs, flagsFirst(fs, args)) }); err != nil {
		return err
	}
	if *id <= 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "lectern domain export: --domain ID is required")
		return errUsage
	}
	st, blobs, err := openStoreAndBlobs(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if *to == "" {
		_, err := domainfile.Export(ctx, st, blobs, *id, version, stdout)
		return err
	}
	if _, err := os.Lstat(*to); err == nil {
		return fmt.Errorf("%s already exists", *to)
	}
	f, err := os.CreateTemp(filepath.Dir(*to), "."+filepath.Base(*to)+".partial-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	sum, err := domainfile.Export(ctx, st, blobs, *id, version, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(f.Name(), *to); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Exported domain %d to %s: %d rows in %d tables, %d files.\n", *id, *to, sum.Rows, len(sum.Tables), sum.Blobs)
	return nil
}

func runDomainImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	fs := newFlagSet("domain import", "Read a file written by lectern domain export into this server as a new domain:\nnew ids for every row, every reference remapped, the files copied into the blob\nstore. The domain's API keys keep working unless this server already has them\n(then new keys are printed). The whole file is checked before anything is written.", stderr)
	cfg.StoreFlags(fs)
	from := fs.String("from", "", "the export file (required)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(func() error { return cfg.Parse(fs, flagsFirst(fs, args)) }); err != nil {
		return err
	}
	if *from == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "lectern domain import: --from FILE is required")
		return errUsage
	}
	f, err := os.Open(*from)
	if err != nil {
		return err
	}
	defer f.Close()
	st, blobs, err := openStoreAndBlobs(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	res, sum, err := domainfile.Import(ctx, st, blobs, f)
	if err != nil {
		return err
	}
	if *asJSON {
		out := map[string]any{"domain_id": res.DomainID, "from_domain_id": sum.Header.DomainID, "rows": res.Rows, "files": sum.Blobs,
			"dangling_references": res.Dangling, "learn_host_cleared": res.LearnHostCleared}
		if res.NewKeys.LMS != "" {
			out["api_key"], out["classroom_api_key"] = res.NewKeys.LMS, res.NewKeys.Classroom
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "Imported domain %d of the export as domain %d: %d rows, %d files.\n", sum.Header.DomainID, res.DomainID, res.Rows, sum.Blobs)
	if res.NewKeys.LMS != "" {
		fmt.Fprintf(stdout, "This server already had the domain's API keys; new keys (shown only now):\n  LMS API key:        %s\n  classroom API key:  %s\n", res.NewKeys.LMS, res.NewKeys.Classroom)
	} else {
		fmt.Fprintln(stdout, "The domain's API keys came along and work here.")
	}
	if res.LearnHostCleared {
		fmt.Fprintln(stdout, "The learner portal's host name is used by another domain here and was cleared (lectern domain set-host).")
	}
	if res.Dangling > 0 {
		fmt.Fprintf(stdout, "%d references named rows that were not in the export (deleted before it) and were set to none.\n", res.Dangling)
	}
	return nil
}
