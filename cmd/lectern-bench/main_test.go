package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
)

// TestRunAllScenarios seeds a small domain through the API of a real server
// and runs every scenario briefly: each must send requests and get no
// errors, and the JSON must carry every row with its ratio to a bare handler.
func TestRunAllScenarios(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		// The server runs in this process.
		rep, stdout, stderr := benchRun(t, e, "-d", "50ms", "-rounds", "1", "-scenarios", "all", "-server-pid", fmt.Sprint(os.Getpid()))
		if !strings.Contains(stderr, "seeding classes") {
			t.Errorf("no progress bar while seeding classes:\n%s", stderr)
		}
		// The counts are read after seeding, before the live class is added.
		if rep.Users != 3 || rep.Courses != 2 || rep.Classes != 20 {
			t.Errorf("seeded %d users, %d courses, %d classes; want 3, 2, 20", rep.Users, rep.Courses, rep.Classes)
		}
		seen := map[string]bool{}
		for _, r := range rep.Results {
			seen[r.Scenario] = true
			if r.Errors != 0 {
				t.Errorf("%s: %d errors", r.Scenario, r.Errors)
			}
			if r.Requests == 0 {
				t.Errorf("%s: no requests sent", r.Scenario)
			}
			if r.Baseline != "" && r.Ratio <= 0 {
				t.Errorf("%s: no ratio to %s", r.Scenario, r.Baseline)
			}
		}
		if !strings.Contains(stdout, "server µs/req") {
			t.Errorf("no server CPU column in the table with -server-pid:\n%s", stdout)
		}
		// The tool's own CPU: the process's clock advances in ticks of
		// 10 ms, so a scenario of 50 ms may read none; all of them cannot.
		if !strings.Contains(stdout, "tool µs/req") {
			t.Errorf("no column of the tool's CPU in the table:\n%s", stdout)
		}
		var toolCPU float64
		for _, r := range rep.Results {
			toolCPU += r.ToolCPUus
		}
		if toolCPU <= 0 {
			t.Errorf("no scenario reports the tool's CPU per request:\n%s", stdout)
		}
		for _, s := range append([]string{"bare-get", "bare-post"}, defaultScenarios...) {
			if !seen[s] {
				t.Errorf("scenario %s missing from the JSON", s)
			}
			if !strings.Contains(stdout, s) {
				t.Errorf("scenario %s missing from the table", s)
			}
		}
	})
}

// benchRun runs lectern-bench against e's server, on a small domain it
// seeds (3 users, 2 courses, 20 classes) at 2 connections, with args
// added, and returns the JSON report, the table and the progress.
func benchRun(t *testing.T, e *apitest.Env, args ...string) (report, string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bench.json")
	args = append([]string{"-addr", e.URL, "-domain", fmt.Sprint(e.Domain.ID), "-lms-key", e.Domain.LMSKey,
		"-classroom-key", e.Domain.ClassroomKey, "-users", "3", "-courses", "2", "-classes", "20",
		"-c", "2", "-json", out}, args...)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, stdout.String(), stderr.String()
}

// users/create and schedule name what they create by connection and
// request number: a later round must number on, not create the same
// users again (most requests of round 2 failed so before).
func TestRoundsNumberOn(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		rep, _, _ := benchRun(t, e, "-d", "50ms", "-rounds", "2", "-scenarios", "users/create,schedule")
		for _, r := range rep.Results {
			if r.Errors != 0 || r.Requests == 0 || len(r.Rates) != 2 {
				t.Errorf("%s: %d errors in %d requests, rates %v", r.Scenario, r.Errors, r.Requests, r.Rates)
			}
		}
	})
}

// With -slice, each scenario runs in slices, each after a slice of its
// bare handler, and its ratio is its rate over the bare handler's in
// those slices, round by round; the bare runs at the start of each round
// still report their own rates.
func TestSlices(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		rep, stdout, stderr := benchRun(t, e, "-d", "60ms", "-slice", "25ms", "-rounds", "2", "-scenarios", "getuser,users/create")
		if rep.Slice != "25ms" {
			t.Errorf("slice %q in the JSON, want 25ms", rep.Slice)
		}
		for _, r := range rep.Results {
			// users/create names its users by connection and request:
			// a slice that numbered its requests from 0 again would
			// create a user twice.
			if r.Errors != 0 || r.Requests == 0 {
				t.Errorf("%s: %d errors in %d requests", r.Scenario, r.Errors, r.Requests)
			}
			if r.Baseline == "" {
				if len(r.Rates) != 2 || r.SliceBaselineRates != nil {
					t.Errorf("%s: rates %v, beside %v; want 2 rates of its own", r.Scenario, r.Rates, r.SliceBaselineRates)
				}
				continue
			}
			if len(r.Rates) != 2 || len(r.SliceBaselineRates) != 2 {
				t.Fatalf("%s: rates %v, beside %v; want one of each a round", r.Scenario, r.Rates, r.SliceBaselineRates)
			}
			each := []float64{ratio(r.Rates[0], r.SliceBaselineRates[0]), ratio(r.Rates[1], r.SliceBaselineRates[1])}
			if r.Ratio != median(each) || r.Ratio <= 0 {
				t.Errorf("%s: ratio %v, want the median of %v", r.Scenario, r.Ratio, each)
			}
			if !strings.Contains(stdout, r.Baseline+" beside it") {
				t.Errorf("%s: the table does not say its ratio is to the slices beside it:\n%s", r.Scenario, stdout)
			}
		}
		// Each scenario's line of progress, in each round, gives the rate
		// of the bare handler beside it.
		if n := strings.Count(stderr, "beside it"); n != 4 {
			t.Errorf("%d scenario runs with a bare handler beside them, want 4:\n%s", n, stderr)
		}
	})
}

// The floor scenarios: the -apart ones go to the bare handlers at
// -bare-addr (and only there), each compared with the same handler in
// this process; healthz goes to the server measured.
func TestFloorScenarios(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		var served atomic.Int64
		bare := bareHandler()
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
			bare.ServeHTTP(w, r)
		}))
		defer other.Close()
		rep, stdout, _ := benchRun(t, e, "-d", "60ms", "-slice", "30ms", "-rounds", "1", "-bare-addr", other.URL,
			"-scenarios", "bare-get-apart,bare-post-apart,healthz", "-server-pid", fmt.Sprint(os.Getpid()))
		if rep.BareAddr != other.URL {
			t.Errorf("bare_addr %q in the JSON, want %q", rep.BareAddr, other.URL)
		}
		var apart int64
		for _, r := range rep.Results {
			if r.Errors != 0 || r.Requests == 0 {
				t.Errorf("%s: %d errors in %d requests", r.Scenario, r.Errors, r.Requests)
			}
			switch r.Scenario {
			case "bare-get-apart", "bare-post-apart", "healthz":
				if r.Ratio <= 0 || len(r.SliceBaselineRates) == 0 {
					t.Errorf("%s: ratio %v beside %v; want one to the bare handler of this process", r.Scenario, r.Ratio, r.SliceBaselineRates)
				}
			}
			if strings.HasSuffix(r.Scenario, "-apart") {
				apart += r.Requests
				if r.ServerCPUus != 0 {
					t.Errorf("%s: server CPU %v µs a request: the server measured did not answer it", r.Scenario, r.ServerCPUus)
				}
			}
		}
		if apart == 0 || served.Load() != apart {
			t.Errorf("the other process's bare handlers answered %d requests, the -apart scenarios sent %d", served.Load(), apart)
		}
		if !strings.Contains(stdout, "another process, at "+other.URL) || !strings.Contains(stdout, "healthz") {
			t.Errorf("the table names neither the other process's address nor healthz:\n%s", stdout)
		}
	})
}

// -serve-bare serves the bare handlers until its context ends, and
// nothing else.
func TestServeBare(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-serve-bare", "127.0.0.1:0"}, io.Discard, w) }()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, r)
	base, _, _ := strings.Cut(strings.TrimPrefix(line, "bare handlers on "), " ")
	resp, err := http.Get(base + "/get")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || got["message"] != "User found" {
		t.Fatalf("GET /get: %d %v %v", resp.StatusCode, got, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("-serve-bare ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("-serve-bare did not stop when its context ended")
	}
	if _, err := http.Get(base + "/get"); err == nil {
		t.Error("the bare handlers still answer after -serve-bare stopped")
	}
}

// With -spread, the seed finds that many distinct records of each kind,
// and the point reads cycle over them, every one of which the server
// finds.
func TestSpread(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		c := config{Addr: e.URL, DomainID: e.Domain.ID, LMSKey: e.Domain.LMSKey, ClassroomKey: e.Domain.ClassroomKey,
			Users: 3, Courses: 2, Classes: 20, SeedConns: 2, Conns: 2, Spread: 2}
		fix, err := seed(context.Background(), newClient(c.Addr, c.Conns), c, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for kind, ids := range map[string][]int64{"users": fix.UserIDs, "courses": fix.CourseIDs, "classes": fix.ClassIDs} {
			if len(ids) != 2 || ids[0] == ids[1] {
				t.Errorf("%s: %v, want 2 distinct ids", kind, ids)
			}
		}
		var stdout, stderr bytes.Buffer
		args := []string{"-addr", e.URL, "-domain", fmt.Sprint(e.Domain.ID), "-lms-key", e.Domain.LMSKey,
			"-classroom-key", e.Domain.ClassroomKey, "-users", "3", "-courses", "2", "-classes", "20", "-spread", "2",
			"-c", "2", "-d", "50ms", "-rounds", "1", "-scenarios", "getuser,courses/get,getclass", "-json", "-"}
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
		var rep report
		if err := json.Unmarshal(stdout.Bytes()[strings.Index(stdout.String(), "{"):], &rep); err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			if r.Requests == 0 || r.Errors != 0 {
				t.Errorf("%s: %d requests, %d errors", r.Scenario, r.Requests, r.Errors)
			}
		}
	})
}

// pick walks every id, from a different place for each connection.
func TestPick(t *testing.T) {
	ids := []int64{10, 20, 30}
	for conn := range 2 {
		seen := map[int64]bool{}
		for i := range len(ids) {
			seen[pick(ids, conn, i)] = true
		}
		if len(seen) != len(ids) {
			t.Errorf("connection %d read %v of %v", conn, seen, ids)
		}
	}
	if pick(ids, 0, 0) == pick(ids, 1, 0) {
		t.Errorf("connections 0 and 1 start on the same id")
	}
}

func TestFlagErrors(t *testing.T) {
	t.Setenv("LECTERN_BENCH_LMS_KEY", "")
	t.Setenv("LECTERN_BENCH_CLASSROOM_KEY", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-addr", "127.0.0.1:8080", "-domain", "1"}, "-addr"},
		{[]string{"-lms-key", "k", "-classroom-key", "k"}, "-domain"},
		{[]string{"-domain", "1", "-classroom-key", "k"}, "-lms-key"},
		{[]string{"-domain", "1", "-lms-key", "k"}, "-classroom-key"},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-scenarios", "nope"}, `unknown scenario "nope"`},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-rounds", "0"}, "-rounds"},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-server-pid", "-3"}, "-server-pid"},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-server-pid", "999999999"}, "-server-pid"},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-spread", "0"}, "-spread"},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-spread", "1001"}, "-spread"},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-slice", "-1s"}, "-slice"},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-d", "1s", "-slice", "2s"}, "-slice"},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-scenarios", "bare-get-apart"}, "-bare-addr"},
		{[]string{"-domain", "1", "-lms-key", "k", "-classroom-key", "k", "-bare-addr", "127.0.0.1:8090"}, "-bare-addr"},
	} {
		err := run(context.Background(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
}

// processCPU must read this process's CPU time and see it grow as the
// process works.
func TestProcessCPU(t *testing.T) {
	before, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := 0; ; i++ {
		for j := range 1_000_000 {
			x += j ^ i
		}
		now, err := processCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now > before {
			break
		}
		if i > 100_000 {
			t.Fatalf("CPU time stayed at %v after busy work", before)
		}
	}
	_ = x
}

// The seeded live class began 5 minutes ago and lasts 3 hours, also across
// midnight (an end time earlier than the start is on the next day); before
// this the end was cut to 23:59 and a seed run just after midnight asked
// for a class ending when it started.
func TestLiveClassTimes(t *testing.T) {
	for _, tc := range []struct {
		now              string
		date, start, end string
	}{
		{"2026-11-24T00:04:30Z", "2026-11-23", "23:59", "02:59"},
		{"2026-11-24T00:02:00Z", "2026-11-23", "23:57", "02:57"},
		{"2026-11-23T22:30:00Z", "2026-11-23", "22:25", "01:25"},
		{"2026-11-23T12:00:59Z", "2026-11-23", "11:55", "14:55"},
		{"2026-07-01T12:00:00Z", "2026-07-01", "12:55", "15:55"}, // British Summer Time
	} {
		now, err := time.Parse(time.RFC3339, tc.now)
		if err != nil {
			t.Fatal(err)
		}
		date, start, end := liveClassTimes(now)
		if date != tc.date || start != tc.start || end != tc.end {
			t.Errorf("at %s: %s %s-%s, want %s %s-%s", tc.now, date, start, end, tc.date, tc.start, tc.end)
		}
	}
}

// listclass-last asks for the last page of the classes there are when it
// runs, not of those there were at the start: the schedule scenario of an
// earlier round adds classes. A stand-in server counts the classes
// scheduled and checks each last-page request's limitstart.
func TestListclassLastFollowsTheTotal(t *testing.T) {
	var mu sync.Mutex
	total := int64(100)
	var asked, wrong []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v2/schedule":
			total++
			fmt.Fprintf(w, `{"status":"ok","class_id":%d}`, total)
		case "/v2/listclass":
			if from := r.FormValue("limitstart"); from != "" {
				asked = append(asked, from)
				if from != strconv.FormatInt(total-10, 10) {
					wrong = append(wrong, fmt.Sprintf("limitstart %s with %d classes", from, total))
				}
			}
			fmt.Fprintf(w, `{"status":"ok","total":%d,"classes":[{"id":"1"}]}`, total)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := config{Addr: srv.URL, DomainID: 1, LMSKey: "k", ClassroomKey: "k", Conns: 1, Duration: 30 * time.Millisecond,
		Rounds: 2, Scenarios: []string{"schedule", "listclass-last"}}
	if _, err := measure(context.Background(), newClient(srv.URL, 1), c, fixture{Classes: 100, RunTag: "t"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if total == 100 || len(asked) == 0 {
		t.Fatalf("%d classes scheduled, %d last pages asked: the scenarios did not run", total-100, len(asked))
	}
	if len(wrong) > 0 {
		t.Errorf("%d of %d last-page requests were not for the last page, first: %s", len(wrong), len(asked), wrong[0])
	}
}

func TestRatio(t *testing.T) {
	for _, c := range []struct{ rate, base, want float64 }{
		{15000, 30000, 0.5},
		{20, 30000, 0.0006667}, // was rounded to 0.001 decimals, then to 0
		{1, 50000, 0.00002},
		{12345, 10000, 1.235},
		{0, 30000, 0},
		{10, 0, 0},
	} {
		if got := ratio(c.rate, c.base); got != c.want {
			t.Errorf("ratio(%v, %v) = %v, want %v", c.rate, c.base, got, c.want)
		}
	}
}
