package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// client sends requests to the one server under test.
type client struct {
	base string
	http *http.Client
}

func newClient(base string, conns int) *client {
	tr := &http.Transport{
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
	}
	// Redirects would leave the given address; refuse them.
	return &client{base: base, http: &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// request is one prepared call; body is resent as is each time.
type request struct {
	method, path, ctype string
	header              http.Header
	body                []byte
}

func (c *client) do(ctx context.Context, rq request, into any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, rq.method, c.base+rq.path, bytes.NewReader(rq.body))
	if err != nil {
		return 0, err
	}
	for k, v := range rq.header {
		req.Header[k] = v
	}
	if rq.ctype != "" {
		req.Header.Set("Content-Type", rq.ctype)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if into == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("%s %s: status %d: %.200s", rq.method, rq.path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, into); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: %v: %.200s", rq.method, rq.path, err, b)
	}
	return resp.StatusCode, nil
}

func lmsReq(c config, method, path string, body any) request {
	h := http.Header{}
	h.Set("Authorization", c.LMSKey)
	h.Set("X-Domain-Id", strconv.FormatInt(c.DomainID, 10))
	rq := request{method: method, path: "/api/v1" + path, header: h}
	if body != nil {
		rq.body, _ = json.Marshal(body)
		rq.ctype = "application/json"
	}
	return rq
}

func vcReq(c config, op string, v url.Values) request {
	v.Set("apikey", c.ClassroomKey)
	return request{method: "POST", path: "/v2/" + op, ctype: "application/x-www-form-urlencoded", body: []byte(v.Encode())}
}

// fixture is what the scenarios need to know about the seeded domain.
type fixture struct {
	Users, Courses, Classes int64
	// UserIDs, CourseIDs and ClassIDs are the -spread records the point
	// reads cycle over.
	UserIDs, CourseIDs, ClassIDs []int64
	ClassID                      int64  // a class that is live while the load runs
	RunTag                       string // makes the names created under load unique
}

type listJSON struct {
	Total int64 `json:"total"`
	Data  []struct {
		ID int64 `json:"id"`
	} `json:"data"`
}

type classListJSON struct {
	Total   int64 `json:"total"`
	Classes []struct {
		ID json.Number `json:"id"`
	} `json:"classes"`
}

// seed brings the domain up to the configured counts through the public
// API and returns ids the scenarios read.
func seed(ctx context.Context, cl *client, c config, progress io.Writer) (fixture, error) {
	fix := fixture{RunTag: strconv.FormatInt(time.Now().UnixNano()%1e9, 36)}
	var ul, cg listJSON
	if _, err := cl.do(ctx, lmsReq(c, "POST", "/users/list", map[string]int{"limit": 1}), &ul); err != nil {
		return fix, err
	}
	if _, err := cl.do(ctx, lmsReq(c, "POST", "/courses/list", map[string]int{"limit": 1}), &cg); err != nil {
		return fix, err
	}
	var lc classListJSON
	if _, err := cl.do(ctx, vcReq(c, "listclass", url.Values{"limit": {"1"}}), &lc); err != nil {
		return fix, err
	}
	tag := fix.RunTag
	steps := []struct {
		what string
		have int64
		want int
		make func(i int) request
	}{
		{"users", ul.Total, c.Users, func(i int) request {
			name := fmt.Sprintf("seed%s_%d", tag, i)
			return lmsReq(c, "POST", "/users/create", map[string]string{"username": name, "email": name + "@example.com"})
		}},
		{"courses", cg.Total, c.Courses, func(i int) request {
			return lmsReq(c, "POST", "/courses/create", map[string]string{"course_name": fmt.Sprintf("Course %s %d", tag, i)})
		}},
		{"classes", lc.Total, c.Classes, func(i int) request {
			return vcReq(c, "schedule", url.Values{"title": {fmt.Sprintf("%s %d", titleWords[i%len(titleWords)], i)},
				"timezone": {"28"}, "date": {"2031-03-10"}, "start_time": {"03:00 PM"}, "end_time": {"04:00 PM"}})
		}},
	}
	for _, s := range steps {
		missing := s.want - int(s.have)
		if missing <= 0 {
			continue
		}
		if err := seedMany(ctx, cl, c.SeedConns, s.what, missing, s.make, progress, c.Progress); err != nil {
			return fix, err
		}
	}
	// Read the final counts and one id of each kind.
	if _, err := cl.do(ctx, lmsReq(c, "POST", "/users/list", map[string]int{"limit": 1}), &ul); err != nil {
		return fix, err
	}
	if _, err := cl.do(ctx, lmsReq(c, "POST", "/courses/list", map[string]int{"limit": 1}), &cg); err != nil {
		return fix, err
	}
	if _, err := cl.do(ctx, vcReq(c, "listclass", url.Values{"limit": {"1"}}), &lc); err != nil {
		return fix, err
	}
	if len(ul.Data) == 0 || len(cg.Data) == 0 || len(lc.Classes) == 0 {
		return fix, fmt.Errorf("the domain holds no users, courses or classes after seeding")
	}
	fix.Users, fix.Courses, fix.Classes = ul.Total, cg.Total, lc.Total
	var err error
	if fix.UserIDs, err = lmsIDs(ctx, cl, c, "/users/list", c.Spread); err != nil {
		return fix, err
	}
	if fix.CourseIDs, err = lmsIDs(ctx, cl, c, "/courses/list", c.Spread); err != nil {
		return fix, err
	}
	if fix.ClassIDs, err = classIDs(ctx, cl, c, c.Spread); err != nil {
		return fix, err
	}
	id, err := liveClass(ctx, cl, c)
	if err != nil {
		return fix, err
	}
	fix.ClassID = id
	return fix, nil
}

// lmsIDs returns the ids of the first n rows of an LMS listing (users or
// courses), read in pages of up to 500.
func lmsIDs(ctx context.Context, cl *client, c config, path string, n int) ([]int64, error) {
	var ids []int64
	for page := 1; len(ids) < n; page++ {
		var l listJSON
		if _, err := cl.do(ctx, lmsReq(c, "POST", path, map[string]int{"limit": 500, "page": page}), &l); err != nil {
			return nil, err
		}
		if len(l.Data) == 0 {
			return nil, fmt.Errorf("%s: %d rows, fewer than -spread %d", path, len(ids), n)
		}
		for _, d := range l.Data {
			ids = append(ids, d.ID)
		}
	}
	return ids[:n], nil
}

// classIDs returns the ids of the domain's first n classes, read through
// listclass in pages of up to 100.
func classIDs(ctx context.Context, cl *client, c config, n int) ([]int64, error) {
	var ids []int64
	for len(ids) < n {
		var lc classListJSON
		if _, err := cl.do(ctx, vcReq(c, "listclass", url.Values{"limitstart": {strconv.Itoa(len(ids))},
			"limit": {strconv.Itoa(min(n-len(ids), 100))}}), &lc); err != nil {
			return nil, err
		}
		if len(lc.Classes) == 0 {
			return nil, fmt.Errorf("listclass: %d classes, fewer than -spread %d", len(ids), n)
		}
		for _, cls := range lc.Classes {
			id, err := cls.ID.Int64()
			if err != nil {
				return nil, fmt.Errorf("listclass: class id %q", cls.ID)
			}
			ids = append(ids, id)
		}
	}
	return ids[:n], nil
}

// classTotal returns the number of the domain's classes, from listclass.
func classTotal(ctx context.Context, cl *client, c config) (int64, error) {
	var lc classListJSON
	_, err := cl.do(ctx, vcReq(c, "listclass", url.Values{"limit": {"1"}}), &lc)
	return lc.Total, err
}

// liveClassTimes is the date, start and end time (Europe/London, the
// classroom API's zone 28) of a class that began 5 minutes before now and
// lasts 3 hours. An end time earlier than the start ends on the next day,
// as the API reads it, so a class begun at 23:59 is still live after
// midnight.
func liveClassTimes(now time.Time) (date, start, end string) {
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		london = time.UTC
	}
	from := now.In(london).Truncate(time.Minute).Add(-5 * time.Minute)
	return from.Format(time.DateOnly), from.Format("15:04"), from.Add(3 * time.Hour).Format("15:04")
}

// liveClass schedules a one-time class that is live now (launch URLs are
// only given for a class in session) and returns its id.
func liveClass(ctx context.Context, cl *client, c config) (int64, error) {
	date, startTime, endTime := liveClassTimes(time.Now())
	var out json.RawMessage
	if _, err := cl.do(ctx, vcReq(c, "schedule", url.Values{"title": {"Bench live class"}, "timezone": {"28"},
		"date": {date}, "start_time": {startTime}, "end_time": {endTime}}), &out); err != nil {
		return 0, err
	}
	// The compat style (the default) answers {"class_id": 12, ...}; the
	// seed style [{"class_id": "12", ...}].
	var one struct {
		ClassID json.Number `json:"class_id"`
	}
	var seed []struct {
		ClassID json.Number `json:"class_id"`
	}
	if json.Unmarshal(out, &one) != nil && json.Unmarshal(out, &seed) == nil && len(seed) > 0 {
		one = seed[0]
	}
	id, err := strconv.ParseInt(string(one.ClassID), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("schedule: no class_id in the answer %s", out)
	}
	return id, nil
}

// titleWords make class titles; the search scenario looks for one of them.
var titleWords = []string{"Algebra", "Biology", "Chemistry", "Drawing", "Economics", "French", "Geometry", "History"}

// seedMany sends n create requests over conns connections, drawing a
// progress bar on w.
func seedMany(ctx context.Context, cl *client, conns int, what string, n int, mk func(int) request, w io.Writer, bar bool) error {
	var next, done atomic.Int64
	var firstErr error
	var once sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i > n || ctx.Err() != nil {
					return
				}
				var out json.RawMessage
				if _, err := cl.do(ctx, mk(i), &out); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				done.Add(1)
			}
		}()
	}
	stopBar := make(chan struct{})
	barDone := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(barDone)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopBar:
				if bar {
					drawBar(w, what, int(done.Load()), n, time.Since(start))
					fmt.Fprintln(w)
				}
				return
			case <-t.C:
				if bar {
					drawBar(w, what, int(done.Load()), n, time.Since(start))
				}
			}
		}
	}()
	wg.Wait()
	close(stopBar)
	<-barDone
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

func drawBar(w io.Writer, what string, done, n int, el time.Duration) {
	const width = 30
	fill := width * done / n
	rate := float64(done) / el.Seconds()
	eta := ""
	if rate > 0 && done < n {
		eta = " eta " + time.Duration(float64(n-done)/rate*float64(time.Second)).Round(time.Second).String()
	}
	fmt.Fprintf(w, "\rseeding %-8s [%s%s] %d/%d %.0f/s%s   ", what, strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, n, rate, eta)
}
