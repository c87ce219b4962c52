package loadtest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
)

// TestRun runs a small load test against a real server in this process:
// three students, a few seconds. It checks that every student received
// the teacher's video and audio and that the result is filled in; it
// asserts nothing about speed.
func TestRun(t *testing.T) {
	e := apitest.Start(t, apitest.SQLite)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("LECTERN_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{
		BaseURL:      e.URL,
		ClassroomKey: e.Domain.ClassroomKey,
		Students:     3,
		Duration:     2 * time.Second,
		Warmup:       500 * time.Millisecond,
		ServerPID:    os.Getpid(), // the server runs in this process
		VideoKbps:    300,
		FPS:          15,
		Logger:       logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.Students != 3 || res.Joined != 3 || res.Connected != 3 || res.JoinErrors != 0 || res.FirstError != "" {
		t.Errorf("students %d, joined %d, connected %d, join errors %d (%s); want 3 of each and no error",
			res.Students, res.Joined, res.Connected, res.JoinErrors, res.FirstError)
	}
	if res.JoinTime <= 0 || res.Window <= 0 {
		t.Errorf("join time %v, window %v; want both set", res.JoinTime, res.Window)
	}
	for name, s := range map[string]Stream{"video": res.Video, "audio": res.Audio} {
		// MinPerSec > 0: every student received this stream in the window.
		if s.SentPerSec <= 0 || s.MeanPerSec <= 0 || s.MinPerSec <= 0 || s.MeanKbps <= 0 {
			t.Errorf("%s: %+v; want packets sent and received by every student", name, s)
		}
		if s.MeanBehind < 0 || s.WorstBehind < s.MeanBehind {
			t.Errorf("%s: behind mean %v, worst %v", name, s.MeanBehind, s.WorstBehind)
		}
		if s.MeanLoss < 0 || s.WorstLoss < s.MeanLoss || s.WorstLoss >= 100 {
			t.Errorf("%s: loss mean %.2f %%, worst %.2f %%; want 0 <= mean <= worst < 100", name, s.MeanLoss, s.WorstLoss)
		}
	}
	for name, p := range map[string]Process{"server": res.Server, "tool": res.Tool} {
		if p.CPU <= 0 || p.RSSMiB <= 0 || p.PeakRSSMiB < p.RSSMiB {
			t.Errorf("%s process: %+v; want CPU, RSS and a peak at least the RSS", name, p)
		}
	}
	if res.CPUs <= 0 || res.MachineCPU <= 0 {
		t.Errorf("CPUs %d, machine CPU %.2f; want both set", res.CPUs, res.MachineCPU)
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{BaseURL: "http://127.0.0.1:1", ClassroomKey: "k"}, "Students"},
		{Options{BaseURL: "http://127.0.0.1:1", Students: 1}, "ClassroomKey"},
		{Options{BaseURL: "http://192.0.2.1:8080", ClassroomKey: "k", Students: 1}, "loopback"},
		{Options{BaseURL: "ftp://127.0.0.1", ClassroomKey: "k", Students: 1}, "http(s)"},
	} {
		_, err := Run(context.Background(), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) = %v; want an error naming %s", tc.o, err, tc.want)
		}
	}
	o, err := Options{BaseURL: "http://localhost:8080", ClassroomKey: "k", Students: 2}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Duration != 20*time.Second || o.Warmup != 5*time.Second || o.VideoKbps != 1000 || o.FPS != 30 ||
		o.JoinTimeout != 30500*time.Millisecond || o.Logger == nil {
		t.Errorf("defaults: %+v", o)
	}
}

func TestCounter(t *testing.T) {
	var c counter
	c.add(65000, 100) // before the window: counted, not measured
	c.start()
	// 65530 ... 5 across the wrap, with 65533 and 2 lost, 65535 sent
	// twice (a retransmission) and 65531 arriving late.
	for _, seq := range []uint16{65530, 65532, 65531, 65534, 65535, 65535, 0, 1, 3, 4, 5} {
		c.add(seq, 10)
	}
	c.add(65520, 10) // older than the window's first packet
	c.stop()
	c.add(6, 10) // after the window
	packets, bytes, expected, missing := c.window()
	if packets != 12 || bytes != 120 || expected != 12 || missing != 2 || c.total() != 14 {
		t.Errorf("window: packets %d, bytes %d, expected %d, missing %d, total %d; want 12, 120, 12, 2, 14",
			packets, bytes, expected, missing, c.total())
	}

	var empty counter
	empty.start()
	if p, b, e, m := empty.window(); p+b+e+m != 0 {
		t.Errorf("empty window: %d %d %d %d", p, b, e, m)
	}
}

func TestUnwrapper(t *testing.T) {
	var u unwrapper
	for i, tc := range []struct {
		seq  uint16
		want int64
	}{{65534, 65534}, {65535, 65535}, {0, 65536}, {65535, 65535}, {1, 65537}, {30000, 30000 + 65536}, {60000, 60000 + 65536}, {2, 2 + 2*65536}} {
		if got := u.extend(tc.seq); got != tc.want {
			t.Errorf("%d: extend(%d) = %d; want %d", i, tc.seq, got, tc.want)
		}
	}
}

func TestProcParsing(t *testing.T) {
	// A command name with spaces and a parenthesis; utime 250, stime 50.
	stat := "4242 (lectern (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 1000000 2000 18446744073709551615\n"
	cpu, err := parseStatCPU([]byte(stat))
	if err != nil || cpu != 3*time.Second {
		t.Errorf("parseStatCPU = %v, %v; want 3s", cpu, err)
	}
	if _, err := parseStatCPU([]byte("4242 (x) S 1")); err == nil {
		t.Error("a short stat line was accepted")
	}

	status := "Name:\tlectern\nVmPeak:\t 900000 kB\nVmHWM:\t   204800 kB\nVmRSS:\t   102400 kB\nThreads:\t12\n"
	rss, hwm, err := parseStatusMemory([]byte(status))
	if err != nil || rss != 100<<20 || hwm != 200<<20 {
		t.Errorf("parseStatusMemory = %d, %d, %v; want 100 MiB, 200 MiB", rss, hwm, err)
	}
	if _, _, err := parseStatusMemory([]byte("Name:\tkthreadd\n")); err == nil {
		t.Error("a status without memory lines was accepted")
	}

	busy, idle, err := parseMachineStat([]byte("cpu  100 10 40 800 50 5 5 0 30 0\ncpu0 50 5 20 400 25 2 3 0 15 0\n"))
	if err != nil || busy != 1600*time.Millisecond || idle != 8500*time.Millisecond {
		t.Errorf("parseMachineStat = %v, %v, %v; want 1.6s, 8.5s", busy, idle, err)
	}

	// The real files of this process and machine parse.
	if s, err := readProc("self"); err != nil || s.rss == 0 || s.hwm < s.rss {
		t.Errorf("readProc(self) = %+v, %v", s, err)
	}
	if _, err := readMachine(); err != nil {
		t.Errorf("readMachine: %v", err)
	}
}

func TestVP8Frame(t *testing.T) {
	key, inter := vp8Frame(3000, true), vp8Frame(1000, false)
	if len(key) != 3000 || len(inter) != 1000 {
		t.Fatalf("lengths %d, %d", len(key), len(inter))
	}
	// Bit 0 of the frame tag is clear for a keyframe, set otherwise; bit 4
	// (show_frame) is set; bits 5-23 are the first partition's size.
	tag := func(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 }
	if tk := tag(key); tk&1 != 0 || tk&0x10 == 0 || tk>>5 != 2990 {
		t.Errorf("keyframe tag %#x", tk)
	}
	if string(key[3:6]) != "\x9d\x01\x2a" || key[6] != 0x80 || key[7] != 0x02 || key[8] != 0xe0 || key[9] != 0x01 {
		t.Errorf("keyframe header % x; want the start code and 640x480", key[3:10])
	}
	if ti := tag(inter); ti&1 != 1 || ti&0x10 == 0 || ti>>5 != 997 {
		t.Errorf("interframe tag %#x", ti)
	}
}
