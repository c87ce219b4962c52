// Command lectern is a self-hostable LMS and live virtual classroom server.
//
//	lectern serve                      run the server
//	lectern migrate                    apply database migrations
//	lectern domain create --name NAME  create a tenant and print its keys
//	lectern domain list                list tenants
//	lectern domain rotate-key ...      replace one of a tenant's keys
//	lectern recording import ...       add a recording file to a class
//	lectern backup --to FILE           back up a SQLite install while it serves
//	lectern restore --from FILE        put a backup back into a data dir
//	lectern version                    print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/lectern-lms/lectern/internal/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP server (both APIs)", runServe},
		{"migrate", "apply pending database migrations and exit", runMigrate},
		{"domain", "manage domains (tenants): create, list, rotate-key, set-plan, set-style", runDomain},
		{"recording", "import a recording file for a live class", runRecording},
		{"blob", "copy the blobs folder to an S3-compatible store: migrate", runBlob},
		{"backup", "write a backup archive of a SQLite install while it serves", runBackup},
		{"restore", "put a backup archive back into a data dir", runRestore},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, args[1:], stdout, stderr)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				return 2
			}
			fmt.Fprintln(stderr, "lectern "+args[0]+": "+err.Error())
			return 1
		}
	}
	fmt.Fprintf(stderr, "lectern: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// errUsage means the flag package already printed what was wrong.
var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprintln(w, "Lectern: a self-hostable LMS and live virtual classroom server.")
	fmt.Fprintln(w, "\nUsage: lectern <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'lectern <command> --help' for a command's flags. Every flag can also be set")
	fmt.Fprintln(w, "in the environment: --data-dir is LECTERN_DATA_DIR, and so on.")
}

// newFlagSet returns a flag set whose usage names the command and what it
// does.
func newFlagSet(name, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("lectern "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: lectern %s [flags]\n\n%s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses and maps flag errors to errUsage (already printed).
func parseFlags(parse func() error) error {
	err := parse()
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.Is(err, config.ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}
