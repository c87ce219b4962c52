package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// scenario is one named request pattern. next returns the i-th request a
// connection sends; baseline names the bare handler it is compared with.
type scenario struct {
	name     string
	baseline string // "bare-get" or "bare-post"
	next     func(c config, f fixture, conn, i int) request
}

// apart reports whether s is sent to the bare handlers of another
// process (-bare-addr) rather than to the server measured.
func (s scenario) apart() bool {
	return slices.ContainsFunc(apartScenarios, func(a scenario) bool { return a.name == s.name })
}

// defaultScenarios is the order the scenarios run in each round: the
// issue's rows. The others (floorScenarios) run when named.
var defaultScenarios = []string{
	"getuser", "courses/get", "courses/list", "users/list", "users/create",
	"getclass", "getclasslaunch", "listclass-first", "listclass-last", "listclass-crawl", "listclass-search", "schedule",
}

// floorScenarios measure what any server costs before its own work: the
// bare handlers in a process of their own (-bare-addr, served by
// lectern-bench -serve-bare), and the server's /healthz, which goes
// through its middleware and no API.
var floorScenarios = []string{"bare-get-apart", "bare-post-apart", "healthz"}

func scenarioByName(name string) (scenario, bool) {
	for _, s := range slices.Concat(scenarios, apartScenarios) {
		if s.name == name {
			return s, true
		}
	}
	return scenario{}, false
}

var scenarios = []scenario{
	{"getuser", "bare-get", func(c config, f fixture, conn, i int) request {
		return lmsReq(c, "GET", "/users/getuser?userId="+strconv.FormatInt(pick(f.UserIDs, conn, i), 10), nil)
	}},
	{"courses/get", "bare-get", func(c config, f fixture, conn, i int) request {
		return lmsReq(c, "GET", "/courses/get/"+strconv.FormatInt(pick(f.CourseIDs, conn, i), 10), nil)
	}},
	{"courses/list", "bare-get", func(c config, f fixture, _, _ int) request {
		return lmsReq(c, "POST", "/courses/list", map[string]int{"limit": 50})
	}},
	{"users/list", "bare-get", func(c config, f fixture, _, _ int) request {
		return lmsReq(c, "POST", "/users/list", map[string]int{"limit": 50})
	}},
	{"users/create", "bare-post", func(c config, f fixture, conn, i int) request {
		name := fmt.Sprintf("load%s_%d_%d", f.RunTag, conn, i)
		return lmsReq(c, "POST", "/users/create", map[string]string{"username": name, "email": name + "@example.com"})
	}},
	{"getclass", "bare-get", func(c config, f fixture, conn, i int) request {
		return vcReq(c, "getclass", url.Values{"class_id": {strconv.FormatInt(pick(f.ClassIDs, conn, i), 10)}})
	}},
	{"getclasslaunch", "bare-get", func(c config, f fixture, _, i int) request {
		return vcReq(c, "getclasslaunch", url.Values{"class_id": {strconv.FormatInt(f.ClassID, 10)}, "userId": {strconv.Itoa(i%1000 + 1)},
			"userName": {"Ann"}, "isTeacher": {"0"}, "lessonName": {"L"}, "courseName": {"C"}})
	}},
	{"listclass-first", "bare-get", func(c config, f fixture, _, _ int) request {
		return vcReq(c, "listclass", url.Values{})
	}},
	{"listclass-last", "bare-get", func(c config, f fixture, _, _ int) request {
		return vcReq(c, "listclass", url.Values{"limitstart": {strconv.FormatInt(max(f.Classes-10, 0), 10)}})
	}},
	{"listclass-crawl", "bare-get", func(c config, f fixture, conn, i int) request {
		// Every page in turn, each connection from a different place: pages
		// read once, as a client walking the whole list reads them.
		from := (int64(conn)*7919 + int64(i)) * 10 % max(f.Classes, 1)
		return vcReq(c, "listclass", url.Values{"limitstart": {strconv.FormatInt(from, 10)}})
	}},
	{"listclass-search", "bare-get", func(c config, f fixture, _, i int) request {
		// A word and a number prefix: matches about one title in 800.
		return vcReq(c, "listclass", url.Values{"search": {fmt.Sprintf("%s %d", titleWords[i%len(titleWords)], 100+i%8)}})
	}},
	{"schedule", "bare-post", func(c config, f fixture, conn, i int) request {
		return vcReq(c, "schedule", url.Values{"title": {fmt.Sprintf("Load %s %d %d", f.RunTag, conn, i)},
			"timezone": {"28"}, "date": {"2031-03-10"}, "start_time": {"03:00 PM"}, "end_time": {"04:00 PM"}})
	}},
	{"healthz", "bare-get", func(config, fixture, int, int) request { return request{method: "GET", path: "/healthz"} }},
}

// pick returns the id the i-th request of connection conn reads: the
// connections walk the ids from different places.
func pick(ids []int64, conn, i int) int64 { return ids[(conn*7919+i)%len(ids)] }

// result is one scenario's measurement over all rounds.
type result struct {
	Scenario string    `json:"scenario"`
	Baseline string    `json:"baseline,omitempty"`
	Rates    []float64 `json:"rates"` // req/s of each round
	Rate     float64   `json:"rate"`  // median of Rates
	P50ms    float64   `json:"p50_ms"`
	P99ms    float64   `json:"p99_ms"`
	Requests int64     `json:"requests"`
	Errors   int64     `json:"errors"`
	Ratio    float64   `json:"ratio,omitempty"` // Rate / baseline's Rate
	// SliceBaselineRates are, with -slice, the rates of the bare handler
	// in the slices beside this scenario's, one a round; Ratio is then the
	// median of each round's Rates[i] / SliceBaselineRates[i].
	SliceBaselineRates []float64 `json:"slice_baseline_rates,omitempty"`
	// ServerCPUus is the server's CPU time (user and system) per request
	// answered, in microseconds, over every round (with -server-pid).
	ServerCPUus float64 `json:"server_cpu_us_per_req,omitempty"`
	// ToolCPUus is this process's CPU time per request answered, over
	// every round (Linux): the load tool's own client, and for the bare
	// scenarios the bare handler too, which runs in this process. On a
	// machine whose CPUs the tool and the server share, a request's rate
	// follows the sum of the two.
	ToolCPUus float64 `json:"tool_cpu_us_per_req,omitempty"`
}

// report is the whole run.
type report struct {
	Addr        string    `json:"addr"`
	Conns       int       `json:"conns"`
	Duration    string    `json:"duration"`
	Rounds      int       `json:"rounds"`
	Users       int64     `json:"users"`
	Courses     int64     `json:"courses"`
	Classes     int64     `json:"classes"`
	LoadAverage string    `json:"load_average,omitempty"`
	Slice       string    `json:"slice,omitempty"`
	BareAddr    string    `json:"bare_addr,omitempty"` // the bare handlers of another process
	Started     time.Time `json:"started"`
	Results     []result  `json:"results"`
}

// bareServer is the in-process comparison: bareHandler on loopback.
func bareServer() (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: bareHandler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv, "http://" + ln.Addr().String(), nil
}

// serveBare serves bareHandler on addr until ctx ends: the bare handlers
// in a process of their own, for the -apart scenarios of another
// lectern-bench (-bare-addr).
func serveBare(ctx context.Context, addr string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-serve-bare: %w", err)
	}
	srv := &http.Server{Handler: bareHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Fprintf(stderr, "bare handlers on http://%s (GET /get, POST /post) until interrupted\n", ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// bareHandler is a plain net/http handler that reads the request and
// writes a small JSON answer: GET /get and POST /post.
func bareHandler() http.Handler {
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /get", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"message": "User found", "data": []map[string]any{{"id": 1, "username": "ann", "email": "ann@example.com"}}})
	})
	mux.HandleFunc("POST /post", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"message": "User created", "id": n.Add(1)})
	})
	return mux
}

var bareScenarios = []scenario{
	{"bare-get", "", bareGet},
	{"bare-post", "", barePost},
}

// apartScenarios are the bare handlers again, served by another process
// (-bare-addr) and compared with the ones in this process.
var apartScenarios = []scenario{
	{"bare-get-apart", "bare-get", bareGet},
	{"bare-post-apart", "bare-post", barePost},
}

func bareGet(config, fixture, int, int) request { return request{method: "GET", path: "/get"} }

func barePost(_ config, _ fixture, conn, i int) request {
	return request{method: "POST", path: "/post", ctype: "application/json",
		body: fmt.Appendf(nil, `{"username":"u%d_%d","email":"u%d_%d@example.com"}`, conn, i, conn, i)}
}

// measure runs every round: the two bare handlers, then each scenario.
func measure(ctx context.Context, cl *client, c config, f fixture, progress io.Writer) (report, error) {
	srv, bareURL, err := bareServer()
	if err != nil {
		return report{}, err
	}
	defer srv.Close()
	bare := newClient(bareURL, c.Conns)
	var apart *client // the bare handlers of another process
	if c.BareAddr != "" {
		apart = newClient(c.BareAddr, c.Conns)
	}

	rep := report{Addr: c.Addr, Conns: c.Conns, Duration: c.Duration.String(), Rounds: c.Rounds,
		Users: f.Users, Courses: f.Courses, Classes: f.Classes, Started: time.Now().UTC(), LoadAverage: loadAverage()}
	if c.Slice > 0 {
		rep.Slice = c.Slice.String()
	}
	rep.BareAddr = c.BareAddr
	var list []scenario
	list = append(list, bareScenarios...)
	for _, name := range c.Scenarios {
		s, _ := scenarioByName(name)
		list = append(list, s)
	}
	type acc struct {
		rates     []float64
		bareRates []float64 // with -slice: the bare handler's beside it
		lat       []time.Duration
		req, errs int64
		cpu       time.Duration // the server's, with -server-pid
		toolCPU   time.Duration // this process's
		// seq and bareSeq hold the number of each connection's next
		// request, on from one round and slice to the next:
		// users/create and schedule name what they create by it.
		seq, bareSeq []int
	}
	baselineOf := map[string]scenario{}
	for _, s := range bareScenarios {
		baselineOf[s.name] = s
	}
	accs := make([]acc, len(list))
	for round := 1; round <= c.Rounds; round++ {
		for i, s := range list {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			target := cl
			switch {
			case s.baseline == "":
				target = bare
			case s.apart():
				target = apart
			}
			if s.name == "listclass-last" {
				// The last page of the classes there are now: the
				// schedule scenario of an earlier round added some.
				if f.Classes, err = classTotal(ctx, cl, c); err != nil {
					return rep, err
				}
			}
			fmt.Fprintf(progress, "round %d/%d: %-16s ", round, c.Rounds, s.name)
			// Without -slice, one run of c.Duration; with it, slices of
			// the scenario, each after a slice of its bare handler.
			sliced, slice := c.Slice > 0 && s.baseline != "", c.Duration
			if sliced {
				slice = c.Slice
			}
			var sum, bareSum loadRun
			if accs[i].seq == nil {
				accs[i].seq, accs[i].bareSeq = make([]int, c.Conns), make([]int, c.Conns)
			}
			seq, bareSeq := accs[i].seq, accs[i].bareSeq
			for sum.ran < c.Duration {
				d := min(slice, c.Duration-sum.ran)
				if sliced {
					bareSum.add(load(ctx, bare, c, f, baselineOf[s.baseline], d, bareSeq), d)
				}
				cpu0, err := serverCPU(c, s)
				if err != nil {
					return rep, err
				}
				tool0, toolErr0 := processCPU(os.Getpid())
				r := load(ctx, target, c, f, s, d, seq)
				tool1, toolErr1 := processCPU(os.Getpid())
				cpu1, err := serverCPU(c, s)
				if err != nil {
					return rep, err
				}
				accs[i].cpu += cpu1 - cpu0
				if toolErr0 == nil && toolErr1 == nil {
					accs[i].toolCPU += tool1 - tool0
				}
				sum.add(r, d)
			}
			rate, lat, errs := sum.rate(), sum.lat, sum.errs
			if bareSum.elapsed > 0 {
				accs[i].bareRates = append(accs[i].bareRates, bareSum.rate())
				fmt.Fprintf(progress, "%8.0f req/s  %d errors  (%s beside it %.0f req/s)\n", rate, errs, s.baseline, bareSum.rate())
			} else {
				fmt.Fprintf(progress, "%8.0f req/s  %d errors\n", rate, errs)
			}
			accs[i].rates = append(accs[i].rates, rate)
			accs[i].lat = append(accs[i].lat, lat...)
			accs[i].req += int64(len(lat)) + errs
			accs[i].errs += errs
		}
	}
	rateOf := map[string]float64{}
	for i, s := range list {
		a := accs[i]
		slices.Sort(a.lat)
		r := result{Scenario: s.name, Baseline: s.baseline, Rates: a.rates, Rate: median(a.rates),
			P50ms: ms(pct(a.lat, 0.50)), P99ms: ms(pct(a.lat, 0.99)), Requests: a.req, Errors: a.errs}
		rateOf[s.name] = r.Rate
		if c.ServerPID > 0 && s.baseline != "" && len(a.lat) > 0 {
			r.ServerCPUus = perRequest(a.cpu, len(a.lat))
		}
		if len(a.lat) > 0 {
			r.ToolCPUus = perRequest(a.toolCPU, len(a.lat))
		}
		switch {
		case len(a.bareRates) > 0:
			r.SliceBaselineRates = a.bareRates
			each := make([]float64, len(a.rates))
			for j := range each {
				each[j] = ratio(a.rates[j], a.bareRates[j])
			}
			r.Ratio = median(each)
		case s.baseline != "":
			r.Ratio = ratio(r.Rate, rateOf[s.baseline])
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

// loadRun is what one or more runs of a scenario measured: the
// latencies of the requests that succeeded, the failures, the time the
// runs took from their start to their last answer, and the time they were
// given (ran).
type loadRun struct {
	lat          []time.Duration
	errs         int64
	elapsed, ran time.Duration
}

// add adds r, a run given d, to a sum of runs.
func (sum *loadRun) add(r loadRun, d time.Duration) {
	sum.lat = append(sum.lat, r.lat...)
	sum.errs += r.errs
	sum.elapsed += r.elapsed
	sum.ran += d
}

// rate is the successful requests a second.
func (r loadRun) rate() float64 { return float64(len(r.lat)) / r.elapsed.Seconds() }

// load runs one scenario closed-loop at c.Conns connections for d.
// Connection conn numbers its requests from seq[conn], and leaves there
// the number its next request would have.
func load(ctx context.Context, cl *client, c config, f fixture, s scenario, d time.Duration, seq []int) loadRun {
	var mu sync.Mutex
	var all []time.Duration
	var errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for conn := range c.Conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			buf := make([]byte, 32<<10)
			// Each connection starts requests until the window closes and
			// waits for the last one (bounded by the client's timeout), so
			// that slow requests are counted rather than cut off.
			i := seq[conn]
			for ; ctx.Err() == nil && time.Now().Before(deadline); i++ {
				rq := s.next(c, f, conn, i)
				t0 := time.Now()
				if once(ctx, cl, rq, buf) {
					lat = append(lat, time.Since(t0))
				} else if ctx.Err() == nil {
					errs.Add(1)
				}
			}
			seq[conn] = i
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return loadRun{lat: all, errs: errs.Load(), elapsed: time.Since(start)}
}

// once sends one request and reports whether it succeeded: status 200 and,
// for the classroom API (which answers errors with status 200), no error
// status in the body.
func once(ctx context.Context, cl *client, rq request, buf []byte) bool {
	req, err := http.NewRequestWithContext(ctx, rq.method, cl.base+rq.path, bytes.NewReader(rq.body))
	if err != nil {
		return false
	}
	for k, v := range rq.header {
		req.Header[k] = v
	}
	if rq.ctype != "" {
		req.Header.Set("Content-Type", rq.ctype)
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	n, _ := io.ReadFull(resp.Body, buf)
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return false
	}
	head := buf[:n]
	return !bytes.Contains(head, []byte(`"status":"error"`)) && !bytes.Contains(head, []byte(`"Status":"error"`))
}

// ratio is rate over the baseline's rate, to four significant digits. It
// is not rounded to a fixed number of decimals: a slow scenario beside a
// fast bare handler (20 against 30,000 req/s) still has a ratio above 0.
func ratio(rate, base float64) float64 {
	if rate <= 0 || base <= 0 {
		return 0
	}
	r := rate / base
	scale := math.Pow(10, 3-math.Floor(math.Log10(r)))
	return math.Round(r*scale) / scale
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pct returns the q-quantile of sorted latencies.
func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

// perRequest is CPU time cpu over n requests, in microseconds to one
// decimal.
func perRequest(cpu time.Duration, n int) float64 {
	return math.Round(float64(cpu)/float64(n)/float64(time.Microsecond)*10) / 10
}

func printTable(w io.Writer, rep report) {
	fmt.Fprintf(w, "%s, %d connections, %s x %d rounds; domain: %d users, %d courses, %d classes; load average %s\n",
		rep.Addr, rep.Conns, rep.Duration, rep.Rounds, rep.Users, rep.Courses, rep.Classes, rep.LoadAverage)
	if rep.Slice != "" {
		fmt.Fprintf(w, "each scenario in slices of %s, each after a slice of its bare handler, and compared with those\n", rep.Slice)
	}
	if rep.BareAddr != "" {
		fmt.Fprintf(w, "-apart: the bare handlers of another process, at %s\n", rep.BareAddr)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\treq/s\tp50 ms\tp99 ms\terrors\tvs bare\tserver µs/req\ttool µs/req\t")
	for _, r := range rep.Results {
		ratio, cpu, tool := "", "", ""
		switch {
		case len(r.SliceBaselineRates) > 0:
			ratio = fmt.Sprintf("%.3f (%s beside it)", r.Ratio, r.Baseline)
		case r.Baseline != "":
			ratio = fmt.Sprintf("%.3f (%s)", r.Ratio, r.Baseline)
		}
		if r.ServerCPUus > 0 {
			cpu = fmt.Sprintf("%.1f", r.ServerCPUus)
		}
		if r.ToolCPUus > 0 {
			tool = fmt.Sprintf("%.1f", r.ToolCPUus)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%d\t%s\t%s\t%s\t\n", r.Scenario, r.Rate, r.P50ms, r.P99ms, r.Errors, ratio, cpu, tool)
	}
	tw.Flush()
}
