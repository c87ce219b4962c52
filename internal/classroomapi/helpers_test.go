package classroomapi_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
	"github.com/lectern-lms/lectern/internal/lms"
)

// makeClass stores a class of domain d with the given sittings (start,
// length) in Europe/London.
func makeClass(t testing.TB, e *apitest.Env, d apitest.Domain, title string, sittings ...time.Time) lms.LiveClass {
	t.Helper()
	var occ []lms.Occurrence
	for _, s := range sittings {
		occ = append(occ, lms.Occurrence{Start: s, End: s.Add(time.Hour)})
	}
	c, err := e.Store.CreateLiveClass(context.Background(), d.ID, lms.LiveClass{Title: title, Date: sittings[0].Format("2006-01-02"),
		StartMinute: sittings[0].Hour()*60 + sittings[0].Minute(), EndMinute: sittings[0].Hour()*60 + sittings[0].Minute() + 60,
		TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", Published: 1, Occurrences: occ})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// requestStyles are the ways clients send an operation.
var requestStyles = []string{"query", "urlencoded", "multipart", "json", "legacy v2", "legacy v1"}

// styleRequest builds the request of op with params in one request style.
func styleRequest(e *apitest.Env, style, op string, params url.Values) apitest.Request {
	withKey := url.Values{"apikey": {e.Domain.ClassroomKey}}
	for k, v := range params {
		withKey[k] = v
	}
	var r apitest.Request
	switch style {
	case "query":
		r = apitest.Request{Method: "POST", Path: "/v2/" + op + "?" + withKey.Encode()}
	case "urlencoded":
		r = apitest.Request{Method: "POST", Path: "/v2/" + op, Form: withKey}
	case "multipart":
		r = apitest.Request{Method: "POST", Path: "/v2/" + op, Multipart: withKey}
	case "json":
		body := map[string]string{}
		for k := range withKey {
			body[k] = withKey.Get(k)
		}
		r = apitest.Request{Method: "POST", Path: "/v2/" + op, Body: body}
	default: // legacy: /v2 or /v1 with task=
		withKey.Set("task", op)
		r = apitest.Request{Method: "POST", Path: "/" + strings.TrimPrefix(style, "legacy "), Form: withKey}
	}
	r.NoAuth = true
	return r
}

// styles sends one operation in every request style clients use and
// returns the decoded answers by style name.
func styles(t *testing.T, e *apitest.Env, op string, params url.Values) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, style := range requestStyles {
		resp := e.Do(styleRequest(e, style, op, params))
		if resp.Status != 200 {
			t.Fatalf("%s %s: status %d %s", op, style, resp.Status, resp.Body)
		}
		out[style] = resp.JSON(t)
	}
	return out
}

// sameAnswers asserts every style got the same answer.
func sameAnswers(t *testing.T, answers map[string]any) {
	t.Helper()
	want, _ := json.Marshal(answers["query"])
	for name, a := range answers {
		got, _ := json.Marshal(a)
		if string(got) != string(want) {
			t.Errorf("%s answered %s, query style %s", name, got, want)
		}
	}
}

// seedStyle sets the server-wide style to the specification's (seed):
// tests that assert its one-element arrays, "Status":"OK", "Price id" and
// string ids run with it, so both styles stay covered.
func seedStyle(c *config.Config) { c.ResponseStyle = "seed" }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// cancelAll marks every sitting of a class cancelled.
func cancelAll(e *apitest.Env, classID int64) error {
	return e.Store.SetSittingsCancelled(context.Background(), e.Domain.ID, classID, 0, true)
}
