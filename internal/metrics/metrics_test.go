package metrics_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
)

// scrape fetches url and returns the exposition text.
func scrape(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("scrape: %d %s", res.StatusCode, b)
	}
	return string(b)
}

var labelRE = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

func TestMetricsAfterRequests(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		const email = "metrics.person@example.com"
		created := e.LMS("POST", "/users/create", map[string]any{"username": "mp", "email": email})
		if created.Status != 200 {
			t.Fatalf("create: %d %s", created.Status, created.Body)
		}
		id := strconv.FormatInt(Int(t, created.JSON(t), "id"), 10)
		gotUser := 0 // answered 200, every one counted in one series
		for _, path := range []string{"/users/getuser?userId=" + id, "/users/getuserbyEmail/" + url.PathEscape(email), "/courses/get/" + id} {
			if r := e.LMS("GET", path, nil); r.Status == 200 && strings.HasPrefix(path, "/users/getuser?") {
				gotUser++
			}
		}
		// A classroom operation is labelled by its own route; another
		// spelling of its name by the API's catch-all for operations.
		for _, op := range []string{"getplan", "GetPlan"} {
			if r := e.VC(op, nil); r.Status != 200 {
				t.Fatalf("%s: %d %s", op, r.Status, r.Body)
			}
		}
		e.Do(Request{Method: "GET", Path: "/api/v1/no/such/" + id})
		e.Do(Request{Method: "GET", Path: "/not-a-route/" + id, NoAuth: true})
		// The burst is 30 (see the option below): keep asking until refused.
		limited := false
		for i := 0; i < 40 && !limited; i++ {
			status := e.LMS("GET", "/users/getuser?userId="+id, nil).Status
			limited = status == http.StatusTooManyRequests
			if status == 200 {
				gotUser++
			}
		}
		if !limited {
			t.Fatal("never rate limited")
		}

		text := scrape(t, e.URL+"/metrics")
		for _, want := range []string{
			`lectern_http_requests_total{method="POST",route="/api/v1/users/create",status="200"} 1`,
			`lectern_http_requests_total{method="GET",route="/api/v1/users/getuser",status="200"} ` + strconv.Itoa(gotUser) + "\n",
			`lectern_http_requests_total{method="GET",route="/api/v1/users/getuserbyEmail/{email}",status="200"} 1`,
			`lectern_http_requests_total{method="GET",route="/api/v1/courses/get/{course_id}",status="404"} 1`,
			`lectern_http_requests_total{method="GET",route="/api/v1/",status="404"} 1`,
			`lectern_http_request_duration_seconds_bucket{method="POST",route="/api/v1/users/create",le="+Inf"} 1`,
			`lectern_http_rate_limited_total{route="/api/v1/users/getuser"} 1`,
			`lectern_http_requests_total{method="POST",route="/v2/getplan",status="200"} 1`,
			`lectern_http_requests_total{method="POST",route="/v2/{operation}",status="200"} 1`,
			`lectern_store_query_duration_seconds_count{op="query_row"}`,
			`go_sql_open_connections{db_name=`,
			`lectern_classroom_rooms 0`,
			`lectern_classroom_participants 0`,
			`lectern_webhook_deliveries_total{result="failure"} 0`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %s", want)
			}
		}

		secrets := []string{email, url.PathEscape(email), e.Domain.LMSKey, e.Domain.ClassroomKey, e.Other.LMSKey}
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("metrics text holds %q", s)
			}
		}
		digits := regexp.MustCompile(`(^|/)\d+(/|$)`)
		for _, line := range strings.Split(text, "\n") {
			if !strings.HasPrefix(line, "lectern_") {
				continue
			}
			for _, m := range labelRE.FindAllStringSubmatch(line, -1) {
				name, value := m[1], m[2]
				if strings.Contains(value, "@") {
					t.Errorf("label %s holds an email: %s", name, line)
				}
				if name == "route" && digits.MatchString(value) {
					t.Errorf("route label holds an id: %s", line)
				}
			}
		}
	}, func(c *config.Config) { c.RateLimit, c.RateBurst = 0.001, 30 })
}

func TestMetricsAddr(t *testing.T) {
	e := Start(t, SQLite, func(c *config.Config) { c.MetricsAddr = "127.0.0.1:0" })
	if r := e.Do(Request{Method: "GET", Path: "/metrics", NoAuth: true}); r.Status != 404 {
		t.Errorf("main address /metrics = %d, want 404 when --metrics-addr is set", r.Status)
	}
	e.LMS("POST", "/users/list", map[string]any{})
	text := scrape(t, "http://"+e.Main.MetricsAddr()+"/metrics")
	if !strings.Contains(text, `lectern_http_requests_total{method="POST",route="/api/v1/users/list",status="200"} 1`) {
		t.Errorf("metrics listener lacks the main address's request:\n%s", text)
	}
}
