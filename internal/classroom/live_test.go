package classroom_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var start = time.Date(2031, 3, 10, 15, 0, 0, 0, time.UTC)

// launch schedules nothing: it asks getclasslaunch for user's link to
// class id and returns the page's session token.
func session(t *testing.T, e *apitest.Env, id, user, teacher string, encrypted bool) string {
	t.Helper()
	r := e.VC("getclasslaunch", url.Values{"class_id": {id}, "userId": {user}, "userName": {"User " + user},
		"isTeacher": {teacher}, "lessonName": {"L"}, "courseName": {"C"}})
	field := "launchurl" // the default (compat) style: a bare object
	if encrypted {
		field = "encryptedlaunchurl"
	}
	resp, err := e.Client.Get(apitest.Str(t, r.JSON(t), field))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("page %d: %s", resp.StatusCode, page)
	}
	_, after, _ := strings.Cut(string(page), `<script id="lectern-boot" type="application/json">`)
	raw, _, _ := strings.Cut(after, "</script>")
	var boot struct{ Session string }
	if err := json.Unmarshal([]byte(raw), &boot); err != nil || boot.Session == "" {
		t.Fatalf("boot data: %v %s", err, page)
	}
	return boot.Session
}

type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, e *apitest.Env, hello map[string]any) (*wsClient, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.URL, "http")+"/classroom/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	c := &wsClient{t: t, ws: ws}
	c.send(hello)
	return c, c.read()
}

func (c *wsClient) send(m map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *wsClient) read() map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// until reads until a message of type typ and kind (if given).
func (c *wsClient) until(typ, kind string) map[string]any {
	c.t.Helper()
	for {
		m := c.read()
		if m["type"] == typ && (kind == "" || m["kind"] == kind) {
			return m
		}
	}
}

func TestClassroomSocket(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		c, err := e.Store.CreateLiveClass(context.Background(), e.Domain.ID, lms.LiveClass{Title: "Algebra", Date: "2031-03-10",
			StartMinute: 900, EndMinute: 960, TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", Published: 1,
			Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		id := itoa(c.ID)
		e.Clock.Set(start.Add(-5 * time.Minute))
		teacherSession := session(t, e, id, "t1", "1", true)
		studentSession := session(t, e, id, "s1", "0", false)

		t.Run("refusals", func(t *testing.T) {
			for name, hello := range map[string]map[string]any{
				"not a session":     {"type": "hello", "protocol": 1, "session": "1.AAAA"},
				"tampered":          {"type": "hello", "protocol": 1, "session": teacherSession[:len(teacherSession)-4] + "AAAA"},
				"other domain":      {"type": "hello", "protocol": 1, "session": itoa(e.Other.ID) + teacherSession[1:]},
				"not a hello":       {"type": "chat", "text": "hi"},
				"old protocol":      {"type": "hello", "protocol": 0, "session": teacherSession},
				"no session at all": {"type": "hello", "protocol": 1},
			} {
				_, m := dial(t, e, hello)
				want := "invalid"
				if name == "old protocol" {
					want = "protocol"
				}
				if m["type"] != "fail" || m["code"] != want || m["message"] == "" {
					t.Errorf("%s: %v", name, m)
				}
			}
		})

		teacher, w := dial(t, e, map[string]any{"type": "hello", "protocol": 1, "session": teacherSession})
		if w["type"] != "welcome" || w["you"].(map[string]any)["role"] != "teacher" || w["class"].(map[string]any)["title"] != "Algebra" {
			t.Fatalf("teacher welcome %v", w)
		}
		student, w := dial(t, e, map[string]any{"type": "hello", "protocol": 1, "session": studentSession})
		if w["type"] != "welcome" || w["you"].(map[string]any)["userId"] != "s1" {
			t.Fatalf("student welcome %v", w)
		}
		if p := teacher.until("event", "join")["participant"].(map[string]any); p["userId"] != "s1" || p["role"] != "student" {
			t.Fatalf("join %v", p)
		}
		student.send(map[string]any{"type": "chat", "text": "<b>hi</b>"})
		if m := teacher.until("event", "chat")["message"].(map[string]any); m["text"] != "<b>hi</b>" || m["from"] != "s1" {
			t.Fatalf("chat %v", m)
		}
		student.send(map[string]any{"type": "ping"})
		student.until("pong", "")

		// The student leaves after ten minutes: the report shows the session.
		e.Clock.Set(start.Add(10 * time.Minute))
		student.ws.Close(websocket.StatusNormalClosure, "bye")
		if l := teacher.until("event", "leave"); l["userId"] != "s1" {
			t.Fatalf("leave %v", l)
		}
		report := e.VC("getclassreport", url.Values{"classId": {id}}).JSON(t)
		var found bool
		for i := range 2 {
			row := apitest.Str(t, report, strconv.Itoa(i)+".userId")
			if row == "s1" {
				found = true
				if d := apitest.Str(t, report, strconv.Itoa(i)+".duration"); d != "00:15:00" {
					t.Errorf("duration %s: %v", d, report)
				}
				if in := apitest.Str(t, report, strconv.Itoa(i)+".session.0.time_in"); in != "Mar 10, 2031 02:55:00 PM" {
					t.Errorf("time_in %s", in)
				}
			}
		}
		if !found {
			t.Fatalf("report lacks the student: %v", report)
		}
	})
}

func TestClassroomAssetsAndCheck(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		resp, err := e.Client.Get(e.URL + "/classroom/assets/classroom.js")
		if err != nil {
			t.Fatal(err)
		}
		js, _ := io.ReadAll(resp.Body) // the client asked for gzip and undid it
		resp.Body.Close()
		tag := resp.Header.Get("ETag")
		if resp.StatusCode != 200 || tag == "" || !strings.Contains(resp.Header.Get("Content-Type"), "javascript") ||
			!resp.Uncompressed || len(js) < 1000 {
			t.Fatalf("classroom.js: %d %v (gzip %v, %d bytes)", resp.StatusCode, resp.Header, resp.Uncompressed, len(js))
		}
		req, _ := http.NewRequest("GET", e.URL+"/classroom/assets/classroom.js", nil)
		req.Header.Set("If-None-Match", tag)
		if resp, err := e.Client.Do(req); err != nil || resp.StatusCode != http.StatusNotModified {
			t.Fatalf("revalidation: %v %v", resp, err)
		}
		for _, p := range []string{"/classroom/assets/nope.js", "/classroom/assets/%2e%2e/live.go", "/classroom/assets/"} {
			if r := e.Do(apitest.Request{Method: "GET", Path: p, NoAuth: true}); r.Status != 404 {
				t.Errorf("%s: %d", p, r.Status)
			}
		}
		page := e.Do(apitest.Request{Method: "GET", Path: "/classroom/check", NoAuth: true})
		if page.Status != 200 || !strings.Contains(string(page.Body), "/classroom/assets/check.js") {
			t.Fatalf("check page %d %s", page.Status, page.Body)
		}
		ice := e.Do(apitest.Request{Method: "POST", Path: "/classroom/check/ice", NoAuth: true})
		if _, ok := apitest.Lookup(ice.JSON(t), "iceServers"); ice.Status != 200 || !ok {
			t.Fatalf("ice %d %s", ice.Status, ice.Body)
		}
		bad := e.Do(apitest.Request{Method: "POST", Path: "/classroom/check/offer", Body: "not json", NoAuth: true})
		if bad.Status != 400 || !strings.Contains(string(bad.Body), "sdp") {
			t.Fatalf("bad offer %d %s", bad.Status, bad.Body)
		}
	})
}

// TestRecordingLifecycle records a board-only class (its recording is the
// event log) through the real server: the row shows "recording" while it
// runs and "ready" with its files after the class ends.
func TestRecordingLifecycle(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		c, err := e.Store.CreateLiveClass(context.Background(), e.Domain.ID, lms.LiveClass{Title: "Rec", Date: "2031-03-10",
			StartMinute: 900, EndMinute: 960, TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", Published: 1,
			IsBoard: 1, Record: 1, Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		id := itoa(c.ID)
		e.Clock.Set(start)
		teacher, w := dial(t, e, map[string]any{"type": "hello", "protocol": 1, "session": session(t, e, id, "t1", "1", true)})
		if !strings.Contains(fmt.Sprint(w["permissions"]), "record") {
			t.Fatalf("no record permission: %v", w["permissions"])
		}
		teacher.send(map[string]any{"type": "room", "action": "record"})
		if ev := teacher.until("event", "recording"); ev["recording"] != true {
			t.Fatalf("%v", ev)
		}
		teacher.send(map[string]any{"type": "board", "op": "add", "object": map[string]any{"id": "s1", "page": "p1", "tool": "pen",
			"color": "#000000", "width": 3, "points": []int{1, 2, 3, 4}}})
		teacher.until("event", "board")
		list := e.VC("getclassrecording", url.Values{"class_id": {id}}).JSON(t)
		if apitest.Str(t, list, "0.state") != "recording" || apitest.Str(t, list, "0.status") != "0" {
			t.Fatalf("while recording: %v", list)
		}
		teacher.send(map[string]any{"type": "room", "action": "end"})
		deadline := time.Now().Add(10 * time.Second)
		for apitest.Str(t, e.VC("getclassrecording", url.Values{"class_id": {id}}).JSON(t), "0.state") != "ready" {
			if time.Now().After(deadline) {
				t.Fatalf("never ready: %v", e.VC("getclassrecording", url.Values{"class_id": {id}}).JSON(t))
			}
			time.Sleep(20 * time.Millisecond)
		}
		rec := e.VC("getclassrecording", url.Values{"class_id": {id}}).JSON(t)
		if apitest.Str(t, rec, "0.status") != "1" {
			t.Fatalf("ready and published: %v", rec)
		}
		resp, err := e.Client.Get(apitest.Str(t, rec, "0.record_url"))
		if err != nil {
			t.Fatal(err)
		}
		log, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(log), `"op":"add"`) || !strings.Contains(string(log), `"type":"recording"`) {
			t.Fatalf("event log %d:\n%s", resp.StatusCode, log)
		}
		// A board-only recording's file is its event log: its size is the log's.
		if got := apitest.Str(t, rec, "0.size"); got != strconv.Itoa(len(log)) {
			t.Errorf("size %s, want the event log's %d bytes", got, len(log))
		}
		// The playback page hands its player the event log.
		page := e.Do(apitest.Request{Method: "GET", Path: strings.TrimPrefix(apitest.Str(t, rec, "0.record_path"), e.URL), NoAuth: true})
		_, after, _ := strings.Cut(string(page.Body), `<script id="lectern-boot" type="application/json">`)
		raw, _, _ := strings.Cut(after, "</script>")
		var boot struct{ Events string }
		if page.Status != 200 || json.Unmarshal([]byte(raw), &boot) != nil || boot.Events == "" {
			t.Fatalf("playback page %d: %s", page.Status, page.Body)
		}
		if r := e.Do(apitest.Request{Method: "GET", Path: boot.Events, NoAuth: true}); r.Status != 200 || !strings.Contains(string(r.Body), `"op":"add"`) {
			t.Fatalf("events through the player's link: %d", r.Status)
		}
	})
}
