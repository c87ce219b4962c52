package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
)

// TestRequestLogKeepsSecrets runs the real server, opens a class through
// its encrypted and signed launch links and looks a user up by email, then
// greps the log: it names the route pattern and numeric ids, never the
// token, the signature or the email (issue 12, item 2).
func TestRequestLogKeepsSecrets(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			sargs := storeArgs(t, b)
			code, out, errOut := lectern(t, append([]string{"domain", "create", "--name", "Log Academy", "--json"}, sargs...)...)
			if code != 0 {
				t.Fatalf("domain create: %d %s", code, errOut)
			}
			var created map[string]any
			if err := json.Unmarshal([]byte(out), &created); err != nil {
				t.Fatal(err)
			}
			id := strings.TrimSuffix(strings.TrimSuffix(jsonText(created["domain_id"]), ".0"), "")
			key, ckey := created["api_key"].(string), created["classroom_api_key"].(string)

			ctx, cancel := context.WithCancel(context.Background())
			logs := &syncBuffer{}
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--rtc-udp-port", "0", "--turn-port", "0"}, sargs...), io.Discard, logs)
			}()
			defer func() {
				cancel()
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					t.Error("serve did not stop")
				}
			}()
			base := waitForAddr(t, logs)
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			call := func(method, path, body string, lms bool) []byte {
				t.Helper()
				req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
				if lms {
					req.Header.Set("Authorization", key)
					req.Header.Set("x-domain-id", id)
					req.Header.Set("Content-Type", "application/json")
				} else if body != "" {
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", method, path, err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return b
			}
			const email = "secret.person@example.com"
			call("POST", "/api/v1/users/create", `{"username":"`+email+`","email":"`+email+`"}`, true)
			call("GET", "/api/v1/users/getuserbyEmail/"+url.PathEscape(email), "", true)
			call("GET", "/api/v1/users/getuserbyEmail/"+url.PathEscape("nobody.else@example.com"), "", true)

			// A class the day after tomorrow (UTC) is still to come in
			// zone 28 (Europe/London) at any hour the test runs, and a
			// teacher may launch a class to come. (Today from 00:00 to
			// 23:00 was over when the test ran after 23:00 London time.)
			form := url.Values{"apikey": {ckey}, "title": {"Logged"}, "date": {time.Now().UTC().AddDate(0, 0, 2).Format("2006-01-02")},
				"start_time": {"00:00"}, "end_time": {"23:00"}, "timezone": {"28"}}
			var sched any
			json.Unmarshal(call("POST", "/v2/schedule", form.Encode(), false), &sched)
			classID := findString(sched, "class_id")
			if classID == "" {
				t.Fatalf("schedule: %v", sched)
			}
			var launch any
			json.Unmarshal(call("POST", "/v2/getclasslaunch", url.Values{"apikey": {ckey}, "class_id": {classID}, "userId": {"7"},
				"userName": {"Teacher"}, "isTeacher": {"1"}, "lessonName": {"L"}, "courseName": {"C"}}.Encode(), false), &launch)
			enc, signed := findString(launch, "encryptedlaunchurl"), findString(launch, "launchurl")
			if enc == "" || signed == "" {
				t.Fatalf("getclasslaunch: %v", launch)
			}
			eu, _ := url.Parse(enc)
			su, _ := url.Parse(signed)
			call("GET", eu.Path, "", false)
			call("GET", su.RequestURI(), "", false)
			call("GET", "/classroom/e/"+strings.Repeat("x", 40)+".forged-token-value", "", false)
			call("GET", "/no/such/"+url.PathEscape(email), "", false)

			// The request log is written behind the answers: wait for the
			// line of every request above (the two through the launch
			// route among them), then read the log whole.
			wants := []string{`path=/api/v1/users/getuserbyEmail/{email} `, `path=/v2/getclasslaunch `, `path=/no/such/* `}
			waitUntil(func() bool {
				log := logs.String()
				return strings.Count(log, "path=/classroom/e/{token} ") >= 2 &&
					!slices.ContainsFunc(wants, func(w string) bool { return !strings.Contains(log, w) })
			})
			token := strings.TrimPrefix(eu.Path, "/classroom/e/")
			log := logs.String()
			if n := strings.Count(log, "path=/classroom/e/{token} "); n < 2 {
				t.Errorf("%d log lines with the launch route pattern, want 2:\n%s", n, log)
			}
			for what, secret := range map[string]string{"email": email, "other email": "nobody.else", "launch token": token,
				"forged token": "forged-token-value", "signature": su.Query().Get("sig"), "api key": key, "classroom key": ckey} {
				if secret != "" && strings.Contains(log, secret) {
					t.Errorf("the log holds the %s %q:\n%s", what, secret, log)
				}
			}
			for _, want := range wants {
				if !strings.Contains(log, want) {
					t.Errorf("no log line with %q:\n%s", want, log)
				}
			}
		})
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// findString returns the first value under key anywhere in v, as text.
func findString(v any, key string) string {
	switch v := v.(type) {
	case map[string]any:
		if x, ok := v[key]; ok {
			if s, ok := x.(string); ok {
				return s
			}
			return jsonText(x)
		}
		for _, x := range v {
			if s := findString(x, key); s != "" {
				return s
			}
		}
	case []any:
		for _, x := range v {
			if s := findString(x, key); s != "" {
				return s
			}
		}
	}
	return ""
}
