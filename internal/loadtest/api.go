package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/schedule"
)

// londonZone is the classroom API's id of Europe/London, the zone the
// class is scheduled in.
const londonZone = 28

// apiRetry is the pause before retrying a classroom API call that was
// refused for its rate, unless the server says how long to wait.
const apiRetry = time.Second

// call posts a classroom API operation with the classroom key and returns
// the first object of the answer (seed style: a list; compat style: the
// object itself). A refusal for rate is retried until ctx ends; an error
// answer is returned as an error.
func (r *runner) call(ctx context.Context, op string, params url.Values) (map[string]any, error) {
	params.Set("apikey", r.o.ClassroomKey)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/v2/"+op, strings.NewReader(params.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := r.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			wait := apiRetry
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = time.Duration(s) * time.Second
			}
			if err := sleep(ctx, wait); err != nil {
				return nil, fmt.Errorf("%s: rate limited until the deadline: %w", op, err)
			}
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: HTTP %d: %s", op, resp.StatusCode, bytes.TrimSpace(body))
		}
		return firstObject(op, body)
	}
}

// firstObject decodes a classroom API answer in either JSON style.
func firstObject(op string, body []byte) (map[string]any, error) {
	var m map[string]any
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var list []map[string]any
		if err := json.Unmarshal(body, &list); err != nil || len(list) == 0 {
			return nil, fmt.Errorf("%s: unexpected answer %.200s", op, body)
		}
		m = list[0]
	} else if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("%s: unexpected answer %.200s", op, body)
	}
	if e, ok := m["error"].(string); ok && e != "" {
		return nil, fmt.Errorf("%s: %s", op, e)
	}
	return m, nil
}

// scheduleClass schedules a one-time class that is live now and lasts at
// least length from now, and returns its id.
func (r *runner) scheduleClass(ctx context.Context, length time.Duration) (string, error) {
	z, ok := schedule.ZoneByID(londonZone)
	if !ok {
		return "", errors.New("the zone table has no Europe/London")
	}
	// Start a few minutes ago, so that the class is live and both roles may
	// enter; end on a whole minute after length.
	start := time.Now().In(z.Loc).Truncate(time.Minute).Add(-5 * time.Minute)
	end := start.Add(5*time.Minute + length).Truncate(time.Minute).Add(time.Minute)
	if end.Sub(start) >= 24*time.Hour {
		return "", fmt.Errorf("a run of %v does not fit in one class sitting (less than 24 hours)", length)
	}
	m, err := r.call(ctx, "schedule", url.Values{
		"title":      {"Load test " + time.Now().Format(time.DateTime)},
		"timezone":   {strconv.Itoa(londonZone)},
		"date":       {start.Format(time.DateOnly)},
		"start_time": {start.Format("15:04")},
		"end_time":   {end.Format("15:04")},
	})
	if err != nil {
		return "", err
	}
	// A string in the seed style, a number in the compat style.
	var id string
	switch v := m["class_id"].(type) {
	case string:
		id = v
	case float64:
		id = strconv.FormatInt(int64(v), 10)
	}
	if id == "" {
		return "", fmt.Errorf("schedule: no class_id in the answer %v", m)
	}
	return id, nil
}

// launchURL returns a user's encrypted launch URL for class id.
func (r *runner) launchURL(ctx context.Context, id, userID, name string, teacher bool) (string, error) {
	role := "0"
	if teacher {
		role = "1"
	}
	m, err := r.call(ctx, "getclasslaunch", url.Values{
		"class_id":   {id},
		"userId":     {userID},
		"userName":   {name},
		"isTeacher":  {role},
		"lessonName": {"Load"},
		"courseName": {"Load"},
	})
	if err != nil {
		return "", err
	}
	u, _ := m["encryptedlaunchurl"].(string)
	if u == "" {
		return "", fmt.Errorf("getclasslaunch: no encryptedlaunchurl in the answer %v", m)
	}
	return u, nil
}

// bootMarker opens the classroom page's start-up data.
const bootMarker = `<script id="lectern-boot" type="application/json">`

// session fetches a launch page and returns the WebSocket URL and the
// session token from its start-up data.
func (r *runner) session(ctx context.Context, launch string) (wsURL, token string, err error) {
	page, err := url.Parse(launch)
	if err != nil {
		return "", "", fmt.Errorf("launch URL: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, launch, nil)
	if err != nil {
		return "", "", err
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("launch page: %w", err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return "", "", fmt.Errorf("launch page: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("launch page: HTTP %d", resp.StatusCode)
	}
	_, after, ok := bytes.Cut(body, []byte(bootMarker))
	raw, _, ok2 := bytes.Cut(after, []byte("</script>"))
	if !ok || !ok2 {
		return "", "", errors.New("launch page: no lectern-boot data")
	}
	var boot struct {
		Session string `json:"session"`
		WS      string `json:"ws"`
	}
	if err := json.Unmarshal(raw, &boot); err != nil || boot.Session == "" || boot.WS == "" {
		return "", "", fmt.Errorf("launch page: boot data %.200s", raw)
	}
	ws, err := page.Parse(boot.WS)
	if err != nil {
		return "", "", fmt.Errorf("launch page: ws %q: %w", boot.WS, err)
	}
	switch ws.Scheme {
	case "http":
		ws.Scheme = "ws"
	case "https":
		ws.Scheme = "wss"
	}
	return ws.String(), boot.Session, nil
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
