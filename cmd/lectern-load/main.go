// Command lectern-load measures the live classroom's media forwarding: one
// teacher publishing video and audio to N students in one room, for each N
// of a list. For every N it starts a fresh Lectern server on loopback (the
// binary given by -bin, with an empty data directory), creates a domain,
// runs the load test of package loadtest against it with synthetic pion
// participants, prints a row of a Markdown table, and stops the server.
//
// Usage:
//
//	go build -o /tmp/lectern ./cmd/lectern
//	go run ./cmd/lectern-load -bin /tmp/lectern -students 10,50,100,200 -duration 20s
//
// The server and the clients share the machine; the table shows the CPU of
// both and of the whole machine so that a reader can tell them apart. The
// command needs Linux (it reads /proc).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lectern-lms/lectern/internal/loadtest"
)

// Timeouts around the server.
const (
	startTimeout  = 20 * time.Second // until /healthz answers
	domainTimeout = 30 * time.Second // lectern domain create
	stopTimeout   = 20 * time.Second // after SIGTERM, before SIGKILL
	pause         = 3 * time.Second  // between two runs, for the machine to settle
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		switch {
		case errors.Is(err, flag.ErrHelp):
		case ctx.Err() != nil:
			fmt.Fprintln(os.Stderr, "lectern-load: interrupted; the server is stopped and its data removed")
		default:
			fmt.Fprintln(os.Stderr, "lectern-load:", err)
		}
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lectern-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "./lectern", "path of the lectern binary to start")
	list := fs.String("students", "10,50,100,200", "comma-separated numbers of students, one run each")
	duration := fs.Duration("duration", 20*time.Second, "measurement window of each run")
	warmup := fs.Duration("warmup", 5*time.Second, "pause between the students' joining and the window")
	joinTimeout := fs.Duration("join-timeout", 0, "how long students may take to join and receive media; 0: 30s + 250ms per student")
	kbps := fs.Int("video-kbps", 1000, "teacher's camera bitrate, kbit/s")
	fps := fs.Int("fps", 30, "teacher's camera frame rate")
	verbose := fs.Bool("v", false, "log debug messages (pion's included)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: lectern-load [flags]\n\nOne teacher publishing video and audio to N students in one room, for each N;\neach run against a fresh `lectern serve` on loopback. Prints a Markdown table.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var counts []int
	for _, s := range strings.Split(*list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-students: %q is not a positive number", s)
		}
		counts = append(counts, n)
	}
	path, err := exec.LookPath(*bin)
	if err != nil {
		return fmt.Errorf("-bin: %w", err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return err
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	o := loadtest.Options{Duration: *duration, Warmup: *warmup, JoinTimeout: *joinTimeout, VideoKbps: *kbps, FPS: *fps, Logger: logger}
	fmt.Fprintf(stdout, "Camera %d kbit/s at %d fps, microphone Opus 32 kbit/s (20 ms); window %v after %v of warm-up; %d CPUs.\n\n",
		*kbps, *fps, *duration, *warmup, runtime.NumCPU())
	fmt.Fprintln(stdout, header)
	for i, n := range counts {
		if i > 0 {
			if err := sleepCtx(ctx, pause); err != nil {
				return err
			}
		}
		o.Students = n
		res, err := runOne(ctx, path, o, logger)
		if err != nil {
			return fmt.Errorf("%d students: %w", n, err)
		}
		fmt.Fprintln(stdout, row(res))
		if res.JoinErrors > 0 {
			fmt.Fprintf(stderr, "%d students: %d could not join; first error: %s\n", n, res.JoinErrors, res.FirstError)
		}
	}
	return nil
}

const header = `| Students | Joined / receiving | Join time | Video pkt/s: sent / mean / min | Video loss: mean / worst | Audio pkt/s: sent / mean / min | Audio loss: mean / worst | Behind (ms): video mean / worst, audio mean / worst | Server CPU (cores) | Server CPU per packet out (µs) | Server RSS / peak (MiB) | Tool CPU (cores) | Machine busy (cores) | Other processes (cores) |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`

func row(r loadtest.Result) string {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	return fmt.Sprintf("| %d | %d / %d | %.1f s | %.0f / %.0f / %.0f | %.2f %% / %.2f %% | %.0f / %.0f / %.0f | %.2f %% / %.2f %% | %d / %d, %d / %d | %.2f | %.1f | %.0f / %.0f | %.2f | %.2f of %d | %.2f |",
		r.Students, r.Joined, r.Connected, r.JoinTime.Seconds(),
		r.Video.SentPerSec, r.Video.MeanPerSec, r.Video.MinPerSec, r.Video.MeanLoss, r.Video.WorstLoss,
		r.Audio.SentPerSec, r.Audio.MeanPerSec, r.Audio.MinPerSec, r.Audio.MeanLoss, r.Audio.WorstLoss,
		ms(r.Video.MeanBehind), ms(r.Video.WorstBehind), ms(r.Audio.MeanBehind), ms(r.Audio.WorstBehind),
		r.Server.CPU, perPacket(r), r.Server.RSSMiB, r.Server.PeakRSSMiB, r.Tool.CPU, r.MachineCPU, r.CPUs, max(0, r.MachineCPU-r.Server.CPU-r.Tool.CPU))
}

// perPacket is the server's CPU time per RTP packet that reached a
// student, in microseconds: a cost that does not depend on how many
// packets the server managed to send.
func perPacket(r loadtest.Result) float64 {
	out := float64(r.Joined) * (r.Video.MeanPerSec + r.Audio.MeanPerSec)
	if out == 0 {
		return 0
	}
	return r.Server.CPU / out * 1e6
}

// runOne starts a fresh server, runs the load test against it and stops
// it; the data directory is removed afterwards.
func runOne(ctx context.Context, bin string, o loadtest.Options, logger *slog.Logger) (res loadtest.Result, err error) {
	dir, err := os.MkdirTemp("", "lectern-load-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return res, err
	}
	defer logFile.Close()
	defer func() {
		if err != nil && ctx.Err() == nil {
			tail(logger, logPath)
		}
	}()

	addr, err := freeAddr()
	if err != nil {
		return res, err
	}
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data-dir", dir, "--rtc-udp-port", "0", "--turn-port", "0")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return res, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer stopServer(cmd, exited, logger)

	base := "http://" + addr
	if err := waitHealthy(ctx, base, exited); err != nil {
		return res, err
	}
	key, err := createDomain(ctx, bin, dir)
	if err != nil {
		return res, err
	}
	logger.Info("server up", "url", base, "pid", cmd.Process.Pid, "students", o.Students)

	o.BaseURL, o.ClassroomKey, o.ServerPID = base, key, cmd.Process.Pid
	res, err = loadtest.Run(ctx, o)
	select {
	case <-exited:
		if err == nil {
			err = errors.New("the server exited during the run")
		}
	default:
	}
	return res, err
}

// freeAddr returns a loopback address with a TCP port free now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitHealthy polls /healthz until it answers 200.
func waitHealthy(ctx context.Context, base string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("the server exited at start")
		case <-ctx.Done():
			return fmt.Errorf("the server did not answer /healthz within %v: %w", startTimeout, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// createDomain runs `lectern domain create` on the server's data directory
// and returns the classroom API key.
func createDomain(ctx context.Context, bin, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, domainTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "domain", "create", "--name", "Load", "--json", "--data-dir", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("domain create: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var d struct {
		Key string `json:"classroom_api_key"`
	}
	if err := json.Unmarshal(out, &d); err != nil || d.Key == "" {
		return "", fmt.Errorf("domain create: unexpected output %q", out)
	}
	return d.Key, nil
}

// stopServer sends SIGTERM and waits; after stopTimeout it kills.
func stopServer(cmd *exec.Cmd, exited <-chan struct{}, logger *slog.Logger) {
	select {
	case <-exited:
		return
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		logger.Warn("stop server", "err", err)
	}
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		logger.Warn("the server did not stop after SIGTERM; killing it", "pid", cmd.Process.Pid)
		cmd.Process.Kill()
		<-exited
	}
}

// tail logs the last lines of the server's log.
func tail(logger *slog.Logger, path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 20 {
			lines = lines[1:]
		}
	}
	logger.Warn("end of the server log:\n  " + strings.Join(lines, "\n  "))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
